// FdbFile: header-page checks (ODS 12.0 only) and checked page reads of a Firebird database.
#include "firebird/fdb_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <pbtree/errors.h>
#include "page/page_header.h"

namespace pbtree::firebird {

uint16_t fdb_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
uint32_t fdb_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

std::string fdb_page_type_name(uint8_t type) {
  switch (type) {
    case 1: return "header";
    case 2: return "page inventory";
    case 3: return "transaction inventory";
    case 4: return "pointer";
    case 5: return "data";
    case 6: return "index root";
    case 7: return "b-tree";
    case 8: return "blob";
    case 9: return "generators";
    case 10: return "scn inventory";
    default: return fmt::format("type {}", type);
  }
}

namespace {

// The Firebird release that wrote a given ODS major version (src/jrd/ods.h comments).
std::string ods_release(uint16_t major, uint16_t minor) {
  switch (major) {
    case 8: return "InterBase 4";
    case 9: return "InterBase 5";
    case 10: return minor == 0 ? "Firebird 1.0" : "Firebird 1.5";
    case 11: return minor == 0 ? "Firebird 2.0" : (minor == 1 ? "Firebird 2.1" : "Firebird 2.5");
    case 12: return "Firebird 3.0";
    case 13: return minor == 0 ? "Firebird 4.0" : "Firebird 5.0";
    case 14: return "Firebird 6";
    default: return "an unknown release";
  }
}

}  // namespace

std::unique_ptr<FdbFile> FdbFile::open(const std::string& path) {
  std::unique_ptr<FdbFile> f(new FdbFile());
  f->path_ = path;
  f->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd_ < 0) throw IoError(fmt::format("{}: open: {}", path, std::strerror(errno)));
  struct stat st;
  if (::fstat(f->fd_, &st) != 0) throw IoError(fmt::format("{}: fstat: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw UsageError(fmt::format("{}: not a regular file", path));
  f->file_size_ = static_cast<uint64_t>(st.st_size);
  f->check_header();
  return f;
}

std::unique_ptr<FdbFile> FdbFile::from_bytes(const std::string& name, std::vector<uint8_t> bytes) {
  std::unique_ptr<FdbFile> f(new FdbFile());
  f->path_ = name;
  f->memory_ = std::move(bytes);
  f->in_memory_ = true;
  f->file_size_ = f->memory_.size();
  f->check_header();
  return f;
}

FdbFile::~FdbFile() {
  if (fd_ >= 0) ::close(fd_);
}

void FdbFile::read_bytes(uint64_t offset, uint8_t* out, size_t n) const {
  if (offset + n > file_size_) {
    throw CorruptError(fmt::format("{}: truncated: {} bytes needed at offset {}, file has {}",
                                   path_, n, offset, file_size_));
  }
  if (in_memory_) {
    std::memcpy(out, memory_.data() + offset, n);
    return;
  }
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw IoError(fmt::format("{}: pread: {}", path_, std::strerror(errno)));
    if (r == 0) throw CorruptError(fmt::format("{}: truncated while reading", path_));
    done += static_cast<size_t>(r);
  }
}

void FdbFile::check_header() {
  constexpr size_t kRead = 80;
  if (file_size_ < kRead) {
    throw CorruptError(fmt::format("{}: not a Firebird database ({} bytes, shorter than a header page)",
                                   path_, file_size_));
  }
  uint8_t h[kRead];
  read_bytes(0, h, kRead);
  if (h[0] != static_cast<uint8_t>(FdbPage::Header)) {
    throw CorruptError(fmt::format(
        "{}: not a Firebird database (page 0 has page type {}, not 1 = header page)", path_, h[0]));
  }
  const uint16_t ods = fdb_u16(h + 18);
  if ((ods & 0x8000) == 0) {
    throw CorruptError(fmt::format(
        "{}: not a Firebird database (ODS version word 0x{:04x} lacks the Firebird flag 0x8000)",
        path_, ods));
  }
  header_.page_size = fdb_u16(h + 16);
  header_.ods_major = ods & 0x7FFF;
  header_.ods_minor = fdb_u16(h + 64);
  header_.pages_pointer_page = fdb_u32(h + 20);
  header_.next_transaction = fdb_u32(h + 36);
  header_.flags = fdb_u16(h + 42);
  if (header_.ods_major != 12 || header_.ods_minor != 0) {
    throw UsageError(fmt::format(
        "{}: ODS {}.{} ({}) is not supported: pbtree reads ODS 12.0 (Firebird 3.0) databases only",
        path_, header_.ods_major, header_.ods_minor,
        ods_release(header_.ods_major, header_.ods_minor)));
  }
  const uint32_t ps = header_.page_size;
  if (ps != 4096 && ps != 8192 && ps != 16384) {
    throw CorruptError(fmt::format(
        "{}: page 0 (header): page size {} is not one of Firebird 3's 4096, 8192, 16384", path_, ps));
  }
  if (header_.flags & 0x40) {
    throw UsageError(fmt::format("{}: the database is encrypted; pbtree reads plain pages only", path_));
  }
  if (fdb_u32(h + 24) != 0) {
    throw UsageError(fmt::format(
        "{}: a multi-file database (next header page {}); pbtree reads single-file databases only",
        path_, fdb_u32(h + 24)));
  }
  page_count_ = static_cast<uint32_t>(std::min<uint64_t>(file_size_ / ps, UINT32_MAX));
  if (header_.pages_pointer_page == 0 || header_.pages_pointer_page >= page_count_) {
    throw CorruptError(fmt::format("{}: page 0 (header): RDB$PAGES pointer page {} outside the "
                                   "file's {} pages", path_, header_.pages_pointer_page, page_count_));
  }
}

void FdbFile::fail(uint32_t page_no, FdbPage type, const std::string& what) const {
  throw CorruptError(fmt::format("{}: page {} ({}): {}", path_, page_no,
                                 fdb_page_type_name(static_cast<uint8_t>(type)), what));
}

void FdbFile::read_page(uint32_t page_no, FdbPage type, uint8_t* out) const {
  if (page_no >= page_count_) {
    fail(page_no, type, fmt::format("beyond the end of the file ({} pages)", page_count_));
  }
  read_bytes(uint64_t{page_no} * page_size(), out, page_size());
  check_page(page_no, type, out);
}

void FdbFile::check_page(uint32_t page_no, FdbPage type, const uint8_t* out) const {
  if (page_type_of(out) != static_cast<uint8_t>(type)) {
    throw CorruptError(fmt::format("{}: page {} ({}): expected a {} page", path_, page_no,
                                   fdb_page_type_name(page_type_of(out)),
                                   fdb_page_type_name(static_cast<uint8_t>(type))));
  }
  if (page_number_of(out) != page_no) {
    fail(page_no, type, fmt::format("page number field says {}", page_number_of(out)));
  }
  if (out[1] & 0x80) fail(page_no, type, "encrypted page");
}

}  // namespace pbtree::firebird
