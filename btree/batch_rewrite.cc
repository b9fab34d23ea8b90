// BatchMerge's phase 2 (btree/batch_merge.h): each run of touched leaves rewritten once and
// full by LevelRunBuilder into the run's own page numbers first (RunWriter numbers, links and
// writes the pages), then the parent pages holding the runs' separators, up to the root (a new
// root when it splits; the root shrinks while it has one child).
#include <fmt/format.h>

#include <cstring>
#include <deque>
#include <stdexcept>

#include "btree/batch_merge.h"
#include "btree/tree_internal.h"

namespace pbtree {

uint32_t BatchMerge::RunWriter::take(bool& fresh) {
  if (next_old + 1 < old.size()) {
    fresh = false;
    if (before_overwrite) before_overwrite(next_old);
    return old[next_old++];
  }
  fresh = true;
  return m.allocate();
}

void BatchMerge::RunWriter::write(Held& h, uint32_t sibling) {
  h.page.header.sibling = sibling;
  h.page.header.left_sibling = out.empty() ? left0 : prev_no;
  write_btree_header(h.page.bytes.data(), h.page.header);
  if (!m.dry) {
    WriteLatch w(h.fresh ? m.t.pool_.create(h.page_no) : m.t.pool_.pin(h.page_no));
    std::memcpy(w.data(), h.page.bytes.data(), m.ps);
  }
  prev_no = h.page_no;
  out.push_back(PageEntry{std::move(h.page.sep_key), h.page.sep_recno, h.page_no});
}

void BatchMerge::RunWriter::push(LevelRunBuilder::Page&& page) {
  if (held.empty() && out.empty()) {
    if (before_overwrite) before_overwrite(0);
    held.push_back(Held{old[0], false, std::move(page)});
    return;
  }
  if (held.size() == 2) {
    bool fresh = false;
    held[1].page_no = take(fresh);
    held[1].fresh = fresh;
    write(held[0], held[1].page_no);
    held.pop_front();
  }
  held.push_back(Held{0, false, std::move(page)});
}

std::vector<uint32_t> BatchMerge::RunWriter::finish() {
  if (held.size() == 2) {
    if (old.size() >= 2) {
      if (before_overwrite) before_overwrite(old.size() - 1);
      held[1].page_no = old.back();
      last_used = true;
    } else {
      held[1].page_no = take(held[1].fresh);
    }
    write(held[0], held[1].page_no);
    held.pop_front();
  }
  write(held[0], right);
  held.clear();
  std::vector<uint32_t> unused(old.begin() + static_cast<long>(next_old),
                               old.end() - (old.size() >= 2 ? 1 : 0));
  if (old.size() >= 2 && !last_used) unused.push_back(old.back());
  if (right != 0 && prev_no != old.back() && !m.dry) {
    WriteLatch w(m.t.pool_.pin(right));
    MutableBtreePage(w.data()).set_left_sibling(prev_no);
  }
  return unused;
}

LevelRunBuilder::Options BatchMerge::builder_options(uint8_t level, bool nonleaf_free) const {
  LevelRunBuilder::Options o;
  o.page_size = ps;
  o.jump_interval = t.jump_interval_;
  o.index_id = t.index_id_;
  o.layout = t.def_.layout;
  o.descending = desc;
  o.level = level;
  o.nonleaf_free = nonleaf_free;
  return o;
}

void BatchMerge::release(const std::vector<uint32_t>& pages) {
  if (dry) return;
  for (uint32_t p : pages) {
    WriteLatch w(t.pool_.pin(p));
    MutableBtreePage(w.data()).mark_released();
    freed.push_back(p);
  }
}

BatchMerge::Change BatchMerge::change_of(const std::vector<uint32_t>& path,
                                         const std::vector<uint32_t>& old,
                                         std::vector<PageEntry>& written) {
  Change c;
  c.path = path;
  c.anchor = old[0];
  c.removed.assign(old.begin() + 1, old.end());
  c.added.assign(std::make_move_iterator(written.begin() + 1),
                 std::make_move_iterator(written.end()));
  return c;
}

BatchMerge::Change BatchMerge::rewrite_leaves(const Run& r) {
  BtreePageImage last;
  {
    PageRef ref = t.pool_.pin(r.pages.back());
    last = decode_page(ref.data(), ps);
  }
  uint32_t left0;
  {
    PageRef ref = t.pool_.pin(r.pages.front());
    left0 = BtreePage(ref.data()).left_sibling();
  }
  // Copies of the run's pages, taken before the writer overwrites them, not yet consumed.
  std::deque<std::vector<uint8_t>> copies;
  size_t copied = 0;
  auto copy_upto = [&](size_t i) {
    for (; copied <= i && copied < r.pages.size(); ++copied) {
      PageRef ref = t.pool_.pin(r.pages[copied]);
      if (!live_btree_page(ref.data(), 0)) corrupt_page(ref.data(), "not a live leaf");
      copies.emplace_back(ref.data(), ref.data() + ps);
    }
  };
  RunWriter w(*this, r.pages, left0, last.header.sibling, copy_upto);
  LevelRunBuilder b(builder_options(0, true),
                    [&w](LevelRunBuilder::Page&& p) { w.push(std::move(p)); });
  size_t bi = r.begin;
  std::vector<uint8_t> k;
  for (size_t pi = 0; pi < r.pages.size(); ++pi) {
    copy_upto(pi);
    const std::vector<uint8_t> page = std::move(copies.front());
    copies.pop_front();
    // The page's entries in order, each key rebuilt from its prefix (one pass).
    const uint8_t* d = page.data();
    check_btree_header(d, ps);
    const uint32_t limit = BtreePage(d).length();
    k.clear();
    IndexNode n = decode_node(d, limit, first_node(d), true, nullptr);
    while (!n.is_marker()) {
      if (n.prefix > k.size())
        corrupt_page(d, fmt::format("node at offset {}: bad prefix", n.offset));
      append_suffix(k, n.prefix, n.data, n.length);
      for (; bi < r.end && compare_entry(key(bi), recno(bi), k, n.recno, desc) < 0; ++bi) {
        b.add(key(bi), recno(bi), 0);
      }
      b.add(k, n.recno, 0);
      n = node_after(d, limit, n.end(), true, n);
    }
  }
  for (; bi < r.end; ++bi) b.add(key(bi), recno(bi), 0);
  b.finish(last.end_bucket ? &*last.end_bucket : nullptr);
  release(w.finish());
  return change_of(r.path, r.pages, w.out);
}

std::vector<PageEntry> BatchMerge::rewrite_nonleaf(uint8_t level,
                                                   const std::vector<uint32_t>& pages,
                                                   const std::vector<PageEntry>& entries,
                                                   const std::optional<PageEntry>& end,
                                                   uint32_t left0, uint32_t right, bool root) {
  std::vector<LevelRunBuilder::Page> built;
  auto build = [&](bool nonleaf_free) {
    built.clear();
    LevelRunBuilder b(builder_options(level, nonleaf_free),
                      [&built](LevelRunBuilder::Page&& p) { built.push_back(std::move(p)); });
    for (const PageEntry& e : entries) b.add(e.key, e.recno, e.page_number);
    b.finish(end ? &*end : nullptr);
  };
  build(!root);
  if (root && built.size() > 1) build(true);
  RunWriter w(*this, pages, left0, right, {});
  for (auto& p : built) w.push(std::move(p));
  release(w.finish());
  return std::move(w.out);
}

std::vector<BatchMerge::Change> BatchMerge::apply(uint8_t level, std::vector<Change>& changes,
                                                  bool top) {
  std::vector<Change> next;
  size_t ci = 0;
  while (ci < changes.size()) {
    const std::vector<uint32_t> gpath = changes[ci].path;
    const uint32_t start = gpath.at(level);
    std::vector<uint32_t> pages;
    std::vector<PageEntry> out;
    std::optional<PageEntry> end;
    uint32_t left0 = 0, right = 0;
    const std::vector<uint32_t>* removed = nullptr;
    size_t ri = 0;
    const size_t first_ci = ci;
    for (uint32_t p = start;;) {
      BtreePageImage img;
      {
        PageRef ref = t.pool_.pin(p);
        if (!live_btree_page(ref.data(), level)) corrupt_page(ref.data(), "not a live b-tree page");
        img = decode_page(ref.data(), ps);
      }
      if (pages.empty()) left0 = img.header.left_sibling;
      pages.push_back(p);
      for (PageEntry& e : img.entries) {
        if (removed != nullptr && ri < removed->size()) {
          if (e.page_number != (*removed)[ri]) {
            throw CorruptError(fmt::format(
                "page {}: pointer to page {} not after its left sibling's", p, (*removed)[ri]));
          }
          ++ri;
          continue;
        }
        const uint32_t child = e.page_number;
        out.push_back(std::move(e));
        if (ci < changes.size() && child == changes[ci].anchor) {
          for (PageEntry& a : changes[ci].added) out.push_back(std::move(a));
          removed = &changes[ci].removed;
          ri = 0;
          ++ci;
        }
      }
      end = std::move(img.end_bucket);
      right = img.header.sibling;
      if (removed == nullptr || ri == removed->size()) break;
      if (right == 0)
        throw CorruptError(fmt::format("page {}: children missing at level {}", p, level));
      p = right;
    }
    if (ci == first_ci) {
      std::string seen;
      for (const PageEntry& e : out) seen += fmt::format(" {}", e.page_number);
      throw CorruptError(fmt::format("page {} (level {}): no pointer to page {}; pointers{}", start,
                                     level, changes[ci].anchor, seen));
    }
    std::vector<PageEntry> written = rewrite_nonleaf(level, pages, out, end, left0, right, top);
    Change c = change_of(gpath, pages, written);
    if (!c.removed.empty() || !c.added.empty()) next.push_back(std::move(c));
  }
  return next;
}

void BatchMerge::grow(uint8_t level, Change& c) {
  std::vector<PageEntry> entries;
  entries.push_back(PageEntry{{}, 0, c.anchor});  // degenerate: every key below the next
  for (PageEntry& a : c.added) entries.push_back(std::move(a));
  for (;; ++level) {
    if (level + 1u >= t.level_limit_) {
      throw UsageError(fmt::format("index {}: the batch would exceed {} levels{}", t.def_.name,
                                   t.level_limit_, dry ? " (nothing changed)" : ""));
    }
    std::vector<LevelRunBuilder::Page> built;
    auto build = [&](bool nonleaf_free) {
      built.clear();
      LevelRunBuilder b(builder_options(static_cast<uint8_t>(level + 1), nonleaf_free),
                        [&built](LevelRunBuilder::Page&& p) { built.push_back(std::move(p)); });
      for (const PageEntry& e : entries) b.add(e.key, e.recno, e.page_number);
      b.finish(nullptr);
    };
    build(false);
    if (built.size() > 1) build(true);
    if (dry && built.size() == 1) return;
    std::vector<uint32_t> nums;
    for (size_t i = 0; i < built.size(); ++i) nums.push_back(allocate());
    std::vector<PageEntry> up;
    for (size_t i = 0; i < built.size(); ++i) {
      LevelRunBuilder::Page& p = built[i];
      p.header.left_sibling = i == 0 ? 0 : nums[i - 1];
      p.header.sibling = i + 1 < built.size() ? nums[i + 1] : 0;
      write_btree_header(p.bytes.data(), p.header);
      if (!dry) {
        WriteLatch w(t.pool_.create(nums[i]));
        std::memcpy(w.data(), p.bytes.data(), ps);
      }
      up.push_back(PageEntry{i == 0 ? std::vector<uint8_t>{} : std::move(p.sep_key),
                             i == 0 ? 0 : p.sep_recno, nums[i]});
    }
    if (built.size() == 1) {
      set_root(nums[0]);
      return;
    }
    entries = std::move(up);
  }
}

void BatchMerge::set_root(uint32_t root) {
  t.root_.store(root, std::memory_order_release);
  if (t.on_root_change_) t.on_root_change_(root);
}

void BatchMerge::shrink_root() {
  if (dry) return;
  for (;;) {
    const uint32_t root = t.root();
    PageRef ref = t.pool_.pin(root);
    if (BtreePage(ref.data()).leaf()) return;
    BtreePageImage img = decode_page(ref.data(), ps);
    if (img.entries.size() != 1) return;
    ref = PageRef();
    set_root(img.entries[0].page_number);
    release({root});
  }
}

}  // namespace pbtree
