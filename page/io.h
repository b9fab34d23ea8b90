// FaultyIo, the test double of the injectable I/O layer (<pbtree/io.h>): wraps posix_io()
// and fails one chosen call with EIO (or writes half of the buffer, then fails), recording a
// trace of the calls. Writes no bytes of its own. Not installed.
#pragma once

#include <pbtree/io.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace pbtree {

/// Test double: forwards to posix_io() and fails the N-th call of a chosen kind after arm().
/// Failing calls return -1 with errno EIO and do nothing, except a ShortWrite, which writes
/// the first half of the buffer and then returns -1 (EIO): a torn write. Only the one armed
/// call fails; later calls succeed again. Every call is recorded in trace() as
/// "<op> <path>" (path as given to open; "?" for unknown descriptors), e.g.
/// "pwrite /tmp/x.pbt-wal", so tests can find where a checkpoint syncs its log.
class FaultyIo : public Io {
 public:
  /// What arm() counts and fails. Mutating = pwrite, fdatasync and ftruncate.
  enum class Op { Pread, Pwrite, Fdatasync, Ftruncate, Mutating };
  enum class Mode { Eio, ShortWrite };

  /// Fails the `nth` (1-based) call of kind `op` counted from now. ShortWrite applies to
  /// pwrite calls (the other kinds fail with plain EIO).
  void arm(Op op, uint64_t nth, Mode mode = Mode::Eio);
  /// No more failures.
  void disarm();
  /// True once the armed call has failed.
  bool fired() const;
  /// Calls of kind `op` since construction.
  uint64_t calls(Op op) const;
  /// "<op> <path>" of every call since construction or clear_trace().
  std::vector<std::string> trace() const;
  void clear_trace();

  int open(const std::string& path, int flags, mode_t mode) override;
  int close(int fd) override;
  ssize_t pread(int fd, void* buf, size_t count, off_t offset) override;
  ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) override;
  int fdatasync(int fd) override;
  int ftruncate(int fd, off_t length) override;
  int file_size(int fd, uint64_t* size) override;
  bool is_regular(int fd) override;
  int unlink(const std::string& path) override;

 private:
  // Counts a call of kind `op` on `fd`; true if this one must fail.
  bool count(Op op, const char* name, int fd);

  mutable std::mutex mutex_;
  std::unordered_map<int, std::string> paths_;
  uint64_t counts_[5] = {0, 0, 0, 0, 0};
  bool armed_ = false;
  bool fired_ = false;
  Op armed_op_ = Op::Mutating;
  uint64_t armed_at_ = 0;  // value of counts_[armed_op_] that fails
  Mode mode_ = Mode::Eio;
  std::vector<std::string> trace_;
};

}  // namespace pbtree
