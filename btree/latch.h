// Page latches of the tree: a pinned page with its frame latch held shared (ReadLatch, for
// readers' latch coupling) or exclusive (WriteLatch, for the writer; marks the frame dirty).
#pragma once

#include <mutex>
#include <utility>

#include "page/buffer_pool.h"

namespace pbtree {

// A pinned page with its latch held shared. Releases the latch before the pin.
class ReadLatch {
 public:
  ReadLatch() = default;
  explicit ReadLatch(PageRef ref) : ref_(std::move(ref)) {
    ref_.latch().lock_shared();
    locked_ = true;
  }
  // Takes over a pin whose latch the caller already holds shared.
  ReadLatch(PageRef ref, std::adopt_lock_t) : ref_(std::move(ref)), locked_(true) {}
  ReadLatch(ReadLatch&& o) noexcept
      : ref_(std::move(o.ref_)), locked_(std::exchange(o.locked_, false)) {}
  ReadLatch& operator=(ReadLatch&& o) noexcept {
    if (this != &o) {
      reset();
      ref_ = std::move(o.ref_);
      locked_ = std::exchange(o.locked_, false);
    }
    return *this;
  }
  ~ReadLatch() { reset(); }
  void reset() {
    unlock();
    ref_.reset();
  }
  void unlock() {
    if (locked_) {
      ref_.latch().unlock_shared();
      locked_ = false;
    }
  }
  // Unlocks and hands over the pin.
  PageRef release_pin() {
    unlock();
    return std::move(ref_);
  }
  // Hands over the pin with the latch still held (the receiver unlocks it).
  PageRef release_pin_latched() {
    locked_ = false;
    return std::move(ref_);
  }
  const uint8_t* data() const { return ref_.data(); }
  PageRef& ref() { return ref_; }

 private:
  PageRef ref_;
  bool locked_ = false;
};

// A pinned page with its latch held exclusive; bytes changed through it are marked dirty.
class WriteLatch {
 public:
  explicit WriteLatch(PageRef ref) : ref_(std::move(ref)) { ref_.latch().lock(); }
  WriteLatch(const WriteLatch&) = delete;
  ~WriteLatch() {
    ref_.mark_dirty();
    ref_.latch().unlock();
  }
  uint8_t* data() const { return ref_.data(); }

 private:
  PageRef ref_;
};

}  // namespace pbtree
