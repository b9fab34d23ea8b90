// scan_log(): the checked reading of a write-ahead log (rules at the top of page/wal_scan.h,
// layout in page/wal.h and docs/FORMAT.md §3).
#include "page/wal_scan.h"

#include <fmt/format.h>
#include <pbtree/errors.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "page/page_header.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pbtree {

namespace {

bool plausible_page_size(uint32_t ps) {
  return ps >= 4096 && ps <= 32768 && (ps & (ps - 1)) == 0;
}

// Reads n bytes at offset; false at a premature end of file.
bool read_at(Io& io, int fd, uint8_t* buf, size_t n, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = io.pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(
          fmt::format("{}: read at byte {}: {}", path, offset + done, std::strerror(errno)), errno,
          "pread", path);
    }
    if (r == 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

uint32_t wal_crc(const uint8_t* p, size_t n) {
  Crc32c crc;
  crc.process_bytes(p, n);
  return crc.checksum();
}

uint32_t wal_crc_frame(const uint8_t* frame, uint32_t page_size) {
  Crc32c crc;
  crc.process_bytes(frame, 16);
  crc.process_bytes(frame + kWalFrameHeaderSize, page_size);
  return crc.checksum();
}

uint32_t wal_batch_crc(const std::vector<uint32_t>& frame_crcs) {
  Crc32c batch;
  for (uint32_t c : frame_crcs) {
    uint8_t b[4];
    put_u32(b, c);
    batch.process_bytes(b, 4);
  }
  return batch.checksum();
}

WalScan scan_log(Io& io, int fd, const std::string& path, uint32_t expected_page_size) {
  WalScan s;
  if (io.file_size(fd, &s.size) != 0) {
    throw IoError(fmt::format("{}: fstat: {}", path, std::strerror(errno)), errno, "fstat", path);
  }
  uint8_t head[kWalHeaderSize] = {};
  const size_t probe = static_cast<size_t>(std::min<uint64_t>(s.size, 8));
  if (probe > 0 && read_at(io, fd, head, probe, 0, path) &&
      std::memcmp(head, kWalMagic, probe) != 0) {
    s.foreign = true;  // not written by pbtree
    return s;
  }
  if (s.size < kWalHeaderSizeV1 || !read_at(io, fd, head, kWalHeaderSizeV1, 0, path)) return s;
  if (std::memcmp(head, kWalMagic, 8) != 0) return s;
  s.version = get_u32(head + 8);
  // A header that is whole but fails its CRC, with bytes after it: a reset of the log torn
  // by a crash, or a damaged header in front of frames that may be committed. The frames carry
  // their salt, so they are still scanned (with the file's page size); the verdict is the
  // caller's (WalScan::header_damaged). A torn header with nothing after it (a log cut short
  // while it was created) is no log.
  bool unreadable = false;
  const auto crc_fails = [&](size_t header_size) {
    s.header_size = header_size;
    unreadable = s.size > header_size;
    return unreadable;
  };
  if (s.version == kWalVersion1) {
    if (get_u32(head + 24) != wal_crc(head, 24) && !crc_fails(kWalHeaderSizeV1)) return s;
    s.header_size = kWalHeaderSizeV1;
  } else if (s.version == kWalVersion2 || s.version == kWalVersion3) {
    if (s.size < kWalHeaderSizeV3) return s;
    if (!read_at(io, fd, head + kWalHeaderSizeV1, kWalHeaderSizeV3 - kWalHeaderSizeV1,
                 kWalHeaderSizeV1, path) ||
        (get_u32(head + 32) != wal_crc(head, 32) && !crc_fails(kWalHeaderSizeV3))) {
      return s;
    }
    s.header_size = kWalHeaderSizeV3;
    s.file_id = get_u64(head + 24);
  } else if (s.version == kWalVersion) {
    if (s.size < kWalHeaderSize) return s;
    if (!read_at(io, fd, head + kWalHeaderSizeV1, kWalHeaderSize - kWalHeaderSizeV1,
                 kWalHeaderSizeV1, path) ||
        (get_u32(head + 56) != wal_crc(head, 56) && !crc_fails(kWalHeaderSize))) {
      return s;
    }
    s.header_size = kWalHeaderSize;
    s.file_id = get_u64(head + 24);
    s.base = get_u64(head + 32);
    s.db_dev = get_u64(head + 40);
    s.db_ino = get_u64(head + 48);
  } else {
    // A version this build does not know (a newer pbtree's log, or a damaged version field):
    // its frames cannot be read, and may be committed.
    s.header_damaged = true;
    s.header_problem = fmt::format("log version {} is not one this pbtree reads (1 to {})",
                                   s.version, kWalVersion);
    return s;
  }
  s.page_size = get_u32(head + 12);
  s.salt = get_u64(head + 16);
  if (unreadable) {
    s.header_damaged = true;
    s.header_problem = fmt::format(
        "the log header fails its checksum, and {} bytes after it may "
        "hold committed changes",
        s.size - s.header_size);
    s.file_id = s.base = s.db_dev = s.db_ino = 0;
    if (expected_page_size != 0) s.page_size = expected_page_size;
    uint8_t first[kWalFrameHeaderSize];
    if (s.size < s.header_size + kWalFrameHeaderSize ||
        !read_at(io, fd, first, kWalFrameHeaderSize, s.header_size, path)) {
      return s;
    }
    s.salt = get_u64(first + 8);
  }
  if (!plausible_page_size(s.page_size)) {
    s.problem = fmt::format("page size {} is not a pbtree page size", s.page_size);
    return s;
  }
  if (expected_page_size != 0 && s.page_size != expected_page_size) {
    s.problem =
        fmt::format("page size {} differs from the file's {}", s.page_size, expected_page_size);
    return s;
  }
  s.header_ok = !unreadable;
  s.committed_end = s.header_size;
  const uint64_t frame_size = kWalFrameHeaderSize + s.page_size;
  std::vector<uint8_t> frame(frame_size);
  // The open batch: frames since the last accepted commit record.
  std::map<uint32_t, WalFrame> batch;
  std::vector<uint32_t> crcs;
  uint64_t offset = s.header_size;
  while (offset + kWalFrameHeaderSize <= s.size) {
    if (!read_at(io, fd, frame.data(), kWalFrameHeaderSize, offset, path)) break;
    const uint32_t kind = get_u32(frame.data());
    if (get_u64(frame.data() + 8) != s.salt) break;
    if (kind == kWalFrameImage) {
      if (offset + frame_size > s.size) break;
      if (!read_at(io, fd, frame.data() + kWalFrameHeaderSize, s.page_size,
                   offset + kWalFrameHeaderSize, path)) {
        break;
      }
      Crc32c crc;
      crc.process_bytes(frame.data(), 16);
      crc.process_bytes(frame.data() + kWalFrameHeaderSize, s.page_size);
      if (crc.checksum() != get_u32(frame.data() + 16)) break;
      const uint32_t page_no = get_u32(frame.data() + 4);
      const uint8_t* image = frame.data() + kWalFrameHeaderSize;
      if (get_u32(image + 4) != page_checksum(image, s.page_size) ||
          get_u32(image + 12) != page_no) {
        s.problem = fmt::format(
            "frame at byte {} (page {}): the image's checksum or page "
            "number is wrong",
            offset, page_no);
        break;
      }
      batch[page_no] = WalFrame{offset, crc.checksum(), static_cast<uint32_t>(crcs.size())};
      crcs.push_back(crc.checksum());
      offset += frame_size;
      continue;
    }
    if (kind != kWalFrameCommit) break;
    uint8_t rec[kWalCommitSize];
    if (offset + kWalCommitSize > s.size || !read_at(io, fd, rec, kWalCommitSize, offset, path)) {
      break;
    }
    if (get_u32(rec + 32) != wal_crc(rec, 32) || get_u32(rec + 4) != crcs.size() ||
        wal_batch_crc(crcs) != get_u32(rec + 28)) {
      break;
    }
    const uint64_t counter = get_u64(rec + 16);
    const uint32_t page_count = get_u32(rec + 24);
    if (s.batches > 0 && counter <= s.counter) {
      s.problem = fmt::format("commit record at byte {}: commit {} does not follow commit {}",
                              offset, counter, s.counter);
      break;
    }
    if (page_count < 2) {
      s.problem = fmt::format("commit record at byte {}: page count {}", offset, page_count);
      break;
    }
    if (!batch.empty() && batch.rbegin()->first >= page_count) {
      s.problem = fmt::format(
          "commit record at byte {}: a frame of page {} lies at or beyond "
          "the committed page count {}",
          offset, batch.rbegin()->first, page_count);
      break;
    }
    for (const auto& [page_no, f] : batch) s.committed[page_no] = f;
    s.committed_frames += static_cast<uint32_t>(crcs.size());
    ++s.batches;
    s.counter = counter;
    s.page_count = page_count;
    offset += kWalCommitSize;
    s.committed_end = offset;
    batch.clear();
    crcs.clear();
    if (s.version < kWalVersion3) break;  // versions 1 and 2 hold one batch
  }
  s.tail_frames = static_cast<uint32_t>(crcs.size());
  return s;
}

std::string wal_rejection(const WalScan& s, const DbIdentity& db) {
  if (!s.header_ok) return s.problem.empty() ? "no valid log header" : s.problem;
  if (s.batches == 0) return s.problem.empty() ? "no committed batch" : s.problem;
  if (s.file_id != db.file_id) {
    return fmt::format("committed log of another file (file id {:016x}, the file has {:016x})",
                       s.file_id, db.file_id);
  }
  if (db.page_size != 0 && s.page_count > db.file_pages) {
    // Pages from the end of the file up to the count must all have a committed frame.
    uint64_t covered = 0;
    for (auto it = s.committed.lower_bound(static_cast<uint32_t>(db.file_pages));
         it != s.committed.end() && it->first < s.page_count; ++it) {
      ++covered;
    }
    if (covered != s.page_count - db.file_pages) {
      return fmt::format(
          "commit {} counts {} pages, but the file has {} and the log holds only "
          "{} of the pages after them",
          s.counter, s.page_count, db.file_pages, covered);
    }
  }
  if (s.counter < db.counter) {
    return fmt::format("stale log: its last commit is {}, the file is at commit {}", s.counter,
                       db.counter);
  }
  if (s.version >= kWalVersion && db.counter != s.base && db.counter != s.counter) {
    return fmt::format(
        "the log starts after commit {} and ends at commit {}, the file is at "
        "commit {}",
        s.base, s.counter, db.counter);
  }
  return {};
}

DbIdentity read_db_identity(Io& io, int fd, const std::string& path) {
  DbIdentity id;
  struct stat st;
  if (::fstat(fd, &st) == 0) {
    id.dev = static_cast<uint64_t>(st.st_dev);
    id.ino = static_cast<uint64_t>(st.st_ino);
  }
  uint8_t head[88];
  if (!read_at(io, fd, head, sizeof head, 0, path)) return id;
  if (std::memcmp(head + 16, kFileMagic, sizeof kFileMagic) != 0) return id;
  id.pbtree = true;
  id.page_size = get_u32(head + 28);
  id.counter = get_u64(head + 48);
  id.file_id = get_u64(head + kFileIdOffset);
  uint64_t size = 0;
  if (id.page_size != 0 && io.file_size(fd, &size) == 0) id.file_pages = size / id.page_size;
  return id;
}

}  // namespace pbtree
