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
#include "btree/tree_internal.h"
#include "node/leaf_edit.h"
#include "node/page_image.h"

namespace pbtree {

/// Buffers of TreeWriter::decode_entries (btree/split.cc), kept by the writer between
/// operations: every full key of an over-full page, one after another, and the entries' views.
struct SplitScratch {
  struct At {
    size_t key = 0;  ///< offset in `keys`
    uint32_t length = 0;
    uint64_t recno = 0;
    uint32_t child = 0;
    uint32_t offset = 0;  ///< the node in the over-full bytes
    uint32_t size = 0;    ///< its encoded bytes
    uint32_t prefix = 0;  ///< bytes shared with the key before
  };
  std::vector<uint8_t> keys;
  std::vector<At> at;  ///< every entry node, then the END_BUCKET's if any
  std::vector<EntryRef> entries;
  std::vector<uint8_t> jump_key;  ///< the previous jump key of half_from_nodes
  uint32_t jump_fields[255];      ///< offset fields of its jump nodes
  uint32_t jump_rels[255];        ///< their targets, bytes into the node area
};

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
  uint64_t appends = 0;      ///< inserts served by the cache (tests)
  uint64_t splits = 0;       ///< rightmost splits inside the leaf's frame (tests)
  uint64_t byte_splits = 0;  ///< other splits from the leaf's over-full bytes (tests)
  /// false: the leaf writer leaves every insert that does not fit to the general path, which
  /// stores the page image (tests compare the two sources of TreeWriter::store).
  bool leaf_splits = true;
  std::vector<uint8_t> split_page;  ///< the leaf with the insert applied (2 × page_size)
  SplitScratch split;               ///< its entries, decoded by TreeWriter::decode_entries
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
  /// Rightmost splits done inside the leaf's frame so far (for tests).
  static uint64_t splits(const BTree& t);
  /// The insert `e` of (key, recno) does not fit leaf `leaf` (pinned `ref`): the page with the
  /// insert applied goes to TreeWriter::store as bytes (btree/split.cc), which writes it whole
  /// or splits it; `append` (or null) is the rightmost-leaf cache's append, split in the frame,
  /// after which the new page is the cached rightmost leaf. Returns false, nothing changed,
  /// when the edit does not look right or c.leaf_splits is off (the general path then runs).
  /// Throws CorruptError on a damaged page or parent level, UsageError past the level limit.
  static bool store_split(BTree& t, WriterCache& c, PageRef& ref, uint32_t leaf, const LeafEdit& e,
                          std::span<const uint8_t> key, uint64_t recno, RightmostAppend* append);
  /// The tree's WriterCache, made on first use for page size `page_size`.
  static WriterCache& cache(BTree& t, uint32_t page_size);
};

}  // namespace pbtree
