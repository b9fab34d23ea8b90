// Search within one B-tree page: jump table first, then one jump area with the prefix trick
// (Firebird btr.cpp find_area_start_point / find_node_start_point).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "node/node.h"

namespace pbtree {

/// Where a search key lands in a page.
struct PageFind {
  uint32_t offset = 0;       ///< start of the first node not below the target (maybe a marker)
  uint32_t prev_offset = 0;  ///< start of the node before it; 0 if it is the first node
  uint32_t matched = 0;      ///< bytes the found node's key shares with the search key
  bool at_marker = false;    ///< the found node is END_BUCKET or END_LEVEL
  /// The target is above the END_BUCKET copy: it belongs to the right sibling.
  bool beyond_end_bucket = false;
  /// Compact pages: the contexts to decode the node at `offset` and at `prev_offset` with
  /// (decode_node's `prev`), so callers need not walk the jump area again. A flag false means
  /// the node is a page's first node or a jump target: decode it with no context (nullptr).
  NodeContext offset_ctx, prev_ctx;
  bool has_offset_ctx = false, has_prev_ctx = false;
  /// The scan decoded the node at `prev_offset` itself (not only a jump key before it): then
  /// `prev_matched` is exactly the bytes that node's key shares with the search key, and
  /// `offset_ctx` is that node's key length and record number (both layouts). The writer
  /// (btree/leaf_writer.cc) encodes an inserted node from these without decoding the
  /// previous key again.
  bool prev_known = false;
  uint32_t prev_matched = 0;
  const NodeContext* offset_context() const { return has_offset_ctx ? &offset_ctx : nullptr; }
  const NodeContext* prev_context() const { return has_prev_ctx ? &prev_ctx : nullptr; }
};

/// Search modes: stop at the first node >= target (lower bound: leaf lookups and inserts) or
/// at the first node > target (upper bound: choosing a child on a non-leaf page, which is
/// then the node before it).
enum class FindMode : uint8_t { LowerBound, UpperBound };

/// Finds `key` (with `recno` as tie-break among equal keys if given; without it, LowerBound
/// stops at the first duplicate and UpperBound after the last) in `page`, using the jump table
/// (find_area_start_point) and then the prefix trick (find_node_start_point): decodes only the
/// jump nodes and the nodes of one jump area. The first node of a leftmost non-leaf page
/// (left_sibling 0) is degenerate and sorts below every key. Throws CorruptError.
PageFind find_in_page(const uint8_t* page, uint32_t page_size, std::span<const uint8_t> key,
                      bool descending, std::optional<uint64_t> recno, FindMode mode);

}  // namespace pbtree
