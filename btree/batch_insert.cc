// BTree::insert_batch: batched insert / merge-append. The batch is sorted and checked (against
// itself, and each entry against its neighbours in the leaf it falls into); the touched
// leaves are found with one descent per leaf (the parent's next separator bounds the leaf);
// consecutive touched leaves form runs, each rewritten once and full by LevelRunBuilder
// (btree/leaf_run_builder.h) into the run's own page numbers first; the parent pages that
// hold a run's separators are rewritten the same way, level by level up to the root. Leaves
// the batch does not touch keep their bytes. One tree change: nothing reaches the file before
// IndexFile::flush(), rollback() drops it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>

#include "btree/btree.h"
#include "btree/leaf_run_builder.h"
#include "btree/leaf_writer.h"
#include "btree/radix_sort.h"
#include "btree/tree_internal.h"
#include <pbtree/index_file.h>

namespace pbtree {

// One insert_batch's state (friend of BTree).
struct BatchMerge {
  // A touched leaf: its page, the descent's path (path[level]), its right sibling and the
  // batch entries [begin, end) that fall into it.
  struct Touched {
    uint32_t page;
    std::vector<uint32_t> path;
    uint32_t sibling;
    size_t begin, end;
  };
  // A run of consecutive pages of one level to rewrite (the batch slice on leaves).
  struct Run {
    std::vector<uint32_t> pages;
    std::vector<uint32_t> path;
    size_t begin, end;
  };
  // What the level above must do for a rewritten run: after the pointer to `anchor` (the
  // run's first page, kept), drop the pointers to `removed` and add `added`.
  struct Change {
    std::vector<uint32_t> path;
    uint32_t anchor;
    std::vector<uint32_t> removed;
    std::vector<PageEntry> added;
  };

  BTree& t;
  EntryBatch& batch;
  const uint32_t ps;
  const bool desc;
  std::vector<uint32_t> freed;
  std::vector<uint8_t> k1, k2;

  BatchMerge(BTree& tree, EntryBatch& entries)
      : t(tree), batch(entries), ps(tree.pool_.page_size()), desc(tree.def_.descending) {}

  std::span<const uint8_t> key(size_t i) const { return batch.key(batch.items()[i]); }
  uint64_t recno(size_t i) const { return batch.items()[i].recno; }
  uint64_t tag(size_t i) const { return batch.items()[i].tag; }

  [[noreturn]] void duplicate_pair(size_t i) const {
    const std::string value = key_value_text(t.def_, key(i));
    throw DuplicateKeyError(fmt::format("index {}: entry ({}, {}) already exists (entry {})",
                                        t.def_.name, value, recno(i), tag(i)),
                            t.def_.name, value, recno(i), 0, tag(i));
  }
  [[noreturn]] void duplicate_value(size_t i, uint64_t existing) const {
    const std::string value = key_value_text(t.def_, key(i));
    throw DuplicateKeyError(
        fmt::format("unique index {}: value {} already exists (record {}) (entry {})",
                    t.def_.name, value, existing, tag(i)),
        t.def_.name, value, existing, 0, tag(i));
  }

  // The node at `offset` of `page` with its full key in `key`; an END_BUCKET's key too (the
  // copy of the right sibling's first key).
  IndexNode node_key_at(const uint8_t* page, uint32_t offset, std::vector<uint8_t>& key) const {
    IndexNode n = node_with_key(page, ps, offset, key);
    if (n.is_end_bucket()) {
      if (n.prefix > key.size()) corrupt_page(page, "END_BUCKET prefix beyond the last key");
      append_suffix(key, n.prefix, n.data, n.length);
    }
    return n;
  }

  // Descends to the leaf of (key, recno): the last child whose separator is <= it on every
  // level. `bounded`/`bound`: the separator after that child on the leaf's parent (or its
  // END_BUCKET copy): entries below it fall into the same leaf.
  uint32_t descend(std::span<const uint8_t> key, uint64_t recno, std::vector<uint32_t>& path,
                   bool& bounded, std::vector<uint8_t>& bound, uint64_t& bound_recno) {
    uint32_t p = t.root();
    path.clear();
    bounded = false;
    for (;;) {
      PageRef ref = t.pool_.pin(p);
      const uint8_t* d = ref.data();
      if (!live_btree_page(d, -1)) corrupt_page(d, "not a live b-tree page");
      const int level = BtreePage(d).level();
      if (path.empty()) path.assign(level + 1, 0);
      if (level >= static_cast<int>(path.size()) || path[level] != 0) {
        corrupt_page(d, fmt::format("unexpected level {}", level));
      }
      path[level] = p;
      if (level == 0) return p;
      PageFind f = find_in_page(d, ps, key, desc, recno, FindMode::UpperBound);
      if (f.beyond_end_bucket || f.prev_offset == 0) {
        corrupt_page(d, "key outside the page on the writer's path");
      }
      IndexNode n = decode_node(d, BtreePage(d).length(), f.prev_offset, false, f.prev_context());
      if (n.is_marker()) corrupt_page(d, "non-leaf page without entries");
      IndexNode b = node_key_at(d, f.offset, bound);
      bounded = !b.is_end_level();
      bound_recno = b.recno;
      p = n.page_number;
    }
  }

  // Checks batch entry i against its neighbours in leaf `d` (the END_BUCKET copy included).
  void check_in_leaf(const uint8_t* d, size_t i) {
    const std::span<const uint8_t> k = key(i);
    PageFind f = find_in_page(d, ps, k, desc, recno(i), FindMode::LowerBound);
    if (f.beyond_end_bucket) corrupt_page(d, "batch entry beyond the leaf's END_BUCKET");
    const bool unique = t.def_.unique && !t.is_null_key(k);
    // The node at the position: a key of another length differs (no key rebuilt).
    const IndexNode at = decode_node(d, BtreePage(d).length(), f.offset, true, f.offset_context());
    if (at.is_marker() || at.prefix + at.length == k.size()) {
      IndexNode n = node_key_at(d, f.offset, k1);
      if (!n.is_end_level() && compare_keys(k1, k, desc) == 0) {
        if (n.recno == recno(i)) duplicate_pair(i);
        if (unique) duplicate_value(i, n.recno);
      }
    }
    if (unique && f.prev_offset != 0) {
      IndexNode p = node_with_key(d, ps, f.prev_offset, k2);
      if (compare_keys(k2, k, desc) == 0) duplicate_value(i, p.recno);
    }
  }

  // Checks batch entry i against entry i - 1 of the sorted batch.
  void check_in_batch(size_t i) {
    if (i == 0 || compare_keys(key(i - 1), key(i), desc) != 0) return;
    if (recno(i - 1) == recno(i)) duplicate_pair(i);
    if (t.def_.unique && !t.is_null_key(key(i))) duplicate_value(i, recno(i));
  }

  // Phase 1: the touched leaves, every check done; nothing written.
  std::vector<Touched> find_touched() {
    std::vector<Touched> out;
    const size_t n = batch.items().size();
    std::vector<uint8_t> bound;
    uint64_t bound_recno = 0;
    bool bounded = false;
    for (size_t i = 0; i < n;) {
      Touched tl;
      tl.page = descend(key(i), recno(i), tl.path, bounded, bound, bound_recno);
      PageRef ref = t.pool_.pin(tl.page);
      std::shared_lock latch(ref.latch());
      const uint8_t* d = ref.data();
      if (!live_btree_page(d, 0)) corrupt_page(d, "not a live leaf");
      tl.sibling = BtreePage(d).sibling();
      tl.begin = i;
      do {
        check_in_batch(i);
        check_in_leaf(d, i);
        ++i;
      } while (i < n && (!bounded || compare_entry(key(i), recno(i), bound, bound_recno, desc) < 0));
      tl.end = i;
      out.push_back(std::move(tl));
    }
    return out;
  }

  // True if batch entry `i` sorts below the first entry of leaf `page` (possible on compact
  // pages, whose separators are cut short): the left neighbour's END_BUCKET then changes too.
  bool below_first(uint32_t page, size_t i) {
    PageRef ref = t.pool_.pin(page);
    const uint8_t* d = ref.data();
    IndexNode n = node_with_key(d, ps, first_node(d), k1);
    return !n.is_marker() && compare_entry(key(i), recno(i), k1, n.recno, desc) < 0;
  }

  std::vector<Run> make_runs(std::vector<Touched>& touched) {
    std::vector<Run> runs;
    uint32_t last_sibling = 0;
    for (Touched& tl : touched) {
      if (!runs.empty() && runs.back().pages.back() != 0 && last_sibling == tl.page) {
        runs.back().pages.push_back(tl.page);
        runs.back().end = tl.end;
      } else {
        uint32_t left = 0;
        {
          PageRef ref = t.pool_.pin(tl.page);
          left = BtreePage(ref.data()).left_sibling();
        }
        if (left != 0 && below_first(tl.page, tl.begin)) {
          if (!runs.empty() && runs.back().pages.back() == left) {
            runs.back().pages.push_back(tl.page);
            runs.back().end = tl.end;
          } else {
            // The left neighbour joins the run; its own path from a descent to its first entry.
            PageRef ref = t.pool_.pin(left);
            const uint8_t* d = ref.data();
            IndexNode f = node_with_key(d, ps, first_node(d), k2);
            std::vector<uint8_t> first = k2, bound;
            ref = PageRef();
            Run r;
            bool bounded = false;
            uint64_t bound_recno = 0;
            if (descend(first, f.recno, r.path, bounded, bound, bound_recno) != left) {
              throw CorruptError(fmt::format("page {}: left sibling not reached from the root", left));
            }
            r.pages = {left, tl.page};
            r.begin = tl.begin;
            r.end = tl.end;
            runs.push_back(std::move(r));
          }
        } else {
          runs.push_back(Run{{tl.page}, tl.path, tl.begin, tl.end});
        }
      }
      last_sibling = tl.sibling;
    }
    return runs;
  }

  // Numbers, links and writes the pages of one rewritten run as they come from the builder:
  // page 0 takes old[0]; the middle pages take old[1 .. k-2], then fresh pages; the last page
  // takes old[k-1] (k >= 2). Two pages are held back so the last page's number is known.
  struct RunWriter {
    BatchMerge& m;
    std::vector<uint32_t> old;
    uint32_t left0, right;
    std::function<void(size_t)> before_overwrite;  // old[i] is about to be overwritten
    RunWriter(BatchMerge& merge, std::vector<uint32_t> old_pages, uint32_t left, uint32_t right_page,
              std::function<void(size_t)> hook)
        : m(merge), old(std::move(old_pages)), left0(left), right(right_page),
          before_overwrite(std::move(hook)) {}
    size_t next_old = 1;
    bool last_used = false;
    struct Held {
      uint32_t page_no = 0;
      bool fresh = false;
      LevelRunBuilder::Page page;
    };
    std::deque<Held> held;
    uint32_t prev_no = 0;
    std::vector<PageEntry> out;  // (separator, page) of every page written, in order

    uint32_t take(bool& fresh) {
      if (next_old + 1 < old.size()) {
        fresh = false;
        if (before_overwrite) before_overwrite(next_old);
        return old[next_old++];
      }
      fresh = true;
      return m.t.allocator_.allocate();
    }
    void write(Held& h, uint32_t sibling) {
      h.page.header.sibling = sibling;
      h.page.header.left_sibling = out.empty() ? left0 : prev_no;
      write_btree_header(h.page.bytes.data(), h.page.header);
      {
        WriteLatch w(h.fresh ? m.t.pool_.create(h.page_no) : m.t.pool_.pin(h.page_no));
        std::memcpy(w.data(), h.page.bytes.data(), m.ps);
      }
      prev_no = h.page_no;
      out.push_back(PageEntry{std::move(h.page.sep_key), h.page.sep_recno, h.page_no});
    }
    void push(LevelRunBuilder::Page&& page) {
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
    // Writes the held pages; returns the old pages left unused.
    std::vector<uint32_t> finish() {
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
      if (right != 0 && prev_no != old.back()) {
        WriteLatch w(m.t.pool_.pin(right));
        MutableBtreePage(w.data()).set_left_sibling(prev_no);
      }
      return unused;
    }
  };

  LevelRunBuilder::Options builder_options(uint8_t level, bool nonleaf_free) const {
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

  void release(const std::vector<uint32_t>& pages) {
    for (uint32_t p : pages) {
      WriteLatch w(t.pool_.pin(p));
      MutableBtreePage(w.data()).mark_released();
      freed.push_back(p);
    }
  }

  Change change_of(const std::vector<uint32_t>& path, const std::vector<uint32_t>& old,
                   std::vector<PageEntry>& written) {
    Change c;
    c.path = path;
    c.anchor = old[0];
    c.removed.assign(old.begin() + 1, old.end());
    c.added.assign(std::make_move_iterator(written.begin() + 1),
                   std::make_move_iterator(written.end()));
    return c;
  }

  // Rewrites a leaf run merged with its batch slice.
  Change rewrite_leaves(const Run& r) {
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
    LevelRunBuilder b(builder_options(0, true), [&w](LevelRunBuilder::Page&& p) { w.push(std::move(p)); });
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
        if (n.prefix > k.size()) corrupt_page(d, fmt::format("node at offset {}: bad prefix", n.offset));
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

  // Rewrites the pages `pages` of `level` holding `entries` (their new contents); `root`: the
  // level's only page (filled to Firebird's limit if it then still fits one page).
  std::vector<PageEntry> rewrite_nonleaf(uint8_t level, const std::vector<uint32_t>& pages,
                                         const std::vector<PageEntry>& entries,
                                         const std::optional<PageEntry>& end, uint32_t left0,
                                         uint32_t right, bool root) {
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

  // Applies `changes` (from the level below, in key order) to level `level`.
  std::vector<Change> apply(uint8_t level, std::vector<Change>& changes, bool top) {
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
              throw CorruptError(fmt::format("page {}: pointer to page {} not after its left sibling's", p, (*removed)[ri]));
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
        if (right == 0) throw CorruptError(fmt::format("page {}: children missing at level {}", p, level));
        p = right;
      }
      if (ci == first_ci) {
        std::string seen;
        for (const PageEntry& e : out) seen += fmt::format(" {}", e.page_number);
        throw CorruptError(fmt::format("page {} (level {}): no pointer to page {}; pointers{}", start, level, changes[ci].anchor, seen));
      }
      std::vector<PageEntry> written = rewrite_nonleaf(level, pages, out, end, left0, right, top);
      Change c = change_of(gpath, pages, written);
      if (!c.removed.empty() || !c.added.empty()) next.push_back(std::move(c));
    }
    return next;
  }

  // The root split into the pages of `changes` (one change): new levels above it.
  void grow(uint8_t level, Change& c) {
    std::vector<PageEntry> entries;
    entries.push_back(PageEntry{{}, 0, c.anchor});  // degenerate: every key below the next
    for (PageEntry& a : c.added) entries.push_back(std::move(a));
    for (;; ++level) {
      if (level + 1u >= kMaxLevels) throw UsageError(fmt::format("index would exceed {} levels", kMaxLevels));
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
      std::vector<uint32_t> nums;
      for (size_t i = 0; i < built.size(); ++i) nums.push_back(t.allocator_.allocate());
      std::vector<PageEntry> up;
      for (size_t i = 0; i < built.size(); ++i) {
        LevelRunBuilder::Page& p = built[i];
        p.header.left_sibling = i == 0 ? 0 : nums[i - 1];
        p.header.sibling = i + 1 < built.size() ? nums[i + 1] : 0;
        write_btree_header(p.bytes.data(), p.header);
        {
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

  void set_root(uint32_t root) {
    t.root_.store(root, std::memory_order_release);
    if (t.on_root_change_) t.on_root_change_(root);
  }

  // A non-leaf root with one child gives way to the child (repeatedly).
  void shrink_root() {
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

  void run() {
    std::vector<Touched> touched = find_touched();
    std::vector<Run> runs = make_runs(touched);
    touched.clear();
    uint8_t top;
    {
      PageRef ref = t.pool_.pin(t.root());
      top = BtreePage(ref.data()).level();
    }
    std::vector<Change> changes;
    for (const Run& r : runs) {
      Change c = rewrite_leaves(r);
      if (!c.removed.empty() || !c.added.empty()) changes.push_back(std::move(c));
    }
    for (uint8_t level = 1; !changes.empty(); ++level) {
      if (level > top) {
        grow(static_cast<uint8_t>(level - 1), changes.at(0));
        break;
      }
      changes = apply(level, changes, level == top);
    }
    shrink_root();
    for (uint32_t p : freed) t.allocator_.release(p);
  }
};

uint64_t BTree::insert_batch(EntryBatch& entries) {
  const uint32_t ps = pool_.page_size();
  if (read_only_) throw UsageError(fmt::format("{}: opened read-only", pool_.file().path()));
  auto& items = entries.items();
  if (items.empty()) return 0;
  for (const auto& it : items) {
    if (it.length >= ps / 4) {
      throw KeyError(
          fmt::format("key size {} exceeds implementation restriction: keys must be shorter "
                      "than page_size/4 = {} bytes (page size {}) (entry {})",
                      it.length, ps / 4, ps, it.tag));
    }
  }
  sort_entry_batch(entries, def_.descending);
  std::lock_guard lock(write_mutex_);
  BatchMerge(*this, entries).run();
  // The in-place paths' rightmost-leaf cache may name a page rewritten here.
  if (writer_cache_) writer_cache_->rm_leaf = 0;
  return items.size();
}

}  // namespace pbtree
