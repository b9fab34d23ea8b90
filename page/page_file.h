// One file of fixed-size pages, read and written whole with pread/pwrite, each page carrying
// the generic 16-byte page header (page/page_header.h, Firebird's `struct pag`).
//
// System calls go through an injectable Io (page/io.h; posix_io() by default). With the
// write-ahead log enabled (enable_wal(), page/wal.h) page writes go to "<db>-wal"; commit()
// commits them there, and they reach the file at the next checkpoint (before the next batch,
// at close, or when the file is next opened, each deferred while readers hold snapshots).
// Opening takes the file's locks (page/file_lock.h) and recovers or snapshots its log.
#pragma once

#include <pbtree/errors.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "page/io.h"
#include "page/page_header.h"
#include "page/wal.h"
#include "util/coding.h"

namespace pbtree {

/// A file of pages. Owns the descriptor. Not thread-safe for writes; reads (pread) may run
/// concurrently.
class PageFile {
 public:
  /// Opens an existing file (O_NONBLOCK, then fstat: a FIFO or device is refused with
  /// IoError "<path>: not a regular file" without blocking). Writable: O_RDWR, takes the
  /// writer lock (page/file_lock.h), waiting up to `busy_timeout_ms` (-1:
  /// default_busy_timeout_ms()), else LockedError; then recovers the file's log
  /// (Wal::open_writer: checkpointed if no reader holds a snapshot, else adopted).
  /// Read-only: O_RDONLY, takes a reader's snapshot (gate, then the readers lock, held
  /// until the PageFile is destroyed) and serves the log's committed frames
  /// (Wal::open_snapshot). The page size is not known here: callers read the header with
  /// read_raw() and then call set_page_size(). Throws IoError naming the path, LockedError.
  static PageFile open(const std::string& path, bool writable, Io& io = posix_io(),
                       int busy_timeout_ms = -1);
  /// Creates a new file; throws IoError if it exists (O_EXCL) or cannot be created. A log
  /// "<path>-wal" left without its file cannot belong to the new one: Wal::clear_orphan_log
  /// (removed; set aside if it holds commits; IoError if they belong to the same file under
  /// another name, or if it is not a log).
  static PageFile create(const std::string& path, uint32_t page_size, Io& io = posix_io());

  PageFile(PageFile&&) noexcept;
  PageFile& operator=(PageFile&&) noexcept;
  PageFile(const PageFile&) = delete;
  ~PageFile();

  const std::string& path() const { return path_; }
  uint32_t page_size() const { return page_size_; }
  void set_page_size(uint32_t page_size) { page_size_ = page_size; }
  /// File size in bytes (fstat); with a log, at least up to the last page it holds.
  uint64_t file_size() const;

  /// Reads page `page_no` into `out` and verifies checksum, self page number and, unless
  /// `expected` is 0, the page type. Throws IoError (short read: "truncated file"),
  /// CorruptError ("<path>: page 12 (b-tree): checksum mismatch").
  /// Readahead: the descriptor is opened with POSIX_FADV_RANDOM (the kernel's own readahead
  /// would read megabytes around every random page); instead, once kSequentialRun reads from
  /// the file in a row each land at most kSequentialGap pages after the one before (a scan
  /// along a leaf chain that bulk building laid out in page order), the next
  /// kReadaheadBytes are asked for with POSIX_FADV_WILLNEED, again each time the scan is
  /// half-way through the window. Thread-safe (the run state is advisory, relaxed atomics).
  void read(uint32_t page_no, uint8_t* out, uint8_t expected_type = 0) const;
  static constexpr uint32_t kSequentialRun = 3;
  static constexpr uint32_t kSequentialGap = 4;
  static constexpr uint32_t kReadaheadBytes = 512 * 1024;
  /// Reads `length` bytes at `offset` with no checks (the header before the size is known).
  void read_raw(uint64_t offset, uint8_t* out, size_t length) const;
  /// Stamps page number and checksum into `page` (modifies bytes 4..7 and 12..15) and writes
  /// it. Throws IoError.
  void write(uint32_t page_no, uint8_t* page);
  /// Like write() but always into the file itself, bypassing the log: only for pages that
  /// no committed page refers to (new pages beyond the committed page count). Throws IoError.
  void write_direct(uint32_t page_no, uint8_t* page);
  /// write_direct of a page stamp() has prepared (maybe on another thread). Throws IoError.
  void write_direct_stamped(uint32_t page_no, const uint8_t* page) { pwrite_page(page_no, page); }
  /// What write_direct sets in a page before writing it: the page number (bytes 12..15) and
  /// the checksum (bytes 4..7, page/page_header.h). Thread-safe (touches only `page`).
  void stamp(uint32_t page_no, uint8_t* page) const;
  /// fdatasync of the file itself. Throws IoError.
  void sync();
  /// ftruncate of the file itself to `pages` pages. Throws IoError.
  void truncate(uint32_t pages);

  /// Starts the write-ahead log (Wal::open: creates or resets "<path>-wal"); from now on
  /// write() goes to the log. Needs a writable file with its page size set. Throws IoError.
  void enable_wal();
  /// The log, or nullptr (not enabled; read-only overlay of a committed batch otherwise).
  Wal* wal() const { return wal_.get(); }
  /// Wal::commit. Throws UsageError if the log is not enabled, IoError.
  CommitStats commit(uint64_t commit_no, uint32_t page_count,
                     const std::function<void(const CommitStats&, uint8_t*)>& fill_header);
  /// What opening recovered from the log (writable opens).
  const WalRecovery& recovery() const { return recovery_; }
  /// The file id stored in the header page in the file itself (kFileIdOffset), or 0 if the
  /// file is too short or bytes 16..23 are not the pbtree magic. Throws IoError.
  uint64_t file_id() const;
  Io& io() const { return *io_; }

 private:
  PageFile(Io& io, int fd, std::string path, uint32_t page_size);
  DbIdentity identity() const;
  void pwrite_page(uint32_t page_no, const uint8_t* page);
  // Counts a read of `page_no` from the file into the sequential run and asks for the
  // window ahead when the run is long enough (see read()).
  void note_file_read(uint32_t page_no) const;
  Io* io_ = nullptr;
  int fd_ = -1;
  std::string path_;
  uint32_t page_size_ = 0;
  std::unique_ptr<Wal> wal_;
  WalRecovery recovery_;
  // Readahead state (std::atomic_ref, relaxed): the last page read from the file, the
  // length of the sequential run ending there, and the first page not yet asked for.
  mutable uint32_t last_read_ = UINT32_MAX;
  mutable uint32_t run_ = 0;
  mutable uint32_t ahead_until_ = 0;
};

}  // namespace pbtree
