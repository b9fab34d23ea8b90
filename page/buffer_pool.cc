// BufferPool: page cache with CLOCK eviction, pins, per-frame latches and dirty write-back
// (design notes at the top of page/buffer_pool.h). Writes no bytes of its own: pages go to
// the file through PageFile::write, which stamps checksum and page number.
#include "page/buffer_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>


namespace pbtree {

namespace {
void note_page(std::atomic<uint32_t>& bound, uint32_t page_no) {
  const uint32_t b = page_no == UINT32_MAX ? page_no : page_no + 1;
  uint32_t cur = bound.load(std::memory_order_relaxed);
  while (cur < b && !bound.compare_exchange_weak(cur, b, std::memory_order_relaxed)) {
  }
}
}  // namespace

uint64_t BufferPool::pages_in_use() const {
  const uint64_t file_pages = file_.file_size() / page_size_;
  return std::max<uint64_t>(file_pages, page_bound_.load(std::memory_order_relaxed));
}

PageRef::PageRef(PageRef&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), frame_(std::exchange(other.frame_, nullptr)) {}

PageRef& PageRef::operator=(PageRef&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = std::exchange(other.pool_, nullptr);
    frame_ = std::exchange(other.frame_, nullptr);
  }
  return *this;
}

void PageRef::mark_dirty() const {
  frame_->dirty.store(true, std::memory_order_release);
  frame_->version.fetch_add(1, std::memory_order_acq_rel);
}

void PageRef::reset() {
  if (frame_ != nullptr) {
    pool_->unpin(frame_);
    frame_ = nullptr;
    pool_ = nullptr;
  }
}

size_t BufferPool::frames_for(size_t bytes, uint32_t page_size) {
  size_t n = page_size == 0 ? 0 : bytes / page_size;
  return n < kMinFrames ? kMinFrames : n;
}

BufferPool::BufferPool(PageFile& file, size_t frames, PageCheck check)
    : file_(file), page_size_(file.page_size()), check_(check) {
  if (page_size_ == 0) throw UsageError(fmt::format("{}: page size not known", file.path()));
  if (frames < kMinFrames) {
    throw UsageError(
        fmt::format("buffer pool needs at least {} frames, {} requested", kMinFrames, frames));
  }
  arena_ = std::make_unique<uint8_t[]>(frames * page_size_);
  frames_.reserve(frames);
  for (size_t i = 0; i < frames; ++i) {
    auto f = std::make_unique<Frame>();
    f->data = arena_.get() + i * page_size_;
    frames_.push_back(std::move(f));
  }
  table_.reserve(frames * 2);
}

BufferPool::~BufferPool() = default;

Frame* BufferPool::victim_locked() {
  const size_t n = frames_.size();
  for (size_t step = 0; step < 2 * n + 1; ++step) {
    Frame* f = frames_[hand_].get();
    hand_ = (hand_ + 1) % n;
    if (!f->in_use) return f;
    if (f->pins > 0) continue;
    if (f->referenced) {
      f->referenced = false;
      continue;
    }
    // Evict: nobody holds a pin, so nobody holds the latch either.
    if (f->dirty.load(std::memory_order_acquire)) {
      file_.write(f->page_no, f->data);
      ++stats_.writes;
      f->dirty.store(false, std::memory_order_release);
    }
    table_.erase(f->page_no);
    f->in_use = false;
    ++stats_.evictions;
    return f;
  }
  throw UsageError(fmt::format("buffer pool exhausted: all {} frames pinned", n));
}

PageRef BufferPool::pin(uint32_t page_no, uint8_t expected_type) {
  std::lock_guard lock(mutex_);
  auto it = table_.find(page_no);
  if (it != table_.end()) {
    Frame* f = it->second;
    ++f->pins;
    f->referenced = true;
    ++stats_.hits;
    return PageRef(this, f);
  }
  Frame* f = victim_locked();
  file_.read(page_no, f->data, expected_type);  // on throw the frame stays free
  // E.g. a B-tree page's header bounds every node decode done in place on the frame: a length
  // or jump size beyond the page is caught here, once, before anyone trusts it.
  if (check_ != nullptr) check_(f->data, page_size_);
  ++stats_.misses;
  note_page(page_bound_, page_no);
  f->page_no = page_no;
  f->in_use = true;
  f->referenced = true;
  f->pins = 1;
  f->dirty.store(false, std::memory_order_release);
  f->version.fetch_add(1, std::memory_order_acq_rel);
  table_.emplace(page_no, f);
  return PageRef(this, f);
}

PageRef BufferPool::create(uint32_t page_no) {
  std::lock_guard lock(mutex_);
  auto it = table_.find(page_no);
  if (it != table_.end()) {
    // Still cached (maybe pinned by a reader that will notice the version change): the
    // caller overwrites the bytes under the exclusive latch.
    Frame* f = it->second;
    ++f->pins;
    f->referenced = true;
    return PageRef(this, f);
  }
  Frame* f = victim_locked();
  note_page(page_bound_, page_no);
  f->page_no = page_no;
  f->in_use = true;
  f->pins = 1;
  f->referenced = true;
  std::memset(f->data, 0, page_size_);
  f->dirty.store(true, std::memory_order_release);
  f->version.fetch_add(1, std::memory_order_acq_rel);
  table_.emplace(page_no, f);
  return PageRef(this, f);
}

void BufferPool::unpin(Frame* frame) {
  std::lock_guard lock(mutex_);
  --frame->pins;
}

void BufferPool::flush() {
  // Pin the dirty frames under the mutex, then write copies outside it.
  std::vector<PageRef> dirty;
  {
    std::lock_guard lock(mutex_);
    for (auto& f : frames_) {
      if (f->in_use && f->dirty.load(std::memory_order_acquire)) {
        ++f->pins;
        dirty.push_back(PageRef(this, f.get()));
      }
    }
  }
  std::unique_ptr<uint8_t[]> copy = std::make_unique<uint8_t[]>(page_size_);
  for (PageRef& ref : dirty) {
    {
      std::shared_lock latch(ref.latch());
      ref.frame_->dirty.store(false, std::memory_order_release);
      std::memcpy(copy.get(), ref.data(), page_size_);
    }
    try {
      file_.write(ref.page_no(), copy.get());
    } catch (...) {
      ref.frame_->dirty.store(true, std::memory_order_release);
      throw;
    }
    std::lock_guard lock(mutex_);
    ++stats_.writes;
  }
}

bool BufferPool::discard(uint32_t page_no) {
  std::lock_guard lock(mutex_);
  auto it = table_.find(page_no);
  if (it == table_.end()) return true;
  Frame* f = it->second;
  if (f->pins > 0) return false;
  f->in_use = false;
  f->dirty.store(false, std::memory_order_release);
  table_.erase(it);
  return true;
}

BufferPoolStats BufferPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

size_t BufferPool::pinned_frames() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& f : frames_) n += f->pins > 0 ? 1 : 0;
  return n;
}

}  // namespace pbtree
