// HugeArena (page/huge_arena.h): mmap, trim to 2 MiB alignment, madvise(MADV_HUGEPAGE).
#include "page/huge_arena.h"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace pbtree {

HugeArena::HugeArena(size_t bytes) {
  if (bytes == 0) return;
  if (bytes < kHugePage) {
    // Smaller than one huge page (a small pool): plain 4 KiB pages, no advice.
    const size_t size = (bytes + kSmallPage - 1) / kSmallPage * kSmallPage;
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<uint8_t*>(p);
    size_ = size;
    return;
  }
  const size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  // Over-map by one huge page, then unmap the unaligned head and the tail beyond `size`.
  const size_t span = size + kHugePage;
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (base + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1);
  if (aligned > base) munmap(p, aligned - base);
  const uintptr_t end = base + span;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  data_ = reinterpret_cast<uint8_t*>(aligned);
  size_ = size;
#ifdef MADV_HUGEPAGE
  // Best effort: EINVAL where transparent huge pages are not built in changes nothing else.
  (void)madvise(data_, size_, MADV_HUGEPAGE);
#endif
}

HugeArena::HugeArena(HugeArena&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

HugeArena& HugeArena::operator=(HugeArena&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HugeArena::~HugeArena() {
  release();
}

void HugeArena::release() noexcept {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace pbtree
