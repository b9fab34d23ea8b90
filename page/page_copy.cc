// copy_pages_to_new_file(): a consistent copy of a snapshot (see page/page_copy.h).
#include "page/page_copy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/errors.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "page/wal.h"

namespace pbtree {

namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash + 1);
}

[[noreturn]] void fail_io(const std::string& what, const char* op, const std::string& path) {
  const int e = errno;
  throw IoError(fmt::format("{}: {}: {}", path, what, std::strerror(e)), e, op, path);
}

}  // namespace

void copy_pages_to_new_file(const PageFile& from, uint32_t page_count, const std::string& dest) {
  if (Wal::is_log_name(dest)) {
    throw UsageError(
        fmt::format("{}: a name ending in -wal is where pbtree keeps the log of a "
                    "file: choose another destination",
                    dest));
  }
  struct stat st;
  if (::lstat(dest.c_str(), &st) == 0) throw UsageError(fmt::format("{}: exists already", dest));
  // An unnamed file in dest's directory (O_TMPFILE): nothing is left if the process dies;
  // it gets its name by linkat, which never replaces. Where O_TMPFILE is refused: a named
  // temporary, renamed without replacing.
  std::string tmp;
  int fd = -1;
#ifdef O_TMPFILE
  fd = ::open(dir_of(dest).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#endif
  const bool unnamed = fd >= 0;
  if (!unnamed) {
    tmp = dest + ".tmp-XXXXXX";
    fd = ::mkstemp(tmp.data());
    if (fd < 0) fail_io("cannot create a temporary file", "open", tmp);
  }
  try {
    const uint32_t ps = from.page_size();
    std::vector<uint8_t> page(ps);
    const std::string& name = unnamed ? dest : tmp;
    for (uint32_t p = 0; p < page_count; ++p) {
      from.read(p, page.data());
      size_t done = 0;
      while (done < ps) {
        ssize_t w = ::pwrite(fd, page.data() + done, ps - done,
                             static_cast<off_t>(uint64_t{p} * ps + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail_io(fmt::format("write of page {}", p), "pwrite", name);
        done += static_cast<size_t>(w);
      }
    }
    if (::fchmod(fd, 0644) != 0) fail_io("fchmod", "fchmod", name);
    if (::fdatasync(fd) != 0) fail_io("fdatasync", "fdatasync", name);
    if (unnamed) {
      const std::string proc = fmt::format("/proc/self/fd/{}", fd);
      int rc = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, dest.c_str(), AT_SYMLINK_FOLLOW);
      if (rc != 0 && errno == ENOENT) {
        rc = ::linkat(fd, "", AT_FDCWD, dest.c_str(), AT_EMPTY_PATH);  // no /proc
      }
      if (rc != 0) {
        if (errno == EEXIST) throw UsageError(fmt::format("{}: exists already", dest));
        fail_io("link", "linkat", dest);
      }
    }
    if (::close(fd) != 0) {
      fd = -1;
      fail_io("close", "close", name);
    }
    fd = -1;
    if (!unnamed &&
        ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) != 0) {
      if (errno == EEXIST) throw UsageError(fmt::format("{}: exists already", dest));
      fail_io("rename", "rename", dest);
    }
  } catch (...) {
    if (fd >= 0) ::close(fd);
    if (!unnamed) ::unlink(tmp.c_str());
    throw;
  }
  int dfd = ::open(dir_of(dest).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    const int rc = ::fdatasync(dfd);
    ::close(dfd);
    if (rc != 0) fail_io("fdatasync", "fdatasync", dir_of(dest));
  }
}

}  // namespace pbtree
