// create_file_with: write under a temporary name, then a rename that never replaces
// (design in file/file_create.h, rule in docs/FORMAT.md 2.8).
#include "file/file_create.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "file/index_root.h"
#include "page/file_header.h"
#include "page/page_file.h"
#include "page/wal.h"

namespace pbtree {

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

void remove_temporary(const std::string& temp) {
  ::unlink(temp.c_str());
  ::unlink(Wal::log_path(temp).c_str());
}

// Writes an empty pbtree file (header page, empty index root page), synced, at a fresh
// temporary name; returns the name.
std::string write_temporary(const std::string& path, uint32_t page_size) {
  std::random_device device;
  for (int attempt = 0;; ++attempt) {
    const std::string temp =
        fmt::format("{}{}-{:08x}{:08x}", temporary_prefix(path), ::getpid(), device(), device());
    try {
      PageFile file = PageFile::create(temp, page_size);
      try {
        std::vector<uint8_t> page(page_size);
        FileHeader h;
        h.page_size = page_size;
        h.page_count = 2;
        h.file_id = new_file_id();
        encode_index_root_page({}, page.data(), page_size);
        file.write(kIndexRootPage, page.data());
        encode_header_page(h, page.data());
        file.write(kHeaderPage, page.data());
        file.sync();
      } catch (...) {
        remove_temporary(temp);
        throw;
      }
      return temp;
    } catch (const IoError&) {
      if (errno != EEXIST || attempt >= 16) throw;  // a name taken: draw another
    }
  }
}

// fsync of the directory holding `path` (the rename's durability); best effort.
void sync_directory(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// Moves `temp` to `path` unless `path` exists. Returns false if it exists.
bool publish(const std::string& temp, const std::string& path) {
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) {
    return true;
  }
  if (errno == EEXIST) return false;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
    throw IoError(fmt::format("{}: cannot move {} into place: {}", path, temp, errno_text()));
  }
  // No RENAME_NOREPLACE on this file system: link() never replaces either.
  if (::link(temp.c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) return false;
    throw IoError(fmt::format("{}: cannot link {} into place: {}", path, temp, errno_text()));
  }
  ::unlink(temp.c_str());
  return true;
}

// Throws IoError if `path` cannot become a new file: its directory is missing (or not a
// directory), or it is a symbolic link whose target does not exist.
void check_creatable(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw IoError(
        fmt::format("{}: cannot create: the directory {} does not exist", path, dir.string()));
  }
  const auto link = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::is_symlink(link) && !std::filesystem::exists(path, ec)) {
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    throw IoError(fmt::format(
        "{}: cannot create: a symbolic link to {}, which does not exist (make the file there, "
        "or remove the link)",
        path, target.string()));
  }
}

}  // namespace

std::string temporary_prefix(const std::string& path) {
  return path + ".new-";
}

bool create_file_with(const std::string& path, uint32_t page_size,
                      const std::function<void(IndexFile&)>& fill) {
  // Before any work: a name that cannot take the file is refused by its own name (not the
  // temporary's): a missing directory, a symbolic link to nothing (the rename would not
  // replace it, and following it would create a file elsewhere).
  check_creatable(path);
  // A file at the log path that is not a log refuses the creation.
  if (::access(path.c_str(), F_OK) != 0) Wal::clear_orphan_log(posix_io(), path);
  const std::string temp = write_temporary(path, page_size);
  try {
    {
      auto file = IndexFile::open(temp, {.writable = true});
      if (fill) fill(*file);
    }  // closed: its committed log applied to the file and removed
    // The file moves without its log: a log the close could not apply must be applied first.
    const std::string log = Wal::log_path(temp);
    if (::access(log.c_str(), F_OK) == 0) IndexFile::open(temp, {.writable = true}).reset();
    if (::access(log.c_str(), F_OK) == 0) {
      throw IoError(fmt::format("{}: the log of the new file could not be applied", path));
    }
    // A log under the final name without its file belongs to no file: never let it meet the
    // new one (removed, or set aside if it holds commits; not a log: left alone, refused).
    if (::access(path.c_str(), F_OK) != 0) Wal::clear_orphan_log(posix_io(), path);
    if (!publish(temp, path)) {
      remove_temporary(temp);
      return false;
    }
  } catch (...) {
    remove_temporary(temp);
    throw;
  }
  sync_directory(path);
  return true;
}

}  // namespace pbtree
