// Error types of the page layer and above: I/O failures and files or pages that are not
// what they claim to be. Every message names the file and, where there is one, the page.
#pragma once

#include <stdexcept>

namespace pbtree {

/// A system call on the index file failed (open, pread, pwrite, fsync, ftruncate); the
/// message holds the path, the page number if any, and strerror(errno).
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The file or a page in it is malformed: wrong magic, unknown format version or page size,
/// truncated file, bad checksum, a page type that does not belong where it is found, node or
/// length fields out of bounds. The message names the file, page number and page type.
class CorruptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A request that contradicts the file's contents: an index name that exists or does not,
/// a page size that differs from the file's, a duplicate in a unique index.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pbtree
