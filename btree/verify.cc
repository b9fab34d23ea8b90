// BTree::verify: the structural check of a whole tree, level by level and left to right
// (TreeWalk::by_children: the pages in the order their parents list them).
#include <shared_mutex>

#include "btree/tree_internal.h"
#include "btree/tree_walk.h"

namespace pbtree {

// ------------------------------------------------------------------------------------------
// Structural check

TreeCheck BTree::verify() const {
  std::lock_guard lock(write_mutex_);
  const uint32_t ps = pool_.page_size();
  const bool desc = def_.descending;
  TreeCheck check;
  auto fail = [&](uint32_t page, const std::string& what) {
    throw CorruptError(
        fmt::format("{}: index \"{}\": page {}: {}", pool_.file().path(), def_.name, page, what));
  };
  auto load = [&](uint32_t page_no) {
    PageRef ref = pool_.pin(page_no);
    std::shared_lock l(ref.latch());
    const uint8_t* d = ref.data();
    if (BtreePage(d).type() != static_cast<uint8_t>(PageType::Btree))
      fail(page_no, "not a b-tree page");
    if (BtreePage(d).released()) fail(page_no, "released page still in the tree");
    BtreePageImage img = decode_page(d, ps);  // checks nodes, jump nodes, END marker, length
    return img;
  };

  const uint32_t root_page = root();
  int top = 0;
  double fill_sum = 0;
  // Separators of the pages on the level walked (nullopt = degenerate or root) and of the
  // level below, in the order the pages list their children (TreeWalk::by_children).
  std::vector<std::optional<PageEntry>> seps{std::nullopt}, next_seps;
  uint32_t prev_page = 0;
  std::optional<PageEntry> prev_last;        // last entry of the previous page
  std::optional<PageEntry> prev_end_bucket;  // its END_BUCKET copy
  uint32_t depth = 0;
  TreeWalk::by_children(root_page, [&](const TreeWalk::Step& s, std::vector<uint32_t>& children) {
    const uint32_t page_no = s.page_no;
    const size_t k = s.index;
    if (s.depth != depth) {
      depth = s.depth;
      seps = std::move(next_seps);
      next_seps.clear();
    }
    if (k == 0) {
      prev_page = 0;
      prev_last.reset();
      prev_end_bucket.reset();
    }
    BtreePageImage img = load(page_no);
    if (s.depth == 0) {
      if (img.header.sibling != 0 || img.header.left_sibling != 0) {
        fail(root_page, "root has siblings");
      }
      top = img.header.level;
      check.depth = top + 1;
      check.level_pages.assign(top + 1, 0);
    }
    const int level = top - static_cast<int>(s.depth);
    const BtreeHeader& h = img.header;
    if (h.level != level) fail(page_no, fmt::format("level {} where {} expected", h.level, level));
    if (h.layout != def_.layout) {
      fail(page_no, fmt::format("{} layout page in a {} layout index",
                                h.layout == NodeLayout::Compact ? "compact" : "firebird",
                                def_.layout == NodeLayout::Compact ? "compact" : "firebird"));
    }
    if (h.left_sibling != prev_page) {
      fail(page_no,
           fmt::format("left sibling {} but page {} precedes it", h.left_sibling, prev_page));
    }
    if (k > 0) {
      // The previous page's right link and END_BUCKET copy.
      if (!prev_end_bucket) fail(prev_page, "END_LEVEL before the end of the level");
      if (img.entries.empty()) fail(page_no, "empty non-root page");
      const PageEntry& f = img.entries[0];
      if (!(*prev_end_bucket == f))
        fail(prev_page, "END_BUCKET differs from the right sibling's first node");
    }
    if (s.next != 0 && h.sibling != s.next) {
      fail(page_no, fmt::format("right sibling {} but page {} follows it", h.sibling, s.next));
    }
    if (s.next == 0 && h.sibling != 0) {
      fail(page_no,
           fmt::format("right sibling {} beyond the last child of the level above", h.sibling));
    }
    const std::optional<PageEntry>& expected_sep = seps[k];
    if (expected_sep && h.layout == NodeLayout::Compact) {
      // Compact layout: separators may be suffix-truncated; they must lie above the previous
      // page's last entry and not above this page's first.
      const PageEntry& sep = *expected_sep;
      if (img.entries.empty() ||
          compare_entry(sep.key, sep.recno, img.entries[0].key, img.entries[0].recno, desc) > 0) {
        fail(page_no, "separator in the parent above the first entry");
      }
      if (prev_last &&
          compare_entry(prev_last->key, prev_last->recno, sep.key, sep.recno, desc) >= 0) {
        fail(page_no, "separator in the parent not above the left sibling's last entry");
      }
    } else if (expected_sep) {
      if (img.entries.empty() || img.entries[0].key != expected_sep->key ||
          img.entries[0].recno != expected_sep->recno) {
        fail(page_no, "separator in the parent differs from the first entry");
      }
    }
    for (size_t i = 0; i < img.entries.size(); ++i) {
      const PageEntry& e = img.entries[i];
      const bool degenerate = level > 0 && k == 0 && i == 0;
      if (degenerate) {
        if (!e.key.empty() || e.recno != 0)
          fail(page_no, "first node of a leftmost non-leaf page is not degenerate");
      } else {
        const PageEntry* before = i > 0 ? &img.entries[i - 1] : (prev_last ? &*prev_last : nullptr);
        bool before_degenerate = level > 0 && k == 0 && i == 1;
        if (before && !before_degenerate &&
            compare_entry(before->key, before->recno, e.key, e.recno, desc) >= 0) {
          fail(page_no, fmt::format("entry {} out of order", i));
        }
      }
      if (level > 0) {
        children.push_back(e.page_number);
        next_seps.push_back(degenerate ? std::nullopt : std::optional<PageEntry>(e));
      }
    }
    if (img.end_bucket && !img.entries.empty() &&
        compare_entry(img.entries.back().key, img.entries.back().recno, img.end_bucket->key,
                      img.end_bucket->recno, desc) >= 0 &&
        !(level > 0 && k == 0 && img.entries.size() == 1)) {
      fail(page_no, "END_BUCKET not above the last entry");
    }
    if (level == 0) {
      check.entries += img.entries.size();
      fill_sum += double(h.length - kBtreeHeaderSize) / double(ps - kBtreeHeaderSize);
    }
    ++check.level_pages[level];
    if (!img.entries.empty()) prev_last = img.entries.back();
    prev_end_bucket = img.end_bucket;
    prev_page = page_no;
  });
  check.avg_leaf_fill = check.level_pages[0] ? fill_sum / double(check.level_pages[0]) : 0;
  return check;
}

}  // namespace pbtree
