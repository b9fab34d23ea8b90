// One anonymous memory region for the buffer pool's frames: mapped with mmap, aligned to
// 2 MiB and advised MADV_HUGEPAGE, so that the kernel backs it with transparent huge pages
// where it can (Linux `transparent_hugepage=madvise` or `always`). A lookup touches a few
// random frames per level; with 4 KiB pages each of them costs a TLB miss once the cached
// pages outgrow the TLB's reach (about 8 MiB here), with 2 MiB pages the whole pool fits it.
// The advice is best effort: without huge pages the region works the same, in 4 KiB pages.
// The memory is zero-filled by the kernel and touched only when a frame is first used.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pbtree {

/// An owned, zero-filled anonymous mapping of at least `bytes` bytes: 2 MiB-aligned and
/// advised MADV_HUGEPAGE from 2 MiB up, plain 4 KiB pages below. Move-only. Throws
/// std::bad_alloc when the mapping cannot be made.
class HugeArena {
 public:
  HugeArena() = default;
  /// Maps `bytes` bytes (rounded up to 2 MiB, or to 4 KiB below 2 MiB; 0 maps nothing).
  /// Throws std::bad_alloc.
  explicit HugeArena(size_t bytes);
  HugeArena(HugeArena&& other) noexcept;
  HugeArena& operator=(HugeArena&& other) noexcept;
  HugeArena(const HugeArena&) = delete;
  HugeArena& operator=(const HugeArena&) = delete;
  ~HugeArena();

  uint8_t* data() const { return data_; }
  /// Bytes mapped (the request rounded up).
  size_t size() const { return size_; }

  /// Alignment of the region and granule of its size: one x86-64 / arm64 huge page.
  static constexpr size_t kHugePage = size_t{2} << 20;
  /// Granule below kHugePage: the base page.
  static constexpr size_t kSmallPage = 4096;

 private:
  void release() noexcept;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pbtree
