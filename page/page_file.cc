// PageFile: whole-page pread/pwrite with CRC-32C checksums and self page numbers in the
// generic page header (layout at the top of page/page_file.h and in docs/FORMAT.md).
#include "page/page_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/crc.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

namespace pbtree {

std::string page_type_name(uint8_t type) {
  switch (static_cast<PageType>(type)) {
    case PageType::Header:
      return "header";
    case PageType::IndexRoot:
      return "index root";
    case PageType::Btree:
      return "b-tree";
    case PageType::Free:
      return "free";
  }
  return fmt::format("unknown ({})", type);
}

uint32_t page_checksum(const uint8_t* page, uint32_t page_size) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  static constexpr uint8_t kZero[4] = {0, 0, 0, 0};
  crc.process_bytes(page, 4);
  crc.process_bytes(kZero, 4);
  crc.process_bytes(page + 8, page_size - 8);
  return crc.checksum();
}

namespace {
std::string errno_text() {
  return std::strerror(errno);
}
}  // namespace

PageFile::PageFile(int fd, std::string path, uint32_t page_size)
    : fd_(fd), path_(std::move(path)), page_size_(page_size) {}

PageFile::PageFile(PageFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      page_size_(other.page_size_) {}

PageFile& PageFile::operator=(PageFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    page_size_ = other.page_size_;
  }
  return *this;
}

PageFile::~PageFile() {
  if (fd_ >= 0) ::close(fd_);
}

PageFile PageFile::open(const std::string& path, bool writable) {
  int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open: {}", path, errno_text()));
  struct stat st;
  if (::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError(fmt::format("{}: not a regular file", path));
  }
  return PageFile(fd, path, 0);
}

PageFile PageFile::create(const std::string& path, uint32_t page_size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot create: {}", path, errno_text()));
  return PageFile(fd, path, page_size);
}

uint64_t PageFile::file_size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) throw IoError(fmt::format("{}: fstat: {}", path_, errno_text()));
  return static_cast<uint64_t>(st.st_size);
}

void PageFile::read_raw(uint64_t offset, uint8_t* out, size_t length) const {
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd_, out + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read at byte {}: {}", path_, offset + done, errno_text()));
    }
    if (n == 0) {
      throw CorruptError(fmt::format("{}: truncated file: wanted {} bytes at byte {}, file has {}",
                                     path_, length, offset, file_size()));
    }
    done += static_cast<size_t>(n);
  }
}

void PageFile::read(uint32_t page_no, uint8_t* out, uint8_t expected_type) const {
  uint64_t offset = uint64_t{page_no} * page_size_;
  if (offset + page_size_ > file_size()) {
    throw CorruptError(fmt::format("{}: truncated file: page {} lies beyond the end ({} bytes)",
                                   path_, page_no, file_size()));
  }
  read_raw(offset, out, page_size_);
  uint32_t stored = get_u32(out + 4);
  if (stored != page_checksum(out, page_size_)) {
    throw CorruptError(
        fmt::format("{}: page {} ({}): checksum mismatch", path_, page_no, page_type_name(out[0])));
  }
  if (get_u32(out + 12) != page_no) {
    throw CorruptError(fmt::format("{}: page {} ({}): page carries number {}", path_, page_no,
                                   page_type_name(out[0]), get_u32(out + 12)));
  }
  if (expected_type != 0 && out[0] != expected_type) {
    throw CorruptError(fmt::format("{}: page {}: expected a {} page, found a {} page", path_,
                                   page_no, page_type_name(expected_type), page_type_name(out[0])));
  }
}

void PageFile::write(uint32_t page_no, uint8_t* page) {
  put_u32(page + 12, page_no);
  put_u32(page + 4, page_checksum(page, page_size_));
  uint64_t offset = uint64_t{page_no} * page_size_;
  size_t done = 0;
  while (done < page_size_) {
    ssize_t n = ::pwrite(fd_, page + done, page_size_ - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: write of page {}: {}", path_, page_no, errno_text()));
    }
    if (n == 0) throw IoError(fmt::format("{}: write of page {}: no progress", path_, page_no));
    done += static_cast<size_t>(n);
  }
}

void PageFile::sync() {
  if (::fdatasync(fd_) != 0) throw IoError(fmt::format("{}: fdatasync: {}", path_, errno_text()));
}

void PageFile::truncate(uint32_t pages) {
  if (::ftruncate(fd_, static_cast<off_t>(uint64_t{pages} * page_size_)) != 0) {
    throw IoError(fmt::format("{}: ftruncate: {}", path_, errno_text()));
  }
}

}  // namespace pbtree
