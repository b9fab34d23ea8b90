// FileAllocator: where the living B-trees of one file get pages and give them back (the
// persistent free list, page/file_header.h).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "btree/btree.h"
#include "page/buffer_pool.h"
#include "page/file_header.h"

namespace pbtree {

// Pages for the living B-trees. allocate(): pages released earlier in this session first,
// then the head of the persistent free list (a chain of free pages, type 9, layout in
// page/file_header.h; the page is read through the pool and checked), then the end of the
// file (the header's page count grows in memory). release(): the page waits in memory until
// the next checkpoint, where to_free_list() writes it as a free page at the head of the chain
// (so readers that still reach a just-released page find the btr_released flag, never a
// free page, until the operation that freed it is long done). Head, count and page count
// live in the in-memory header that the checkpoint writes; everything reaches the file
// atomically with the checkpoint (page/wal.h). Thread-safe (one mutex): trees of different
// indexes share it.
class FileAllocator : public PageAllocator {
 public:
  // New pages start at the header's page count: pages of the file past it are never adopted
  // (docs/FORMAT.md 2.7; IndexFile::tree() cuts them off in a writable session).
  FileAllocator(FileHeader& header, BufferPool& pool, std::string path)
      : header_(header), pool_(pool), path_(std::move(path)) {}
  uint32_t allocate() override {
    std::lock_guard lock(mutex_);
    if (!released_.empty()) {
      uint32_t p = released_.back();
      released_.pop_back();
      return p;
    }
    if (header_.free_list_head != 0) {
      const uint32_t p = header_.free_list_head;
      if (header_.free_page_count == 0) {
        throw CorruptError(fmt::format("{}: free-list head {} with 0 free pages", path_, p));
      }
      uint32_t next;
      {
        PageRef ref = pool_.pin(p, static_cast<uint8_t>(PageType::Free));
        std::shared_lock latch(ref.latch());
        next = decode_free_page(ref.data(), p, header_.page_size, header_.page_count, path_);
      }
      if ((next == 0) != (header_.free_page_count == 1)) {
        throw CorruptError(fmt::format(
            "{}: page {} (free): next free page {}, but the header counts {} free pages", path_, p,
            next, header_.free_page_count));
      }
      header_.free_list_head = next;
      --header_.free_page_count;
      return p;
    }
    if (header_.page_count == UINT32_MAX) throw UsageError("file full: 2^32 - 1 pages");
    return header_.page_count++;
  }
  void release(uint32_t page_no) override {
    std::lock_guard lock(mutex_);
    released_.push_back(page_no);
  }
  // Writes the pages released since the last call as free pages at the head of the chain
  // (in the pool; the checkpoint logs them). Call with every tree's writer mutex held.
  void to_free_list() {
    std::lock_guard lock(mutex_);
    for (uint32_t p : released_) {
      PageRef ref = pool_.create(p);
      std::unique_lock latch(ref.latch());
      encode_free_page(header_.free_list_head, ref.data(), header_.page_size);
      ref.mark_dirty();
      header_.free_list_head = p;
      ++header_.free_page_count;
    }
    released_.clear();
  }
  bool has_released() const {
    std::lock_guard lock(mutex_);
    return !released_.empty();
  }

 private:
  FileHeader& header_;
  BufferPool& pool_;
  std::string path_;
  std::vector<uint32_t> released_;
  mutable std::mutex mutex_;
};

}  // namespace pbtree
