// BTree::insert_batch: batched insert / merge-append. The batch is sorted and checked (against
// itself, and each entry against its neighbours in the leaf it falls into); the touched
// leaves are found with one descent per leaf (the parent's next separator bounds the leaf);
// consecutive touched leaves form runs, each rewritten once and full by LevelRunBuilder
// (btree/leaf_run_builder.h) into the run's own page numbers first; the parent pages that
// hold a run's separators are rewritten the same way, level by level up to the root. Leaves
// the batch does not touch keep their bytes. One tree change: nothing reaches the file before
// IndexFile::flush(), rollback() drops it.
#include <fmt/format.h>
#include <pbtree/index_file.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>

#include "btree/batch_merge.h"
#include "btree/btree.h"
#include "btree/leaf_run_builder.h"
#include "btree/leaf_writer.h"
#include "btree/radix_sort.h"
#include "btree/tree_internal.h"

namespace pbtree {

void BatchMerge::duplicate_pair(size_t i) const {
  const std::string value = key_value_text(t.def_, key(i));
  throw DuplicateKeyError(fmt::format("index {}: entry ({}, {}) already exists (entry {})",
                                      t.def_.name, value, recno(i), tag(i)),
                          t.def_.name, value, recno(i), 0, tag(i));
}

void BatchMerge::duplicate_value(size_t i, uint64_t existing) const {
  const std::string value = key_value_text(t.def_, key(i));
  throw DuplicateKeyError(
      fmt::format("unique index {}: value {} already exists (record {}) (entry {})", t.def_.name,
                  value, existing, tag(i)),
      t.def_.name, value, existing, 0, tag(i));
}

IndexNode BatchMerge::node_key_at(const uint8_t* page, uint32_t offset,
                                  std::vector<uint8_t>& key) const {
  IndexNode n = node_with_key(page, ps, offset, key);
  if (n.is_end_bucket()) {
    if (n.prefix > key.size()) corrupt_page(page, "END_BUCKET prefix beyond the last key");
    append_suffix(key, n.prefix, n.data, n.length);
  }
  return n;
}

uint32_t BatchMerge::descend(std::span<const uint8_t> key, uint64_t recno,
                             std::vector<uint32_t>& path, bool& bounded,
                             std::vector<uint8_t>& bound, uint64_t& bound_recno) {
  bounded = false;
  return descend_for_write(t, path, [&](const uint8_t* d) {
    PageFind f = find_in_page(d, ps, key, desc, recno, FindMode::UpperBound);
    if (f.beyond_end_bucket || f.prev_offset == 0) {
      corrupt_page(d, "key outside the page on the writer's path");
    }
    IndexNode n = decode_node(d, BtreePage(d).length(), f.prev_offset, false, f.prev_context());
    if (n.is_marker()) corrupt_page(d, "non-leaf page without entries");
    IndexNode b = node_key_at(d, f.offset, bound);
    bounded = !b.is_end_level();
    bound_recno = b.recno;
    return n.page_number;
  });
}

void BatchMerge::check_in_leaf(const uint8_t* d, size_t i) {
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

void BatchMerge::check_in_batch(size_t i) {
  if (i == 0 || compare_keys(key(i - 1), key(i), desc) != 0) return;
  if (recno(i - 1) == recno(i)) duplicate_pair(i);
  if (t.def_.unique && !t.is_null_key(key(i))) duplicate_value(i, recno(i));
}

std::vector<BatchMerge::Touched> BatchMerge::find_touched() {
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

bool BatchMerge::below_first(uint32_t page, size_t i) {
  PageRef ref = t.pool_.pin(page);
  const uint8_t* d = ref.data();
  IndexNode n = node_with_key(d, ps, first_node(d), k1);
  return !n.is_marker() && compare_entry(key(i), recno(i), k1, n.recno, desc) < 0;
}

std::vector<BatchMerge::Run> BatchMerge::make_runs(std::vector<Touched>& touched) {
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
            throw CorruptError(
                fmt::format("page {}: left sibling not reached from the root", left));
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

void BatchMerge::run() {
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
  if (!dry) {
    for (uint32_t p : freed) t.allocator_.release(p);
  }
}

uint64_t BTree::insert_batch(EntryBatch& entries) {
  const uint32_t ps = pool_.page_size();
  if (read_only_) throw ReadOnlyError(fmt::format("{}: opened read-only", pool_.file().path()));
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
  {
    // With the root at the top level the batch may need one more: a dry run first, which
    // throws UsageError before any page changes if it would (issue 30: grow() threw after the
    // lower levels were rewritten, and close() committed that tree).
    PageRef ref = pool_.pin(root());
    const bool at_top = BtreePage(ref.data()).level() + 1u >= level_limit_;
    ref = PageRef();
    if (at_top) BatchMerge(*this, entries, true).run();
  }
  BatchMerge(*this, entries).run();
  // The in-place paths' rightmost-leaf cache may name a page rewritten here.
  if (writer_cache_) writer_cache_->rm_leaf = 0;
  return items.size();
}

}  // namespace pbtree
