// Io implementations: plain POSIX system calls, and FaultyIo, which fails a chosen call
// (design notes at the top of page/io.h).
#include "page/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace pbtree {

namespace {

class PosixIo : public Io {
 public:
  int open(const std::string& path, int flags, mode_t mode) override {
    return ::open(path.c_str(), flags, mode);
  }
  int close(int fd) override { return ::close(fd); }
  ssize_t pread(int fd, void* buf, size_t count, off_t offset) override {
    return ::pread(fd, buf, count, offset);
  }
  ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) override {
    return ::pwrite(fd, buf, count, offset);
  }
  int fdatasync(int fd) override { return ::fdatasync(fd); }
  int ftruncate(int fd, off_t length) override { return ::ftruncate(fd, length); }
  int file_size(int fd, uint64_t* size) override {
    struct stat st;
    if (::fstat(fd, &st) != 0) return -1;
    *size = static_cast<uint64_t>(st.st_size);
    return 0;
  }
  bool is_regular(int fd) override {
    struct stat st;
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  }
  int unlink(const std::string& path) override { return ::unlink(path.c_str()); }
};

}  // namespace

int Io::advise(int fd, off_t offset, off_t length, int advice) {
  return ::posix_fadvise(fd, offset, length, advice);
}

Io& posix_io() {
  static PosixIo io;
  return io;
}

void FaultyIo::arm(Op op, uint64_t nth, Mode mode) {
  std::lock_guard lock(mutex_);
  armed_ = true;
  fired_ = false;
  armed_op_ = op;
  armed_at_ = counts_[static_cast<int>(op)] + nth;
  mode_ = mode;
}

void FaultyIo::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
}

bool FaultyIo::fired() const {
  std::lock_guard lock(mutex_);
  return fired_;
}

uint64_t FaultyIo::calls(Op op) const {
  std::lock_guard lock(mutex_);
  return counts_[static_cast<int>(op)];
}

std::vector<std::string> FaultyIo::trace() const {
  std::lock_guard lock(mutex_);
  return trace_;
}

void FaultyIo::clear_trace() {
  std::lock_guard lock(mutex_);
  trace_.clear();
}

bool FaultyIo::count(Op op, const char* name, int fd) {
  std::lock_guard lock(mutex_);
  auto it = paths_.find(fd);
  trace_.push_back(std::string(name) + " " + (it == paths_.end() ? "?" : it->second));
  ++counts_[static_cast<int>(op)];
  bool mutating = op == Op::Pwrite || op == Op::Fdatasync || op == Op::Ftruncate;
  if (mutating) ++counts_[static_cast<int>(Op::Mutating)];
  if (!armed_) return false;
  bool hit = (armed_op_ == op && counts_[static_cast<int>(op)] == armed_at_) ||
             (armed_op_ == Op::Mutating && mutating &&
              counts_[static_cast<int>(Op::Mutating)] == armed_at_);
  if (hit) {
    armed_ = false;
    fired_ = true;
  }
  return hit;
}

int FaultyIo::open(const std::string& path, int flags, mode_t mode) {
  int fd = posix_io().open(path, flags, mode);
  if (fd >= 0) {
    std::lock_guard lock(mutex_);
    paths_[fd] = path;
  }
  return fd;
}

int FaultyIo::close(int fd) {
  {
    std::lock_guard lock(mutex_);
    paths_.erase(fd);
  }
  return posix_io().close(fd);
}

ssize_t FaultyIo::pread(int fd, void* buf, size_t count_bytes, off_t offset) {
  if (count(Op::Pread, "pread", fd)) {
    errno = EIO;
    return -1;
  }
  return posix_io().pread(fd, buf, count_bytes, offset);
}

ssize_t FaultyIo::pwrite(int fd, const void* buf, size_t count_bytes, off_t offset) {
  if (count(Op::Pwrite, "pwrite", fd)) {
    if (mode_ == Mode::ShortWrite && count_bytes > 1) {
      (void)posix_io().pwrite(fd, buf, count_bytes / 2, offset);
    }
    errno = EIO;
    return -1;
  }
  return posix_io().pwrite(fd, buf, count_bytes, offset);
}

int FaultyIo::fdatasync(int fd) {
  if (count(Op::Fdatasync, "fdatasync", fd)) {
    errno = EIO;
    return -1;
  }
  return posix_io().fdatasync(fd);
}

int FaultyIo::ftruncate(int fd, off_t length) {
  if (count(Op::Ftruncate, "ftruncate", fd)) {
    errno = EIO;
    return -1;
  }
  return posix_io().ftruncate(fd, length);
}

int FaultyIo::file_size(int fd, uint64_t* size) {
  return posix_io().file_size(fd, size);
}

bool FaultyIo::is_regular(int fd) {
  return posix_io().is_regular(fd);
}

int FaultyIo::unlink(const std::string& path) {
  return posix_io().unlink(path);
}

}  // namespace pbtree
