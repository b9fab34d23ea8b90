// analyze_tree_shape / format_tree_shape: per-level pages, fill, node length, unused bytes;
// leaf fragmentation and NULL entries, on the one TreeWalk (btree/tree_walk.h).
#include "btree/level_stats.h"

#include <fmt/format.h>

#include <vector>

#include "btree/tree_walk.h"
#include "node/btree_page.h"
#include "node/node.h"

namespace pbtree {

TreeShape analyze_tree_shape(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
                             uint32_t page_count, bool descending) {
  TreeShape shape;
  LevelStats ls;
  double fill = 0, node_bytes = 0;
  uint32_t prev_leaf = 0;
  auto close_level = [&] {
    ls.avg_fill = ls.pages ? fill / ls.pages : 0;
    ls.avg_node_length = ls.nodes ? node_bytes / ls.nodes : 0;
    shape.levels.push_back(ls);
  };
  TreeWalk walk(read, root_page, page_size, page_count);
  bool started = false;
  walk.run([&](uint32_t p, const uint8_t* page, const BtreeHeader& h) {
    if (!started || h.level != ls.level) {
      if (started) close_level();
      started = true;
      ls = LevelStats{};
      ls.level = h.level;
      fill = 0;
      node_bytes = 0;
    }
    const bool leaf = h.level == 0;
    const uint32_t hdr = kBtreeHeaderSize + h.jump_size;
    ++ls.pages;
    fill += static_cast<double>(h.length - hdr) / (page_size - hdr);
    ls.unused_bytes += page_size - h.length;
    if (leaf) {
      if (prev_leaf != 0 && p < prev_leaf) ++shape.leaves_out_of_order;
      prev_leaf = p;
    }
    uint32_t pos = hdr;
    uint32_t key_length = 0;
    bool key_is_ff = false;
    NodeContext ctx;
    bool first = true;
    for (;;) {
      IndexNode n = decode_node(page, h.length, pos, leaf, first ? nullptr : &ctx);
      ctx = context_after(n);
      if (n.is_marker()) break;
      if (n.prefix > key_length) {
        corrupt_btree_page(
            p, fmt::format("node at offset {}: prefix beyond the previous key", n.offset));
      }
      const uint32_t full = n.prefix + n.length;
      if (n.length > 0)
        key_is_ff = full == 1 && n.data[n.length - 1] == 0xFF;
      else if (full != key_length)
        key_is_ff = false;
      if (leaf && (descending ? (full == 1 && key_is_ff) : full == 0)) ++shape.null_entries;
      key_length = full;
      ++ls.nodes;
      node_bytes += n.size;
      pos = n.end();
      first = false;
    }
  });
  if (started) close_level();
  return shape;
}

std::string format_tree_shape(const TreeShape& shape) {
  std::string out;
  for (const LevelStats& l : shape.levels) {
    out += fmt::format(
        "\tLevel {}: pages: {}, nodes: {}, average fill: {:.2f}%, average node length: {:.2f}, "
        "unused bytes: {}\n",
        l.level, l.pages, l.nodes, l.avg_fill * 100, l.avg_node_length, l.unused_bytes);
  }
  out += fmt::format("\tLeaves out of file order: {}, NULL entries: {}\n\n",
                     shape.leaves_out_of_order, shape.null_entries);
  return out;
}

}  // namespace pbtree
