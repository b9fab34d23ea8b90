// The writer's fast leaf paths (btree/leaf_writer.cc): an insert that costs one descent for
// the unique check and the change, an in-place change of the leaf inside its frame
// (node/leaf_edit.h), and the rightmost-leaf cache for increasing keys (PostgreSQL nbtree's
// cached rightmost leaf, nbtinsert.c): no descent while a key goes past the last entry.
// Everything here runs under the tree's writer mutex and allocates nothing once warm.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "btree/btree.h"
#include "node/leaf_edit.h"

namespace pbtree {

/// The writer's state kept between operations (BTree::writer_cache_): scratch buffers sized
/// for the page size once, and the rightmost leaf of the last append.
struct WriterCache {
  explicit WriterCache(uint32_t page_size);
  std::vector<uint8_t> prev_key, x_key;  ///< capacity page_size: never regrow
  std::vector<uint8_t> scratch;          ///< LeafEditScratch (leaf_edit_scratch_size bytes)
  std::vector<uint8_t> nodes;            ///< encoded replacement nodes
  LeafEditScratch edit_scratch() { return carve_leaf_edit_scratch(scratch.data(), page_size); }
  uint32_t page_size;
  // Rightmost leaf (sibling 0) after the last append at its end; valid while its frame's
  // version, btr_length and last node are as recorded. 0: none.
  uint32_t rm_leaf = 0;
  uint64_t rm_version = 0;
  uint32_t rm_length = 0;
  uint32_t rm_last_offset = 0;  ///< the last entry's node
  std::vector<uint8_t> rm_key;  ///< its full key (capacity page_size)
  uint64_t rm_recno = 0;
  /// Its jump targets are the first jump_count of encode_page's rule on its nodes (LeafEdit::
  /// rule_prefix): true after a jump-table regeneration or with no jump node, and kept by
  /// appends at the end, which change no node before the targets.
  bool rm_in_rule = false;
  uint64_t appends = 0;  ///< inserts served by the cache (tests)
  uint64_t splits = 0;   ///< rightmost splits of LeafWriter::split_append (tests)
  // LeafWriter::split_middle: the page with the insert (2 × page_size), its entries' offsets
  // and key lengths, key buffers and the three jump tables' previous jump keys.
  std::vector<uint8_t> split_page;
  std::vector<uint32_t> split_offsets, split_key_lengths;
  std::vector<uint8_t> split_cur, split_key;
  std::vector<uint8_t> split_jump_keys[3];
  uint64_t middle_splits = 0;  ///< splits done by LeafWriter::split_middle (tests)
  bool stream_splits = true;   ///< false: every split through TreeWriter::split (tests)
};

/// How edit_page changed a page.
enum class PageEdit { None, InPlace, Relaid };

/// Plans and applies `e` to the pinned page `ref` (exclusive latch taken for the change; the
/// frame version is bumped): in place (PageEdit::InPlace), or on a compact page whose jump
/// table needs other targets through the scratch copy and rejump_compact_page
/// (PageEdit::Relaid, whole page copied back). PageEdit::None: nothing changed (btr_length
/// would exceed `limit`, page_size or less for the end-of-page reserve).
PageEdit edit_page(PageRef& ref, uint32_t page_size, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit);

/// The inserted node of an edit, for the page directory's maintenance.
struct InsertedNode {
  uint32_t size = 0;             ///< encoded bytes (the edit's first node)
  std::span<const uint8_t> key;  ///< full key
  uint64_t recno = 0;
};
/// edit_page for an insert: a current directory of the page (PageDirectory::note_insert) is
/// kept current across an in-place change instead of being left to a rebuild.
PageEdit edit_page(PageRef& ref, uint32_t page_size, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit, const InsertedNode* inserted);

/// The removed node of an edit (the edit's old nodes are it and the next node, re-encoded).
struct RemovedNode {
  uint32_t next_offset = 0;  ///< the node after it (before the edit); 0 if a marker
  NodeContext prev;          ///< context after the node before it
};
/// edit_page for a remove, keeping a current directory current (PageDirectory::note_remove).
PageEdit edit_page(PageRef& ref, uint32_t page_size, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit, const RemovedNode* removed);

/// The fast paths; return false (nothing changed) when the general path must run.
struct BTree::LeafWriter {
  /// Inserts (key, recno) in place into its leaf. Throws DuplicateKeyError (as BTree::insert).
  static bool insert(BTree& t, std::span<const uint8_t> key, uint64_t recno);
  /// Inserts served by the rightmost-leaf cache so far (for tests).
  static uint64_t appends(const BTree& t);
  /// Rightmost splits done by split_append so far (for tests).
  static uint64_t splits(const BTree& t);
  /// The cached rightmost leaf `ref` (c.rm_leaf) cannot take the append `append` of (key,
  /// recno) (its new node, prefix `pn` against the last key whose context is `ctx`, then
  /// END_LEVEL): does Firebird's rightmost split as TreeWriter::split would, byte for byte
  /// (btree/leaf_split.cc): the old page edited in its frame into the left half, the new entry
  /// alone on a new right page, the separator sent up by the general path; the new page
  /// becomes the cached rightmost leaf. Returns false, nothing changed, when the general path
  /// would not split this way (the page re-laid whole still fits, or the left half would not).
  /// Throws CorruptError on a damaged parent level.
  static bool split_append(BTree& t, WriterCache& c, PageRef& ref, std::span<const uint8_t> key,
                           uint64_t recno, uint32_t pn, const NodeContext& ctx,
                           const LeafEdit& append);
  /// The in-place insert `e` of (key, recno) does not fit leaf `leaf` (pinned `ref`), the new
  /// entry not being its last: on a Firebird-layout leaf, splits it as TreeWriter::split would,
  /// byte for byte (the middle by key bytes, btree/leaf_split_middle.cc), both halves streamed
  /// from the node bytes, the separator sent up by the general path. Returns false, nothing
  /// changed, when the general path would do otherwise (or c.stream_splits is off). Throws
  /// CorruptError on a damaged page or parent level.
  static bool split_middle(BTree& t, WriterCache& c, PageRef& ref, uint32_t leaf, const LeafEdit& e,
                           std::span<const uint8_t> key, uint64_t recno);
  /// After split_append or split_middle: sends `sep` (the new right page's separator) up from
  /// leaf `leaf` as TreeWriter::split does (a new root, or an insert into the parent found
  /// along the descent for (key, recno)); with `try_append`, first as an append at the end of
  /// the rightmost level-1 page in its frame. Throws CorruptError on a damaged parent level.
  static void send_separator_up(BTree& t, WriterCache& c, uint32_t leaf, PageEntry sep,
                                std::span<const uint8_t> key, uint64_t recno, bool try_append);
  /// The tree's WriterCache, made on first use for page size `page_size`.
  static WriterCache& cache(BTree& t, uint32_t page_size);
};

}  // namespace pbtree
