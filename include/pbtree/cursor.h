// The public cursor (Tree::scan in <pbtree/index_file.h>, TypedIndex::scan in
// <pbtree/typed_index.h>): a forward or backward walk over an index's entries that hands out
// normalized keys and record numbers. Pimpl: nothing of the buffer pool or the node codecs
// shows here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace pbtree {

/// A forward or backward walk over an index's entries, from Tree::scan or TypedIndex::scan
/// (the installed face of the library's B-tree cursor: it pins one leaf page of the file's
/// buffer pool and must not outlive its IndexFile). Move-only.
class IndexCursor {
 public:
  IndexCursor(IndexCursor&&) noexcept;
  IndexCursor& operator=(IndexCursor&&) noexcept;
  ~IndexCursor();
  /// False once the walk is past its last entry.
  bool valid() const;
  /// Key bytes of the current entry (normalized key; TypedIndex::value_text() gives its text).
  std::span<const uint8_t> key() const;
  /// The 40-bit record number of the current entry.
  uint64_t record_number() const;
  /// Page number and byte offset of the current entry's leaf node (for messages about it).
  uint32_t page_number() const;
  uint32_t node_offset() const;
  /// Moves to the next entry in scan order. Throws CorruptError, IoError.
  void next();

 private:
  friend class TypedIndex;
  friend class Tree;
  struct State;
  explicit IndexCursor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace pbtree
