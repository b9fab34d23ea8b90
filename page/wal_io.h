// Checked I/O of the write-ahead log (page/wal.cc, page/wal_open.cc): whole reads and writes
// through the injectable Io, sync, truncate, directory sync and warnings. Not installed.
#pragma once

#include <pbtree/io.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace pbtree::wal_io {

/// strerror(errno).
std::string errno_text();

/// A fresh random salt for a log header (thread-safe).
uint64_t new_salt();
/// Writes n bytes at `offset` (retrying short writes and EINTR). Throws IoError.
void write_all(Io& io, int fd, const uint8_t* buf, size_t n, uint64_t offset,
               const std::string& path);
/// Reads n bytes at `offset`; false at end of file before n bytes. Throws IoError.
bool read_all(Io& io, int fd, uint8_t* buf, size_t n, uint64_t offset, const std::string& path);
/// fdatasync. Throws IoError.
void sync(Io& io, int fd, const std::string& path);
/// ftruncate to `length` bytes. Throws IoError.
void truncate_to(Io& io, int fd, uint64_t length, const std::string& path);
/// "pbtree: warning: <path>: <why>: <action>" on stderr, or held by this thread's
/// HeldWarnings.
void warn(const std::string& path, const std::string& why, const char* action);

/// While alive, holds back this thread's warn() lines: for a check's read-only open that a
/// writer's open follows and repeats them (`pbtree insert`, `load --append`). drop() forgets
/// them (the writer's open is next); otherwise the destructor prints them (the check failed
/// and no writer opens the file). Not nestable: an inner one is ignored.
class HeldWarnings {
 public:
  HeldWarnings();
  ~HeldWarnings();
  HeldWarnings(const HeldWarnings&) = delete;
  HeldWarnings& operator=(const HeldWarnings&) = delete;
  void drop();

 private:
  bool active_ = false;
  std::string lines_;
  friend void warn(const std::string&, const std::string&, const char*);
};
/// Makes the directory entry of a new log durable. Throws IoError.
void sync_directory(Io& io, const std::string& db_path);

}  // namespace pbtree::wal_io
