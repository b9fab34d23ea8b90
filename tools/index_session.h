// One index of a pbtree file opened as a living B-tree for the command-line tools: a thin
// wrapper over IndexFile::open + tree(name) + commit() with a page cache sized for one
// command. commit() writes every dirty page, fsyncs, then rewrites the index root page and
// header and fsyncs again (IndexFile::commit). Pages the tree released and did not reuse stay
// in the file as b-tree pages flagged btr_released; `pbtree verify` counts them as free.
// A writable session destroyed without commit() (a change failed half-way) rolls back
// (IndexFile::rollback): nothing of it reaches the log or the file.
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <memory>
#include <string>

#include "btree/btree.h"

namespace pbtree::tools {

/// An open index. Not thread-safe; one per process at a time for writing.
class IndexSession {
 public:
  /// Opens index `name` of the file `path`. Throws IoError (missing file), CorruptError,
  /// NotFoundError("<path>: no index named X (indexes: A, B)").
  static std::unique_ptr<IndexSession> open(const std::string& path, const std::string& name,
                                            bool writable);
  /// Without commit(), rolls every change back (see the file comment).
  ~IndexSession();

  BTree& tree();
  const IndexInfo& info() const;
  uint32_t page_size() const;
  /// Makes every change durable (see the file comment). Throws IoError; UsageError if opened
  /// read-only.
  void commit();

  struct Impl;

 private:
  explicit IndexSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbtree::tools
