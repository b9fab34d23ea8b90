// analyze_btree: gstat's leaf-level figures (§3.2 of firebird-format.md) and page counts.
#include "btree/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace pbtree {

uint32_t max_records_per_data_page(uint32_t page_size) {
  return (page_size - 28) / 17;
}

namespace {

[[noreturn]] void corrupt(uint32_t page_no, const std::string& what) {
  throw CorruptError(fmt::format("page {} (b-tree): {}", page_no, what));
}

}  // namespace

IndexStats analyze_btree(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
                         uint32_t page_count) {
  IndexStats st;
  st.root_page = root_page;
  std::vector<uint8_t> page(page_size);
  std::vector<bool> visited(page_count, false);

  auto load = [&](uint32_t page_no, int expected_level, uint32_t expected_left) -> BtreeHeader {
    if (page_no < 2 || page_no >= page_count) {
      corrupt(page_no, fmt::format("page number outside the file's pages [2, {})", page_count));
    }
    if (visited[page_no]) corrupt(page_no, "reached twice (sibling or child loop)");
    visited[page_no] = true;
    read(page_no, page.data());
    BtreeHeader h = check_btree_header(page.data(), page_size);
    if (expected_level >= 0 && h.level != expected_level) {
      corrupt(page_no,
              fmt::format("level {} where level {} was expected", h.level, expected_level));
    }
    if (h.left_sibling != expected_left) {
      corrupt(page_no,
              fmt::format("left sibling {} where {} was expected", h.left_sibling, expected_left));
    }
    return h;
  };

  if (root_page < 2 || root_page >= page_count) {
    corrupt(root_page, fmt::format("root page outside the file's pages [2, {})", page_count));
  }
  read(root_page, page.data());
  const BtreeHeader root = check_btree_header(page.data(), page_size);
  if (root.sibling != 0 || root.left_sibling != 0) corrupt(root_page, "root page has siblings");
  st.depth = root.level + 1u;

  const uint32_t max_records = max_records_per_data_page(page_size);
  std::vector<uint8_t> key;
  bool any = false;
  uint64_t run = 0;
  uint64_t sum_size = 0, sum_prefix = 0, sum_length = 0, sum_packed = 0;
  uint64_t prev_data_page = UINT64_MAX;
  double fill_sum = 0;

  uint32_t leftmost = root_page;
  for (int level = root.level; level >= 0; --level) {
    uint32_t next_leftmost = 0;
    uint32_t prev = 0;
    for (uint32_t p = leftmost; p != 0;) {
      const BtreeHeader h = load(p, level, prev);
      ++st.index_pages;
      const uint32_t hdr = kBtreeHeaderSize + h.jump_size;
      if (level > 0) {
        if (p == leftmost) {
          IndexNode n = decode_node(page.data(), h.length, hdr, false);
          if (n.is_marker()) corrupt(p, "non-leaf page without nodes");
          next_leftmost = n.page_number;
        }
        prev = p;
        p = h.sibling;
        continue;
      }
      // Leaf: gstat's figures.
      ++st.leaf_buckets;
      const uint32_t used = h.length - hdr;
      const uint64_t band = uint64_t{used} * 5 / (page_size - hdr);
      ++st.fill_distribution[std::min<uint64_t>(band, 4)];
      fill_sum += static_cast<double>(used) / (page_size - hdr);
      uint32_t pos = hdr;
      bool first_on_page = true;
      NodeContext ctx;  // compact pages: the previous node
      for (;;) {
        IndexNode n = decode_node(page.data(), h.length, pos, true, first_on_page ? nullptr : &ctx);
        ctx = context_after(n);
        if (n.is_end_level()) {
          if (h.sibling != 0) corrupt(p, "END_LEVEL on a page with a right sibling");
          break;
        }
        if (n.is_end_bucket()) {
          if (h.sibling == 0) corrupt(p, "END_BUCKET on the last page of the level");
          break;
        }
        bool dup;
        if (first_on_page) {
          if (n.prefix != 0) corrupt(p, fmt::format("first node has prefix {}", n.prefix));
          dup = any && key.size() == n.length && std::equal(key.begin(), key.end(), n.data);
          key.assign(n.data, n.data + n.length);
        } else {
          if (n.prefix > key.size()) {
            corrupt(p, fmt::format("node at offset {}: prefix {} exceeds previous key length {}",
                                   n.offset, n.prefix, key.size()));
          }
          dup = n.length == 0 && n.prefix == key.size();
          key.resize(n.prefix);
          key.insert(key.end(), n.data, n.data + n.length);
        }
        first_on_page = false;
        any = true;
        ++st.nodes;
        if (dup) {
          ++st.total_dup;
          st.max_dup = std::max(st.max_dup, ++run);
        } else {
          run = 0;
        }
        sum_size += n.size;
        sum_prefix += n.prefix;
        sum_length += n.length;
        sum_packed += packed_size(n.prefix, n.length);
        const uint64_t data_page = n.recno / max_records;
        if (data_page != prev_data_page) ++st.clustering_factor;
        prev_data_page = data_page;
        pos = n.end();
      }
      prev = p;
      p = h.sibling;
    }
    leftmost = next_leftmost;
  }

  if (st.nodes > 0) {
    double nodes = static_cast<double>(st.nodes);
    st.avg_node_length = sum_size / nodes;
    st.avg_key_length = sum_packed / nodes;
    st.avg_prefix_length = sum_prefix / nodes;
    st.avg_data_length = sum_length / nodes;
    st.compression_ratio =
        sum_packed == 0 ? 0 : static_cast<double>(sum_prefix + sum_length) / sum_packed;
    st.clustering_ratio = st.clustering_factor / nodes;
    st.bytes_per_entry = static_cast<double>(st.index_pages) * page_size / nodes;
  }
  if (st.leaf_buckets > 0) st.avg_leaf_fill = fill_sum / st.leaf_buckets;
  return st;
}

}  // namespace pbtree
