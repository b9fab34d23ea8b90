// TreeWalk (btree/tree_walk.h): level by level, left to right, every page checked once; or by
// the child lists, the visitor checking.
#include "btree/tree_walk.h"

#include <fmt/format.h>

#include "node/node.h"

namespace pbtree {

TreeWalk::TreeWalk(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
                   uint32_t page_count)
    : read_(read),
      root_page_(root_page),
      page_size_(page_size),
      page_count_(page_count),
      page_(page_size),
      visited_(page_count, false) {}

BtreeHeader TreeWalk::load(uint32_t page_no, int expected_level, uint32_t expected_left) {
  if (page_no < 2 || page_no >= page_count_) {
    corrupt_btree_page(page_no,
                       fmt::format("page number outside the file's pages [2, {})", page_count_));
  }
  if (visited_[page_no]) corrupt_btree_page(page_no, "reached twice (sibling or child loop)");
  visited_[page_no] = true;
  read_(page_no, page_.data());
  const BtreeHeader h = check_btree_header(page_.data(), page_size_);
  if (h.level != expected_level) {
    corrupt_btree_page(
        page_no, fmt::format("level {} where level {} was expected", h.level, expected_level));
  }
  if (h.left_sibling != expected_left) {
    corrupt_btree_page(page_no, fmt::format("left sibling {} where {} was expected", h.left_sibling,
                                            expected_left));
  }
  return h;
}

BtreeHeader TreeWalk::run(const Visit& visit) {
  if (root_page_ < 2 || root_page_ >= page_count_) {
    corrupt_btree_page(root_page_,
                       fmt::format("root page outside the file's pages [2, {})", page_count_));
  }
  read_(root_page_, page_.data());
  const BtreeHeader root = check_btree_header(page_.data(), page_size_);
  if (root.sibling != 0 || root.left_sibling != 0) {
    corrupt_btree_page(root_page_, "root page has siblings");
  }
  uint32_t leftmost = root_page_;
  for (int level = root.level; level >= 0; --level) {
    uint32_t next_leftmost = 0;
    uint32_t prev = 0;
    for (uint32_t p = leftmost; p != 0;) {
      const BtreeHeader h = load(p, level, prev);
      if (level > 0 && p == leftmost) {
        const IndexNode n =
            decode_node(page_.data(), h.length, kBtreeHeaderSize + h.jump_size, false);
        if (n.is_marker()) corrupt_btree_page(p, "non-leaf page without nodes");
        next_leftmost = n.page_number;
      }
      visit(p, page_.data(), h);
      prev = p;
      p = h.sibling;
    }
    leftmost = next_leftmost;
  }
  return root;
}

void TreeWalk::by_children(uint32_t root_page, const ChildVisit& visit) {
  std::vector<uint32_t> level{root_page};
  for (uint32_t depth = 0; !level.empty(); ++depth) {
    std::vector<uint32_t> children;
    for (size_t k = 0; k < level.size(); ++k) {
      visit(Step{level[k], depth, k, k + 1 < level.size() ? level[k + 1] : 0}, children);
    }
    level = std::move(children);
  }
}

}  // namespace pbtree
