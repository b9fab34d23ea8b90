// The per-frame page directory: an in-memory index of one cached B-tree page (either node
// layout) that lets a search skip the node walk of find_in_page (node/page_search.h). It is
// never written to the file; the page bytes, jump nodes included, stay as Firebird writes them.
//
// Every K-th entry node of the page starts a group (K = 16 on a leaf, 4 above, or the least K
// at which the directory fits a quarter of the page size). For each group it keeps the node's
// offset, its full key length, an 8-byte big-endian head of the key after the page-wide common
// prefix, the key's remaining bytes when they do not fit the head, and (compact layout) the
// context the node is decoded with. A search binary-searches the groups (u64 head compares;
// full compares on ties), then runs find_in_page's prefix-trick scan over at most one group.
//
// All of it lies in one allocation (heads, contexts, groups, prefix, key bytes), and it keeps
// the page's first node offset and length, so a search reads the directory, then only the
// node bytes of one group: not the page header.
//
// The directory is built on a page's first search after it was read or changed and stamped
// with the frame's version (BufferPool bumps it on every load and mark_dirty); a stale one is
// rebuilt lazily. The writer keeps a leaf's directory current across its in-place inserts
// (note_insert): group starts move with the bytes, and groups grow until the next build. Its bytes
// are counted in BufferPool::aux_bytes and its builds in BufferPool::aux_builds.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
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
  /// Smallest group size (entries per group) of a leaf page.
  static constexpr uint32_t kMinGroup = 16;
  /// Smallest group size of a non-leaf page: every descent crosses one per level, and they
  /// are a fraction of a percent of the pages, so shorter scans there cost little memory.
  static constexpr uint32_t kMinInnerGroup = 4;

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

  // Writer maintenance (node/page_directory_edit.cc).
  /// Keeps a current directory of a leaf current across an in-place insert (node/leaf_edit.h,
  /// called under the frame's exclusive latch after the change): the node x at `pos` was
  /// replaced by the new node (n_size bytes, full key `key`, record number `recno`) and x
  /// re-encoded after it, the page growing by `delta` bytes; `shift` is how far the whole node
  /// area moved (jump table regenerated). Group starts after `pos` move, x's group (if any)
  /// keeps x; then the directory is stamped with `version`. Returns false (the directory is
  /// left stale and rebuilt on the next search) when the new node is the first, its key lacks
  /// the page prefix, the page had one entry, or it has grown by its built entry count since
  /// the last build (groups would get long).
  /// `page` is the changed page (its header gives the new first node and length).
  bool note_insert(const uint8_t* page, uint32_t pos, uint32_t n_size, int64_t delta, int64_t shift,
                   std::span<const uint8_t> key, uint64_t recno, uint64_t version);
  /// The same across an in-place remove (TreeWriter::remove_in_place): the node x at `pos`
  /// and the node y after it (at `next`) were replaced by y re-encoded, the page changing by
  /// `delta` bytes, the node area moving by `shift`; `prev` is the context after the node
  /// before x (its key length and record number). Returns false (left stale) when x starts a
  /// group, the page would keep one entry, or y is END_BUCKET / END_LEVEL (`next` 0: the page
  /// prefix may grow without x).
  bool note_remove(const uint8_t* page, uint32_t pos, uint32_t next, int64_t delta, int64_t shift,
                   NodeContext prev, uint64_t version);
  /// Node offset of group g's first node.
  uint16_t group_offset(size_t g) const { return groups_[g].offset; }
  /// Writes group g's full key to `out` (group_key_length(g) bytes); returns that length.
  uint32_t group_key(size_t g, uint8_t* out) const;
  /// Rebuilds the directory from `page` from scratch with groups at the same node offsets
  /// and compares: true if every field (page prefix, heads, key bytes, contexts) equals this
  /// one's and the group starts are entry nodes of the page, group 0 its first. For tests of
  /// the writer's maintenance; throws nothing.
  bool rebuilt_equal(const uint8_t* page, uint32_t page_size) const;

 private:
  struct Group {
    uint16_t offset;    // node offset in the page
    uint16_t key_len;   // full key length
    uint16_t key_off;   // into keys_ (suffix after the prefix beyond the head), or kExact
    uint16_t prev_len;  // compact: previous node's key length (context)
  };
  static constexpr uint16_t kExact = 0xFFFF;

  // The first group starting at or after node offset `pos`.
  size_t first_group_at(uint32_t pos) const;
  // Counts the entries, picks the group size and fills; false if the page cannot have one.
  bool fill_all(const uint8_t* page, uint32_t first, uint32_t limit, size_t budget);
  // One pass filling groups of k entries (n_groups of them); false if over `budget` bytes.
  bool fill(const uint8_t* page, uint32_t first, uint32_t limit, uint32_t common, uint32_t k,
            size_t n_groups, size_t budget);

  // Copies the build's scratch vectors into one block_ and points the spans at it.
  void pack(const std::vector<uint64_t>& heads, const std::vector<Group>& groups,
            const std::vector<uint64_t>& prev_recno, const std::vector<uint8_t>& prefix,
            const std::vector<uint8_t>& keys);
  // Drops the block (an unusable or empty directory).
  void clear_block();

  std::atomic<uint64_t> version_{kNoVersion};
  bool usable_ = false;
  bool leaf_ = false;
  bool compact_ = false;
  bool degenerate_first_ = false;  // leftmost non-leaf page: group 0 sorts below every key
  uint16_t first_ = 0;             // the page's first node offset (header + jump table)
  uint16_t limit_ = 0;             // the page's length: the searched node area ends there
  uint32_t group_size_ = kMinGroup;
  uint32_t entries_ = 0;        // entry nodes now (kept by note_insert)
  uint32_t built_entries_ = 0;  // entry nodes at the last build
  // Everything a search reads lies in one allocation, in this order (8-byte aligned parts
  // first): per group the 8-byte head (key bytes [P, P + 8) big-endian, 0-padded), per group
  // (compact) the previous node's record number, per group its Group, then the page prefix
  // (bytes every key of the page starts with) and the key bytes [P + 8, len) of the inexact
  // groups. The spans point into it.
  std::unique_ptr<uint64_t[]> block_;
  size_t block_words_ = 0;
  std::span<uint64_t> heads_;
  std::span<uint64_t> prev_recno_;
  std::span<Group> groups_;
  std::span<uint8_t> prefix_;
  std::span<uint8_t> keys_;
};

/// find_in_page for a pinned frame whose shared (or exclusive) latch the caller holds: uses
/// the frame's directory, building it first if it is missing or stale; falls back to
/// find_in_page when another thread is building it. Same results and errors as find_in_page.
PageFind find_in_frame(const PageRef& ref, std::span<const uint8_t> key, bool descending,
                       std::optional<uint64_t> recno, FindMode mode);

/// The frame's directory if it is current (built for the frame's present version), else null.
/// For tests and stats; the caller holds the frame's latch.
const PageDirectory* current_directory(const PageRef& ref);
/// The same for the writer, which keeps it current across its in-place changes
/// (PageDirectory::note_insert); the caller holds the tree's writer mutex.
PageDirectory* writer_directory(const PageRef& ref);

}  // namespace pbtree
