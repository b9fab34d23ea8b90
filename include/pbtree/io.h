// The injectable I/O layer under a pbtree file and its write-ahead log: every system call on
// an index file or its log (open, close, pread, pwrite, fdatasync, ftruncate, fstat,
// posix_fadvise) goes through an `Io`. `posix_io()` is the real one (tests wrap it to inject
// faults). Public.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace pbtree {

/// System calls on files, POSIX-shaped: the same arguments, return values and errno as the
/// calls they are named after. Implementations must be thread-safe.
class Io {
 public:
  virtual ~Io() = default;
  /// open(2): returns a descriptor or -1 (errno set).
  virtual int open(const std::string& path, int flags, mode_t mode) = 0;
  /// close(2).
  virtual int close(int fd) = 0;
  /// pread(2): bytes read (0 at end of file) or -1.
  virtual ssize_t pread(int fd, void* buf, size_t count, off_t offset) = 0;
  /// pwrite(2): bytes written (may be fewer than count) or -1.
  virtual ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) = 0;
  /// fdatasync(2): 0 or -1.
  virtual int fdatasync(int fd) = 0;
  /// ftruncate(2): 0 or -1.
  virtual int ftruncate(int fd, off_t length) = 0;
  /// fstat(2) st_size into *size (bytes): 0 or -1.
  virtual int file_size(int fd, uint64_t* size) = 0;
  /// True if fd refers to a regular file (fstat S_ISREG); false also on error.
  virtual bool is_regular(int fd) = 0;
  /// unlink(2): 0 or -1.
  virtual int unlink(const std::string& path) = 0;
  /// posix_fadvise(2) of `length` bytes at `offset` (length 0: to the end of the file) with
  /// `advice` (POSIX_FADV_RANDOM, POSIX_FADV_WILLNEED, ...): 0 or an error number (not
  /// errno). Advisory only: pbtree ignores failures. The default calls posix_fadvise, so an
  /// Io written before this call existed keeps working.
  virtual int advise(int fd, off_t offset, off_t length, int advice);
};

/// The process-wide POSIX implementation (plain system calls, EINTR left to the caller).
Io& posix_io();

}  // namespace pbtree
