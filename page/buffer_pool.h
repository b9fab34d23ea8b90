// A fixed-size cache of pages of one PageFile: frames pinned through RAII PageRef handles,
// CLOCK eviction of unpinned frames, dirty tracking with write-back on eviction and flush(),
// and one reader/writer latch per frame that the B-tree uses for latch coupling. Pages are
// read one at a time with PageFile::read (pread); the file is never read whole.
//
// Pinning a cached page takes no lock and does no hash lookup: page numbers of one file are
// dense, so a page-number-indexed table of atomic frame pointers (two levels of 2^16 slots,
// chunks allocated under the pool mutex and never freed while the pool lives) maps a page to
// its frame. A pin increments the frame's atomic pin count, then re-reads the slot: if the
// slot still names the frame the pin holds, otherwise it is undone and the pin takes the
// mutex path. Eviction (under the mutex) clears the slot first and then reads the pin count,
// both sequentially consistent, so either the evictor sees the pin or the pinner sees the
// cleared slot (Dekker); a frame is republished only after its new bytes are in place.
//
// The frames' page bytes lie in one anonymous mapping advised for transparent huge pages
// (page/huge_arena.h), and the Frame objects side by side in another: a descent touches a
// few random frames per level, and with 4 KiB pages each would cost a TLB miss once the pool
// outgrows the TLB's reach.
//
// Thread safety: pin/unpin/flush may be called from any thread. The page bytes of a frame are
// protected by its latch: readers hold it shared, the (single) writer holds it exclusive while
// it changes the bytes and then calls mark_dirty(), which also bumps the frame's version so a
// reader that released the latch can tell whether the page changed in between.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <vector>

#include "page/huge_arena.h"
#include "page/page_file.h"

namespace pbtree {

class BufferPool;

/// A frame's reader/writer latch: std::shared_mutex's interface (std::unique_lock and
/// std::shared_lock take it), plus a count of exclusive holds, odd while a writer holds it.
/// A reader that reads a frame's in-memory data without the latch (the route tables of
/// node/route_table.h) and sees the same even count before and after knows that no writer
/// held the latch in between (btree/tree.cc, the optimistic descent).
class FrameLatch {
 public:
  void lock() {
    m_.lock();
    writes_.fetch_add(1, std::memory_order_seq_cst);
  }
  bool try_lock() {
    if (!m_.try_lock()) return false;
    writes_.fetch_add(1, std::memory_order_seq_cst);
    return true;
  }
  void unlock() {
    writes_.fetch_add(1, std::memory_order_release);
    m_.unlock();
  }
  void lock_shared() { m_.lock_shared(); }
  bool try_lock_shared() { return m_.try_lock_shared(); }
  void unlock_shared() { m_.unlock_shared(); }
  /// Exclusive acquisitions plus releases so far: odd while a writer holds the latch.
  uint64_t writes() const { return writes_.load(std::memory_order_acquire); }

 private:
  std::shared_mutex m_;
  std::atomic<uint64_t> writes_{0};
};

/// In-memory data a higher layer attaches to a frame (the node layer's page directory,
/// node/page_directory.h): never written to the file, owned by the frame.
struct FrameAux {
  virtual ~FrameAux() = default;
};

/// One cached page and its bookkeeping. Only BufferPool creates frames.
struct alignas(64) Frame {
  uint32_t page_no = 0;
  bool in_use = false;                  ///< holds a page (page_no valid); guarded by the pool mutex
  std::atomic<bool> referenced{false};  ///< CLOCK bit; set by pins, cleared by the CLOCK hand
  /// Pins held, plus transient increments of lock-free pins that are about to back off.
  std::atomic<int> pins{0};
  std::atomic<bool> dirty{false};
  std::atomic<uint64_t> version{0};  ///< bumped by every mark_dirty()
  // What every pin and search reads comes first, so that it shares one cache line with the
  // pin count and the latch's lock word.
  uint8_t* data = nullptr;  ///< page_size bytes inside the pool's arena
  /// Per-frame in-memory page directory (node/page_directory.h): set once under aux_mutex,
  /// then read by readers holding the shared latch; it stamps itself with `version`.
  std::atomic<FrameAux*> aux{nullptr};
  /// Route table of a non-leaf page (node/route_table.h), read without the latch by
  /// descents; built under the shared latch and aux_mutex.
  std::atomic<FrameAux*> route{nullptr};
  FrameLatch latch;  ///< protects the page bytes
  /// One builder of `aux` or `route` at a time (readers try_lock, else fall back).
  std::mutex aux_mutex;
  Frame() = default;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() {
    delete aux.load(std::memory_order_acquire);
    delete route.load(std::memory_order_acquire);
  }
};

/// A pinned page: while it lives, the frame is not evicted. Move-only. Does not latch: callers
/// take latch() shared to read and exclusive to change the bytes.
class PageRef {
 public:
  PageRef() = default;
  PageRef(PageRef&& other) noexcept;
  PageRef& operator=(PageRef&& other) noexcept;
  PageRef(const PageRef&) = delete;
  PageRef& operator=(const PageRef&) = delete;
  ~PageRef() { reset(); }

  explicit operator bool() const { return frame_ != nullptr; }
  uint32_t page_no() const { return frame_->page_no; }
  /// The page bytes (page_size of them). Read under a shared latch, write under an exclusive one.
  uint8_t* data() const { return frame_->data; }
  /// The frame's reader/writer latch.
  FrameLatch& latch() const { return frame_->latch; }
  /// Marks the page changed (written back on eviction or flush) and bumps version(). Call while
  /// holding the exclusive latch.
  void mark_dirty() const;
  /// Changes since the frame was loaded; compare under the latch.
  uint64_t version() const { return frame_->version.load(std::memory_order_acquire); }
  /// Unpins (no-op if empty).
  void reset();
  /// The pinned frame and its pool (for per-frame data of higher layers: Frame::aux).
  Frame& frame() const { return *frame_; }
  BufferPool& pool() const { return *pool_; }

 private:
  friend class BufferPool;
  PageRef(BufferPool* pool, Frame* frame) : pool_(pool), frame_(frame) {}
  BufferPool* pool_ = nullptr;
  Frame* frame_ = nullptr;
};

/// Counters since construction.
struct BufferPoolStats {
  uint64_t hits = 0;
  uint64_t misses = 0;     ///< pages read from the file
  uint64_t writes = 0;     ///< pages written (evictions and flushes)
  uint64_t evictions = 0;  ///< frames reused for another page
};

/// Per-frame page directories (an in-memory search aid built from a frame's bytes, never
/// written) as reported through BufferPool::note_directory(): bytes held now and builds
/// (first builds and rebuilds) since construction. All zero while no directory code reports.
struct DirectoryStats {
  int64_t bytes = 0;
  uint64_t builds = 0;
};

/// Page cache over one PageFile (which must outlive it).
class BufferPool {
 public:
  /// Default budget: 64 MiB worth of frames.
  static constexpr size_t kDefaultBytes = size_t{64} << 20;
  /// Frames for a budget of `bytes` at `page_size` (at least kMinFrames).
  static size_t frames_for(size_t bytes, uint32_t page_size);
  /// Frames whose pages and page directories (at most a quarter page each) fit a memory
  /// budget of `bytes`: bytes / (page_size + page_size / 4), at least kMinFrames.
  static size_t frames_within(size_t bytes, uint32_t page_size);
  /// Fewest frames a pool may have: enough for a writer's and a few readers' pins.
  static constexpr size_t kMinFrames = 8;

  /// Checks a page just read into a frame, before anyone decodes it in place (the B-tree
  /// layer passes check_btree_frame, node/btree_page.h); throws CorruptError.
  using PageCheck = void (*)(const uint8_t* page, uint32_t page_size);

  /// `frames` frames of file.page_size() bytes; `check` (if not null) runs on every page read.
  /// Throws UsageError if frames < kMinFrames or the file has no page size yet.
  BufferPool(PageFile& file, size_t frames, PageCheck check = nullptr);
  /// Does not write dirty frames: call flush() first (a destructor cannot report I/O errors).
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  /// Pins page `page_no`, reading it from the file if it is not cached (checksum, self page
  /// number and, unless 0, the page type `expected_type` are checked on read; a cached page is
  /// not re-checked: its bytes may only be read under its latch). Throws
  /// IoError, CorruptError, and UsageError("buffer pool exhausted: all N frames pinned").
  PageRef pin(uint32_t page_no, uint8_t expected_type = 0);
  /// Pins a frame for page `page_no` without reading the file: for pages just allocated (they
  /// may lie beyond the end of the file). A page not cached gets zeroed bytes and is marked
  /// dirty; a cached one keeps its bytes. Either way the caller must write the whole page
  /// under the exclusive latch and call mark_dirty().
  PageRef create(uint32_t page_no);
  /// Writes every dirty frame (a copy taken under its shared latch). Does not fsync: call
  /// PageFile::sync() after. Throws IoError. Must not run while the same thread holds a latch.
  void flush();
  /// Drops page `page_no` from the cache without writing it, if cached and unpinned (pages that
  /// no longer exist, e.g. after a file truncation). Returns false if it is pinned.
  bool discard(uint32_t page_no);

  uint32_t page_size() const { return page_size_; }
  /// Pages in use as far as this pool knows: the highest page number it has read or created
  /// plus one, or the file's pages (file plus log) if more. Bounds the sibling walks of
  /// btree/ (btree/walk_bound.h: a loop guard must count pages not yet written anywhere).
  uint64_t pages_in_use() const;
  size_t frame_count() const { return frames_.size(); }
  PageFile& file() { return file_; }
  BufferPoolStats stats() const;
  /// For the directory code: `bytes_delta` bytes of directory memory taken (> 0) or given back
  /// (< 0); `built` counts one directory build. Thread-safe (relaxed counters).
  void note_directory(int64_t bytes_delta, bool built) {
    aux_bytes.fetch_add(bytes_delta, std::memory_order_relaxed);
    if (built) aux_builds.fetch_add(1, std::memory_order_relaxed);
  }
  /// aux_bytes and aux_builds (node/page_directory.cc keeps them).
  DirectoryStats directory_stats() const {
    return {aux_bytes.load(std::memory_order_relaxed), aux_builds.load(std::memory_order_relaxed)};
  }
  /// Frames pinned right now (for tests: 0 when no handle is alive).
  size_t pinned_frames() const;

  /// True if page `page_no` is in a frame now (for tests that visit cached pages only).
  bool is_cached(uint32_t page_no) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::atomic<Frame*>* slot = find_slot(page_no);
    return slot != nullptr && slot->load(std::memory_order_acquire) != nullptr;
  }

  /// Bytes held by the frames' in-memory page directories (Frame::aux), kept by their owner
  /// (node/page_directory.cc), and how many directories were built since construction.
  std::atomic<int64_t> aux_bytes{0};
  std::atomic<uint64_t> aux_builds{0};

 private:
  friend class PageRef;
  void unpin(Frame* frame);
  // Returns a free or evictable frame (dirty victims are written back; the victim's slot is
  // cleared). Pool mutex held.
  Frame* victim_locked();

  // Page table: slot(page_no) holds the frame caching page_no, or null.
  static constexpr unsigned kSlotBits = 16;
  static constexpr uint32_t kSlotsPerChunk = uint32_t{1} << kSlotBits;
  struct SlotChunk {
    std::atomic<Frame*> slot[kSlotsPerChunk];
  };
  // The slot of page_no, or null if its chunk was never allocated (lock-free).
  std::atomic<Frame*>* find_slot(uint32_t page_no) const {
    SlotChunk* c = chunks_[page_no >> kSlotBits].load(std::memory_order_acquire);
    return c == nullptr ? nullptr : &c->slot[page_no & (kSlotsPerChunk - 1)];
  }
  // The slot of page_no, allocating its chunk. Pool mutex held.
  std::atomic<Frame*>& slot_locked(uint32_t page_no);
  // Pins page_no's frame without the mutex if it is cached and stays so; null otherwise.
  Frame* try_pin_cached(uint32_t page_no);

  PageFile& file_;
  uint32_t page_size_;
  PageCheck check_ = nullptr;
  HugeArena arena_;  // the frames' page bytes (page/huge_arena.h)
  // The Frame objects, side by side in their own mapping (built and destroyed in place): a
  // pin reads its frame right after the slot, so they too should lie on few (huge) pages.
  HugeArena frame_mem_;
  std::span<Frame> frames_;
  std::unique_ptr<std::atomic<SlotChunk*>[]> chunks_;  // 2^(32-kSlotBits) entries
  std::vector<std::unique_ptr<SlotChunk>> owned_chunks_;
  size_t hand_ = 0;
  std::atomic<uint32_t> page_bound_{0};  // highest page number read or created, plus one
  mutable std::mutex mutex_;
  BufferPoolStats stats_;          // misses, writes, evictions: guarded by mutex_
  std::atomic<uint64_t> hits_{0};  // counted by lock-free pins too
};

}  // namespace pbtree
