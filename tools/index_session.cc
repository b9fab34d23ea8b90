// IndexSession: one index of a pbtree file as a living B-tree, through IndexFile::tree() and
// IndexFile::flush() (include/pbtree/index_file.h), with a small page cache sized for one command.
#include "tools/index_session.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>

#include "page/buffer_pool.h"

namespace pbtree::tools {

namespace {

// Page cache of one session: small, since a command touches few pages (and a large arena
// costs page faults at every start).
constexpr size_t kSessionPoolBytes = size_t{4} << 20;

}  // namespace

struct IndexSession::Impl {
  std::unique_ptr<IndexFile> file;
  IndexInfo info;
  BTree* tree = nullptr;
  bool committed = false;
};

IndexSession::IndexSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IndexSession::~IndexSession() {
  // Not committed: the change failed (or was abandoned); none of it may be committed by
  // the file's destructor.
  if (!impl_->committed) {
    try {
      impl_->file->rollback();
    } catch (...) {
    }
  }
}

std::unique_ptr<IndexSession> IndexSession::open(const std::string& path, const std::string& name,
                                                 bool writable) {
  auto impl = std::make_unique<Impl>();
  impl->file = IndexFile::open(path, writable);
  auto info = impl->file->find_index(name);
  if (!info) throw impl->file->no_index_error(name);
  impl->info = *info;
  impl->file->set_cache_frames(BufferPool::frames_for(kSessionPoolBytes, impl->file->page_size()));
  impl->tree = &impl->file->tree(name);
  return std::unique_ptr<IndexSession>(new IndexSession(std::move(impl)));
}

BTree& IndexSession::tree() {
  return *impl_->tree;
}
const IndexInfo& IndexSession::info() const {
  return impl_->info;
}
uint32_t IndexSession::page_size() const {
  return impl_->file->page_size();
}

void IndexSession::commit() {
  impl_->file->flush();
  impl_->committed = true;
}

}  // namespace pbtree::tools
