// TreeWalk: the one walk over a whole B-tree, used by the gstat figures (btree/stats.cc) and
// the per-level figures (btree/level_stats.cc) from its page images, for pbtree files and
// Firebird databases alike (through a BtreePageReader); by child lists (by_children) by
// BTree::verify (btree/verify.cc) and the CLI's verify (tools/cmd_verify.cc). Level by level from
// the root down, each level left to right along the right siblings; the next level starts at the
// first child of the level's first page. Every page is checked before it is visited: its number
// lies in [2, page_count), it is reached once, its B-tree header is valid (check_btree_header), it
// has the level expected and its left sibling is the page before it (0 for the first); the
// root has no siblings. Throws CorruptError "page N (b-tree): ..." on any of these.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "btree/stats.h"
#include "node/btree_page.h"

namespace pbtree {

class TreeWalk {
 public:
  /// `page_count`: pages in the file (page numbers at or beyond it are corrupt).
  TreeWalk(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
           uint32_t page_count);

  /// What visit() is given: the page number, its image (page_size bytes, valid until visit
  /// returns) and its checked header.
  using Visit = std::function<void(uint32_t page_no, const uint8_t* page, const BtreeHeader& h)>;

  /// Visits every page of the tree, the root first. Returns the root's header.
  BtreeHeader run(const Visit& visit);

  /// Where a walk by child lists stands: the page, its depth (0: the root), its position on
  /// its level and the page listed after it (0 for a level's last).
  struct Step {
    uint32_t page_no;
    uint32_t depth;
    size_t index;
    uint32_t next;
  };
  /// What by_children() is given: the step, and the children to list for the level below
  /// (appended in order; none for a leaf or a page the visitor rejects).
  using ChildVisit = std::function<void(const Step& step, std::vector<uint32_t>& children)>;
  /// The same order of pages walked by the child lists the pages hold instead of their
  /// sibling links, for checks that read, check and survive pages themselves (BTree::verify,
  /// the CLI's verify): level by level from `root_page`, each level in the order the level
  /// above lists it. Reads nothing itself; ends at a level with no children.
  static void by_children(uint32_t root_page, const ChildVisit& visit);

 private:
  BtreeHeader load(uint32_t page_no, int expected_level, uint32_t expected_left);

  const BtreePageReader& read_;
  uint32_t root_page_;
  uint32_t page_size_;
  uint32_t page_count_;
  std::vector<uint8_t> page_;
  std::vector<bool> visited_;
};

}  // namespace pbtree
