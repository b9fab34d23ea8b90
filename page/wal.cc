// Wal: the redo log of full page images beside a db file (log layout, commit order and error
// rules at the top of page/wal.h).
#include "page/wal.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include <pbtree/errors.h>
#include "page/page_header.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pbtree {

namespace {

constexpr uint32_t kFrameImage = 1;
constexpr uint32_t kFrameCommit = 2;

std::string errno_text() {
  return std::strerror(errno);
}

bool plausible_page_size(uint32_t ps) {
  return ps >= 4096 && ps <= 32768 && (ps & (ps - 1)) == 0;
}

uint64_t new_salt() {
  static std::mutex mutex;
  static std::random_device device;
  std::lock_guard lock(mutex);
  return (uint64_t{device()} << 32) ^ device();
}

void write_all(Io& io, int fd, const uint8_t* buf, size_t n, uint64_t offset,
               const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = io.pwrite(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: write at byte {}: {}", path, offset + done, errno_text()));
    }
    if (w == 0) throw IoError(fmt::format("{}: write at byte {}: no progress", path, offset));
    done += static_cast<size_t>(w);
  }
}

// Reads n bytes; false at a premature end of file.
bool read_all(Io& io, int fd, uint8_t* buf, size_t n, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = io.pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read at byte {}: {}", path, offset + done, errno_text()));
    }
    if (r == 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

void sync(Io& io, int fd, const std::string& path) {
  if (io.fdatasync(fd) != 0) throw IoError(fmt::format("{}: fdatasync: {}", path, errno_text()));
}

void truncate_to(Io& io, int fd, uint64_t length, const std::string& path) {
  if (io.ftruncate(fd, static_cast<off_t>(length)) != 0) {
    throw IoError(fmt::format("{}: ftruncate: {}", path, errno_text()));
  }
}

// What a log holds.
struct Scan {
  bool header_ok = false;
  uint32_t page_size = 0;
  uint64_t salt = 0;
  uint64_t file_id = 0;                   // 0 in a version 1 log
  uint64_t header_size = kWalHeaderSize;  // where frame 0 starts
  bool committed = false;
  uint32_t frames = 0;                 // valid frames read (committed or not)
  std::map<uint32_t, uint32_t> pages;  // page number -> frame index (valid frames)
  std::vector<uint32_t> crcs;          // frame CRCs by index
  uint64_t checkpoint = 0;
  uint32_t db_page_count = 0;
  uint64_t size = 0;
};

Scan scan_log(Io& io, int fd, const std::string& path) {
  Scan s;
  if (io.file_size(fd, &s.size) != 0) {
    throw IoError(fmt::format("{}: fstat: {}", path, errno_text()));
  }
  uint8_t head[kWalHeaderSize];
  if (s.size < kWalHeaderSizeV1 || !read_all(io, fd, head, kWalHeaderSizeV1, 0, path)) return s;
  if (std::memcmp(head, kWalMagic, 8) != 0 || !plausible_page_size(get_u32(head + 12))) return s;
  const uint32_t version = get_u32(head + 8);
  if (version == kWalVersion1) {
    if (get_u32(head + 24) != crc32c(head, 24)) return s;
    s.header_size = kWalHeaderSizeV1;
  } else if (version == kWalVersion) {
    if (s.size < kWalHeaderSize ||
        !read_all(io, fd, head + kWalHeaderSizeV1, kWalHeaderSize - kWalHeaderSizeV1,
                  kWalHeaderSizeV1, path) ||
        get_u32(head + 32) != crc32c(head, 32)) {
      return s;
    }
    s.header_size = kWalHeaderSize;
    s.file_id = get_u64(head + 24);
  } else {
    return s;
  }
  s.header_ok = true;
  s.page_size = get_u32(head + 12);
  s.salt = get_u64(head + 16);
  const uint64_t frame_size = kWalFrameHeaderSize + s.page_size;
  std::vector<uint8_t> frame(frame_size);
  uint64_t offset = s.header_size;
  while (offset + kWalFrameHeaderSize <= s.size) {
    if (!read_all(io, fd, frame.data(), kWalFrameHeaderSize, offset, path)) break;
    uint32_t kind = get_u32(frame.data());
    if (get_u64(frame.data() + 8) != s.salt) break;
    if (kind == kFrameImage) {
      if (offset + frame_size > s.size) break;
      if (!read_all(io, fd, frame.data() + kWalFrameHeaderSize, s.page_size,
                    offset + kWalFrameHeaderSize, path)) {
        break;
      }
      Crc32c crc;
      crc.process_bytes(frame.data(), 16);
      crc.process_bytes(frame.data() + kWalFrameHeaderSize, s.page_size);
      if (crc.checksum() != get_u32(frame.data() + 16)) break;
      s.pages[get_u32(frame.data() + 4)] = s.frames;
      s.crcs.push_back(crc.checksum());
      ++s.frames;
      offset += frame_size;
      continue;
    }
    if (kind == kFrameCommit) {
      uint8_t rec[kWalCommitSize];
      if (offset + kWalCommitSize > s.size ||
          !read_all(io, fd, rec, kWalCommitSize, offset, path)) {
        break;
      }
      if (get_u32(rec + 32) != crc32c(rec, 32) || get_u32(rec + 4) != s.frames) break;
      Crc32c batch;
      for (uint32_t c : s.crcs) {
        uint8_t b[4];
        put_u32(b, c);
        batch.process_bytes(b, 4);
      }
      if (batch.checksum() != get_u32(rec + 28)) break;
      s.committed = true;
      s.checkpoint = get_u64(rec + 16);
      s.db_page_count = get_u32(rec + 24);
    }
    break;
  }
  return s;
}

// A committed batch of another file: says so on stderr (`action`: what happens to it).
void warn_stale(const std::string& path, const Scan& s, uint64_t file_id, const char* action) {
  std::fprintf(stderr,
               "pbtree: warning: %s: committed log of another file (file id %016llx, the file "
               "has %016llx): %s\n",
               path.c_str(), static_cast<unsigned long long>(s.file_id),
               static_cast<unsigned long long>(file_id), action);
}

}  // namespace

std::string Wal::log_path(const std::string& db_path) {
  return db_path + "-wal";
}

Wal::Wal(Io& io, int db_fd, std::string db_path, int log_fd, uint32_t page_size, bool writable)
    : io_(io),
      db_fd_(db_fd),
      db_path_(std::move(db_path)),
      log_path_(log_path(db_path_)),
      log_fd_(log_fd),
      page_size_(page_size),
      writable_(writable) {}

Wal::~Wal() {
  // Close: a committed batch goes into the db file now (best effort: if that fails the log
  // keeps it for the next open). A failed log may hold a committed batch and stays.
  if (writable_ && failure_.empty() && committed_) {
    try {
      apply_locked();
    } catch (...) {
    }
  }
  if (log_fd_ >= 0) io_.close(log_fd_);
  // An empty log holds nothing to replay: remove it.
  if (writable_ && failure_.empty() && frame_count_ == 0) io_.unlink(log_path_);
}

WalRecovery Wal::recover(Io& io, int db_fd, const std::string& db_path, uint64_t file_id) {
  WalRecovery r;
  const std::string path = log_path(db_path);
  int fd = io.open(path, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOENT) return r;
    throw IoError(fmt::format("{}: cannot open: {}", path, errno_text()));
  }
  r.log_found = true;
  try {
    Scan s = scan_log(io, fd, path);
    if (s.committed && s.file_id != file_id) {
      // Stale: left by another file of this name; replaying it would corrupt this one.
      warn_stale(path, s, file_id, "not replayed, removed");
      r.stale = true;
    } else if (s.committed) {
      std::vector<uint8_t> image(s.page_size);
      for (const auto& [page_no, index] : s.pages) {
        uint64_t at = s.header_size + uint64_t{index} * (kWalFrameHeaderSize + s.page_size) +
                      kWalFrameHeaderSize;
        if (!read_all(io, fd, image.data(), s.page_size, at, path)) {
          throw IoError(fmt::format("{}: log shrank during recovery", path));
        }
        write_all(io, db_fd, image.data(), s.page_size, uint64_t{page_no} * s.page_size, db_path);
      }
      sync(io, db_fd, db_path);
      r.replayed = true;
      r.pages = static_cast<uint32_t>(s.pages.size());
      r.checkpoint = s.checkpoint;
    } else {
      r.discarded = s.frames;
    }
    if (s.size != 0) {
      truncate_to(io, fd, 0, path);
      sync(io, fd, path);
    }
  } catch (...) {
    io.close(fd);
    throw;
  }
  io.close(fd);
  io.unlink(path);  // empty now: nothing to keep
  return r;
}

std::unique_ptr<Wal> Wal::overlay(Io& io, const std::string& db_path, uint64_t file_id) {
  const std::string path = log_path(db_path);
  int fd = io.open(path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == ENOENT) return nullptr;
    throw IoError(fmt::format("{}: cannot open: {}", path, errno_text()));
  }
  Scan s;
  try {
    s = scan_log(io, fd, path);
  } catch (...) {
    io.close(fd);
    throw;
  }
  if (s.committed && s.file_id != file_id) warn_stale(path, s, file_id, "ignored");
  if (!s.committed || s.file_id != file_id) {
    io.close(fd);
    return nullptr;
  }
  std::unique_ptr<Wal> wal(new Wal(io, -1, db_path, fd, s.page_size, false));
  wal->salt_ = s.salt;
  wal->file_id_ = s.file_id;
  wal->header_size_ = s.header_size;
  for (const auto& [page_no, index] : s.pages) wal->frames_[page_no] = Frame{index, s.crcs[index]};
  wal->frame_count_ = s.frames;
  wal->frame_crcs_ = s.crcs;
  wal->committed_ = true;
  wal->recovery_.log_found = true;
  wal->recovery_.pages = static_cast<uint32_t>(s.pages.size());
  wal->recovery_.checkpoint = s.checkpoint;
  return wal;
}

std::unique_ptr<Wal> Wal::open(Io& io, int db_fd, const std::string& db_path, uint32_t page_size,
                               uint64_t file_id) {
  if (!plausible_page_size(page_size)) {
    throw UsageError(fmt::format("{}: bad page size {} for the log", db_path, page_size));
  }
  WalRecovery r = recover(io, db_fd, db_path, file_id);
  const std::string path = log_path(db_path);
  int fd = io.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot create: {}", path, errno_text()));
  std::unique_ptr<Wal> wal(new Wal(io, db_fd, db_path, fd, page_size, true));
  wal->recovery_ = r;
  wal->file_id_ = file_id;
  std::lock_guard lock(wal->mutex_);
  wal->reset_locked();
  {
    // A new log file: make its directory entry durable before anything relies on it.
    std::string dir = db_path.find('/') == std::string::npos
                          ? std::string(".")
                          : db_path.substr(0, db_path.rfind('/') + 1);
    int dfd = io.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (dfd >= 0) {
      int rc = io.fdatasync(dfd);
      int saved = errno;
      io.close(dfd);
      if (rc != 0) {
        errno = saved;
        throw IoError(fmt::format("{}: fdatasync: {}", dir, errno_text()));
      }
    }
  }
  return wal;
}

void Wal::check_usable() const {
  if (!failure_.empty()) {
    throw IoError(
        fmt::format("{}: the log failed earlier ({}); reopen the file", db_path_, failure_));
  }
}

void Wal::fail(const std::string& what) {
  if (failure_.empty()) failure_ = what;
}

void Wal::reset_locked() {
  frames_.clear();
  frame_crcs_.clear();
  frame_count_ = 0;
  salt_ = new_salt();
  uint8_t head[kWalHeaderSize] = {};
  std::memcpy(head, kWalMagic, 8);
  put_u32(head + 8, kWalVersion);
  put_u32(head + 12, page_size_);
  put_u64(head + 16, salt_);
  put_u64(head + 24, file_id_);
  put_u32(head + 32, crc32c(head, 32));
  truncate_to(io_, log_fd_, kWalHeaderSize, log_path_);
  write_all(io_, log_fd_, head, kWalHeaderSize, 0, log_path_);
  sync(io_, log_fd_, log_path_);
}

bool Wal::read(uint32_t page_no, uint8_t* out) {
  std::lock_guard lock(mutex_);
  check_usable();
  auto it = frames_.find(page_no);
  if (it == frames_.end()) return false;
  if (!read_all(io_, log_fd_, out, page_size_, frame_offset(it->second.index) + kWalFrameHeaderSize,
                log_path_)) {
    throw IoError(
        fmt::format("{}: frame of page {} lies beyond the end of the log", log_path_, page_no));
  }
  return true;
}

void Wal::append(uint32_t page_no, const uint8_t* image) {
  std::lock_guard lock(mutex_);
  append_locked(page_no, image);
}

void Wal::append_locked(uint32_t page_no, const uint8_t* image) {
  check_usable();
  if (!writable_) throw UsageError(fmt::format("{}: opened read-only", db_path_));
  if (committed_) apply_locked();  // the next batch starts in an empty log
  std::vector<uint8_t> frame(kWalFrameHeaderSize + page_size_);
  put_u32(frame.data(), kFrameImage);
  put_u32(frame.data() + 4, page_no);
  put_u64(frame.data() + 8, salt_);
  std::memcpy(frame.data() + kWalFrameHeaderSize, image, page_size_);
  Crc32c crc;
  crc.process_bytes(frame.data(), 16);
  crc.process_bytes(image, page_size_);
  put_u32(frame.data() + 16, crc.checksum());
  auto it = frames_.find(page_no);
  uint32_t index = it != frames_.end() ? it->second.index : frame_count_;
  try {
    write_all(io_, log_fd_, frame.data(), frame.size(), frame_offset(index), log_path_);
  } catch (const IoError& e) {
    fail(e.what());
    throw;
  }
  if (it == frames_.end()) {
    frames_.emplace(page_no, Frame{index, crc.checksum()});
    frame_crcs_.push_back(crc.checksum());
    ++frame_count_;
  } else {
    it->second.crc = crc.checksum();
    frame_crcs_[index] = crc.checksum();
  }
}

uint32_t Wal::page_bound() const {
  std::lock_guard lock(mutex_);
  return frames_.empty() ? 0 : frames_.rbegin()->first + 1;
}

uint32_t Wal::pending_pages() const {
  std::lock_guard lock(mutex_);
  return committed_ ? 0 : static_cast<uint32_t>(frames_.size());
}

bool Wal::holds_committed_batch() const {
  std::lock_guard lock(mutex_);
  return committed_;
}

void Wal::apply() {
  std::lock_guard lock(mutex_);
  check_usable();
  if (committed_) apply_locked();
}

void Wal::apply_locked() {
  // The committed batch in place, ascending page order; fdatasync(db); empty the log. A
  // failure leaves the committed log for the next open to replay.
  try {
    std::vector<uint8_t> image(page_size_);
    for (const auto& [page_no, frame] : frames_) {
      if (!read_all(io_, log_fd_, image.data(), page_size_,
                    frame_offset(frame.index) + kWalFrameHeaderSize, log_path_)) {
        throw IoError(fmt::format("{}: frame of page {} missing", log_path_, page_no));
      }
      write_all(io_, db_fd_, image.data(), page_size_, uint64_t{page_no} * page_size_, db_path_);
    }
    sync(io_, db_fd_, db_path_);
    reset_locked();
    committed_ = false;
  } catch (const std::exception& e) {
    fail(e.what());
    throw;
  }
}

CheckpointStats Wal::checkpoint(
    uint64_t checkpoint, uint32_t db_page_count,
    const std::function<void(const CheckpointStats&, uint8_t*)>& fill_header) {
  std::lock_guard lock(mutex_);
  return checkpoint_locked(checkpoint, db_page_count, fill_header);
}

CheckpointStats Wal::checkpoint_locked(
    uint64_t checkpoint, uint32_t db_page_count,
    const std::function<void(const CheckpointStats&, uint8_t*)>& fill_header) {
  check_usable();
  if (!writable_) throw UsageError(fmt::format("{}: opened read-only", db_path_));
  // 1. The previous checkpoint's batch, if still only in the log, goes in place first.
  if (committed_) apply_locked();
  CheckpointStats stats;
  stats.checkpoint = checkpoint;
  stats.pages_written =
      static_cast<uint32_t>(frames_.size() + (fill_header && !frames_.count(0) ? 1 : 0));
  stats.bytes_written = uint64_t{stats.pages_written} * page_size_;
  stats.bytes_synced =
      uint64_t{stats.pages_written} * (kWalFrameHeaderSize + page_size_) + kWalCommitSize;
  // 2. Header image and commit record into the log, then the commit point: fdatasync(log),
  // the checkpoint's last I/O.
  bool record_written = false;
  try {
    if (fill_header) {
      std::vector<uint8_t> header(page_size_, 0);
      fill_header(stats, header.data());
      put_u32(header.data() + 12, 0);
      put_u32(header.data() + 4, page_checksum(header.data(), page_size_));
      append_locked(0, header.data());
    }
    uint8_t rec[kWalCommitSize] = {};
    put_u32(rec, kFrameCommit);
    put_u32(rec + 4, frame_count_);
    put_u64(rec + 8, salt_);
    put_u64(rec + 16, checkpoint);
    put_u32(rec + 24, db_page_count);
    Crc32c batch;
    for (uint32_t c : frame_crcs_) {
      uint8_t b[4];
      put_u32(b, c);
      batch.process_bytes(b, 4);
    }
    put_u32(rec + 28, batch.checksum());
    put_u32(rec + 32, crc32c(rec, 32));
    write_all(io_, log_fd_, rec, kWalCommitSize, frame_offset(frame_count_), log_path_);
    record_written = true;
    sync(io_, log_fd_, log_path_);
  } catch (const std::exception& e) {
    // Not committed: make sure no later open finds this batch (best effort). After a failed
    // fdatasync the record may or may not be durable: overwrite it with zeros, then empty
    // the log, syncing each.
    fail(e.what());
    if (record_written) {
      try {
        const uint8_t zeros[kWalCommitSize] = {};
        write_all(io_, log_fd_, zeros, kWalCommitSize, frame_offset(frame_count_), log_path_);
        sync(io_, log_fd_, log_path_);
      } catch (...) {
      }
    }
    try {
      truncate_to(io_, log_fd_, 0, log_path_);
      sync(io_, log_fd_, log_path_);
    } catch (...) {
    }
    throw;
  }
  // 3. Committed. The pages reach the db file when the log is applied: at the next append or
  // checkpoint, at close, or by recovery at the next open; until then reads of them come
  // from the log.
  committed_ = true;
  last_ = stats;
  last_pages_.clear();
  for (const auto& [page_no, frame] : frames_) last_pages_.push_back(page_no);
  return stats;
}

void Wal::rollback() {
  std::lock_guard lock(mutex_);
  check_usable();
  if (!writable_ || committed_) return;  // a committed batch is no longer ours to drop
  try {
    reset_locked();
  } catch (const std::exception& e) {
    fail(e.what());
    throw;
  }
}

CheckpointStats Wal::last_checkpoint() const {
  std::lock_guard lock(mutex_);
  return last_;
}

std::vector<uint32_t> Wal::last_checkpoint_pages() const {
  std::lock_guard lock(mutex_);
  return last_pages_;
}

bool Wal::failed() const {
  std::lock_guard lock(mutex_);
  return !failure_.empty();
}

}  // namespace pbtree
