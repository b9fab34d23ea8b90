// CursorBackward: the backward half of Cursor (btree/cursor.cc): a jump area of a leaf decoded
// into the cursor's cache and served from its end, moving left along the sibling chain.
#pragma once

#include <cstdint>
#include <span>

#include "btree/btree.h"
#include "btree/latch.h"

namespace pbtree {

struct Cursor::Backward {
  /// Counts one move of the cursor; more moves than the pages in use (WalkBound: file, log and
  /// the pages only the pool holds yet) means the sibling chain loops: CorruptError. `page_no`:
  /// the page the cursor is on; `left`: the move went to the left sibling.
  static void count_hop(Cursor& c, const uint8_t* d, uint32_t page_no, bool left);
  /// Loads the jump area of `cur` that ends before `boundary` (kToEnd: the END marker) and takes
  /// its last entry; moves left when nothing is before `boundary`. Returns false if the left
  /// sibling changed under us (the caller re-seeks). Throws CorruptError.
  static bool fill_backward(Cursor& c, ReadLatch& cur, uint32_t boundary);
  /// Makes the cache's previous entry the current one.
  static void take_cached(Cursor& c);
  /// Positions on the last entry < (key, recno).
  static void seek_backward(Cursor& c, std::span<const uint8_t> key, uint64_t recno);
  /// Positions on the index's last entry.
  static void seek_last(Cursor& c);
};

}  // namespace pbtree
