// IndexFile: opening and creating pbtree files (page 0 header, page 1 index root page; see
// page/file_header.h), bulk-building indexes (btree/bulk_build.h) and gstat statistics
// (btree/stats.h). A writable file runs with its write-ahead log (page/wal.h): changed pages
// go to "<db>-wal" and are committed there by a checkpoint (flush(), the end of a bulk load),
// which also rewrites the header (checkpoint counter, page count, free list, the checkpoint's
// cost counters); they reach the file when the committed batch is applied (next checkpoint,
// close, or recovery). A bulk load writes its new pages straight into the file beyond every
// page in use (nothing refers to them yet), syncs, then checkpoints the index root page and
// header. Pages the living trees free become free pages (type 9) on a persistent chain at
// the next checkpoint and are allocated again before the file grows (FileAllocator below).
// The bulk load itself is file/index_bulk_load.cc; the state, file/index_file_impl.h.
#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>

#include "btree/btree.h"
#include "btree/bulk_build.h"
#include "btree/radix_sort.h"
#include "btree/stats.h"
#include "file/entry_sort.h"
#include "file/file_allocator.h"
#include "file/file_create.h"
#include "file/index_file_impl.h"
#include "file/index_root.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "page/buffer_pool.h"
#include "page/file_header.h"
#include "page/page_copy.h"
#include "page/page_file.h"
#include "util/bytes.h"

namespace pbtree {

IndexFile::IndexFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IndexFile::~IndexFile() {
  // Changes through tree() are durable only once committed: an unclosed file rolls the rest
  // back, however the scope was left. The log's destructor then checkpoints if it can.
  try {
    if (impl_ && impl_->writable && impl_->pool) rollback();
  } catch (...) {
  }
}

void IndexFile::rollback() {
  Impl& im = *impl_;
  if (!im.writable || !im.pool) return;
  // The trees and the pool go without writing a page: their dirty frames are dropped.
  im.trees.clear();
  im.allocator.reset();
  im.pool.reset();
  im.dirty = false;
  // Pages evicted into the log since the last checkpoint are uncommitted frames: dropped.
  Wal* wal = im.file.wal();
  if (wal && !wal->failed()) wal->rollback();
  // Header (page count, free list) and roots as of the last checkpoint.
  std::vector<uint8_t> page(page_size());
  im.file.read(kHeaderPage, page.data(), static_cast<uint8_t>(PageType::Header));
  FileHeader h = decode_header_prefix(page.data(), page_size(), path());
  im.file.read(kIndexRootPage, page.data(), static_cast<uint8_t>(PageType::IndexRoot));
  im.slots = decode_index_root_page(page.data(), h.page_size, im.page_bound(), path());
  im.header = h;
}

std::unique_ptr<IndexFile> IndexFile::open(const std::string& path, const OpenOptions& options) {
  const bool writable = options.writable;
  Io& io = options.io != nullptr ? *options.io : posix_io();
  auto impl =
      std::make_unique<Impl>(Impl{PageFile::open(path, writable, io, options.busy_timeout_ms),
                                  writable,
                                  {},
                                  {},
                                  0,
                                  nullptr,
                                  nullptr,
                                  {},
                                  false,
                                  {}});
  PageFile& file = impl->file;
  uint64_t size = file.file_size();
  uint8_t prefix[kHeaderPrefixSize] = {};
  size_t available = static_cast<size_t>(std::min<uint64_t>(size, kHeaderPrefixSize));
  file.read_raw(0, prefix, available);
  FileHeader h = decode_header_prefix(prefix, available, path);
  file.set_page_size(h.page_size);
  size = file.file_size();  // a read-only open may see pages that only the log holds yet
  std::vector<uint8_t> page(h.page_size);
  file.read(kHeaderPage, page.data(), static_cast<uint8_t>(PageType::Header));
  h = decode_header_prefix(page.data(), h.page_size, path);
  if (size < uint64_t{h.page_count} * h.page_size) {
    throw CorruptError(
        fmt::format("{}: truncated file: the header counts {} pages of {} bytes, "
                    "the file has {} bytes",
                    path, h.page_count, h.page_size, size));
  }
  impl->header = h;
  impl->last.checkpoint = h.checkpoint;
  impl->last.pages_written = h.last_pages_written;
  impl->last.bytes_written = h.last_bytes_written;
  impl->last.bytes_synced = h.last_bytes_synced;
  file.read(kIndexRootPage, page.data(), static_cast<uint8_t>(PageType::IndexRoot));
  impl->slots = decode_index_root_page(page.data(), h.page_size, impl->page_bound(), path);
  if (writable) file.enable_wal();
  std::unique_ptr<IndexFile> f(new IndexFile(std::move(impl)));
  if (options.cache_bytes != 0) f->set_cache_bytes(options.cache_bytes);
  f->set_build_threads(options.build_threads);
  return f;
}

std::unique_ptr<IndexFile> IndexFile::open_or_create(const std::string& path, uint32_t page_size) {
  if (page_size != 0 &&
      std::find(std::begin(kPageSizes), std::end(kPageSizes), page_size) == std::end(kPageSizes)) {
    throw UsageError(
        fmt::format("page size {} not supported (4096, 8192, 16384 or 32768)", page_size));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    auto f = open(path, {.writable = true});
    if (page_size != 0 && f->page_size() != page_size) {
      throw UsageError(
          fmt::format("{}: the file has page size {}, not {}", path, f->page_size(), page_size));
    }
    return f;
  }
  uint32_t ps = page_size != 0 ? page_size : kDefaultPageSize;
  // Under a temporary name, then moved into place (file/file_create.h); if another process
  // created the file meanwhile, that file is opened (and its page size checked) instead.
  if (!create_file_with(path, ps, {})) return open_or_create(path, page_size);
  return open(path, {.writable = true});
}

const std::string& IndexFile::path() const {
  return impl_->file.path();
}
uint32_t IndexFile::page_size() const {
  return impl_->page_size();
}
uint32_t IndexFile::page_count() const {
  return impl_->header.page_count;
}

uint32_t IndexFile::free_page_count() const {
  return impl_->header.free_page_count;
}

std::vector<uint32_t> IndexFile::free_list() const {
  Impl& im = *impl_;
  im.write_back();
  const std::string& p = path();
  std::vector<uint32_t> out;
  std::vector<uint8_t> page(page_size());
  uint32_t next = im.header.free_list_head;
  while (next != 0) {
    if (out.size() == im.header.free_page_count) {
      throw CorruptError(
          fmt::format("{}: the free list goes on past the header's {} free pages "
                      "(page {})",
                      p, im.header.free_page_count, next));
    }
    const uint32_t cur = next;
    im.file.read(cur, page.data(), static_cast<uint8_t>(PageType::Free));
    next = decode_free_page(page.data(), cur, page_size(), im.header.page_count, p);
    out.push_back(cur);
  }
  if (out.size() != im.header.free_page_count) {
    throw CorruptError(fmt::format("{}: the free list ends after {} of the header's {} free pages",
                                   p, out.size(), im.header.free_page_count));
  }
  return out;
}

std::vector<IndexInfo> IndexFile::indexes() const {
  std::vector<IndexInfo> out;
  for (const IndexInfo& s : impl_->slots) {
    if (s.root_page != 0) out.push_back(s);
  }
  return out;
}

std::optional<IndexInfo> IndexFile::find_index(const std::string& name) const {
  const IndexInfo* s = impl_->find(name);
  if (!s) return std::nullopt;
  return *s;
}

void IndexFileAccess::read_page(const IndexFile& f, uint32_t page_no, uint8_t* out,
                                uint8_t expected_type) {
  f.impl_->write_back();
  f.impl_->file.read(page_no, out, expected_type);
}

NotFoundError IndexFile::no_index_error(const std::string& name) const {
  std::string names;
  for (const IndexInfo& info : indexes()) names += (names.empty() ? "" : ", ") + info.def.name;
  return NotFoundError(fmt::format("{}: no index named {} ({})", path(), name,
                                   names.empty() ? "the file has no index" : "indexes: " + names));
}

IndexStats IndexFile::analyze(const std::string& name,
                              const std::function<void(uint32_t)>& on_page) const {
  const IndexInfo* s = impl_->find(name);
  if (!s) throw no_index_error(name);
  const PageFile& file = impl_->file;
  impl_->write_back();
  try {
    return analyze_btree(
        [&](uint32_t page_no, uint8_t* out) {
          file.read(page_no, out, static_cast<uint8_t>(PageType::Btree));
          if (on_page) on_page(page_no);
        },
        s->root_page, page_size(), impl_->page_bound());
  } catch (const CorruptError& e) {
    std::string msg = e.what();
    if (msg.rfind(path(), 0) == 0) throw;
    throw CorruptError(fmt::format("{}: index {}: {}", path(), name, msg));
  }
}

void IndexFile::set_build_threads(uint32_t threads) {
  impl_->build_threads = threads;
}

void IndexFile::set_cache_frames(size_t frames) {
  if (impl_->pool) throw UsageError("the buffer pool exists already: set its size before tree()");
  if (frames < BufferPool::kMinFrames) {
    throw UsageError(fmt::format("buffer pool needs at least {} frames", BufferPool::kMinFrames));
  }
  impl_->cache_frames = frames;
}

void IndexFile::set_cache_bytes(size_t bytes) {
  set_cache_frames(BufferPool::frames_within(bytes, page_size()));
}

Tree IndexFile::tree(const std::string& name) {
  Impl& im = *impl_;
  auto it = im.trees.find(name);
  if (it != im.trees.end()) return Tree(it->second.get());
  const IndexInfo* s = im.find(name);
  if (!s) throw no_index_error(name);
  if (!im.pool) {
    size_t frames = im.cache_frames != 0
                        ? im.cache_frames
                        : BufferPool::frames_for(BufferPool::kDefaultBytes, page_size());
    // Pages past the header's page count were written by a bulk load that never committed
    // (killed, SIGXFSZ, or a failed commit): nothing refers to them, so a writer cuts them off
    // before it allocates anything (docs/FORMAT.md 2.7).
    if (im.writable && im.file_pages() > im.header.page_count) {
      im.file.truncate(im.header.page_count);
      im.file.sync();
    }
    im.pool = std::make_unique<BufferPool>(im.file, frames, &check_btree_frame);
    im.allocator = std::make_unique<FileAllocator>(im.header, *im.pool, path());
  }
  uint16_t jump_interval;
  {
    PageRef root = im.pool->pin(s->root_page, static_cast<uint8_t>(PageType::Btree));
    std::shared_lock latch(root.latch());
    jump_interval = read_btree_header(root.data()).jump_interval;
  }
  const uint32_t slot = s->id;
  auto tree = std::make_unique<Tree::Body>(*im.pool, *im.allocator, s->root_page, s->def,
                                           static_cast<uint8_t>(slot % 256), jump_interval,
                                           [&im, slot](uint32_t root) {
                                             im.slots[slot].root_page = root;
                                             im.dirty = true;
                                           });
  if (!im.writable) tree->set_read_only(true);
  return Tree(im.trees.emplace(name, std::move(tree)).first->second.get());
}

void IndexFile::commit() {
  Impl& im = *impl_;
  if (!im.pool) return;
  if (!im.writable) throw ReadOnlyError(fmt::format("{}: opened read-only", path()));
  std::vector<std::unique_lock<std::mutex>> writers;
  for (auto& [name, tree] : im.trees) writers.emplace_back(tree->write_mutex());
  // Freed pages onto the free list, dirty pages into the log, the index root page if a root
  // moved, then the checkpoint.
  bool freed = false;  // the header's free list grows
  if (im.allocator->has_released()) {
    im.allocator->to_free_list();
    freed = true;
  }
  im.pool->flush();
  if (im.dirty) {
    std::vector<uint8_t> page(page_size());
    encode_index_root_page(im.slots, page.data(), page_size());
    im.file.write(kIndexRootPage, page.data());
  }
  if (!im.dirty && !freed && im.file.wal()->pending_pages() == 0) return;  // nothing changed
  im.checkpoint(im.header, 0);
  im.dirty = false;
}

CommitStats IndexFile::last_checkpoint() const {
  return impl_->last;
}

std::vector<uint32_t> IndexFile::last_checkpoint_pages() const {
  const Wal* wal = impl_->file.wal();
  return wal != nullptr ? wal->last_checkpoint_pages() : std::vector<uint32_t>{};
}

void IndexFile::close() {
  if (!impl_) return;
  // Whatever happens below, the file is closed when this returns or throws (its locks
  // released); after a failure the log's destructor leaves the log to the next open.
  struct Closer {
    std::unique_ptr<Impl>& impl;
    ~Closer() {
      impl->trees.clear();
      impl->allocator.reset();
      impl->pool.reset();
      impl.reset();
    }
  } closer{impl_};
  Impl& im = *impl_;
  if (im.writable && im.pool) commit();
  im.trees.clear();
  im.allocator.reset();
  im.pool.reset();
  Wal* wal = im.file.wal();
  if (im.writable && wal && wal->writable() && !wal->failed()) wal->checkpoint(0);
}

bool IndexFile::checkpoint(int wait_ms) {
  Impl& im = *impl_;
  if (!im.writable) throw ReadOnlyError(fmt::format("{}: opened read-only", path()));
  commit();
  Wal* wal = im.file.wal();
  return wal == nullptr || wal->checkpoint(wait_ms);
}

void IndexFile::backup(const std::string& dest) {
  Impl& im = *impl_;
  if (im.writable) commit();
  copy_pages_to_new_file(im.file, im.header.page_count, dest);
}

WalRecovery IndexFile::log_recovery() const {
  return impl_->file.recovery();
}

std::string IndexFile::log_path() const {
  const Wal* wal = impl_->file.wal();
  return wal == nullptr ? std::string() : wal->path();
}

uint32_t IndexFile::log_committed_frames() const {
  const Wal* wal = impl_->file.wal();
  return wal == nullptr ? 0 : wal->committed_frames();
}

}  // namespace pbtree
