// PageFile: whole-page pread/pwrite with CRC-32C checksums and self page numbers in the
// generic page header (layout at the top of page/page_file.h and in docs/FORMAT.md).
#include "page/page_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "page/file_lock.h"

namespace pbtree {

namespace {
std::string errno_text() {
  return std::strerror(errno);
}
}  // namespace

PageFile::PageFile(Io& io, int fd, std::string path, uint32_t page_size)
    : io_(&io), fd_(fd), path_(std::move(path)), page_size_(page_size) {
  // Pages are read one at a time in the index's order, not the file's: no kernel readahead
  // (read() asks for the pages ahead itself when a scan runs along the file).
  io_->advise(fd_, 0, 0, POSIX_FADV_RANDOM);
}

PageFile::PageFile(PageFile&& other) noexcept
    : io_(other.io_),
      fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      page_size_(other.page_size_),
      wal_(std::move(other.wal_)),
      recovery_(other.recovery_) {}

PageFile& PageFile::operator=(PageFile&& other) noexcept {
  if (this != &other) {
    wal_.reset();
    if (fd_ >= 0) io_->close(fd_);
    io_ = other.io_;
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    page_size_ = other.page_size_;
    wal_ = std::move(other.wal_);
    recovery_ = other.recovery_;
  }
  return *this;
}

PageFile::~PageFile() {
  wal_.reset();
  if (fd_ >= 0) io_->close(fd_);
}

PageFile PageFile::open(const std::string& path, bool writable, Io& io, int busy_timeout_ms) {
  // O_NONBLOCK: a FIFO (or a device) at the path must not block the open; the file is
  // checked to be regular before anything else, then the flag is dropped.
  int fd = io.open(path, (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC, 0);
  if (fd < 0) {
    throw IoError(fmt::format("{}: cannot open: {}", path, errno_text()), errno, "open", path);
  }
  PageFile file(io, fd, path, 0);
  if (!io.is_regular(fd)) throw IoError(fmt::format("{}: not a regular file", path));
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (writable) {
    const int wait = busy_timeout_ms < 0 ? default_busy_timeout_ms() : busy_timeout_ms;
    if (!lock_within(fd, LockByte::Writer, true, wait, path)) {
      throw LockedError(
          fmt::format("{}: locked: another writer has the file open{}; a busy timeout waits "
                      "for it (pbtree --busy-timeout MS)",
                      path, wait > 0 ? fmt::format(" (waited {} ms)", wait) : ""),
          path);
    }
  } else {
    // A snapshot: past the gate (a checkpoint in progress holds it), then the readers lock,
    // which no checkpoint can take while we hold it.
    struct flock fl;
    std::memset(&fl, 0, sizeof fl);
    fl.l_type = F_RDLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = kLockBase + static_cast<int>(LockByte::Gate);
    fl.l_len = 1;
    while (::fcntl(fd, F_OFD_SETLKW, &fl) != 0) {
      if (errno != EINTR) {
        throw IoError(fmt::format("{}: cannot lock: {}", path, errno_text()), errno, "lock", path);
      }
    }
    const bool got = try_lock(fd, LockByte::Readers, false, path);
    unlock(fd, LockByte::Gate);
    if (!got) throw IoError(fmt::format("{}: readers lock refused", path));
  }
  DbIdentity id = file.identity();
  if (!id.pbtree) {
    // no header (yet): a log of file id 0, any page size
    DbIdentity none;
    none.dev = id.dev;
    none.ino = id.ino;
    id = none;
  }
  if (writable) {
    file.wal_ = Wal::open_writer(io, fd, path, id, false, file.recovery_);
  } else {
    file.wal_ = Wal::open_snapshot(io, fd, path, id);
    if (file.wal_) file.recovery_ = file.wal_->recovery();
  }
  return file;
}

DbIdentity PageFile::identity() const {
  return read_db_identity(*io_, fd_, path_);
}

PageFile PageFile::create(const std::string& path, uint32_t page_size, Io& io) {
  struct stat st;
  // The file does not exist, so a log of that name belongs to none: never replay it into
  // the new file (removed, set aside, or, not being a log, left alone and refused).
  if (::lstat(path.c_str(), &st) != 0) Wal::clear_orphan_log(io, path);
  int fd = io.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot create: {}", path, errno_text()));
  PageFile file(io, fd, path, page_size);
  return file;
}

uint64_t PageFile::file_id() const {
  uint8_t head[kFileIdOffset + 8];
  size_t done = 0;
  while (done < sizeof head) {
    ssize_t n = io_->pread(fd_, head + done, sizeof head - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read at byte {}: {}", path_, done, errno_text()), errno,
                    "pread", path_);
    }
    if (n == 0) return 0;
    done += static_cast<size_t>(n);
  }
  if (std::memcmp(head + 16, kFileMagic, sizeof kFileMagic) != 0) return 0;
  return get_u64(head + kFileIdOffset);
}

uint64_t PageFile::file_size() const {
  uint64_t size = 0;
  if (io_->file_size(fd_, &size) != 0) {
    throw IoError(fmt::format("{}: fstat: {}", path_, errno_text()), errno, "fstat", path_);
  }
  if (wal_ && page_size_ != 0) size = std::max(size, uint64_t{wal_->page_bound()} * page_size_);
  return size;
}

void PageFile::read_raw(uint64_t offset, uint8_t* out, size_t length) const {
  if (wal_ && length > 0) {
    // A range inside one page that the log holds comes from the log.
    const uint32_t ps = wal_->page_size();
    const uint64_t page_no = offset / ps;
    if (page_no <= UINT32_MAX && offset + length <= (page_no + 1) * ps) {
      std::vector<uint8_t> page(ps);
      if (wal_->read(static_cast<uint32_t>(page_no), page.data())) {
        std::memcpy(out, page.data() + (offset - page_no * ps), length);
        return;
      }
    }
  }
  size_t done = 0;
  while (done < length) {
    ssize_t n = io_->pread(fd_, out + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read at byte {}: {}", path_, offset + done, errno_text()),
                    errno, "pread", path_);
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
  if (!wal_ || !wal_->read(page_no, out)) {
    if (offset + page_size_ > file_size()) {
      throw CorruptError(fmt::format("{}: truncated file: page {} lies beyond the end ({} bytes)",
                                     path_, page_no, file_size()),
                         path_, page_no, expected_type ? page_type_name(expected_type) : "");
    }
    read_raw(offset, out, page_size_);
    note_file_read(page_no);
  }
  uint32_t stored = get_u32(out + 4);
  if (stored != page_checksum(out, page_size_)) {
    throw CorruptError(
        fmt::format("{}: page {} ({}): checksum mismatch", path_, page_no, page_type_name(out[0])),
        path_, page_no, page_type_name(out[0]));
  }
  if (get_u32(out + 12) != page_no) {
    throw CorruptError(fmt::format("{}: page {} ({}): page carries number {}", path_, page_no,
                                   page_type_name(out[0]), get_u32(out + 12)),
                       path_, page_no, page_type_name(out[0]));
  }
  if (expected_type != 0 && out[0] != expected_type) {
    throw CorruptError(fmt::format("{}: page {}: expected a {} page, found a {} page", path_,
                                   page_no, page_type_name(expected_type), page_type_name(out[0])),
                       path_, page_no, page_type_name(out[0]));
  }
}

void PageFile::note_file_read(uint32_t page_no) const {
  std::atomic_ref<uint32_t> last(last_read_), run(run_), until(ahead_until_);
  const uint32_t before = last.exchange(page_no, std::memory_order_relaxed);
  const bool next = page_no > before && page_no - before <= kSequentialGap;
  const uint32_t length = next ? run.fetch_add(1, std::memory_order_relaxed) + 1 : 0;
  if (!next) run.store(0, std::memory_order_relaxed);
  if (length + 1 < kSequentialRun || page_size_ == 0) return;
  const uint32_t window = std::max<uint32_t>(kReadaheadBytes / page_size_, 2 * kSequentialGap);
  // What was asked for already, if it lies just ahead (else it belongs to an earlier scan).
  const uint32_t asked = until.load(std::memory_order_relaxed);
  const uint32_t from = asked > page_no && asked <= page_no + 1 + window ? asked : page_no + 1;
  // Ask again once the scan is half-way into what was asked for.
  if (from > page_no + 1 + window / 2) return;
  const uint32_t to = page_no + 1 + window;
  until.store(to, std::memory_order_relaxed);
  io_->advise(fd_, static_cast<off_t>(uint64_t{from} * page_size_),
              static_cast<off_t>(uint64_t{to - from} * page_size_), POSIX_FADV_WILLNEED);
}

void PageFile::write(uint32_t page_no, uint8_t* page) {
  put_u32(page + 12, page_no);
  put_u32(page + 4, page_checksum(page, page_size_));
  if (wal_) {
    wal_->append(page_no, page);
    return;
  }
  pwrite_page(page_no, page);
}

void PageFile::write_direct(uint32_t page_no, uint8_t* page) {
  stamp(page_no, page);
  pwrite_page(page_no, page);
}

void PageFile::stamp(uint32_t page_no, uint8_t* page) const {
  put_u32(page + 12, page_no);
  put_u32(page + 4, page_checksum(page, page_size_));
}

void PageFile::pwrite_page(uint32_t page_no, const uint8_t* page) {
  uint64_t offset = uint64_t{page_no} * page_size_;
  size_t done = 0;
  while (done < page_size_) {
    ssize_t n = io_->pwrite(fd_, page + done, page_size_ - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: write of page {}: {}", path_, page_no, errno_text()), errno,
                    "pwrite", path_);
    }
    if (n == 0) throw IoError(fmt::format("{}: write of page {}: no progress", path_, page_no));
    done += static_cast<size_t>(n);
  }
}

void PageFile::sync() {
  if (io_->fdatasync(fd_) != 0) {
    throw IoError(fmt::format("{}: fdatasync: {}", path_, errno_text()), errno, "fdatasync", path_);
  }
}

void PageFile::truncate(uint32_t pages) {
  if (io_->ftruncate(fd_, static_cast<off_t>(uint64_t{pages} * page_size_)) != 0) {
    throw IoError(fmt::format("{}: ftruncate: {}", path_, errno_text()), errno, "ftruncate", path_);
  }
}

void PageFile::enable_wal() {
  if (page_size_ == 0) throw UsageError(fmt::format("{}: page size not known", path_));
  if (wal_ && wal_->writable() && wal_->page_size() == page_size_ && !wal_->failed()) return;
  wal_.reset();
  DbIdentity id = identity();
  if (id.page_size != page_size_) {
    id.page_size = page_size_;
    uint64_t size = 0;
    if (io_->file_size(fd_, &size) == 0) id.file_pages = size / page_size_;
  }
  WalRecovery r;
  wal_ = Wal::open_writer(*io_, fd_, path_, id, true, r);
  if (r.log_found) recovery_ = r;
}

CommitStats PageFile::commit(uint64_t commit_no, uint32_t page_count,
                             const std::function<void(const CommitStats&, uint8_t*)>& fill_header) {
  if (!wal_) throw UsageError(fmt::format("{}: the write-ahead log is not enabled", path_));
  return wal_->commit(commit_no, page_count, fill_header);
}

}  // namespace pbtree
