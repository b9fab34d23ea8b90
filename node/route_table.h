// The route table of a cached non-leaf page: for every node of the page (entries and the
// END_BUCKET copy) its child page, record number and key, held in memory beside the frame and
// never written. A descent searches it instead of the page bytes, without the page's latch:
// the optimistic, version-validated inner-page read of btree/tree.cc (LeanStore's optimistic
// latches; "B-Trees Are Back" key heads).
//
// Block (std::atomic<uint64_t> words; readers load them with acquire, builders store them
// with release, so a reader that sees a word of a new build also sees that build's odd seq):
//
//   word 0            capacity of the block in words (fixed when the block is allocated)
//   word 1            bits 0..15 entry nodes n, bit 16 END_BUCKET present, bit 17 degenerate
//                     first node (leftmost non-leaf page: sorts below every key), bit 18
//                     usable, bits 24..31 page level, bits 32..63 page prefix length P
//   word 2            bits 0..31 right sibling page, bits 32..63 bytes in the key area
//   heads   m words   per node (m = n + END_BUCKET): key bytes [P, P + 8) big-endian,
//                     zero-padded
//   links   m words   per node: bits 0..31 child page, bits 32..63 offset of the key's bytes
//                     [P + 8, len) in the key area
//   recnos  m words   per node: bits 0..39 record number, bits 40..63 full key length
//   key area          the page prefix (P bytes), then the rest of each key longer than P + 8;
//                     byte j lies in word j / 8 at bits 8 * (j % 8)
//
// Concurrency (a seqlock): a builder holds the frame's shared latch (so the page does not
// change) and Frame::aux_mutex (one builder at a time); it makes `seq` odd, writes, stamps the
// frame version and makes `seq` even. A reader loads `seq`, reads, and loads `seq` again: a
// change discards what it read. Every index read from the block is checked against its
// capacity before use, so a torn read stays inside the block. A block is replaced only by a
// larger one and the old one is kept until the table is destroyed (with its frame), so a
// reader never reads freed memory; at most log2(largest / smallest) blocks are kept.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "page/buffer_pool.h"

namespace pbtree {

/// Where a descent goes from a non-leaf page.
struct RouteStep {
  uint32_t next = 0;     ///< the child page, or the right sibling if `sibling`
  bool sibling = false;  ///< the key lies beyond the END_BUCKET copy: same level, to the right
  int level = 0;         ///< the routed page's level (>= 1)
};

/// The route table of one frame (see the file comment).
class RouteTable : public FrameAux {
 public:
  /// Frame version of a table that describes no page.
  static constexpr uint64_t kNoVersion = ~uint64_t{0};

  /// Rebuilds for `page` (page_size bytes, a page the caller holds the shared latch of) at
  /// frame version `version`. A leaf, a page whose nodes do not decode, or a page with more
  /// than 2^16 - 1 entries gets an unusable table (route() then returns false). Returns the
  /// change in bytes held. Throws std::bad_alloc only (the table is then left unusable).
  int64_t build(const uint8_t* page, uint32_t page_size, uint64_t version);

  /// The step for (`key`, `recno`) in index order (`descending`) on the page the table was built
  /// for, as BTree::descend takes it from find_in_page(..., FindMode::UpperBound): the child of
  /// the last node at or below the target (the first node if none), or the right sibling when
  /// the target lies beyond the END_BUCKET copy. Reads without a latch: true only if the table
  /// was usable, described frame version `version` and did not change while it was read.
  /// False means: take the page's latch and search its bytes (that search also reports a
  /// corrupt page). Throws nothing.
  bool route(uint64_t version, std::span<const uint8_t> key, bool descending, uint64_t recno,
             RouteStep& out) const;

  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  /// Bytes held (object and blocks).
  size_t bytes() const { return sizeof(*this) + held_words_ * sizeof(uint64_t); }

 private:
  using Word = std::atomic<uint64_t>;
  // A block of at least `words` words (word 0 set), replacing the current one if smaller.
  Word* reserve(size_t words);

  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> version_{kNoVersion};
  std::atomic<Word*> block_{nullptr};
  std::vector<std::unique_ptr<Word[]>> blocks_;  // every block allocated; the last is current
  size_t held_words_ = 0;
};

/// The frame's route table if one exists (else null); creates none. For the descent.
inline const RouteTable* frame_route_table(const Frame& f) {
  return static_cast<const RouteTable*>(f.route.load(std::memory_order_acquire));
}

/// Builds or rebuilds the route table of a non-leaf page whose shared (or exclusive) latch
/// the caller holds, if it is missing or stale and no other thread is building one (then it
/// does nothing). Counts the build and its bytes in the pool's directory counters
/// (BufferPool::note_directory). Throws nothing but std::bad_alloc.
void refresh_route_table(const PageRef& ref);

}  // namespace pbtree
