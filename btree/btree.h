// The living B-tree: insert, remove, find and range/prefix cursors over B-tree
// pages (node/btree_page.h) kept in a BufferPool, with Firebird's split rules
// (insert_node, add_node, BTR_insert in Firebird v5.0.4 src/jrd/btr.cpp: rightmost split, middle
// split, END_BUCKET copies, separators = the child's first key + first record number) and merging
// of under-filled pages.
//
// Concurrency: many reader threads and one writer at a time (writers serialize on a mutex).
// Readers descend through non-leaf pages without their latches, through each page's route
// table (node/route_table.h), and validate every step against the page latch's count of
// exclusive holds (optimistic latches, btree/tree.cc); they latch leaves shared, and fall back
// to crabbing with shared latches (parent held until the child is latched) on a page whose
// table is stale or after repeated failed validations. They move right when a target lies beyond a
// page's END_BUCKET copy (a split not yet posted to the parent); descending cursors re-validate the
// left sibling (its right link must still be the page they left) or re-seek. The writer latches
// every page it changes exclusively, taking several only left to right at one level, never a parent
// while holding a child. Pages leaving the tree get the btr_released flag (0x20 in byte 1) before
// their parent pointer goes, so a reader that reaches one restarts from the root; they go back to
// the allocator at the end of the operation.
#pragma once

#include <pbtree/keys.h>
#include <pbtree/search.h>
#include <pbtree/stats.h>
#include <pbtree/types.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "page/buffer_pool.h"

namespace pbtree {

class EntryBatch;    // <pbtree/index_file.h>
struct WriterCache;  // btree/leaf_writer.h
/// Where B-tree pages come from and go to.
class PageAllocator {
 public:
  virtual ~PageAllocator() = default;
  /// A page number not used by anything (its contents are overwritten). Throws on exhaustion.
  virtual uint32_t allocate() = 0;
  /// Gives back a page the tree no longer uses.
  virtual void release(uint32_t page_no) = 0;
};

// KeyBound and ScanRange, what a cursor walks: <pbtree/search.h>.

class BTree;

/// A position in a scan. Holds a pin (not a latch) on the current leaf between calls, and
/// decodes nodes in place from the frame; if the page changed since (frame version), it
/// re-seeks from the root past the last entry returned. Move-only; must not outlive its tree.
class Cursor {
 public:
  Cursor(Cursor&&) noexcept = default;
  Cursor& operator=(Cursor&&) noexcept = default;
  ~Cursor();

  /// True while positioned on an entry inside the range.
  bool valid() const { return valid_; }
  /// The full normalized key of the current entry (valid until the next move). Forward scans
  /// hand out a view of the key decoded ahead, without a copy per entry.
  std::span<const uint8_t> key() const {
    return in_view_ ? std::span<const uint8_t>(view_, view_len_) : std::span<const uint8_t>(key_);
  }
  /// The 40-bit record number of the current entry.
  uint64_t record_number() const { return recno_; }
  /// Page number and byte offset of the current entry's leaf node (for messages about it).
  uint32_t page_number() const { return page_.page_no(); }
  uint32_t node_offset() const { return offset_; }
  /// Moves to the next entry in scan order (ascending index order, or descending if backward).
  /// Inline while a forward scan has entries decoded ahead on an unchanged leaf (no latch).
  void next() {
    if (valid_ && ahead_pos_ < ahead_n_ && !range_.prefix && page_.version() == version_) {
      const Ahead& e = ahead_[ahead_pos_++];
      view_ = ahead_keys_.data() + e.key_offset;
      view_len_ = e.key_length;
      in_view_ = true;
      recno_ = e.recno;
      offset_ = e.offset;
      next_offset_ = e.end;
      return;
    }
    next_slow();
  }
  /// Re-positions: forward, at the first entry >= key; backward, at the last entry <= key
  /// (index order), clipped to the range.
  void seek(std::span<const uint8_t> key);

  // The cursor's moves are its members, so they reach its state: Ops (forward moves, seeks,
  // bounds, and open(), which BTree::scan and contains call; btree/cursor.cc) and Backward
  // (btree/cursor_backward.h).
  struct Ops;
  struct Backward;

 private:
  Cursor(const BTree* tree, ScanRange range) : tree_(tree), range_(std::move(range)) {}
  void start();
  void next_slow();
  struct Cached {
    uint32_t offset;
    uint64_t recno;
    uint32_t key_offset;
    uint32_t key_length;
  };

  const BTree* tree_ = nullptr;
  ScanRange range_;
  bool valid_ = false;
  PageRef page_;
  uint64_t version_ = 0;
  uint32_t offset_ = 0;       // current node
  uint32_t next_offset_ = 0;  // forward: the node after it
  std::vector<uint8_t> key_;  // the current key, unless in_view_
  // in_view_: the current key is view_[0, view_len_) inside ahead_keys_ (take_ahead).
  const uint8_t* view_ = nullptr;
  uint32_t view_len_ = 0;
  bool in_view_ = false;
  uint64_t hops_ = 0;           // moves right so far (a loop guard)
  int left_link_restarts_ = 0;  // re-seeks because a left sibling did not link back
  uint64_t recno_ = 0;
  // Backward: nodes of the current jump area before the position, with their keys.
  std::vector<Cached> cache_;
  std::vector<uint8_t> cache_keys_;
  size_t cache_pos_ = 0;  // entries of cache_ still to yield
  uint32_t area_start_ = 0;
  // Forward: the entries after the current one on its leaf, decoded ahead under one latch hold
  // and served by next() without latching while the frame version stays version_.
  struct Ahead {
    uint32_t offset;
    uint32_t end;
    uint64_t recno;
    uint32_t key_offset;
    uint32_t key_length;
  };
  // ahead_[0, ahead_n_): kAhead (btree/cursor.cc) slots, allocated by the first batch.
  std::unique_ptr<Ahead[]> ahead_;
  uint32_t ahead_n_ = 0;
  uint32_t ahead_pos_ = 0;
  std::vector<uint8_t> ahead_keys_;
  bool ahead_stop_ = false;  // the entry after ahead_ lies beyond the upper bound
  // The scan's starting target (forward: first entry >= it; backward: last entry < it).
  bool has_edge_ = false;
  std::vector<uint8_t> edge_key_;
  uint64_t edge_recno_ = 0;
};

/// A B-tree over pages of a BufferPool.
class BTree {
 public:
  /// `root`: the current root page. `def`: unique/descending flags (type and format are
  /// informational here). `index_id`: btr_id of new pages. `jump_interval`: jumpAreaSize in
  /// bytes, copied into new pages. `on_root_change` is called (by the writer, under its mutex)
  /// after a root split or a root shrink with the new root page number.
  BTree(BufferPool& pool, PageAllocator& allocator, uint32_t root, IndexDefinition def,
        uint8_t index_id, uint16_t jump_interval,
        std::function<void(uint32_t)> on_root_change = {});

  /// Allocates and writes an empty root leaf (END_LEVEL only) in `layout`; returns its page
  /// number.
  static uint32_t create_empty(BufferPool& pool, PageAllocator& allocator, uint8_t index_id,
                               uint16_t jump_interval, NodeLayout layout = NodeLayout::Firebird);

  /// Inserts (key, recno). Throws DuplicateKeyError if the pair exists, or (unique index) an
  /// equal non-NULL key exists (the value shown by key_value_text); KeyError if key.size() >=
  /// page_size / 4; UsageError if recno > kMaxRecordNumber, or if the insert would make the tree
  /// deeper than kMaxLevels (checked before any page changes). The tree is unchanged on any error.
  void insert(std::span<const uint8_t> key, uint64_t recno);
  /// Batched insert / merge-append (btree/batch_insert.cc): sorts `entries` (any order),
  /// finds the leaves they fall into (one descent per touched leaf) and rewrites each run of
  /// consecutive touched leaves once, merged with its batch entries and full as a bulk build
  /// fills pages (btree/leaf_run_builder.h), reusing the run's page numbers first (the run's
  /// last page keeps its number when the run grows, so the right neighbour's left link stays;
  /// a run of one page that grows relinks it); then the parent pages holding the run's
  /// separators are rewritten the same way, up to the root (a new root if it splits, the root
  /// shrinks while it has one child). Leaves the batch does not fall into keep their bytes.
  /// Checks come first and leave the tree unchanged: UsageError (read-only),
  /// DuplicateKeyError (a (key, recno) pair twice or already in the tree, unique index: an
  /// equal non-NULL key), KeyError (key.size() >= page_size / 4), UsageError if the batch
  /// would make the tree deeper than level_limit() (a dry run while the root is at the top
  /// level). An I/O or allocation error
  /// after them leaves pages half-written in the pool: IndexFile::rollback() drops the whole
  /// change (as it does while an exception leaves the IndexFile). Pages are rewritten in
  /// place: readers must not run concurrently with it. Returns the entries added.
  uint64_t insert_batch(EntryBatch& entries);
  /// Removes exactly (key, recno). Throws UsageError if absent, or if its repairs would make
  /// the tree deeper than level_limit() (checked before any page changes; tree unchanged).
  void remove(std::span<const uint8_t> key, uint64_t recno);
  // Lookups and cursors: the contracts of Tree::find, Tree::contains and Tree::scan
  // (<pbtree/index_file.h>), whose calls forward here; scan's Cursor is IndexCursor's inside.
  std::vector<uint64_t> find(std::span<const uint8_t> key) const;
  void find(std::span<const uint8_t> key, std::vector<uint64_t>& out) const;
  bool contains(std::span<const uint8_t> key, uint64_t recno) const;
  Cursor scan(ScanRange range = {}) const;

  /// Walks every level and checks the structure: page types, levels, key order in and across
  /// pages, sibling links both ways, separators equal to their child's first entry,
  /// END_BUCKET equal to the right sibling's first node, jump nodes on node boundaries with
  /// jump.prefix + length == node.prefix, btr_length. Throws CorruptError naming the page.
  /// Not to be called concurrently with writes.
  TreeCheck verify() const;

  uint32_t root() const { return root_.load(std::memory_order_acquire); }
  /// Makes insert/remove throw UsageError (a file opened read-only).
  void set_read_only(bool read_only) { read_only_ = read_only; }
  /// Most levels insert() lets the tree have: kMaxLevels (the format's limit, node/btree_page.h)
  /// unless lowered, which tests do to reach the limit with few entries.
  void set_level_limit(uint32_t levels) { level_limit_ = std::min(levels, kMaxLevels); }
  uint32_t level_limit() const { return level_limit_; }
  const IndexDefinition& definition() const { return def_; }
  bool descending() const { return def_.descending; }
  BufferPool& pool() const { return pool_; }
  /// The writer mutex: insert/remove take it. IndexFile::commit() (flush()) takes it itself,
  /// so never call commit() while holding it (that deadlocks); hold it only to keep writers
  /// out of code of your own.
  std::mutex& write_mutex() const { return write_mutex_; }

  // Readers (cursors too): crab down to the leaf where the first entry >= (key, recno) lives;
  // returns the leaf pinned and shared-latched, plus the in-page find.
  PageRef descend(std::span<const uint8_t> key, uint64_t recno, PageFind& found) const;
  // Readers (cursors too): the leftmost / rightmost leaf, pinned and shared-latched.
  PageRef descend_edge(bool rightmost) const;

  // The write paths are the tree's members, so they reach its state: TreeWriter (one write
  // operation's state, btree/tree_internal.h), LeafWriter (the in-place leaf paths,
  // btree/leaf_writer.h) and BatchMerge (insert_batch's run rewrites, btree/batch_merge.h).
  // The names are also aliases in namespace pbtree.
  struct TreeWriter;
  struct LeafWriter;
  struct BatchMerge;

 private:
  // insert(): throws UsageError, nothing changed, if (key, recno) would add a level beyond
  // level_limit() (btree/writer.cc): a dry run of insert_image while root_at_top(). Under
  // the writer mutex.
  void check_level_limit(std::span<const uint8_t> key, uint64_t recno);
  // True if the root is at the top level level_limit() allows (a root split would exceed it).
  bool root_at_top() const;
  // The page-image paths of insert and remove through `w` (btree/writer.cc), run dry first
  // while root_at_top().
  void insert_image(TreeWriter& w, std::span<const uint8_t> key, uint64_t recno);
  void remove_image(TreeWriter& w, uint32_t leaf, std::span<const uint8_t> key, uint64_t recno);

  // Pins and shared-latches the root, retrying while it changes under us.
  PageRef latch_root() const;
  bool is_null_key(std::span<const uint8_t> key) const;

  BufferPool& pool_;
  PageAllocator& allocator_;
  std::atomic<uint32_t> root_;
  IndexDefinition def_;
  uint8_t index_id_;
  uint16_t jump_interval_;
  std::function<void(uint32_t)> on_root_change_;
  bool read_only_ = false;
  uint32_t level_limit_ = kMaxLevels;
  mutable std::mutex write_mutex_;
  std::vector<uint64_t> unique_probe_;  // insert's duplicate check; guarded by write_mutex_
  // The writer's scratch and rightmost-leaf cache (btree/leaf_writer.h); guarded by
  // write_mutex_. shared_ptr: WriterCache is incomplete here.
  std::shared_ptr<WriterCache> writer_cache_;
};

using TreeWriter = BTree::TreeWriter;
using LeafWriter = BTree::LeafWriter;
using BatchMerge = BTree::BatchMerge;
using CursorOps = Cursor::Ops;
using CursorBackward = Cursor::Backward;

/// Non-leaf pages that this thread's descents routed through their route tables without
/// taking the page latch and whose step validated (btree/tree.cc), since the thread started.
/// For tests.
uint64_t optimistic_descent_steps();

}  // namespace pbtree
