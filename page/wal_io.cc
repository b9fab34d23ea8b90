// Checked I/O of the write-ahead log (page/wal_io.h): whole reads and writes through the
// injectable Io, sync, truncate, directory sync and warnings, each failure an IoError naming
// the path and the call; the log salt.
#include "page/wal_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/errors.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>

namespace pbtree::wal_io {

uint64_t new_salt() {
  static std::mutex mutex;
  static std::random_device device;
  std::lock_guard lock(mutex);
  return (uint64_t{device()} << 32) ^ device();
}

std::string errno_text() {
  return std::strerror(errno);
}

void write_all(Io& io, int fd, const uint8_t* buf, size_t n, uint64_t offset,
               const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = io.pwrite(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: write at byte {}: {}", path, offset + done, errno_text()),
                    errno, "pwrite", path);
    }
    if (w == 0) throw IoError(fmt::format("{}: write at byte {}: no progress", path, offset));
    done += static_cast<size_t>(w);
  }
}

bool read_all(Io& io, int fd, uint8_t* buf, size_t n, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = io.pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read at byte {}: {}", path, offset + done, errno_text()),
                    errno, "pread", path);
    }
    if (r == 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

void sync(Io& io, int fd, const std::string& path) {
  if (io.fdatasync(fd) != 0) {
    throw IoError(fmt::format("{}: fdatasync: {}", path, errno_text()), errno, "fdatasync", path);
  }
}

void truncate_to(Io& io, int fd, uint64_t length, const std::string& path) {
  if (io.ftruncate(fd, static_cast<off_t>(length)) != 0) {
    throw IoError(fmt::format("{}: ftruncate: {}", path, errno_text()), errno, "ftruncate", path);
  }
}

namespace {
thread_local HeldWarnings* held_warnings = nullptr;
}  // namespace

void warn(const std::string& path, const std::string& why, const char* action) {
  if (held_warnings != nullptr) {
    held_warnings->lines_ += fmt::format("pbtree: warning: {}: {}: {}\n", path, why, action);
    return;
  }
  std::fprintf(stderr, "pbtree: warning: %s: %s: %s\n", path.c_str(), why.c_str(), action);
}

HeldWarnings::HeldWarnings() {
  if (held_warnings == nullptr) {
    held_warnings = this;
    active_ = true;
  }
}

HeldWarnings::~HeldWarnings() {
  if (!active_) return;
  held_warnings = nullptr;
  if (!lines_.empty()) std::fputs(lines_.c_str(), stderr);
}

void HeldWarnings::drop() {
  if (!active_) return;
  held_warnings = nullptr;
  active_ = false;
  lines_.clear();
}

// Makes the directory entry of a new log durable.
void sync_directory(Io& io, const std::string& db_path) {
  std::string dir = db_path.find('/') == std::string::npos
                        ? std::string(".")
                        : db_path.substr(0, db_path.rfind('/') + 1);
  int dfd = io.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dfd < 0) return;
  int rc = io.fdatasync(dfd);
  int saved = errno;
  io.close(dfd);
  if (rc != 0) {
    errno = saved;
    throw IoError(fmt::format("{}: fdatasync: {}", dir, errno_text()), errno, "fdatasync", dir);
  }
}

}  // namespace pbtree::wal_io
