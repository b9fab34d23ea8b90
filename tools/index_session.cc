// IndexSession: a BTree over one index of a pbtree file, with an appending page allocator
// and a two-step durable commit (pages, fsync, index root page + header, fsync). See
// index_session.h for the free-page layout.
#include "tools/index_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "page/btree_page.h"
#include "page/buffer_pool.h"
#include "page/file_format.h"
#include "page/page_file.h"

namespace pbtree::tools {

namespace {

// Page cache of one session: small, since a command touches few pages (and a large arena
// costs page faults at every start).
constexpr size_t kSessionPoolBytes = size_t{4} << 20;

// Pages at the end of the file, or ones released earlier in this session (lowest first).
class AppendAllocator : public PageAllocator {
 public:
  explicit AppendAllocator(uint32_t next) : next_(next) {}
  uint32_t allocate() override {
    if (!released_.empty()) {
      uint32_t p = *released_.begin();
      released_.erase(released_.begin());
      return p;
    }
    if (next_ == UINT32_MAX) throw UsageError("the file has reached 2^32 - 1 pages");
    return next_++;
  }
  void release(uint32_t page_no) override { released_.insert(page_no); }
  uint32_t next() const { return next_; }
  const std::set<uint32_t>& released() const { return released_; }

 private:
  uint32_t next_;
  std::set<uint32_t> released_;
};

}  // namespace

struct IndexSession::Impl {
  PageFile file;
  bool writable;
  FileHeader header;
  std::vector<IndexSlot> slots;
  size_t slot = 0;
  IndexInfo info;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<AppendAllocator> alloc;
  std::unique_ptr<BTree> tree;
};

IndexSession::IndexSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IndexSession::~IndexSession() = default;

std::unique_ptr<IndexSession> IndexSession::open(const std::string& path, const std::string& name,
                                                 bool writable) {
  // IndexFile::open does every header and index root page check.
  auto index_file = IndexFile::open(path, false);
  auto info = index_file->find_index(name);
  if (!info) throw UsageError(fmt::format("{}: no index named {}", path, name));
  const uint32_t ps = index_file->page_size();
  index_file.reset();

  auto impl = std::unique_ptr<Impl>(new Impl{
      PageFile::open(path, writable), writable, {}, {}, 0, *info, nullptr, nullptr, nullptr});
  PageFile& file = impl->file;
  file.set_page_size(ps);
  std::vector<uint8_t> page(ps);
  file.read(kHeaderPage, page.data(), static_cast<uint8_t>(PageType::Header));
  impl->header = decode_header_prefix(page.data(), kHeaderPrefixSize, path);
  const uint32_t file_pages = static_cast<uint32_t>(file.file_size() / ps);
  const uint32_t bound = std::max(impl->header.page_count, file_pages);
  file.read(kIndexRootPage, page.data(), static_cast<uint8_t>(PageType::IndexRoot));
  impl->slots = decode_index_root_page(page.data(), ps, bound, path);
  impl->slot = info->id;

  // The jump interval of new pages: the root page's (bulk_load's choice).
  file.read(info->root_page, page.data(), static_cast<uint8_t>(PageType::Btree));
  uint16_t jump = read_btree_header(page.data()).jump_interval;
  if (jump == 0) {
    jump = jump_area_size(max_key_length(info->def.type, info->def.format, info->def.descending),
                          info->def.descending);
  }
  impl->pool =
      std::make_unique<BufferPool>(file, BufferPool::frames_for(kSessionPoolBytes, ps));
  impl->alloc = std::make_unique<AppendAllocator>(bound);
  Impl* im = impl.get();
  impl->tree =
      std::make_unique<BTree>(*impl->pool, *impl->alloc, info->root_page, info->def,
                              static_cast<uint8_t>(info->id % 256), jump, [im](uint32_t root) {
                                im->slots[im->slot].root_page = root;
                                im->info.root_page = root;
                              });
  return std::unique_ptr<IndexSession>(new IndexSession(std::move(impl)));
}

BTree& IndexSession::tree() {
  return *impl_->tree;
}
const IndexInfo& IndexSession::info() const {
  return impl_->info;
}
uint32_t IndexSession::page_size() const {
  return impl_->header.page_size;
}

void IndexSession::commit() {
  Impl& im = *impl_;
  if (!im.writable) throw UsageError(fmt::format("{}: opened read-only", im.file.path()));
  const uint32_t ps = im.header.page_size;
  // Released pages become free pages (type 9, zeros).
  for (uint32_t p : im.alloc->released()) {
    PageRef ref = im.pool->create(p);
    std::unique_lock l(ref.latch());
    std::memset(ref.data(), 0, ps);
    ref.data()[0] = static_cast<uint8_t>(PageType::Free);
    ref.mark_dirty();
  }
  im.pool->flush();
  im.file.sync();
  std::vector<uint8_t> page(ps);
  encode_index_root_page(im.slots, page.data(), ps);
  im.file.write(kIndexRootPage, page.data());
  im.file.sync();
  FileHeader h = im.header;
  h.page_count = std::max(h.page_count, im.alloc->next());
  ++h.checkpoint;
  encode_header_page(h, page.data());
  im.file.write(kHeaderPage, page.data());
  im.file.sync();
  im.header = h;
}

}  // namespace pbtree::tools
