// A bound on the moves of one walk along a level of a B-tree (move right past END_BUCKET,
// move left, a parent search along the siblings): a live tree never needs more moves than the
// file has pages, so one more means a sibling chain that loops (a corrupt file), and the walk
// ends with a CorruptError naming the page it stands on instead of spinning forever.
// The file size is read (fstat) only once a walk exceeds kFreeHops, so ordinary lookups and
// scans pay one increment per move.
#pragma once

#include <cstdint>
#include <string>

#include "page/btree_page.h"
#include "page/errors.h"
#include "page/page_file.h"

namespace pbtree {

class WalkBound {
 public:
  /// Moves allowed without asking the file for its size.
  static constexpr uint64_t kFreeHops = 1024;

  explicit WalkBound(const PageFile& file) : file_(&file) {}

  /// Counts one move from `page` (a B-tree page image: its self number and type name the
  /// page in the message). Throws CorruptError "page N (b-tree): <what> (more than M moves
  /// along a level of a file of M pages)" once the moves exceed the file's pages.
  void step(const uint8_t* page, const char* what) {
    if (++hops_ <= kFreeHops) return;
    slow_step(page, what);
  }
  uint64_t hops() const { return hops_; }

 private:
  void slow_step(const uint8_t* page, const char* what) {
    if (pages_ == 0) pages_ = file_->file_size() / file_->page_size() + 1;
    if (hops_ > pages_) {
      throw CorruptError(page_error(
          page, std::string(what) + " (more moves along a level than the file has pages)"));
    }
  }
  const PageFile* file_;
  uint64_t hops_ = 0;
  uint64_t pages_ = 0;
};

}  // namespace pbtree
