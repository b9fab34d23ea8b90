// Test helper: after a change to a tree, checks the per-frame page directories
// (node/page_directory.h). The writer keeps a leaf's directory current across its in-place
// inserts (PageDirectory::note_insert); any other is rebuilt lazily on the first search after
// its frame's version changed. For every cached live B-tree page whose frame version changed
// since the last check: the directory (maintained, or rebuilt by a search for the changed
// key) must be current, equal one rebuilt from scratch from the page bytes at its group
// starts (PageDirectory::rebuilt_equal; a fresh build must equal a second fresh build), and
// find what find_in_page finds (both modes, with and without a record number).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <shared_mutex>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "node/btree_page.h"
#include "node/page_directory.h"
#include "node/page_search.h"
#include "page/buffer_pool.h"

namespace pbtree::testing {

class DirectoryCheck {
 public:
  DirectoryCheck(BufferPool& pool, bool descending) : pool_(pool), descending_(descending) {}

  void check_after_change(std::span<const uint8_t> key) {
    const uint32_t ps = pool_.page_size();
    for (uint32_t p = 1; p < pool_.pages_in_use(); ++p) {
      if (!pool_.is_cached(p)) continue;  // changed pages are cached: the writer just wrote them
      PageRef ref = pool_.pin(p);
      std::shared_lock<FrameLatch> lock(ref.latch());
      const uint8_t* d = ref.data();
      if (!BtreePage(d).live(-1)) continue;
      auto it = seen_.find(p);
      if (it != seen_.end() && it->second == ref.version()) continue;  // checked, unchanged
      const bool was_current = current_directory(ref) != nullptr;
      const uint64_t builds = pool_.directory_stats().builds;
      for (FindMode mode : {FindMode::LowerBound, FindMode::UpperBound}) {
        for (std::optional<uint64_t> recno :
             {std::optional<uint64_t>{}, std::optional<uint64_t>{3}}) {
          PageFind got = find_in_frame(ref, key, descending_, recno, mode);
          PageFind want = find_in_page(d, ps, key, descending_, recno, mode);
          ASSERT_EQ(got.offset, want.offset) << "page " << p;
          ASSERT_EQ(got.prev_offset, want.prev_offset) << "page " << p;
          ASSERT_EQ(got.matched, want.matched) << "page " << p;
          ASSERT_EQ(got.at_marker, want.at_marker) << "page " << p;
          ASSERT_EQ(got.beyond_end_bucket, want.beyond_end_bucket) << "page " << p;
        }
      }
      const PageDirectory* lazy = current_directory(ref);
      ASSERT_NE(lazy, nullptr) << "page " << p;
      ASSERT_TRUE(lazy->rebuilt_equal(d, ps)) << "page " << p;
      if (!was_current || pool_.directory_stats().builds != builds) {  // built by the search
        PageDirectory scratch;
        scratch.build(d, ps, ref.version());
        ASSERT_TRUE(lazy->same_as(scratch)) << "page " << p;
      } else if (lazy->usable()) {
        ++maintained_;
      }
      seen_[p] = ref.version();
      ++checked_;
      if (lazy->usable()) ++usable_;
    }
  }

  /// Directories checked, and how many of them were usable (pages of long keys may have none
  /// that fits a quarter of the page: searches there take find_in_page).
  uint64_t checked() const { return checked_; }
  uint64_t usable() const { return usable_; }
  /// Of them, directories the writer had kept current (no rebuild by the check's search).
  uint64_t maintained() const { return maintained_; }

 private:
  BufferPool& pool_;
  bool descending_;
  std::map<uint32_t, uint64_t> seen_;  // page: frame version checked
  uint64_t checked_ = 0;
  uint64_t usable_ = 0;
  uint64_t maintained_ = 0;
};

}  // namespace pbtree::testing
