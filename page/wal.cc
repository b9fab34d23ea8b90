// Wal: the redo log of full page images beside a db file (log layout, commit and checkpoint
// order and error rules at the top of page/wal.h; locks in page/file_lock.h).
#include "page/wal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/errors.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "page/file_lock.h"
#include "page/page_header.h"
#include "page/wal_io.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pbtree {

using namespace wal_io;

Wal::Wal(Io& io, int db_fd, std::string db_path, std::string log_path, int log_fd,
         uint32_t page_size, bool writable)
    : io_(io),
      db_fd_(db_fd),
      db_path_(std::move(db_path)),
      log_path_(std::move(log_path)),
      log_fd_(log_fd),
      page_size_(page_size),
      writable_(writable) {}

Wal::~Wal() {
  // Close: uncommitted frames are cut off; committed batches go into the db file and the
  // log is removed, unless a reader holds a snapshot (then the log stays for the next
  // writer or reader). Best effort: the next open recovers whatever is left.
  if (writable_ && failure_.empty()) {
    try {
      if (!pending_.empty()) truncate_tail_locked();
      checkpoint_locked(0, true);
    } catch (...) {
    }
  }
  if (log_fd_ >= 0) io_.close(log_fd_);
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
  committed_.clear();
  pending_.clear();
  pending_crcs_.clear();
  committed_count_ = 0;
  salt_ = new_salt();
  header_size_ = kWalHeaderSize;
  base_ = last_counter_;  // the file is now at the last commit
  uint8_t head[kWalHeaderSize] = {};
  std::memcpy(head, kWalMagic, 8);
  put_u32(head + 8, kWalVersion);
  put_u32(head + 12, page_size_);
  put_u64(head + 16, salt_);
  put_u64(head + 24, file_id_);
  put_u64(head + 32, base_);
  put_u64(head + 40, db_dev_);
  put_u64(head + 48, db_ino_);
  put_u32(head + 56, wal_crc(head, 56));
  // The header first, then the cut: a new (empty) log never shows readers opening it a run of
  // zero bytes, which they would take for a file that is not a log (ftruncate first made one
  // for an instant: "not a pbtree log (64 bytes)" warnings under ShareProcesses). The frames
  // left behind the new header until the cut carry the old salt, so no scan reads them.
  write_all(io_, log_fd_, head, kWalHeaderSize, 0, log_path_);
  truncate_to(io_, log_fd_, kWalHeaderSize, log_path_);
  sync(io_, log_fd_, log_path_);
  committed_end_ = end_ = kWalHeaderSize;
}

void Wal::truncate_tail_locked() {
  pending_.clear();
  pending_crcs_.clear();
  truncate_to(io_, log_fd_, committed_end_, log_path_);
  sync(io_, log_fd_, log_path_);
  end_ = committed_end_;
}

bool Wal::read(uint32_t page_no, uint8_t* out) {
  std::lock_guard lock(mutex_);
  check_usable();
  auto it = pending_.find(page_no);
  if (it == pending_.end()) {
    it = committed_.find(page_no);
    if (it == committed_.end()) return false;
  }
  if (!read_all(io_, log_fd_, out, page_size_, it->second.offset + kWalFrameHeaderSize,
                log_path_)) {
    throw IoError(
        fmt::format("{}: frame of page {} lies beyond the end of the log", log_path_, page_no));
  }
  return true;
}

void Wal::append(uint32_t page_no, const uint8_t* image) {
  std::lock_guard lock(mutex_);
  check_usable();
  if (!writable_) throw ReadOnlyError(fmt::format("{}: opened read-only", db_path_));
  write_frame_locked(page_no, image);
}

void Wal::write_frame_locked(uint32_t page_no, const uint8_t* image) {
  if (pending_.empty() && !committed_.empty()) {
    // A new batch: fold the committed ones into the file first if no reader needs them.
    try {
      checkpoint_locked(0, false);
    } catch (const std::exception& e) {
      fail(e.what());
      throw;
    }
  }
  std::vector<uint8_t> frame(kWalFrameHeaderSize + page_size_);
  put_u32(frame.data(), kWalFrameImage);
  put_u32(frame.data() + 4, page_no);
  put_u64(frame.data() + 8, salt_);
  std::memcpy(frame.data() + kWalFrameHeaderSize, image, page_size_);
  const uint32_t crc = wal_crc_frame(frame.data(), page_size_);
  put_u32(frame.data() + 16, crc);
  auto it = pending_.find(page_no);
  const uint64_t offset = it != pending_.end() ? it->second.offset : end_;
  try {
    write_all(io_, log_fd_, frame.data(), frame.size(), offset, log_path_);
  } catch (const IoError& e) {
    fail(e.what());
    // Give the space of the uncommitted tail back at once (e.g. ENOSPC): readers never use
    // it, and the next writer would cut it off anyway. Best effort.
    try {
      truncate_tail_locked();
    } catch (...) {
    }
    throw;
  }
  if (it == pending_.end()) {
    pending_.emplace(page_no, WalFrame{offset, crc, static_cast<uint32_t>(pending_crcs_.size())});
    pending_crcs_.push_back(crc);
    end_ += frame.size();
  } else {
    it->second.crc = crc;
    pending_crcs_[it->second.pos] = crc;
  }
}

uint32_t Wal::page_bound() const {
  std::lock_guard lock(mutex_);
  uint32_t bound = committed_.empty() ? 0 : committed_.rbegin()->first + 1;
  if (!pending_.empty()) bound = std::max(bound, pending_.rbegin()->first + 1);
  return bound;
}

uint32_t Wal::pending_pages() const {
  std::lock_guard lock(mutex_);
  return static_cast<uint32_t>(pending_.size());
}

uint32_t Wal::committed_frames() const {
  std::lock_guard lock(mutex_);
  return committed_count_;
}

uint64_t Wal::size() const {
  std::lock_guard lock(mutex_);
  return end_;
}

bool Wal::holds_committed_batch() const {
  std::lock_guard lock(mutex_);
  return !committed_.empty();
}

bool Wal::checkpoint(int wait_ms) {
  std::lock_guard lock(mutex_);
  check_usable();
  if (!writable_) throw ReadOnlyError(fmt::format("{}: opened read-only", db_path_));
  if (!pending_.empty()) {
    throw UsageError(fmt::format("{}: checkpoint with uncommitted frames", db_path_));
  }
  if (committed_.empty()) return true;
  return checkpoint_locked(wait_ms, false);
}

bool Wal::lock_for_checkpoint(int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    if (try_lock(db_fd_, LockByte::Gate, true, db_path_)) {
      if (try_lock(db_fd_, LockByte::Readers, true, db_path_)) return true;
      unlock(db_fd_, LockByte::Gate);  // never keep new readers waiting
    }
    if (wait_ms <= 0 || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::milliseconds(5)) pause *= 2;
  }
}

bool Wal::checkpoint_locked(int wait_ms, bool remove_log) {
  if (!lock_for_checkpoint(wait_ms)) return false;
  // No reader holds a snapshot, and new ones wait at the gate.
  try {
    if (!committed_.empty()) {
      std::vector<uint8_t> image(page_size_);
      // The header page last: a copy of the file taken meanwhile (cp) that shows the new
      // commit counter then holds every other page of this checkpoint too.
      auto copy = [&](uint32_t page_no, const WalFrame& frame) {
        if (!read_all(io_, log_fd_, image.data(), page_size_, frame.offset + kWalFrameHeaderSize,
                      log_path_)) {
          throw IoError(fmt::format("{}: frame of page {} missing", log_path_, page_no));
        }
        write_all(io_, db_fd_, image.data(), page_size_, uint64_t{page_no} * page_size_, db_path_);
      };
      for (const auto& [page_no, frame] : committed_) {
        if (page_no != 0) copy(page_no, frame);
      }
      if (auto it = committed_.find(0); it != committed_.end()) copy(0, it->second);
      sync(io_, db_fd_, db_path_);
    }
    if (remove_log) {
      io_.unlink(log_path_);
      committed_.clear();
      committed_count_ = 0;
    } else if (!committed_.empty() || end_ != kWalHeaderSize) {
      reset_locked();
    }
  } catch (const std::exception& e) {
    fail(e.what());
    unlock(db_fd_, LockByte::Readers);
    unlock(db_fd_, LockByte::Gate);
    throw;
  }
  unlock(db_fd_, LockByte::Readers);
  unlock(db_fd_, LockByte::Gate);
  return true;
}

CommitStats Wal::commit(uint64_t commit_no, uint32_t db_page_count,
                        const std::function<void(const CommitStats&, uint8_t*)>& fill_header) {
  std::lock_guard lock(mutex_);
  check_usable();
  if (!writable_) throw ReadOnlyError(fmt::format("{}: opened read-only", db_path_));
  CommitStats stats;
  stats.checkpoint = commit_no;
  stats.pages_written =
      static_cast<uint32_t>(pending_.size() + (fill_header && !pending_.count(0) ? 1 : 0));
  stats.bytes_written = uint64_t{stats.pages_written} * page_size_;
  stats.bytes_synced =
      uint64_t{stats.pages_written} * (kWalFrameHeaderSize + page_size_) + kWalCommitSize;
  // Header image and commit record into the log, then the commit point: fdatasync(log), the
  // commit's last I/O.
  bool record_written = false;
  uint64_t record_at = 0;
  try {
    if (fill_header) {
      std::vector<uint8_t> header(page_size_, 0);
      fill_header(stats, header.data());
      put_u32(header.data() + 12, 0);
      put_u32(header.data() + 4, page_checksum(header.data(), page_size_));
      write_frame_locked(0, header.data());
    }
    uint8_t rec[kWalCommitSize] = {};
    put_u32(rec, kWalFrameCommit);
    put_u32(rec + 4, static_cast<uint32_t>(pending_crcs_.size()));
    put_u64(rec + 8, salt_);
    put_u64(rec + 16, commit_no);
    put_u32(rec + 24, db_page_count);
    put_u32(rec + 28, wal_batch_crc(pending_crcs_));
    put_u32(rec + 32, wal_crc(rec, 32));
    record_at = end_;
    write_all(io_, log_fd_, rec, kWalCommitSize, record_at, log_path_);
    record_written = true;
    sync(io_, log_fd_, log_path_);
  } catch (const std::exception& e) {
    // Not committed: make sure no later open finds this batch (best effort). After a failed
    // fdatasync the record may or may not be durable: overwrite it with zeros, then cut the
    // log back to the previous commit, syncing each.
    fail(e.what());
    if (record_written) {
      try {
        const uint8_t zeros[kWalCommitSize] = {};
        write_all(io_, log_fd_, zeros, kWalCommitSize, record_at, log_path_);
        sync(io_, log_fd_, log_path_);
      } catch (...) {
      }
    }
    try {
      truncate_to(io_, log_fd_, committed_end_, log_path_);
      sync(io_, log_fd_, log_path_);
    } catch (...) {
    }
    throw;
  }
  last_pages_.clear();
  for (const auto& [page_no, frame] : pending_) {
    committed_[page_no] = frame;
    last_pages_.push_back(page_no);
  }
  committed_count_ += static_cast<uint32_t>(pending_crcs_.size());
  pending_.clear();
  pending_crcs_.clear();
  end_ = record_at + kWalCommitSize;
  committed_end_ = end_;
  last_counter_ = commit_no;
  last_ = stats;
  return stats;
}

void Wal::rollback() {
  std::lock_guard lock(mutex_);
  check_usable();
  if (!writable_ || pending_.empty()) return;
  try {
    truncate_tail_locked();
  } catch (const std::exception& e) {
    fail(e.what());
    throw;
  }
}

CommitStats Wal::last_commit() const {
  std::lock_guard lock(mutex_);
  return last_;
}

std::vector<uint32_t> Wal::last_commit_pages() const {
  std::lock_guard lock(mutex_);
  return last_pages_;
}

bool Wal::failed() const {
  std::lock_guard lock(mutex_);
  return !failure_.empty();
}

}  // namespace pbtree
