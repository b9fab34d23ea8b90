// One index of a pbtree file opened as a living B-tree for the command-line tools: a
// BufferPool over the file, a page allocator that appends pages at the end of the file (and
// reuses pages the tree released during the session), root changes recorded in the index
// root page, and commit(): write every dirty page, fsync, then rewrite the index root page
// and header (page count, checkpoint counter) and fsync again.
//
// Pages released by the tree are rewritten at commit as free pages: page type 9 (Free), the
// 16-byte generic header and zeros (page/page_file.h); they are not reused by later sessions
// in this version (the header's free-list head stays 0), and `pbtree verify` counts them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "btree/btree.h"
#include "btree/index_file.h"

namespace pbtree::tools {

/// An open index. Not thread-safe; one per process at a time for writing.
class IndexSession {
 public:
  /// Opens index `name` of the file `path`. Throws IoError (missing file), CorruptError,
  /// UsageError("<path>: no index named X").
  static std::unique_ptr<IndexSession> open(const std::string& path, const std::string& name,
                                            bool writable);
  ~IndexSession();

  BTree& tree();
  const IndexInfo& info() const;
  uint32_t page_size() const;
  /// Makes every change durable (see the file comment). Throws IoError. Writable only.
  void commit();

  struct Impl;

 private:
  explicit IndexSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbtree::tools
