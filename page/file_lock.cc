// OFD byte-range locks of a pbtree file (lock bytes and protocol at the top of
// page/file_lock.h).
#include "page/file_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/errors.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace pbtree {

namespace {

std::atomic<int> g_busy_timeout_ms{0};

struct flock lock_of(LockByte b, short type) {
  struct flock fl;
  std::memset(&fl, 0, sizeof fl);
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = kLockBase + static_cast<int>(b);
  fl.l_len = 1;
  fl.l_pid = 0;  // required by F_OFD_*
  return fl;
}

}  // namespace

bool try_lock(int fd, LockByte b, bool exclusive, const std::string& path) {
  struct flock fl = lock_of(b, exclusive ? F_WRLCK : F_RDLCK);
  for (;;) {
    if (::fcntl(fd, F_OFD_SETLK, &fl) == 0) return true;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return false;
    throw IoError(fmt::format("{}: cannot lock: {}", path, std::strerror(errno)), errno, "lock",
                  path);
  }
}

bool lock_within(int fd, LockByte b, bool exclusive, int timeout_ms, const std::string& path) {
  if (try_lock(fd, b, exclusive, path)) return true;
  if (timeout_ms <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::microseconds(200);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    if (try_lock(fd, b, exclusive, path)) return true;
    if (pause < std::chrono::milliseconds(5)) pause *= 2;
  }
  return false;
}

void unlock(int fd, LockByte b) {
  struct flock fl = lock_of(b, F_UNLCK);
  while (::fcntl(fd, F_OFD_SETLK, &fl) != 0 && errno == EINTR) {
  }
}

int default_busy_timeout_ms() {
  return g_busy_timeout_ms.load(std::memory_order_relaxed);
}

void set_default_busy_timeout_ms(int ms) {
  g_busy_timeout_ms.store(ms < 0 ? 0 : ms, std::memory_order_relaxed);
}

}  // namespace pbtree
