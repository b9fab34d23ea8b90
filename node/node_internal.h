// Helpers shared by the node/ codecs only (not included outside node/ and its tests): the
// bounds-checked varint reader, the jump-target check and the checked per-layout decoders
// (Firebird, compact) behind decode_node.
#pragma once

#include <fmt/format.h>

#include <cstdint>

#include "node/btree_page.h"
#include "node/node.h"

namespace pbtree::node_detail {

// Reads a varint of at most `max_bytes` bytes at `pos`, never at or beyond `limit`.
inline uint64_t get_varint(const uint8_t* page, uint32_t limit, uint32_t& pos, int max_bytes,
                           const char* field, uint32_t node_offset, const char* what) {
  uint64_t value = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (pos >= limit) {
      corrupt_page(page, fmt::format("{} at offset {}: {} runs past byte {}", what, node_offset,
                                     field, limit));
    }
    uint8_t b = page[pos++];
    value |= uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  corrupt_page(page, fmt::format("{} at offset {}: {} longer than {} bytes", what, node_offset,
                                 field, max_bytes));
}

/// Checks that jump node `index` targets a node after the first one and before `limit`.
void check_jump_target(const uint8_t* page, uint32_t index, uint32_t target, uint32_t first,
                       uint32_t limit);

/// The checked decoder of a Firebird-layout node (fast path first). Throws CorruptError.
IndexNode decode_firebird_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf);

}  // namespace pbtree::node_detail

namespace pbtree {

/// Decodes the compact node at `offset` (no byte read at or beyond `limit`). `prev` is the
/// previous node's context, or null at the first node of a page or a jump target (the node
/// must then be in explicit form). Throws CorruptError on a reserved code, a relative node
/// without a predecessor, a prefix beyond the previous key, a record number outside 40 bits
/// or a node crossing `limit`.
IndexNode decode_compact_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                              const NodeContext* prev);

}  // namespace pbtree
