// BufferPool: page cache with CLOCK eviction, lock-free pins of cached pages through a
// page-number-indexed table, per-frame latches and dirty write-back (design notes at the top
// of page/buffer_pool.h). Writes no bytes of its own: pages go to
// the file through PageFile::write, which stamps checksum and page number.
#include "page/buffer_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>
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

size_t BufferPool::frames_within(size_t bytes, uint32_t page_size) {
  return frames_for(bytes, page_size + page_size / 4);
}

BufferPool::BufferPool(PageFile& file, size_t frames, PageCheck check)
    : file_(file), page_size_(file.page_size()), check_(check) {
  if (page_size_ == 0) throw UsageError(fmt::format("{}: page size not known", file.path()));
  if (frames < kMinFrames) {
    throw UsageError(
        fmt::format("buffer pool needs at least {} frames, {} requested", kMinFrames, frames));
  }
  arena_ = HugeArena(frames * page_size_);
  frame_mem_ = HugeArena(frames * sizeof(Frame));
  Frame* base = reinterpret_cast<Frame*>(frame_mem_.data());
  for (size_t i = 0; i < frames; ++i) {
    Frame* f = new (base + i) Frame();
    f->data = arena_.data() + i * page_size_;
  }
  frames_ = std::span<Frame>(base, frames);
  chunks_ = std::make_unique<std::atomic<SlotChunk*>[]>(size_t{1} << (32 - kSlotBits));
}

BufferPool::~BufferPool() {
  for (Frame& f : frames_) f.~Frame();
}

std::atomic<Frame*>& BufferPool::slot_locked(uint32_t page_no) {
  std::atomic<SlotChunk*>& c = chunks_[page_no >> kSlotBits];
  SlotChunk* chunk = c.load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    owned_chunks_.push_back(std::make_unique<SlotChunk>());  // value-initialized: all null
    chunk = owned_chunks_.back().get();
    c.store(chunk, std::memory_order_release);
  }
  return chunk->slot[page_no & (kSlotsPerChunk - 1)];
}

Frame* BufferPool::try_pin_cached(uint32_t page_no) {
  std::atomic<Frame*>* slot = find_slot(page_no);
  if (slot == nullptr) return nullptr;
  Frame* f = slot->load(std::memory_order_acquire);
  if (f == nullptr) return nullptr;
  f->pins.fetch_add(1, std::memory_order_seq_cst);
  // The evictor clears the slot before it reads the pin count: if the slot still names f
  // now, f holds page_no and cannot be evicted until this pin is released.
  if (slot->load(std::memory_order_seq_cst) != f) {
    f->pins.fetch_sub(1, std::memory_order_release);
    return nullptr;
  }
  if (!f->referenced.load(std::memory_order_relaxed)) {
    f->referenced.store(true, std::memory_order_relaxed);
  }
  return f;
}

Frame* BufferPool::victim_locked() {
  const size_t n = frames_.size();
  for (size_t step = 0; step < 2 * n + 1; ++step) {
    Frame* f = &frames_[hand_];
    hand_ = (hand_ + 1) % n;
    if (!f->in_use) return f;
    if (f->pins.load(std::memory_order_acquire) > 0) continue;
    if (f->referenced.load(std::memory_order_relaxed)) {
      f->referenced.store(false, std::memory_order_relaxed);
      continue;
    }
    // Unpublish, then check for a pin that got in before (see the header's notes).
    std::atomic<Frame*>& slot = slot_locked(f->page_no);
    slot.store(nullptr, std::memory_order_seq_cst);
    if (f->pins.load(std::memory_order_seq_cst) > 0) {
      slot.store(f, std::memory_order_seq_cst);
      continue;
    }
    // Evict: nobody holds a pin, so nobody holds the latch either.
    if (f->dirty.load(std::memory_order_acquire)) {
      try {
        file_.write(f->page_no, f->data);
      } catch (...) {
        slot.store(f, std::memory_order_seq_cst);  // still cached, still dirty
        throw;
      }
      ++stats_.writes;
      f->dirty.store(false, std::memory_order_release);
    }
    f->in_use = false;
    ++stats_.evictions;
    return f;
  }
  throw UsageError(fmt::format("buffer pool exhausted: all {} frames pinned", n));
}

PageRef BufferPool::pin(uint32_t page_no, uint8_t expected_type) {
  if (Frame* f = try_pin_cached(page_no)) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    return PageRef(this, f);
  }
  std::lock_guard lock(mutex_);
  std::atomic<Frame*>& slot = slot_locked(page_no);
  if (Frame* f = slot.load(std::memory_order_relaxed)) {
    // Slots change only under the mutex: f stays published while we hold it.
    f->pins.fetch_add(1, std::memory_order_seq_cst);
    f->referenced.store(true, std::memory_order_relaxed);
    hits_.fetch_add(1, std::memory_order_relaxed);
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
  f->referenced.store(true, std::memory_order_relaxed);
  // fetch_add, not a store: a lock-free pin backing off may still hold a transient count.
  f->pins.fetch_add(1, std::memory_order_seq_cst);
  f->dirty.store(false, std::memory_order_release);
  f->version.fetch_add(1, std::memory_order_acq_rel);
  slot.store(f, std::memory_order_seq_cst);  // publish: the bytes are in place
  return PageRef(this, f);
}

PageRef BufferPool::create(uint32_t page_no) {
  std::lock_guard lock(mutex_);
  std::atomic<Frame*>& slot = slot_locked(page_no);
  if (Frame* f = slot.load(std::memory_order_relaxed)) {
    // Still cached (maybe pinned by a reader that will notice the version change): the
    // caller overwrites the bytes under the exclusive latch.
    f->pins.fetch_add(1, std::memory_order_seq_cst);
    f->referenced.store(true, std::memory_order_relaxed);
    return PageRef(this, f);
  }
  Frame* f = victim_locked();
  note_page(page_bound_, page_no);
  f->page_no = page_no;
  f->in_use = true;
  f->pins.fetch_add(1, std::memory_order_seq_cst);
  f->referenced.store(true, std::memory_order_relaxed);
  std::memset(f->data, 0, page_size_);
  f->dirty.store(true, std::memory_order_release);
  f->version.fetch_add(1, std::memory_order_acq_rel);
  slot.store(f, std::memory_order_seq_cst);
  return PageRef(this, f);
}

void BufferPool::unpin(Frame* frame) {
  frame->pins.fetch_sub(1, std::memory_order_release);
}

void BufferPool::flush() {
  // Pin the dirty frames under the mutex, then write copies outside it.
  std::vector<PageRef> dirty;
  {
    std::lock_guard lock(mutex_);
    for (Frame& f : frames_) {
      if (f.in_use && f.dirty.load(std::memory_order_acquire)) {
        f.pins.fetch_add(1, std::memory_order_seq_cst);
        dirty.push_back(PageRef(this, &f));
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
  std::atomic<Frame*>* slot = find_slot(page_no);
  Frame* f = slot == nullptr ? nullptr : slot->load(std::memory_order_relaxed);
  if (f == nullptr) return true;
  slot->store(nullptr, std::memory_order_seq_cst);
  if (f->pins.load(std::memory_order_seq_cst) > 0) {
    slot->store(f, std::memory_order_seq_cst);
    return false;
  }
  f->in_use = false;
  f->dirty.store(false, std::memory_order_release);
  return true;
}

BufferPoolStats BufferPool::stats() const {
  std::lock_guard lock(mutex_);
  BufferPoolStats s = stats_;
  s.hits = hits_.load(std::memory_order_relaxed);
  return s;
}

size_t BufferPool::pinned_frames() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const Frame& f : frames_) n += f.pins.load(std::memory_order_acquire) > 0 ? 1 : 0;
  return n;
}

}  // namespace pbtree
