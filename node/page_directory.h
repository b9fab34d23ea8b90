// The per-frame page directory: an in-memory index of one cached B-tree page (either node
// layout) that lets a search skip the node walk of find_in_page (node/page_search.h). It is
// never written to the file; the page bytes, jump nodes included, stay as Firebird writes them.
//
// Every K-th entry node of the page starts a group (K = 16, doubled until the directory fits
// a quarter of the page size). For each group it keeps the node's offset, its full key length,
// an 8-byte big-endian head of the key after the page-wide common prefix, the key's remaining
// bytes when they do not fit the head, and (compact layout) the context the node is decoded
// with. A search binary-searches the groups (u64 head compares; full compares on ties), then
// runs find_in_page's prefix-trick scan over at most one group.
//
// The directory is built on a page's first search after it was read or changed and stamped
// with the frame's version (BufferPool bumps it on every load and mark_dirty); a stale one is
// rebuilt lazily (the writer does not maintain it). Its bytes are counted in
// BufferPool::aux_bytes and its builds in BufferPool::aux_builds.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "node/page_search.h"
#include "page/buffer_pool.h"

namespace pbtree {

/// The directory of one page (see the file comment). Built by build(); read-only afterwards.
class PageDirectory : public FrameAux {
 public:
  /// Frame version of a directory that describes no page.
  static constexpr uint64_t kNoVersion = ~uint64_t{0};
  /// Smallest group size (entries per group).
  static constexpr uint32_t kMinGroup = 16;

  /// Rebuilds from scratch for `page` (page_size bytes) at frame version `version`. A page
  /// whose nodes do not decode gets an unusable directory (usable() false; find_in_page then
  /// reports the damage). Throws CorruptError only on a bad page header.
  void build(const uint8_t* page, uint32_t page_size, uint64_t version);
  /// find_in_page through the directory: the same offset, prev_offset, matched, at_marker and
  /// beyond_end_bucket, and contexts that decode the same nodes. `page` must be the bytes it
  /// was built from. Throws CorruptError.
  PageFind find(const uint8_t* page, std::span<const uint8_t> key, bool descending,
                std::optional<uint64_t> recno, FindMode mode) const;

  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  bool usable() const { return usable_; }
  /// Entries per group, groups, and heap plus object bytes held.
  uint32_t group_size() const { return group_size_; }
  size_t groups() const { return groups_.size(); }
  size_t bytes() const;
  /// Same contents (not comparing the version stamp): for tests comparing a maintained or
  /// lazily rebuilt directory with one built from scratch.
  bool same_as(const PageDirectory& other) const;

 private:
  struct Group {
    uint16_t offset;     // node offset in the page
    uint16_t key_len;    // full key length
    uint16_t key_off;    // into keys_ (suffix after the prefix beyond the head), or kExact
    uint16_t prev_len;   // compact: previous node's key length (context)
  };
  static constexpr uint16_t kExact = 0xFFFF;

  // Counts the entries, picks the group size and fills; false if the page cannot have one.
  bool fill_all(const uint8_t* page, uint32_t first, uint32_t limit, size_t budget);
  // One pass filling groups of k entries (n_groups of them); false if over `budget` bytes.
  bool fill(const uint8_t* page, uint32_t first, uint32_t limit, uint32_t common, uint32_t k,
            size_t n_groups, size_t budget);

  std::atomic<uint64_t> version_{kNoVersion};
  bool usable_ = false;
  bool leaf_ = false;
  bool compact_ = false;
  bool degenerate_first_ = false;  // leftmost non-leaf page: group 0 sorts below every key
  uint32_t group_size_ = kMinGroup;
  std::vector<uint8_t> prefix_;       // bytes every key of the page starts with
  std::vector<uint64_t> heads_;       // per group: key bytes [P, P + 8) big-endian, 0-padded
  std::vector<Group> groups_;
  std::vector<uint64_t> prev_recno_;  // compact: previous node's record number per group
  std::vector<uint8_t> keys_;         // key bytes [P + 8, len) of the inexact groups
};

/// find_in_page for a pinned frame whose shared (or exclusive) latch the caller holds: uses
/// the frame's directory, building it first if it is missing or stale; falls back to
/// find_in_page when another thread is building it. Same results and errors as find_in_page.
PageFind find_in_frame(const PageRef& ref, std::span<const uint8_t> key, bool descending,
                       std::optional<uint64_t> recno, FindMode mode);

/// The frame's directory if it is current (built for the frame's present version), else null.
/// For tests and stats; the caller holds the frame's latch.
const PageDirectory* current_directory(const PageRef& ref);

}  // namespace pbtree
