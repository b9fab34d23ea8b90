// A bound on the moves of one walk along a level of a B-tree (move right past END_BUCKET,
// move left, a parent search along the siblings, a cursor's hops): a live tree never needs
// more moves than the file has pages in use (BufferPool::pages_in_use(): the file, its log and
// the pages only the pool holds yet), so one more means a sibling chain that loops (a corrupt
// file), and the walk ends with a CorruptError naming the page it stands on instead of
// spinning forever. The page count is asked for only once a walk exceeds kFreeHops, so
// ordinary lookups and scans pay one increment per move. The one loop guard of btree/.
#pragma once

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <cstdint>
#include <string>

#include "node/btree_page.h"
#include "page/buffer_pool.h"
#include "page/page_header.h"

namespace pbtree {

class WalkBound {
 public:
  /// Moves allowed without asking the pool for the pages in use.
  static constexpr uint64_t kFreeHops = 1024;

  explicit WalkBound(const BufferPool& pool) : pool_(&pool) {}

  /// Counts one move from `page` (a B-tree page image: its self number and type name the
  /// page in the message). Throws CorruptError "page N (b-tree): <what> (more moves along a
  /// level than the file has pages)" once the moves exceed the pages in use + 1.
  void step(const uint8_t* page, const char* what) {
    if (++hops_ <= kFreeHops) return;
    check(hops_, *pool_, page_number_of(page), page, what);
  }
  /// As step(page, what), naming `page_no` (a page only the pool holds has no page number
  /// stamped yet).
  void step(const uint8_t* page, uint32_t page_no, const char* what) {
    if (++hops_ <= kFreeHops) return;
    check(hops_, *pool_, page_no, page, what);
  }
  /// Counts a move made without reading the page's bytes (the optimistic descent of
  /// btree/tree.cc), which makes such moves only while hops() < kFreeHops and latches the
  /// page and calls step() beyond, so the check still runs on a looping chain.
  void count_free() { ++hops_; }
  uint64_t hops() const { return hops_; }

  /// The check behind step(), for a counter kept elsewhere (a Cursor's hops; `explain`
  /// false: the message is "page N (b-tree): <what>" alone, as cursors have always said).
  static void check(uint64_t hops, const BufferPool& pool, uint32_t page_no, const uint8_t* page,
                    const char* what, bool explain = true) {
    if (hops <= kFreeHops) return;
    if (hops > pool.pages_in_use() + 1) {
      throw CorruptError(
          fmt::format("page {} ({}): {}{}", page_no, page_type_name(page_type_of(page)), what,
                      explain ? " (more moves along a level than the file has pages)" : ""),
          "", page_no, page_type_name(page_type_of(page)));
    }
  }

 private:
  const BufferPool* pool_;
  uint64_t hops_ = 0;
};

}  // namespace pbtree
