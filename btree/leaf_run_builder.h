// LevelRunBuilder: encodes a sorted run of entries of one tree level into full pages by the
// bulk builder's rules (btree/bulk_build.h: fast_load's page filling, END_BUCKET copy of the
// next page's first node, jump nodes, per-layout fill policy, compact leaf separators
// suffix-truncated), for BTree::insert_batch (btree/batch_insert.cc), which rewrites only the
// runs of pages a batch touches. Unlike FastLoader it builds one level only, leaves sibling
// links to its caller, and may close the run's last page with the END_BUCKET copy of the
// (untouched) right neighbour's first node instead of END_LEVEL. Page layout:
// node/btree_page.h; nodes: node/node.h; jump nodes: node/jump_table.h.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "node/btree_page.h"
#include "node/page_builder.h"
#include "node/page_image.h"

namespace pbtree {

/// Fills pages of one level from sorted entries, as FastLoader fills them, and hands each
/// finished page (with the separator its parent takes) to a sink. Not thread-safe.
class LevelRunBuilder {
 public:
  struct Options {
    uint32_t page_size = 8192;   ///< bytes
    uint16_t jump_interval = 0;  ///< jumpAreaSize in bytes; 0: no jump nodes
    uint8_t index_id = 0;        ///< btr_id
    NodeLayout layout = NodeLayout::Firebird;
    bool descending = false;  ///< compact: descending leaf separators are not truncated
    uint8_t level = 0;        ///< btr_level of the pages (0 = leaf)
    /// Non-leaf pages leave the non-leaf free space of FastLoader::fill_policy (Firebird
    /// layout: page_size / 8, its rule for a level of several pages, btree/bulk_build.h);
    /// ignored on leaves and on compact pages.
    bool nonleaf_free = true;
  };
  /// One finished page: page_size bytes with its header written (btr_sibling and
  /// btr_left_sibling 0: the caller sets `header` and rewrites it with write_btree_header),
  /// and the separator the parent level takes for it (its first entry; on ascending compact
  /// leaves after the first page, the shortest prefix above the previous page's last key with
  /// record number 0).
  struct Page {
    std::vector<uint8_t> bytes;
    BtreeHeader header;
    std::vector<uint8_t> sep_key;
    uint64_t sep_recno = 0;
  };
  /// Receives each page once it is complete, in order. May throw; the builder is then unusable.
  using PageSink = std::function<void(Page&& page)>;

  LevelRunBuilder(const Options& options, PageSink sink);

  /// Appends the next entry (index order; `child` is the child page on non-leaf levels, 0 on
  /// leaves). Keys must be shorter than page_size / 4. At least one entry before finish().
  void add(std::span<const uint8_t> key, uint64_t recno, uint32_t child);
  /// Closes the last page: with the END_BUCKET copy of `end` (the right neighbour's first
  /// entry, which must sort above every entry added) or, if null, END_LEVEL.
  void finish(const PageEntry* end);
  /// Pages handed to the sink so far.
  uint32_t pages() const { return pages_; }

 private:
  void start_page();
  void close_page();
  // Cuts the last node written into the END_BUCKET copy of the next page and starts that page
  // with it (fast_load's page break).
  void break_page();

  Options o_;
  bool truncate_;
  PageSink sink_;
  uint32_t pages_ = 0;
  Page cur_;
  PageBuilder builder_;  // the page being filled (node/page_builder.h)
};

}  // namespace pbtree
