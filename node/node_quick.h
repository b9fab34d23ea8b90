// The inline hot-path node decoder for read loops (in-page search, cursor scans, point
// lookups): decode_node_quick takes the per-layout inline decoders of node/node_inline.h
// (try_decode_node, try_decode_compact) by the page's layout and falls back to the checked
// decode_node, so results and errors are decode_node's. Byte layout of both node forms:
// node/node.h.
#pragma once

#include <cstdint>

#include "node/node.h"
#include "node/node_inline.h"

namespace pbtree {

/// decode_node(page, limit, offset, leaf, prev) with the inline paths first: Firebird nodes
/// through try_decode_node, compact nodes with a predecessor through try_decode_compact.
/// Same arguments, result and errors as decode_node (with `prev` null a compact page is
/// walked from the nearest jump target).
[[gnu::always_inline]] inline IndexNode decode_node_quick(const uint8_t* page, uint32_t limit,
                                                          uint32_t offset, bool leaf,
                                                          const NodeContext* prev = nullptr) {
  IndexNode n;
  if (page_layout(page) == NodeLayout::Firebird) {
    if (try_decode_node(page, limit, offset, leaf, n)) return n;
  } else if (prev != nullptr) {
    if (try_decode_compact(page, limit, offset, leaf, *prev, n)) return n;
  }
  return decode_node(page, limit, offset, leaf, prev);
}

}  // namespace pbtree
