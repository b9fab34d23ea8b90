// Opening a log (Wal::open_writer, Wal::open_snapshot): where a file's log is (its own name,
// or the one recorded in the file's extended attribute for another name of the same file), a
// log left without its file, a damaged log header judged against the file, recovery of the
// committed batches. The running log (append, commit, checkpoint): page/wal.cc; rules at the
// top of page/wal.h.
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
#include <random>
#include <thread>

#include "page/file_lock.h"
#include "page/page_header.h"
#include "page/wal.h"
#include "page/wal_io.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace pbtree {

using namespace wal_io;

namespace {

constexpr const char* kLogAttribute = "user.pbtree.log";

// "<name>-wal" for the name the file was opened by; for a symbolic link, beside its target.
std::string own_log_path(const std::string& db_path) {
  struct stat st;
  if (::lstat(db_path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = ::realpath(db_path.c_str(), nullptr);
    if (real != nullptr) {
      std::string target(real);
      std::free(real);
      return Wal::log_path(target);
    }
  }
  return Wal::log_path(db_path);
}

// The log path the file's "user.pbtree.log" attribute names, or "" if none.
std::string recorded_log_path(int db_fd) {
  char buf[4096];
  const ssize_t n = ::fgetxattr(db_fd, kLogAttribute, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::lstat(a.c_str(), &sa) == 0 && ::lstat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// True if `path` is a version 4 log started by the db file `db` (bytes 40..55).
bool log_of_file(const std::string& path, const DbIdentity& db) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  uint8_t head[kWalHeaderSize];
  struct stat st;
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                  ::pread(fd, head, sizeof head, 0) == static_cast<ssize_t>(sizeof head) &&
                  std::memcmp(head, kWalMagic, 8) == 0 && get_u32(head + 8) == kWalVersion &&
                  get_u32(head + 56) == wal_crc(head, 56) && get_u64(head + 40) == db.dev &&
                  get_u64(head + 48) == db.ino;
  ::close(fd);
  return ok;
}

// The log of the file open on `db_fd` (rules at the top of page/wal.h): the one its
// attribute names if that is a log this very file started, else its own name's.
std::string locate_log(int db_fd, const std::string& db_path, const DbIdentity& db) {
  const std::string own = own_log_path(db_path);
  if (db_fd < 0) return own;
  const std::string recorded = recorded_log_path(db_fd);
  if (recorded.empty() || same_file(recorded, own)) return own;
  return log_of_file(recorded, db) ? recorded : own;
}

// Records `log` (made absolute) as the file's log in its attribute, durably, unless it is
// recorded already. Without extended attributes, a file with several hard links is refused:
// its other names could not find this log.
void record_log_path(int db_fd, const std::string& db_path, const std::string& log) {
  const std::string abs = std::filesystem::absolute(log).lexically_normal().string();
  if (recorded_log_path(db_fd) == abs) return;
  if (::fsetxattr(db_fd, kLogAttribute, abs.data(), abs.size(), 0) != 0) {
    const int e = errno;
    if (e == ENOTSUP || e == EOPNOTSUPP) {
      struct stat st;
      if (::fstat(db_fd, &st) == 0 && st.st_nlink > 1) {
        throw IoError(fmt::format("{}: the file has {} names (hard links) and its file system "
                                  "keeps no extended attributes to lead them to one log: "
                                  "refused; write it where it has one name",
                                  db_path, st.st_nlink),
                      e, "fsetxattr", db_path);
      }
      return;
    }
    throw IoError(fmt::format("{}: cannot record where its log is: {}", db_path, std::strerror(e)),
                  e, "fsetxattr", db_path);
  }
  if (::fsync(db_fd) != 0) {
    throw IoError(fmt::format("{}: fsync: {}", db_path, std::strerror(errno)), errno, "fsync",
                  db_path);
  }
}

// Moves `log` to the first free "<log>.aside-N" (never replacing a file) and syncs the
// directory; returns the new name. Throws IoError.
std::string set_aside(Io& io, const std::string& log) {
  for (int n = 1; n < 10000; ++n) {
    const std::string to = fmt::format("{}.aside-{}", log, n);
    int rc = ::renameat2(AT_FDCWD, log.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      rc = ::link(log.c_str(), to.c_str());
      if (rc == 0) ::unlink(log.c_str());
    }
    if (rc == 0) {
      sync_directory(io, log);
      return to;
    }
    if (errno != EEXIST) break;
  }
  throw IoError(fmt::format("{}: cannot set the log aside: {}", log, std::strerror(errno)), errno,
                "rename", log);
}

// The refusal of a log whose header cannot be read but whose frames may be committed
// (WalScan::header_damaged): nothing is reset, replayed or removed.
CorruptError damaged_log_error(const std::string& log, const std::string& db_path,
                               const WalScan& s) {
  return CorruptError(fmt::format("{}: {}: left alone; move it away to open {} without them", log,
                                  s.header_problem, db_path),
                      log, -1, "log header");
}

// True if a log whose header is damaged (WalScan::header_damaged, of a known version) holds
// nothing the db file lacks: no committed batch can be read after the header, or every page
// image of its committed batches equals that page of the file byte for byte (a reset torn by
// a crash after its checkpoint had synced the file). Throws IoError for a failing read.
bool damaged_log_in_file(Io& io, int log_fd, int db_fd, const std::string& log,
                         const std::string& db_path, const WalScan& s) {
  if (s.version < kWalVersion1 || s.version > kWalVersion || s.page_size == 0) return false;
  std::vector<uint8_t> logged(s.page_size), stored(s.page_size);
  for (const auto& [page_no, f] : s.committed) {
    if (!read_all(io, log_fd, logged.data(), s.page_size, f.offset + kWalFrameHeaderSize, log) ||
        !read_all(io, db_fd, stored.data(), s.page_size, uint64_t{page_no} * s.page_size,
                  db_path) ||
        logged != stored) {
      return false;
    }
  }
  return true;
}

// A damaged log header (WalScan::header_damaged) in front of the db file's log: throws
// damaged_log_error (closing `log_fd`) unless the log holds nothing the file lacks; then the
// scan is made that of an empty log, so the caller resets it (writer) or ignores it (reader).
void judge_damaged_log(Io& io, int log_fd, int db_fd, const std::string& log,
                       const std::string& db_path, WalScan& s, const char* action) {
  bool in_file = false;
  try {
    in_file = damaged_log_in_file(io, log_fd, db_fd, log, db_path, s);
  } catch (...) {
    io.close(log_fd);
    throw;
  }
  if (!in_file) {
    io.close(log_fd);
    throw damaged_log_error(log, db_path, s);
  }
  if (s.batches > 0) {
    warn(log, "the log header fails its checksum; every page it commits is in the file already",
         action);
  }
  s.batches = 0;
  s.committed.clear();
  s.committed_frames = 0;
  s.tail_frames = 0;
  s.problem.clear();
}

}  // namespace

std::string Wal::log_path(const std::string& db_path) {
  return db_path + "-wal";
}

bool Wal::is_log_name(const std::string& name) {
  const std::string base = std::filesystem::path(name).filename().string();
  return (base.size() >= 4 && base.compare(base.size() - 4, 4, "-wal") == 0) ||
         base.find("-wal.") != std::string::npos;
}

void Wal::clear_orphan_log(Io& io, const std::string& db_path) {
  const std::string path = own_log_path(db_path);
  const int fd = open_log(io, path, false, false);
  if (fd < 0) return;
  WalScan s;
  try {
    s = scan_log(io, fd, path, 0);
  } catch (...) {
    io.close(fd);
    throw;
  }
  io.close(fd);
  if (s.foreign) {
    throw IoError(fmt::format("{}: not a pbtree log ({} bytes): left alone; move it away to "
                              "write {}",
                              path, s.size, db_path),
                  0, "open", path);
  }
  if (s.batches > 0 && s.db_ino != 0) {
    // The file that wrote the log may live on under another name in the same directory (a
    // rename, a hard link): its committed changes are still its own, reached through the
    // log path its attribute records. Setting the log aside would hide them from it.
    const std::filesystem::path dir = std::filesystem::path(db_path).parent_path();
    std::error_code ec;
    for (const auto& entry :
         std::filesystem::directory_iterator(dir.empty() ? std::filesystem::path(".") : dir, ec)) {
      struct stat st;
      if (::stat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
          uint64_t(st.st_dev) != s.db_dev || uint64_t(st.st_ino) != s.db_ino) {
        continue;
      }
      // The inode number may have been reused by an unrelated file: the file id in its
      // header must be the log's too.
      const int fd = io.open(entry.path().string(), O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
      if (fd < 0) continue;
      DbIdentity id;
      try {
        id = read_db_identity(io, fd, entry.path().string());
      } catch (...) {
      }
      io.close(fd);
      if (id.pbtree && id.file_id == s.file_id) {
        throw IoError(fmt::format("{}: holds committed changes of {} (the file that wrote it, "
                                  "under another name): open that file to fold them in, or "
                                  "move the log away; nothing created",
                                  path, entry.path().string()),
                      0, "open", path);
      }
    }
  }
  if (s.batches > 0 || s.header_damaged) {
    const std::string aside = set_aside(io, path);
    warn(path,
         s.header_damaged ? "log left without its file, " + s.header_problem
                          : std::string("log left without its file"),
         ("not replayed, set aside as " + aside).c_str());
  } else if (io.unlink(path) == 0) {
    warn(path, "log left without its file", "removed");
  }
}
int Wal::open_log(Io& io, const std::string& path, bool writable, bool create) {
  // A regular file only: never follow a symbolic link, never block on a FIFO.
  const int flags =
      (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (create ? O_CREAT : 0);
  int fd = io.open(path, flags, 0644);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    if (create && (errno == EACCES || errno == EROFS || errno == EPERM)) {
      const size_t slash = path.rfind('/');
      throw IoError(fmt::format("{}: cannot create the log: {}; the directory {} must be "
                                "writable for the log",
                                path, errno_text(),
                                slash == std::string::npos ? "." : path.substr(0, slash + 1)),
                    errno, "open", path);
    }
    if (errno == ELOOP) {
      throw IoError(fmt::format("{}: the log is a symbolic link: refused", path), ELOOP, "open",
                    path);
    }
    throw IoError(fmt::format("{}: cannot open: {}", path, errno_text()), errno, "open", path);
  }
  if (!io.is_regular(fd)) {
    io.close(fd);
    throw IoError(fmt::format("{}: the log is not a regular file: refused", path), 0, "open", path);
  }
  return fd;
}

void Wal::adopt(const WalScan& s) {
  salt_ = s.salt;
  header_size_ = s.header_size;
  committed_ = s.committed;
  committed_count_ = s.committed_frames;
  committed_end_ = s.committed_end;
  end_ = s.committed_end;
  recovery_.log_found = true;
  recovery_.pages = static_cast<uint32_t>(s.committed.size());
  recovery_.frames = s.committed_frames;
  recovery_.checkpoint = s.counter;
  base_ = s.base;
  last_counter_ = s.batches > 0 ? s.counter : s.base;
}

std::unique_ptr<Wal> Wal::open_writer(Io& io, int db_fd, const std::string& db_path,
                                      const DbIdentity& db, bool create, WalRecovery& recovery) {
  recovery = WalRecovery{};
  const std::string own = own_log_path(db_path);
  const std::string path = locate_log(db_fd, db_path, db);
  int fd = open_log(io, path, true, false);
  bool existed = fd >= 0;
  WalScan s;
  try {
    if (existed) s = scan_log(io, fd, path, db.page_size);
  } catch (...) {
    io.close(fd);
    throw;
  }
  if (existed && s.foreign) {
    io.close(fd);
    throw IoError(fmt::format("{}: not a pbtree log ({} bytes): left alone; move it away to "
                              "write {}",
                              path, s.size, db_path),
                  0, "open", path);
  }
  if (existed && s.header_damaged) {
    judge_damaged_log(io, fd, db_fd, path, db_path, s, create ? "reset" : "removed");
  }
  const uint32_t page_size = db.page_size != 0 ? db.page_size : s.page_size;
  std::string why = existed ? wal_rejection(s, db) : std::string("new");
  if (existed && !why.empty() && (s.batches > 0 || (!s.header_ok && !s.problem.empty()))) {
    // Committed batches (or a log) that do not fit this file: kept under another name,
    // never replayed.
    io.close(fd);
    fd = -1;
    existed = false;
    const std::string aside = set_aside(io, path);
    warn(path, why, ("not replayed, set aside as " + aside).c_str());
    recovery.log_found = true;
    recovery.stale = true;
    recovery.discarded = s.tail_frames;
    if (!create) return nullptr;
  }
  if (!existed) {
    if (!create) return nullptr;
    record_log_path(db_fd, db_path, path);
    fd = open_log(io, path, true, true);
    if (fd < 0) throw IoError(fmt::format("{}: cannot create: {}", path, errno_text()));
  }
  std::unique_ptr<Wal> wal(new Wal(io, db_fd, db_path, path, fd, page_size, true));
  wal->file_id_ = db.file_id;
  wal->db_dev_ = db.dev;
  wal->db_ino_ = db.ino;
  wal->base_ = wal->last_counter_ = db.counter;
  std::lock_guard lock(wal->mutex_);
  if (existed && why.empty()) {
    if (!s.problem.empty()) warn(path, s.problem, "the log is used up to the commit before it");
    wal->adopt(s);
    wal->recovery_.discarded = s.tail_frames;
    if (s.size > s.committed_end) wal->truncate_tail_locked();
    // Logs of versions 1 and 2 hold one batch: fold them in before appending (waiting for
    // readers).
    const bool one_batch = s.version < kWalVersion3;
    const int wait = one_batch ? std::max(default_busy_timeout_ms(), 1000) : 0;
    if (wal->checkpoint_locked(wait, !create)) {
      wal->recovery_.replayed = true;
    } else {
      if (one_batch) {
        throw LockedError(
            fmt::format("{}: readers hold snapshots of a version {} log", db_path, s.version),
            db_path);
      }
      wal->recovery_.deferred = true;
      if (path == own) record_log_path(db_fd, db_path, path);
    }
    recovery = wal->recovery_;
    if (!create && wal->recovery_.replayed) {
      wal->writable_ = false;  // checkpointed and removed: nothing left to close
      return nullptr;
    }
    return wal;
  }
  if (existed) {
    recovery.log_found = true;
    recovery.discarded = s.tail_frames;
    if (s.batches > 0 || !s.problem.empty()) {
      warn(path, why, create ? "not replayed, reset" : "not replayed, removed");
    }
  }
  wal->recovery_ = recovery;
  if (!create) {
    // Nothing committed (a torn or empty log of ours): readers ignore it too, so it can go
    // without the locks.
    io.close(fd);
    wal->log_fd_ = -1;
    wal->writable_ = false;
    io.unlink(path);
    return nullptr;
  }
  if (page_size == 0) throw UsageError(fmt::format("{}: page size not known", db_path));
  if (existed && path == own) record_log_path(db_fd, db_path, path);
  wal->reset_locked();
  if (!existed) sync_directory(io, path);
  return wal;
}

std::unique_ptr<Wal> Wal::open_snapshot(Io& io, int db_fd, const std::string& db_path,
                                        const DbIdentity& db) {
  const std::string path = locate_log(db_fd, db_path, db);
  int fd = open_log(io, path, false, false);
  if (fd < 0) return nullptr;
  WalScan s;
  try {
    s = scan_log(io, fd, path, db.page_size);
  } catch (...) {
    io.close(fd);
    throw;
  }
  if (s.foreign) {
    warn(path, fmt::format("not a pbtree log ({} bytes)", s.size), "left alone, not read");
    io.close(fd);
    return nullptr;
  }
  if (s.header_damaged) {
    judge_damaged_log(io, fd, db_fd, path, db_path, s, "ignored");
    io.close(fd);
    return nullptr;
  }
  const std::string why = wal_rejection(s, db);
  if (!why.empty()) {
    if (s.batches > 0 || !s.problem.empty()) warn(path, why, "ignored");
    io.close(fd);
    return nullptr;
  }
  if (!s.problem.empty()) warn(path, s.problem, "the log is used up to the commit before it");
  std::unique_ptr<Wal> wal(new Wal(io, -1, db_path, path, fd, s.page_size, false));
  wal->file_id_ = s.file_id;
  wal->adopt(s);
  return wal;
}

}  // namespace pbtree
