// FdbFile: header-page checks (ODS 11-13, RedDatabase; refusals that name the file's kind)
// and checked page reads of a Firebird database (live-file changes told apart from damage).
#include "firebird/fdb_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/errors.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
    case 1:
      return "header";
    case 2:
      return "page inventory";
    case 3:
      return "transaction inventory";
    case 4:
      return "pointer";
    case 5:
      return "data";
    case 6:
      return "index root";
    case 7:
      return "b-tree";
    case 8:
      return "blob";
    case 9:
      return "generators";
    case 10:
      return "scn inventory";
    default:
      return fmt::format("type {}", type);
  }
}

std::unique_ptr<FdbFile> FdbFile::open(const std::string& path) {
  std::unique_ptr<FdbFile> f(new FdbFile());
  f->path_ = path;
  // O_NONBLOCK: a FIFO (or a device) at the path must not block the open; it is refused as
  // not a regular file just below (the flag means nothing for a regular file's reads).
  f->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f->fd_ < 0) throw IoError(fmt::format("{}: open: {}", path, std::strerror(errno)));
  struct stat st;
  if (::fstat(f->fd_, &st) != 0)
    throw IoError(fmt::format("{}: fstat: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw IoError(fmt::format("{}: not a regular file", path));
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
  constexpr size_t kRead = 136;
  if (file_size_ < 96) {
    throw CorruptError(fmt::format(
        "{}: not a Firebird database ({} bytes, shorter than a header page)", path_, file_size_));
  }
  uint8_t h[kRead] = {};
  read_bytes(0, h, std::min<uint64_t>(kRead, file_size_));
  if (h[0] != static_cast<uint8_t>(FdbPage::Header)) {
    throw CorruptError(fmt::format(
        "{}: not a Firebird database (page 0 has page type {}, not 1 = header page)", path_, h[0]));
  }
  const uint16_t ods = fdb_u16(h + 18);
  header_.ods_word = ods;
  header_.page_size = fdb_u16(h + 16);
  if ((ods & 0x8000) == 0) {
    // InterBase and Firebird 1.0 (ODS 10.0): no Firebird flag; the minor version at 62.
    const uint16_t major = ods, minor = fdb_u16(h + 62);
    std::string what;
    if (major == 10 || major == 9 || major == 8) {
      what = major == 10 ? fmt::format("an InterBase 6 / Firebird 1.x database (ODS 10.{})", minor)
                         : fmt::format("an {} database (ODS {}.{})", fdb_ods_release(major, minor),
                                       major, minor);
    } else if (major > 10 && major < 64) {
      what = fmt::format("an InterBase database (ODS {})", major);
    } else {
      throw CorruptError(fmt::format(
          "{}: not a Firebird database (ODS version word 0x{:04x} lacks the Firebird flag 0x8000)",
          path_, ods));
    }
    throw UsageError(fmt::format("{}: {}; {}", path_, what, fdb_ods_read_list()));
  }
  // RedDatabase sets bits 0x6000 beside the Firebird flag; its pages are Firebird's.
  const bool red = (ods & 0x6000) != 0;
  header_.product = red ? "RedDatabase" : "Firebird";
  header_.ods_major = ods & (red ? 0x1FFF : 0x7FFF);
  const uint16_t major = header_.ods_major;
  header_.ods_minor = fdb_u16(h + (major <= 11 ? 62 : 64));
  const uint16_t minor = header_.ods_minor;
  if (red) {
    header_.ods = major == 12 ? fdb_ods(12, 0) : (major == 13 ? fdb_ods(13, 0) : nullptr);
    if (!header_.ods) {
      throw UsageError(
          fmt::format("{}: a RedDatabase database (ODS word 0x{:04x}, ODS {}.{}); "
                      "pbtree reads RedDatabase 3 (ODS 12.x) and {}",
                      path_, ods, major, minor, fdb_ods_read_list()));
    }
  } else {
    header_.ods = fdb_ods(major, minor);
  }
  if (!header_.ods) {
    const std::string what =
        major == 10 ? fmt::format("a Firebird 1.5 database (ODS 10.{})", minor)
                    : fmt::format("ODS {}.{} ({})", major, minor, fdb_ods_release(major, minor));
    throw UsageError(fmt::format("{}: {} is not read: {}", path_, what, fdb_ods_read_list()));
  }
  const FdbOds& o = *header_.ods;
  header_.pages_pointer_page = fdb_u32(h + 20);
  header_.next_page = fdb_u32(h + 24);
  header_.generation = fdb_u32(h + 4);
  header_.scn = fdb_u32(h + 8);
  header_.oldest_transaction = fdb_u32(h + 28);
  header_.oldest_active = fdb_u32(h + 32);
  header_.next_transaction = fdb_u32(h + 36);
  header_.sequence = fdb_u16(h + 40);
  header_.flags = fdb_u16(h + 42);
  header_.creation_date[0] = fdb_u32(h + 44);
  header_.creation_date[1] = fdb_u32(h + 48);
  header_.attachment_id = fdb_u32(h + 52);
  header_.shadow_count = fdb_u32(h + 56);
  std::memcpy(header_.implementation, h + 60, 4);
  header_.implementation_id = static_cast<int16_t>(fdb_u16(h + 60));
  header_.page_buffers = fdb_u32(h + 68);
  header_.oldest_snapshot = fdb_u32(h + o.hdr_oldest_snapshot_offset);
  const uint32_t ps = header_.page_size;
  if (ps != 1024 && ps != 2048 && ps != 4096 && ps != 8192 && ps != 16384 && ps != 32768) {
    throw CorruptError(
        fmt::format("{}: page 0 (header): page size {} is not a Firebird page size (1024 .. 32768)",
                    path_, ps));
  }
  // ODS 12+: 0x40 encrypted, 0x04 encryption in progress; the plugin's name at 88 (ODS 12)
  // or 84 (ODS 13), 32 bytes.
  if (o.hdr_encrypted && (header_.flags & (o.hdr_encrypted | 0x04))) {
    const uint32_t at = o.major == 12 ? 88 : 84;
    std::string plugin(reinterpret_cast<const char*>(h + at), 32);
    plugin = plugin.substr(0, plugin.find('\0'));
    throw UsageError(fmt::format(
        "{}: an encrypted {} database{}, {}; pbtree reads plain pages "
        "only",
        path_, header_.product, plugin.empty() ? "" : " (plugin " + plugin + ")", o.describe()));
  }
  if (header_.sequence != 0) {
    throw UsageError(fmt::format(
        "{}: a secondary file (file {} of a multi-file database); open the database's first "
        "file: pbtree reads single-file databases only",
        path_, header_.sequence));
  }
  if (header_.next_page != 0) {
    throw UsageError(fmt::format(
        "{}: a multi-file database (next header page {}); pbtree reads single-file databases only",
        path_, header_.next_page));
  }
  page_count_ = static_cast<uint32_t>(std::min<uint64_t>(file_size_ / ps, UINT32_MAX));
  if (header_.pages_pointer_page == 0 || header_.pages_pointer_page >= page_count_) {
    throw CorruptError(
        fmt::format("{}: page 0 (header): RDB$PAGES pointer page {} outside the "
                    "file's {} pages (truncated?)",
                    path_, header_.pages_pointer_page, page_count_));
  }
}

void FdbFile::fail(uint32_t page_no, FdbPage type, const std::string& what) const {
  throw CorruptError(fmt::format("{}: page {} ({}): {}", path_, page_no,
                                 fdb_page_type_name(static_cast<uint8_t>(type)), what));
}

void FdbFile::mismatch(uint32_t page_no, FdbPage type, const uint8_t* page,
                       const std::string& what) const {
  // A live database: the page or the header page is not what it was. Read both again.
  if (!in_memory_) {
    std::vector<uint8_t> again(page_size());
    uint8_t h[8];
    read_bytes(uint64_t{page_no} * page_size(), again.data(), page_size());
    read_bytes(0, h, 8);
    if (std::memcmp(again.data(), page, page_size()) != 0 || fdb_u32(h + 4) != header_.generation) {
      throw IoError(fmt::format(
          "{}: page {} changed while it was read ({}): another process is writing the database; "
          "run again, or read a copy made with nbackup or gbak",
          path_, page_no, what));
    }
  }
  if (page_type_of(page) != static_cast<uint8_t>(type)) {
    throw CorruptError(fmt::format("{}: page {} ({}): expected a {} page", path_, page_no,
                                   fdb_page_type_name(page_type_of(page)),
                                   fdb_page_type_name(static_cast<uint8_t>(type))));
  }
  fail(page_no, type, what);
}

void FdbFile::read_page(uint32_t page_no, FdbPage type, uint8_t* out) const {
  if (page_no >= page_count_) {
    fail(page_no, type, fmt::format("beyond the end of the file ({} pages)", page_count_));
  }
  read_bytes(uint64_t{page_no} * page_size(), out, page_size());
  check_page(page_no, type, out);
  if (!ods().page_number_field && type == FdbPage::Btree) normalize_ods11_btree(page_no, out);
}

void FdbFile::check_page(uint32_t page_no, FdbPage type, const uint8_t* out) const {
  if (page_type_of(out) != static_cast<uint8_t>(type)) {
    mismatch(
        page_no, type, out,
        fmt::format("a {} page where a {} page was expected", fdb_page_type_name(page_type_of(out)),
                    fdb_page_type_name(static_cast<uint8_t>(type))));
  }
  if (!ods().page_number_field) return;
  if (page_number_of(out) != page_no) {
    mismatch(page_no, type, out, fmt::format("page number field says {}", page_number_of(out)));
  }
  if (out[1] & 0x80) fail(page_no, type, "encrypted page");
}

void FdbFile::normalize_ods11_btree(uint32_t page_no, uint8_t* page) const {
  // ODS 11 pag_flags: 0x20 large keys (the node format of ODS 12), 0x40 jump info at 34.
  const uint8_t flags = page[1];
  if ((flags & 0x20) == 0 || (flags & 0x40) == 0) {
    fail(page_no, FdbPage::Btree,
         fmt::format(
             "ODS 11 b-tree page without large keys and jump information (flags 0x{:02x}): the "
             "Firebird 1.x node layout is not read",
             flags));
  }
  const uint16_t first_node = fdb_u16(page + 34);
  if (first_node < 39 || first_node > page_size()) {
    fail(page_no, FdbPage::Btree, fmt::format("first node offset {} outside the page", first_node));
  }
  const uint16_t jump_size = static_cast<uint16_t>(first_node - 39);
  // ODS 12 order: btr_jump_interval (= jumpAreaSize, already at 36) at 34, size at 36.
  const uint16_t interval = fdb_u16(page + 36);
  std::memcpy(page + 34, &interval, 2);
  std::memcpy(page + 36, &jump_size, 2);
  page[1] = 0;
  std::memcpy(page + 12, &page_no, 4);
}

}  // namespace pbtree::firebird
