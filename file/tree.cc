// Tree, the installed handle of one index driven with normalized keys (<pbtree/index_file.h>):
// each call forwards to the library's B-tree behind it (btree/btree.h).
#include <pbtree/index_file.h>

#include "file/index_cursor_state.h"
#include "file/index_file_access.h"

namespace pbtree {

void Tree::insert(std::span<const uint8_t> key, uint64_t recno) {
  body_->insert(key, recno);
}
uint64_t Tree::insert_batch(EntryBatch& entries) {
  return body_->insert_batch(entries);
}
void Tree::remove(std::span<const uint8_t> key, uint64_t recno) {
  body_->remove(key, recno);
}
std::vector<uint64_t> Tree::find(std::span<const uint8_t> key) const {
  return body_->find(key);
}
void Tree::find(std::span<const uint8_t> key, std::vector<uint64_t>& out) const {
  body_->find(key, out);
}
bool Tree::contains(std::span<const uint8_t> key, uint64_t recno) const {
  return body_->contains(key, recno);
}
IndexCursor Tree::scan(ScanRange range) const {
  return IndexCursor(
      std::make_unique<IndexCursor::State>(IndexCursor::State{body_->scan(std::move(range))}));
}
TreeCheck Tree::verify() const {
  return body_->verify();
}
uint32_t Tree::root() const {
  return body_->root();
}
const IndexDefinition& Tree::definition() const {
  return body_->definition();
}

}  // namespace pbtree
