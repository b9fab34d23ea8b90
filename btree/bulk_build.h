// Bottom-up B-tree construction from sorted (key, record number) pairs, page by page as
// Firebird's fast_load (src/jrd/btr.cpp, Firebird v3.0.14 .. v5.0.4; docs/FORMAT.md §2.4): leaf
// pages are filled until the next node would pass page_size - 6 counting the jump table; the
// last node written is then rewritten as END_BUCKET and starts the next page with prefix 0;
// the new page's first key, record number and page number go up one level; each level starts
// with a degenerate node; jump nodes are made as fast_load makes them. Non-leaf pages: a
// level that fits on one page is filled as Firebird's (page_size - 10), so the depth is
// Firebird's; a level of several pages leaves page_size / 8 more bytes free on each (pbtree's
// rule, not Firebird's, which fills them too), so the first leaf splits after a build do not
// cascade up. Page layout: node/btree_page.h.
//
// With Options::layout = Compact (docs/FORMAT.md §2.9) the same filling runs over compact
// nodes: a node is taken only if it would still fit rewritten as an (explicit) END_BUCKET;
// the first node of a page and each jump target (the first node starting beyond each
// jump interval) are explicit; the separator a leaf split sends up is cut to the shortest
// prefix of the new page's first key above the old page's last key (ascending indexes; its
// record number is then 0), upper-level splits send their separators up unchanged.
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_builder.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace pbtree {

/// Builds one B-tree. Pages are numbered consecutively from `first_page` in the order
/// fast_load allocates them, and handed to the sink once complete (each exactly once).
class FastLoader {
 public:
  struct Options {
    uint32_t page_size = 8192;   ///< bytes
    uint32_t first_page = 0;     ///< number of the first page allocated
    uint16_t jump_interval = 0;  ///< jumpAreaSize in bytes (jump_area_size()); 0: no jump nodes
    uint8_t index_id = 0;        ///< btr_id
    NodeLayout layout = NodeLayout::Firebird;  ///< node coding (node/btree_page.h)
    /// Descending index (compact layout: separators are then not suffix-truncated).
    bool descending = false;
    /// If set, page numbers come from it (e.g. a tree's PageAllocator) instead of
    /// consecutively from first_page. May throw; the loader is then unusable.
    std::function<uint32_t()> allocate;
    /// If set, called on every finished page just before the sink (e.g. to stamp its number
    /// and checksum); build() calls it on leaf pages from its coding threads, concurrently
    /// (each page once). Must not throw.
    std::function<void(uint32_t page_no, uint8_t* page)> prepare;
    /// Threads of build() (0: std::thread::hardware_concurrency()). Never changes a byte.
    uint32_t threads = 0;
  };
  /// Receives a finished page: number and page_size bytes (generic header bytes 4..15 left for
  /// the sink, e.g. PageFile::write). May throw; the loader is then unusable.
  using PageSink = std::function<void(uint32_t page_no, uint8_t* page)>;

  FastLoader(const Options& options, PageSink sink);

  /// Appends the next entry. Entries must come in index order (key, then record number);
  /// keys must be at most kMaxNodeKeyField bytes and shorter than page_size / 4 (not checked
  /// here beyond std::invalid_argument from the node encoder).
  void add(std::span<const uint8_t> key, uint64_t recno);
  /// Closes every level (END_LEVEL, jump tables) and returns the root page number.
  uint32_t finish();
  /// add() of every entry of `sorted` in item order, then finish(), with the leaf pages sized
  /// and coded on Options::threads threads (btree/bulk_build_parallel.cc): the same pages,
  /// numbers and bytes as the serial calls. Only on a fresh loader (std::logic_error
  /// otherwise). The sink is called from the calling thread only, leaf pages in batches (not
  /// interleaved with the upper levels' pages as add() calls it). Same errors as add/finish.
  uint32_t build(const EntryBatch& sorted);
  /// Pages allocated so far.
  uint32_t pages_allocated() const { return allocated_; }
  /// Levels of the tree (depth).
  uint32_t depth() const { return static_cast<uint32_t>(levels_.size()); }

  /// What differs between the layouts when filling pages (every other rule, the compact
  /// layout's explicit jump targets included, is the page builder's: node/page_builder.h).
  struct FillPolicy {
    /// A non-leaf page that is not its level's only page leaves page_size / divisor more
    /// bytes free (0: no such rule; the level's first page is then never held back and
    /// refilled).
    uint32_t nonleaf_free_divisor;
    /// Ascending leaf separators are suffix-truncated (compact).
    bool truncate_separators;
  };
  static const FillPolicy& fill_policy(NodeLayout layout);
  /// Bytes a page may fill (PageBuilder::set_limit): page_size - 6 on leaves, page_size - 10
  /// on non-leaf pages (BTN_LEAF_SIZE, BTN_PAGE_SIZE of Firebird's btn.h), less the non-leaf
  /// free space of fill_policy(layout) if `nonleaf_free` (a level of several pages).
  static uint32_t fill_limit(NodeLayout layout, uint32_t page_size, bool leaf, bool nonleaf_free);

 private:
  struct PendingNode {
    std::vector<uint8_t> key;
    uint64_t recno;
    uint32_t child;
  };
  struct Level {
    std::vector<uint8_t> page;
    uint32_t page_no = 0;
    uint32_t left_sibling = 0;
    PageBuilder builder;  // the page being filled (node/page_builder.h)
    // Non-leaf level still on its first page, filled as Firebird's (it may stay the only
    // page: the root); `pending` holds that page's nodes, degenerate first, to refill it
    // with free space once the level needs a second page.
    bool undecided = false;
    std::vector<PendingNode> pending;
  };

  void start_page(Level& level, uint32_t left_sibling);
  // Starts the first page of a non-leaf level with its degenerate node -> first_child.
  void start_level(Level& level, uint32_t first_child);
  void add_node(uint32_t level_no, std::span<const uint8_t> key, uint64_t recno, uint32_t child);
  void close_page(Level& level, uint32_t level_no, uint32_t sibling);
  // build(): a leaf page break whose separator goes up; returns the new leaf page's number.
  uint32_t leaf_break(std::span<const uint8_t> separator, uint64_t recno);

  // The next page number (Options::allocate, else consecutive).
  uint32_t take_page() {
    ++allocated_;
    return options_.allocate ? options_.allocate() : next_page_++;
  }

  Options options_;
  FillPolicy policy_;
  PageSink sink_;
  uint32_t next_page_;
  uint32_t allocated_ = 0;
  std::deque<Level> levels_;  // stable references while levels are added
};

}  // namespace pbtree
