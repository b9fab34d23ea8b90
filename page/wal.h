// The write-ahead log of a pbtree file: redo of full page images in the side file
// "<db>-wal", in SQLite's WAL terms: a *commit* appends the changed pages' images and a commit
// record to the log and syncs the log (the commit point); a *checkpoint* copies the newest
// committed image of every page into the db file, syncs it and empties the log. Between
// checkpoints no byte of the db file below the committed page count changes, so readers
// that hold a snapshot (page/file_lock.h) read the file plus the log frames up to the last
// commit record they saw, while the one writer appends behind them.
//
// Writer: page writes (buffer pool evictions, the pages of a commit) append the image as an
// uncommitted frame, or overwrite the frame the page already has in the open batch (never a
// committed frame: readers may be using it). commit(): header page image + commit record,
// fdatasync(log). Before the first frame of a new batch, at close and on request the writer
// tries a checkpoint: it takes the gate and readers lock bytes exclusively without waiting
// (checkpoint(wait_ms) may wait); if a reader holds a snapshot the checkpoint is deferred and
// the log keeps growing, one batch per commit. A checkpoint writes the committed pages in
// ascending page order, fdatasync(db), then resets the log (new salt, truncate to the header,
// fdatasync(log)). Replaying is idempotent (whole pages), so a crash anywhere leaves the file
// plus its log at the last commit.
//
// Log file layout (integers little-endian; CRC = CRC-32C, Castagnoli, reflected,
// init/xorout FFFFFFFF, as the page checksums):
//
//   Log header, 64 bytes at offset 0 (log format version 4):
//     off size field
//       0    8 magic "PBTWAL\r\n" (50 42 54 57 41 4C 0D 0A)
//       8    4 log format version: 4 (3: 40-byte header, bytes 0..31 as here, CRC at 32;
//              2: the same, one batch at most; 1: 32-byte header, no file id)
//      12    4 page size of the db file (bytes)
//      16    8 salt: random, new at every reset of the log; frames carry it
//      24    8 file id: the identity of the db file the log belongs to (bytes 80..87 of
//              its header page, page/file_header.h; 0 for a file that has none)
//      32    8 base commit: the db file's commit counter when the log was started or reset;
//              the first batch is the commit after it. The log is replayed only onto a file
//              at its base commit (or at its last commit: a checkpoint cut short)
//      40    8 st_dev of the db file that started the log
//      48    8 st_ino of the db file that started the log (with st_dev: which file a log
//              named by the file's "user.pbtree.log" attribute belongs to, below)
//      56    4 CRC of bytes 0..55
//      60    4 zero
//   Version 1 logs: bytes 0..23 as above (version 1), 24 CRC of bytes 0..23, 28 zero; frames
//   start at offset 32; file id 0. Versions 2 and 3: frames start at offset 40, no base
//   commit (replayed unless older than the file). Versions 1 to 3 are still read; this build
//   writes version 4.
//
//   Where the log is: "<db>-wal" beside the name the file was opened by (the target's name
//   when that name is a symbolic link), unless the file's extended attribute
//   "user.pbtree.log" (its bytes: the log's absolute path, no terminating zero) names an
//   existing version 4 log whose bytes 40..55 are this file's st_dev and st_ino: then that
//   one, whatever name opened the file (hard links, bind mounts). A writer that starts a log
//   records its absolute path there and fsyncs the file first. Without extended attributes
//   a file with several hard links is refused for writing.
//
//   Then batches, back to back: each is frames followed by one commit record.
//   Frame (page image), 24 + page_size bytes:
//       0    4 kind: 1 (page image)
//       4    4 page number
//       8    8 salt (the log header's)
//      16    4 CRC of bytes 0..15 followed by the page_size image bytes
//      20    4 zero
//      24  ps the page image, as it goes into the db file (its own checksum and page number
//              stamped; both are checked before the frame is accepted)
//
//   Commit record, 40 bytes right after the last frame of its batch:
//       0    4 kind: 2 (commit)
//       4    4 frame count n of the batch (distinct pages; a page has one frame per batch)
//       8    8 salt
//      16    8 commit number (the header page's commit counter in this batch); strictly
//              increasing along the log
//      24    4 page count of the db file after the commit; every frame of the batch lies
//              below it
//      28    4 batch CRC: CRC of the n frame CRCs, 4 bytes each little-endian, frame order
//      32    4 CRC of bytes 0..31
//      36    4 zero
//
// The committed state of a log is every batch up to the first frame or record that is
// torn, carries another salt, has a bad CRC, or breaks a rule above; the newest frame of a
// page in it wins. Anything after is an uncommitted tail: ignored by readers, cut off by
// the writer. A header that cannot be read (bad CRC, unknown version) with bytes after it is
// refused by every open (CorruptError) unless every page its committed frames hold is in the
// file already (a torn reset). Recovery checks and the verdict per case: page/wal_scan.h,
// docs/FORMAT.md §3.
//
// Errors: an I/O error anywhere in a commit or checkpoint leaves the file plus log at the
// previous commit after reopen. The Wal then refuses every further read, write and commit
// (IoError "...: the log failed earlier (...); reopen the file"). A frame that cannot be
// written (e.g. ENOSPC) cuts the uncommitted tail off at once (truncate to the last commit
// record, fdatasync), so the space it took is given back.
#pragma once

#include <pbtree/stats.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "page/io.h"
#include "page/wal_scan.h"

namespace pbtree {

/// The log of one db file, opened by its writer or as a reader's snapshot. Thread-safe (one
/// internal mutex); the db descriptor (and its locks) is borrowed.
class Wal {
 public:
  /// "<db_path>-wal" (the log's name when the file has no other; see the top of this file).
  static std::string log_path(const std::string& db_path);
  /// Where a pbtree file "<db_path>" keeps a log that is not its own when the file is gone
  /// (PageFile::create, create_file_with): a log there without committed batches is removed;
  /// one with committed batches whose file still lives in the same directory under another
  /// name (a rename, a hard link: same st_dev, st_ino and file id) is refused (IoError "<log>:
  /// holds committed changes of <file> ..."), else set aside ("<log>.aside-N", warning on
  /// stderr); a file that is not a pbtree log is left alone (IoError "<log>: not a pbtree log
  /// (N bytes): left alone; move it away to write <db>"). Throws IoError.
  static void clear_orphan_log(Io& io, const std::string& db_path);
  /// True if `name` ends in "-wal" or holds "-wal.": where logs and set-aside logs live.
  static bool is_log_name(const std::string& name);

  /// Writer (the caller holds the writer lock on `db_fd`): opens the file's log (where: top
  /// of this file; regular file only: O_NOFOLLOW | O_NONBLOCK, then fstat), checks it
  /// (wal_rejection) and either checkpoints its committed batches into the db file, if no
  /// reader holds a snapshot, or adopts them and cuts off the uncommitted tail. A log whose
  /// committed batches may not be used is set aside as "<log>.aside-N" (never replayed, never
  /// deleted; warning "pbtree: warning: <log>: <why>: not replayed, set aside as <new
  /// name>" on stderr); one with nothing committed is reset. A file there that is not a
  /// pbtree log is left alone: IoError "<log>: not a pbtree log (N bytes): left alone; move
  /// it away to write <db>". Without a log: creates one if `create`, else returns nullptr.
  /// Returns nullptr too when the log was checkpointed and removed and `create` is false.
  /// `recovery` receives what was found. Throws IoError.
  static std::unique_ptr<Wal> open_writer(Io& io, int db_fd, const std::string& db_path,
                                          const DbIdentity& db, bool create, WalRecovery& recovery);
  /// Reader (the caller holds the readers lock on `db_fd`): a Wal serving the committed
  /// frames of the file's log as they are now (read() only), or nullptr if there is no log
  /// or it holds nothing usable (a rejected log, or a file that is not a log, is ignored with
  /// a warning). Throws IoError (e.g. the log path is a symbolic link, a FIFO or a directory).
  static std::unique_ptr<Wal> open_snapshot(Io& io, int db_fd, const std::string& db_path,
                                            const DbIdentity& db);

  ~Wal();
  Wal(const Wal&) = delete;
  Wal& operator=(const Wal&) = delete;

  const std::string& path() const { return log_path_; }
  uint32_t page_size() const { return page_size_; }
  const WalRecovery& recovery() const { return recovery_; }
  bool writable() const { return writable_; }

  /// If page `page_no` has a frame (writer: committed or not; snapshot: committed up to the
  /// snapshot), copies its image into `out` (page_size bytes) and returns true. Throws IoError.
  bool read(uint32_t page_no, uint8_t* out);
  /// Appends the image of page `page_no` (page_size bytes, checksum already stamped) as an
  /// uncommitted frame, or overwrites the page's frame in the open batch. The first frame of
  /// a batch is preceded by a checkpoint attempt (without waiting). Throws IoError,
  /// ReadOnlyError.
  void append(uint32_t page_no, const uint8_t* image);
  /// Highest page number with a frame, plus one; 0 if none.
  uint32_t page_bound() const;
  /// Pages with an uncommitted frame.
  uint32_t pending_pages() const;
  /// Frames of committed batches not yet checkpointed.
  uint32_t committed_frames() const;
  /// Bytes of the log (header included) as this object knows it.
  uint64_t size() const;

  /// Commit `commit_no`: calls `fill_header(stats, page)` with what this commit will cost
  /// (the header page counted) to fill the header page (page 0; page number and checksum
  /// are stamped here) and logs it (no header if fill_header is empty); appends the commit
  /// record with `db_page_count`; fdatasync(log), the commit point and last I/O. Returns the
  /// stats. Throws IoError (see the error rules at the top), ReadOnlyError.
  CommitStats commit(uint64_t commit_no, uint32_t db_page_count,
                     const std::function<void(const CommitStats&, uint8_t*)>& fill_header);
  /// Checkpoint (writer, no open batch): waits up to `wait_ms` ms for readers to drop their
  /// snapshots (retrying; new readers never wait meanwhile: the gate is held only for each
  /// try), then writes the committed pages into the db file,
  /// fdatasync(db), and resets the log. Returns false if readers still hold snapshots
  /// (deferred; nothing changed), true if done or there was nothing to do. Throws IoError
  /// (the log keeps its batches for the next open), UsageError (uncommitted frames).
  bool checkpoint(int wait_ms = 0);
  /// True if the log holds committed batches not yet checkpointed.
  bool holds_committed_batch() const;
  /// Drops the uncommitted frames (truncate to the last commit record, fdatasync). Throws
  /// IoError.
  void rollback();
  /// Stats of the last commit of this session (zeros before the first).
  CommitStats last_commit() const;
  CommitStats last_checkpoint() const { return last_commit(); }
  /// Page numbers of the last commit's batch (header included), ascending.
  std::vector<uint32_t> last_commit_pages() const;
  std::vector<uint32_t> last_checkpoint_pages() const { return last_commit_pages(); }
  /// True after an I/O error (everything but the accessors then throws).
  bool failed() const;

 private:
  Wal(Io& io, int db_fd, std::string db_path, std::string log_path, int log_fd, uint32_t page_size,
      bool writable);
  static int open_log(Io& io, const std::string& path, bool writable, bool create);
  void check_usable() const;  // mutex held
  void fail(const std::string& what);
  void reset_locked();  // new salt, truncate, header, fdatasync; mutex held
  void write_frame_locked(uint32_t page_no, const uint8_t* image);
  // Takes the gate and readers bytes exclusively, retrying for up to wait_ms without holding
  // the gate between tries.
  bool lock_for_checkpoint(int wait_ms);
  // Copies committed frames into the db file and resets the log, if the locks can be had
  // within wait_ms; `remove_log` also unlinks the emptied log while still holding them.
  bool checkpoint_locked(int wait_ms, bool remove_log);
  void truncate_tail_locked();  // cut the log at committed_end_, fdatasync
  void adopt(const WalScan& s);

  Io& io_;
  int db_fd_ = -1;
  std::string db_path_;
  std::string log_path_;
  int log_fd_ = -1;
  uint32_t page_size_ = 0;
  bool writable_ = false;
  uint64_t salt_ = 0;
  uint64_t file_id_ = 0;                     // the db file's identity, in the log header
  uint64_t base_ = 0;                        // commit the log starts after (log header)
  uint64_t last_counter_ = 0;                // last commit in the log, else base_
  uint64_t db_dev_ = 0, db_ino_ = 0;         // the db file's st_dev, st_ino (log header)
  uint64_t header_size_ = kWalHeaderSize;    // 32 when serving a version 1 log
  std::map<uint32_t, WalFrame> committed_;   // page -> newest committed frame
  std::map<uint32_t, WalFrame> pending_;     // page -> its frame in the open batch
  std::vector<uint32_t> pending_crcs_;       // frame CRCs of the open batch, by position
  uint32_t committed_count_ = 0;             // frames in committed batches
  uint64_t committed_end_ = kWalHeaderSize;  // end of the last commit record
  uint64_t end_ = kWalHeaderSize;            // where the next frame goes
  WalRecovery recovery_;
  CommitStats last_;
  std::vector<uint32_t> last_pages_;
  std::string failure_;
  mutable std::mutex mutex_;
};

}  // namespace pbtree
