// Figures gstat does not print, per level of a B-tree of Firebird-layout or compact pages
// (pbtree files and Firebird databases alike, through a BtreePageReader): pages, entries,
// average fill, average node length and unused bytes per level, plus leaf fragmentation
// (leaves whose page number is below the previous leaf's) and NULL entries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "btree/stats.h"

namespace pbtree {

/// One level, 0 = leaves.
struct LevelStats {
  uint32_t level = 0;
  uint64_t pages = 0;
  uint64_t nodes = 0;          ///< entries, END markers excluded
  double avg_fill = 0;         ///< mean of (btr_length - h) / (page_size - h), 0..1
  double avg_node_length = 0;  ///< bytes, encoded node incl. record number (and child page)
  uint64_t unused_bytes = 0;   ///< sum of page_size - btr_length
};

/// The whole tree's extra figures.
struct TreeShape {
  std::vector<LevelStats> levels;    ///< root level first
  uint64_t leaves_out_of_order = 0;  ///< leaves (after the first) whose page number is
                                     ///< below the previous leaf's in key order
  uint64_t null_entries = 0;         ///< leaf entries with the NULL key of a single
                                     ///< segment (empty ascending, FF descending)
};

/// Walks every level under `root_page` along first nodes and right siblings (TreeWalk,
/// btree/tree_walk.h, and its page checks). `descending` says which key is NULL. Throws
/// CorruptError ("page N (b-tree): ...") on a page TreeWalk refuses or a malformed page.
TreeShape analyze_tree_shape(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
                             uint32_t page_count, bool descending);

/// Text lines printed after a gstat block, e.g.
/// "\tLevel 1: pages: 3, nodes: 1480, average fill: 51.20%, average node length: 12.01,
/// unused bytes: 11993\n" per level (root first), then
/// "\tLeaves out of file order: 0, NULL entries: 10309\n" and an empty line.
std::string format_tree_shape(const TreeShape& shape);

}  // namespace pbtree
