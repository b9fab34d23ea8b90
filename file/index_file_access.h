// The library's side door into the installed handles (internal, not installed): the B-tree
// behind a Tree handle (Tree::Body), IndexFile's state, and the raw page reads that verify's
// page dump and the tests use. Code outside the library reaches it only through the named
// list in scripts/check_layers.sh.
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <string>

#include "btree/btree.h"

namespace pbtree {

/// The B-tree behind a Tree handle: the library's BTree, owned by its IndexFile.
class Tree::Body : public BTree {
 public:
  using BTree::BTree;
};

struct IndexFileAccess {
  using Impl = IndexFile::Impl;
  static Impl& impl(IndexFile& f) { return *f.impl_; }
  static const Impl& impl(const IndexFile& f) { return *f.impl_; }
  /// The living B-tree of index `name` (IndexFile::tree's, not a copy). Throws NotFoundError.
  static BTree& btree(IndexFile& f, const std::string& name) { return *f.tree(name).body_; }
  static BTree& btree(Tree t) { return *t.body_; }
  static Tree::Body* body(Tree t) { return t.body_; }
  static Tree handle(Tree::Body* body) { return Tree(body); }
  /// Reads page `page_no` (page_size bytes) of the file's snapshot (the file plus the
  /// committed log frames it saw at open, plus this session's dirty pages, written back
  /// first) into `out`, checking checksum, page number and, unless `expected_type` is 0,
  /// the page type (page/page_file.h). Throws IoError, CorruptError.
  static void read_page(const IndexFile& f, uint32_t page_no, uint8_t* out,
                        uint8_t expected_type = 0);
};

/// Shorthands: the B-tree of index `name` of `f`, and a page of `f`.
inline BTree& btree_of(IndexFile& f, const std::string& name) {
  return IndexFileAccess::btree(f, name);
}
inline void read_file_page(const IndexFile& f, uint32_t page_no, uint8_t* out,
                           uint8_t expected_type = 0) {
  IndexFileAccess::read_page(f, page_no, out, expected_type);
}

}  // namespace pbtree
