// BatchMerge: the state and steps of one BTree::insert_batch (a member of BTree): phase 1
// (btree/batch_insert.cc) sorts nothing itself but checks the sorted batch and finds the
// touched leaves and their runs; phase 2 (btree/batch_rewrite.cc) rewrites each run of leaves
// with LevelRunBuilder (btree/leaf_run_builder.h) into the run's page numbers first, then the
// parent pages holding the runs' separators, level by level up to the root. Not installed.
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "btree/leaf_run_builder.h"
#include "node/page_image.h"

namespace pbtree {

// One insert_batch's state (a member of BTree: BTree::BatchMerge).
struct BTree::BatchMerge {
  // A touched leaf: its page, the descent's path (path[level]), its right sibling and the
  // batch entries [begin, end) that fall into it.
  struct Touched {
    uint32_t page;
    std::vector<uint32_t> path;
    uint32_t sibling;
    size_t begin, end;
  };
  // A run of consecutive pages of one level to rewrite (the batch slice on leaves).
  struct Run {
    std::vector<uint32_t> pages;
    std::vector<uint32_t> path;
    size_t begin, end;
  };
  // What the level above must do for a rewritten run: after the pointer to `anchor` (the
  // run's first page, kept), drop the pointers to `removed` and add `added`.
  struct Change {
    std::vector<uint32_t> path;
    uint32_t anchor;
    std::vector<uint32_t> removed;
    std::vector<PageEntry> added;
  };

  BTree& t;
  EntryBatch& batch;
  const uint32_t ps;
  const bool desc;
  std::vector<uint32_t> freed;
  std::vector<uint8_t> k1, k2;
  // A dry run (issue 30): every page is built but none is written, allocated or released;
  // new pages get stand-in numbers of the longest varint, so a built page is never smaller
  // than the real run's. grow() then throws if the batch would exceed the level limit.
  const bool dry;
  uint32_t next_stand_in = 0xF0000000u;

  BatchMerge(BTree& tree, EntryBatch& entries, bool dry_run = false)
      : t(tree),
        batch(entries),
        ps(tree.pool_.page_size()),
        desc(tree.def_.descending),
        dry(dry_run) {}

  // A page number for a new page: the allocator's, or a stand-in in a dry run.
  uint32_t allocate() { return dry ? next_stand_in++ : t.allocator_.allocate(); }

  std::span<const uint8_t> key(size_t i) const { return batch.key(batch.items()[i]); }
  uint64_t recno(size_t i) const { return batch.items()[i].recno; }
  uint64_t tag(size_t i) const { return batch.items()[i].tag; }

  [[noreturn]] void duplicate_pair(size_t i) const;
  [[noreturn]] void duplicate_value(size_t i, uint64_t existing) const;

  // The node at `offset` of `page` with its full key in `key`; an END_BUCKET's key too (the
  // copy of the right sibling's first key).
  IndexNode node_key_at(const uint8_t* page, uint32_t offset, std::vector<uint8_t>& key) const;

  // Descends to the leaf of (key, recno): the last child whose separator is <= it on every
  // level. `bounded`/`bound`: the separator after that child on the leaf's parent (or its
  // END_BUCKET copy): entries below it fall into the same leaf.
  uint32_t descend(std::span<const uint8_t> key, uint64_t recno, std::vector<uint32_t>& path,
                   bool& bounded, std::vector<uint8_t>& bound, uint64_t& bound_recno);

  // Checks batch entry i against its neighbours in leaf `d` (the END_BUCKET copy included).
  void check_in_leaf(const uint8_t* d, size_t i);

  // Checks batch entry i against entry i - 1 of the sorted batch.
  void check_in_batch(size_t i);

  // Phase 1: the touched leaves, every check done; nothing written.
  std::vector<Touched> find_touched();

  // True if batch entry `i` sorts below the first entry of leaf `page` (possible on compact
  // pages, whose separators are cut short): the left neighbour's END_BUCKET then changes too.
  bool below_first(uint32_t page, size_t i);

  std::vector<Run> make_runs(std::vector<Touched>& touched);

  // Numbers, links and writes the pages of one rewritten run as they come from the builder:
  // page 0 takes old[0]; the middle pages take old[1 .. k-2], then fresh pages; the last page
  // takes old[k-1] (k >= 2). Two pages are held back so the last page's number is known.
  struct RunWriter {
    BatchMerge& m;
    std::vector<uint32_t> old;
    uint32_t left0, right;
    std::function<void(size_t)> before_overwrite;  // old[i] is about to be overwritten
    RunWriter(BatchMerge& merge, std::vector<uint32_t> old_pages, uint32_t left,
              uint32_t right_page, std::function<void(size_t)> hook)
        : m(merge),
          old(std::move(old_pages)),
          left0(left),
          right(right_page),
          before_overwrite(std::move(hook)) {}
    size_t next_old = 1;
    bool last_used = false;
    struct Held {
      uint32_t page_no = 0;
      bool fresh = false;
      LevelRunBuilder::Page page;
    };
    std::deque<Held> held;
    uint32_t prev_no = 0;
    std::vector<PageEntry> out;  // (separator, page) of every page written, in order

    uint32_t take(bool& fresh);
    void write(Held& h, uint32_t sibling);
    void push(LevelRunBuilder::Page&& page);
    // Writes the held pages; returns the old pages left unused.
    std::vector<uint32_t> finish();
  };

  LevelRunBuilder::Options builder_options(uint8_t level, bool nonleaf_free) const;

  void release(const std::vector<uint32_t>& pages);

  Change change_of(const std::vector<uint32_t>& path, const std::vector<uint32_t>& old,
                   std::vector<PageEntry>& written);

  // Rewrites a leaf run merged with its batch slice.
  Change rewrite_leaves(const Run& r);

  // Rewrites the pages `pages` of `level` holding `entries` (their new contents); `root`: the
  // level's only page (filled to Firebird's limit if it then still fits one page).
  std::vector<PageEntry> rewrite_nonleaf(uint8_t level, const std::vector<uint32_t>& pages,
                                         const std::vector<PageEntry>& entries,
                                         const std::optional<PageEntry>& end, uint32_t left0,
                                         uint32_t right, bool root);

  // Applies `changes` (from the level below, in key order) to level `level`.
  std::vector<Change> apply(uint8_t level, std::vector<Change>& changes, bool top);

  // The root split into the pages of `changes` (one change): new levels above it.
  void grow(uint8_t level, Change& c);

  void set_root(uint32_t root);

  // A non-leaf root with one child gives way to the child (repeatedly).
  void shrink_root();

  void run();
};

}  // namespace pbtree
