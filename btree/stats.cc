// analyze_btree: gstat's leaf-level figures (analyze_index in src/utilities/gstat/dba.epp) and page
// counts, on the one TreeWalk (btree/tree_walk.h).
#include "btree/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "btree/tree_walk.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace pbtree {

uint32_t max_records_per_data_page(uint32_t page_size) {
  return (page_size - 28) / 17;
}

IndexStats analyze_btree(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
                         uint32_t page_count) {
  IndexStats st;
  st.root_page = root_page;
  const uint32_t max_records = max_records_per_data_page(page_size);
  std::vector<uint8_t> key;
  bool any = false;
  uint64_t run = 0;
  uint64_t sum_size = 0, sum_prefix = 0, sum_length = 0, sum_packed = 0;
  uint64_t prev_data_page = UINT64_MAX;
  double fill_sum = 0;

  TreeWalk walk(read, root_page, page_size, page_count);
  const BtreeHeader root = walk.run([&](uint32_t p, const uint8_t* page, const BtreeHeader& h) {
    ++st.index_pages;
    if (h.level > 0) return;
    // Leaf: gstat's figures.
    const uint32_t hdr = kBtreeHeaderSize + h.jump_size;
    ++st.leaf_buckets;
    const uint32_t used = h.length - hdr;
    const uint64_t band = uint64_t{used} * 5 / (page_size - hdr);
    ++st.fill_distribution[std::min<uint64_t>(band, 4)];
    fill_sum += static_cast<double>(used) / (page_size - hdr);
    uint32_t pos = hdr;
    bool first_on_page = true;
    NodeContext ctx;  // compact pages: the previous node
    for (;;) {
      IndexNode n = decode_node(page, h.length, pos, true, first_on_page ? nullptr : &ctx);
      ctx = context_after(n);
      if (n.is_end_level()) {
        if (h.sibling != 0) corrupt_btree_page(p, "END_LEVEL on a page with a right sibling");
        break;
      }
      if (n.is_end_bucket()) {
        if (h.sibling == 0) corrupt_btree_page(p, "END_BUCKET on the last page of the level");
        break;
      }
      bool dup;
      if (first_on_page) {
        if (n.prefix != 0) corrupt_btree_page(p, fmt::format("first node has prefix {}", n.prefix));
        dup = any && key.size() == n.length && std::equal(key.begin(), key.end(), n.data);
        key.assign(n.data, n.data + n.length);
      } else {
        if (n.prefix > key.size()) {
          corrupt_btree_page(
              p, fmt::format("node at offset {}: prefix {} exceeds previous key length {}",
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
  });
  st.depth = root.level + 1u;

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
