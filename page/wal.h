// The write-ahead log of a pbtree file: redo of full page images in the side file
// "<db>-wal" (as SQLite's WAL). Between checkpoints no byte of the db file changes: every
// page write (buffer pool evictions and flushes) appends the page's image to the log as an
// uncommitted frame, or overwrites the frame the page already has in the log, and reads of
// such a page come from the log (a page number -> frame map).
//
// A checkpoint is: (1) if the log still holds the previous checkpoint's committed batch,
// apply it (its pages in place in the db file, fdatasync(db), empty the log: new salt,
// truncate, header, fdatasync(log)); (2) append the header page's image and a commit record;
// (3) fdatasync(log), the commit point and the checkpoint's last I/O. The committed batch
// stays in the log, its pages served from there, until it is applied: before the next frame
// is appended (the next eviction or checkpoint), when the file is closed, or by recovery at
// the next open. So any I/O call of a checkpoint that fails leaves the previous checkpoint:
// a failure in (1) leaves the previous batch committed in the log (replayed at open, which is
// idempotent: the images are whole pages), one in (2) or (3) an uncommitted batch, which is
// invalidated (commit record zeroed, log truncated, best effort) and in any case dropped at
// open. Opening a file replays a log holding a complete, checksummed batch and drops anything
// else, so the db file always equals its last completed checkpoint. Closing a writable file
// applies a committed batch and removes the emptied log.
//
// Log file layout (integers little-endian; CRC = CRC-32C, Castagnoli, reflected,
// init/xorout FFFFFFFF, as the page checksums):
//
//   Log header, 40 bytes at offset 0 (log format version 2):
//     off size field
//       0    8 magic "PBTWAL\r\n" (50 42 54 57 41 4C 0D 0A)
//       8    4 log format version: 2
//      12    4 page size of the db file (bytes)
//      16    8 salt: random, new at every reset of the log; frames carry it
//      24    8 file id: the identity of the db file the log belongs to (bytes 80..87 of
//              its header page, page/file_header.h; 0 for a file that has none)
//      32    4 CRC of bytes 0..31
//      36    4 zero
//   Version 1 logs (older builds) have a 32-byte header: bytes 0..23 as above (version 1),
//   24 CRC of bytes 0..23, 28 zero; their frames start at offset 32 and they carry file id 0.
//   They are still read (and replayed into a file whose id is 0); this build writes version 2.
//
//   Frame i (page image), 24 + page_size bytes at offset H + i × (24 + page_size), H the
//   header size (40; 32 in a version 1 log):
//       0    4 kind: 1 (page image)
//       4    4 page number
//       8    8 salt (the log header's)
//      16    4 CRC of bytes 0..15 followed by the page_size image bytes
//      20    4 zero
//      24  ps the page image, as it goes into the db file (its own checksum stamped)
//
//   Commit record, 40 bytes right after the last frame of the batch:
//       0    4 kind: 2 (commit)
//       4    4 frame count n of the batch (distinct pages; a page has one frame)
//       8    8 salt
//      16    8 checkpoint number (the header page's checkpoint counter in this batch)
//      24    4 page count of the db file after the checkpoint
//      28    4 batch CRC: CRC of the n frame CRCs, 4 bytes each little-endian, frame order
//      32    4 CRC of bytes 0..31
//      36    4 zero
//
// A log is "committed" when its header is valid, frames 0..n-1 all carry the salt and a
// good CRC, and the commit record that follows them has a good CRC, the salt, count n and the
// batch CRC. Anything else (no commit record, a torn frame, a stale salt, garbage) is an
// uncommitted batch and is discarded at open. A committed log whose file id differs from the
// db file's is *stale* (left behind by another file of that name, e.g. one deleted after a
// failed in-place write): it is never replayed; a writable open removes it, a read-only open
// ignores it, each with a warning on stderr. Creating a new db file removes any log of that
// name first (PageFile::create). The log holds one batch at most: it is emptied
// after every checkpoint and recovery.
//
// Errors: an I/O error anywhere in a checkpoint (or in applying a committed batch before an
// append) leaves the db at the previous checkpoint after reopen (see above). The Wal then
// refuses every further read, write and checkpoint (IoError "...: the log failed earlier
// (...); reopen the file"): the caller's cached pages no longer match any file state.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pbtree/stats.h>

#include "page/io.h"

namespace pbtree {

inline constexpr uint8_t kWalMagic[8] = {0x50, 0x42, 0x54, 0x57, 0x41, 0x4C, 0x0D, 0x0A};
inline constexpr uint32_t kWalVersion = 2;
inline constexpr size_t kWalHeaderSize = 40;
inline constexpr uint32_t kWalVersion1 = 1;
inline constexpr size_t kWalHeaderSizeV1 = 32;
inline constexpr size_t kWalFrameHeaderSize = 24;
inline constexpr size_t kWalCommitSize = 40;

/// The log of one db file. Thread-safe (one internal mutex); the db descriptor is borrowed.
class Wal {
 public:
  /// "<db_path>-wal".
  static std::string log_path(const std::string& db_path);

  /// Crash recovery for a writable open: if "<db>-wal" holds a committed batch of the file
  /// `file_id` (the db file's identity, PageFile::file_id()), writes its pages into `db_fd`
  /// and fdatasyncs it; then empties the log (length 0, fdatasync) and removes it. A
  /// committed batch of another file id is stale: not replayed, removed with a warning on
  /// stderr ("pbtree: warning: <log>: ..."). No log: nothing. Throws IoError.
  static WalRecovery recover(Io& io, int db_fd, const std::string& db_path, uint64_t file_id);
  /// For a read-only open: a Wal serving the pages of a committed batch of file `file_id`
  /// still in the log (read() only), or nullptr if there is none (a stale batch of another
  /// file id is ignored with a warning on stderr). Throws IoError.
  static std::unique_ptr<Wal> overlay(Io& io, const std::string& db_path, uint64_t file_id);
  /// Opens (creating if missing) the log of a writable db for new batches; recovers first as
  /// recover() does, then resets the log (header with a new salt and `file_id`, fdatasync).
  /// `page_size` in bytes. Throws IoError.
  static std::unique_ptr<Wal> open(Io& io, int db_fd, const std::string& db_path,
                                   uint32_t page_size, uint64_t file_id);

  ~Wal();
  Wal(const Wal&) = delete;
  Wal& operator=(const Wal&) = delete;

  const std::string& path() const { return log_path_; }
  uint32_t page_size() const { return page_size_; }
  /// What the open found (open() only; overlay: what it serves).
  const WalRecovery& recovery() const { return recovery_; }

  /// If page `page_no` has a frame in the log, copies its image into `out` (page_size bytes)
  /// and returns true. Throws IoError.
  bool read(uint32_t page_no, uint8_t* out);
  /// Appends the image of page `page_no` (page_size bytes, checksum already stamped) as an
  /// uncommitted frame, or overwrites the page's frame. Throws IoError, UsageError (read-only).
  void append(uint32_t page_no, const uint8_t* image);
  /// Highest page number with a frame (committed or not), plus one; 0 if none.
  uint32_t page_bound() const;
  /// Pages with an uncommitted frame (the next checkpoint commits these, plus the header).
  uint32_t pending_pages() const;

  /// Checkpoint `checkpoint`: applies the previous committed batch if the log still holds it
  /// (apply()); calls `fill_header(stats, page)` with what this checkpoint will cost (the
  /// header page counted) to fill the header page (page 0; page_size bytes, page number and
  /// checksum are stamped here) and logs it (no header if fill_header is empty); appends the
  /// commit record with `db_page_count`; fdatasync(log), the last I/O. The batch stays in the
  /// log (committed) until the next append, checkpoint, apply() or close. Returns the stats.
  /// Throws IoError (see the error rules at the top).
  CheckpointStats checkpoint(
      uint64_t checkpoint, uint32_t db_page_count,
      const std::function<void(const CheckpointStats&, uint8_t*)>& fill_header);
  /// Writes a committed batch still in the log in place in ascending page order,
  /// fdatasync(db), then empties the log (new salt, truncate, header, fdatasync). Nothing
  /// if there is none. Throws IoError (the log keeps the batch for the next open).
  void apply();
  /// True if the log holds a committed batch not yet applied to the db file.
  bool holds_committed_batch() const;
  /// Drops the uncommitted frames (new salt, truncate, fdatasync); nothing if the log holds a
  /// committed batch (there are none then). Throws IoError.
  void rollback();
  /// Stats of the last checkpoint of this session (zeros before the first).
  CheckpointStats last_checkpoint() const;
  /// Page numbers of the last checkpoint's batch (header included), ascending.
  std::vector<uint32_t> last_checkpoint_pages() const;
  /// True after an I/O error (everything but the accessors then throws).
  bool failed() const;

 private:
  Wal(Io& io, int db_fd, std::string db_path, int log_fd, uint32_t page_size, bool writable);
  struct Frame {
    uint32_t index;  // position in the log
    uint32_t crc;    // frame CRC
  };
  uint64_t frame_offset(uint32_t index) const {
    return header_size_ + uint64_t{index} * (kWalFrameHeaderSize + page_size_);
  }
  void check_usable() const;  // mutex held
  void fail(const std::string& what);
  void reset_locked();  // new salt, truncate, header, fdatasync; mutex held
  CheckpointStats checkpoint_locked(
      uint64_t checkpoint, uint32_t db_page_count,
      const std::function<void(const CheckpointStats&, uint8_t*)>& fill_header);
  void append_locked(uint32_t page_no, const uint8_t* image);
  void apply_locked();  // committed_ must be true; mutex held (or in the destructor)

  Io& io_;
  int db_fd_ = -1;
  std::string db_path_;
  std::string log_path_;
  int log_fd_ = -1;
  uint32_t page_size_ = 0;
  bool writable_ = false;
  uint64_t salt_ = 0;
  uint64_t file_id_ = 0;                   // the db file's identity, in the log header
  uint64_t header_size_ = kWalHeaderSize;  // 32 when serving a version 1 log
  std::map<uint32_t, Frame> frames_;       // page number -> its frame
  bool committed_ = false;                 // frames_ are a committed batch not yet applied
  uint32_t frame_count_ = 0;
  std::vector<uint32_t> frame_crcs_;  // by frame index
  WalRecovery recovery_;
  CheckpointStats last_;
  std::vector<uint32_t> last_pages_;
  std::string failure_;
  mutable std::mutex mutex_;
};

}  // namespace pbtree
