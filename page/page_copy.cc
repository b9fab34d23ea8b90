// copy_pages_to_new_file(): a consistent copy of a snapshot (see page/page_copy.h).
#include "page/page_copy.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <pbtree/errors.h>

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
  struct stat st;
  if (::lstat(dest.c_str(), &st) == 0) throw UsageError(fmt::format("{}: exists already", dest));
  std::string tmp = dest + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail_io("cannot create a temporary file", "open", tmp);
  try {
    const uint32_t ps = from.page_size();
    std::vector<uint8_t> page(ps);
    for (uint32_t p = 0; p < page_count; ++p) {
      from.read(p, page.data());
      size_t done = 0;
      while (done < ps) {
        ssize_t w = ::pwrite(fd, page.data() + done, ps - done,
                             static_cast<off_t>(uint64_t{p} * ps + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail_io(fmt::format("write of page {}", p), "pwrite", tmp);
        done += static_cast<size_t>(w);
      }
    }
    if (::fchmod(fd, 0644) != 0) fail_io("fchmod", "fchmod", tmp);
    if (::fdatasync(fd) != 0) fail_io("fdatasync", "fdatasync", tmp);
    if (::close(fd) != 0) {
      fd = -1;
      fail_io("close", "close", tmp);
    }
    fd = -1;
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) != 0) {
      if (errno == EEXIST) throw UsageError(fmt::format("{}: exists already", dest));
      fail_io("rename", "rename", dest);
    }
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
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
