// The public face of a pbtree file: create or open it (OpenOptions), list its indexes,
// bulk-build a new index from (key, record number) pairs, drive one index with normalized keys
// (Tree), commit, checkpoint, back up, and compute gstat statistics of an index.
// Layout of the file: docs/FORMAT.md.
#pragma once

#include <pbtree/cursor.h>
#include <pbtree/errors.h>
#include <pbtree/io.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>
#include <pbtree/stats.h>
#include <pbtree/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pbtree {

/// Entries to bulk-build from: key bytes (already normalized, any order) and record numbers,
/// plus a caller tag per entry (e.g. the input line) that errors report. Keys are stored
/// back to back in one arena.
class EntryBatch {
 public:
  /// Appends one entry. Throws UsageError if recno > kMaxRecordNumber.
  void add(std::span<const uint8_t> key, uint64_t recno, uint64_t tag);
  size_t size() const { return items_.size(); }
  /// Key bytes held (the arena's length).
  size_t key_bytes() const { return arena_.size(); }
  void reserve(size_t entries, size_t key_bytes);
  /// Appends every entry of `other` in its order (keys copied, `other` left empty).
  void append(EntryBatch&& other);
  /// Reorders the entries: entry i becomes the old entry order[i] (`order` a permutation of
  /// 0..size()-1), and lays the keys out in the new order (so walking the entries reads the
  /// keys sequentially). Parallel (oneTBB).
  void permute(const std::vector<uint64_t>& order);

  struct Item {
    uint64_t offset;  ///< into arena
    uint64_t recno;
    uint64_t tag;
    uint32_t length;
  };
  std::span<const uint8_t> key(const Item& item) const {
    return {arena_.data() + item.offset, item.length};
  }
  std::vector<Item>& items() { return items_; }
  const std::vector<Item>& items() const { return items_; }

 private:
  std::vector<uint8_t> arena_;
  std::vector<Item> items_;
};

/// One entry of a stream in index order (IndexFile::bulk_load_sorted): the key bytes stay
/// valid until the next call of SortedEntrySource::next().
struct SortedEntry {
  std::span<const uint8_t> key;
  uint64_t recno = 0;
  uint64_t tag = 0;  ///< the caller's tag (e.g. the input line), named in errors
};

/// Entries already in index order: key (compare_keys with the index's descending flag), then
/// record number, then tag. Used to bulk-build from more entries than fit in memory (sorted
/// runs merged from temporary files).
class SortedEntrySource {
 public:
  virtual ~SortedEntrySource() = default;
  /// Sets `entry` to the next entry and returns true, or returns false at the end. May throw;
  /// the build is then abandoned and the file left as it was.
  virtual bool next(SortedEntry& entry) = 0;
};

/// How IndexFile::open opens a file; designated initializers read well:
/// `IndexFile::open(path, {.writable = true, .busy_timeout_ms = 5000})`.
struct OpenOptions {
  /// The one writer of the file; otherwise a read-only snapshot of the last commit.
  bool writable = false;
  /// Writable: how long, in milliseconds, to wait while another writer (another process or
  /// another IndexFile here) holds the file, before LockedError. -1 (the default): 0, unless
  /// the CLI's --busy-timeout set the process default; 0: fail at once.
  int busy_timeout_ms = -1;
  /// Memory budget of the buffer pool in bytes (IndexFile::set_cache_bytes); 0: the default
  /// (64 MiB worth of frames).
  size_t cache_bytes = 0;
  /// Threads bulk_load builds leaf pages on (IndexFile::set_build_threads); 0: one per core.
  uint32_t build_threads = 0;
  /// Every system call goes through it (tests inject faults); nullptr: posix_io(). Must
  /// outlive the IndexFile.
  Io* io = nullptr;
};

class IndexFile;
struct IndexFileAccess;  // the library's own access to the state behind the handles

/// One index of an IndexFile, driven with normalized keys (<pbtree/keys.h> builds them;
/// TypedIndex in <pbtree/typed_index.h> does it from values). A cheap handle: copy it
/// freely; it stays valid until its IndexFile is destroyed or rolled back.
/// Threads: many concurrent readers (find, contains, scan) plus one writer (insert,
/// insert_batch, remove); IndexFile::commit() must not run concurrently with a writer.
/// Processes: those of IndexFile (docs/LIBRARY.md).
class Tree {
 public:
  /// Inserts (key, recno). Throws DuplicateKeyError (the pair exists, or in a unique index
  /// an equal non-NULL key exists), KeyError (key.size() >= page_size / 4), UsageError
  /// (recno > kMaxRecordNumber, or the tree would grow deeper than the format's 16 levels;
  /// checked before any page changes), ReadOnlyError (file opened read-only). The tree is
  /// unchanged on any error.
  void insert(std::span<const uint8_t> key, uint64_t recno);
  /// Inserts many entries at once (any order; sorted here): the leaves they fall into are
  /// rewritten once each, full as a bulk load fills pages. The same errors as insert(),
  /// checked for the whole batch before any page changes. Readers must not run concurrently
  /// with it. Returns the number of entries added.
  uint64_t insert_batch(EntryBatch& entries);
  /// Removes exactly (key, recno). Throws UsageError if absent, ReadOnlyError.
  void remove(std::span<const uint8_t> key, uint64_t recno);
  /// Record numbers of every entry whose key equals `key`, ascending. Throws CorruptError,
  /// IoError.
  std::vector<uint64_t> find(std::span<const uint8_t> key) const;
  /// The same into `out` (cleared first; its capacity is reused, so a lookup loop does not
  /// allocate).
  void find(std::span<const uint8_t> key, std::vector<uint64_t>& out) const;
  /// True if (key, recno) is in the index.
  bool contains(std::span<const uint8_t> key, uint64_t recno) const;
  /// A cursor over `range` (<pbtree/search.h>; empty: every entry), positioned on its first
  /// entry (check valid()).
  IndexCursor scan(ScanRange range = {}) const;
  /// Walks every level and checks the structure (page types, levels, key order in and
  /// across pages, sibling links, separators, jump nodes). Throws CorruptError naming the
  /// page. Not to be called concurrently with writes.
  TreeCheck verify() const;
  /// The current root page number.
  uint32_t root() const;
  /// The index's definition (name, type, key format, flags, layout).
  const IndexDefinition& definition() const;

  class Body;  ///< the library's B-tree behind the handle (not installed)

 private:
  friend class IndexFile;
  friend struct IndexFileAccess;
  explicit Tree(Body* body) : body_(body) {}
  Body* body_;
};

/// One pbtree file. Not thread-safe (one user at a time), except that the
/// Tree handles from tree() take many concurrent readers plus one writer.
class IndexFile {
 public:
  /// Opens `path`, creating it with `page_size` if it does not exist (under a temporary name
  /// moved into place, never over a file another process created meanwhile: that one is
  /// opened instead). page_size 0 means: the
  /// existing file's size, or kDefaultPageSize for a new file. Throws UsageError if the file
  /// exists with another page size or page_size is not in kPageSizes; IoError, CorruptError.
  static std::unique_ptr<IndexFile> open_or_create(const std::string& path, uint32_t page_size);
  /// Opens an existing file, recovering its write-ahead log "<path>-wal" first (a committed
  /// batch is replayed, anything else dropped; read-only opens read a committed batch from
  /// the log without writing). Writable opens start the log. Throws IoError (missing file),
  /// CorruptError, LockedError (options.writable and another writer kept the file past
  /// options.busy_timeout_ms), UsageError (a bad option).
  /// Writable: the one writer of the file. Read-only: a snapshot of the last commit, held
  /// until the object is destroyed (it defers checkpoints meanwhile).
  /// Processes, locks and the log: docs/LIBRARY.md, docs/FORMAT.md §3.
  static std::unique_ptr<IndexFile> open(const std::string& path, const OpenOptions& options = {});
  /// Rolls back what was not committed (the same whether the scope is left normally or by an
  /// exception), then closes; never throws. Call commit() or close() to keep changes.
  ~IndexFile();

  /// Commit: makes every change through tree() durable. The dirty pages, the index root page
  /// (if a root changed), the freed pages (as free-list pages) and the header go to the log
  /// with a commit record, and the log is synced: the commit point and the last I/O. The
  /// pages reach the file at the next checkpoint, close, or recovery at the next open.
  /// Nothing changed: nothing written. Must not run concurrently with inserts/removes.
  /// Throws IoError (the file must then be reopened and is at the previous commit),
  /// ReadOnlyError.
  void commit();
  /// Commits pending changes, tries a checkpoint (without waiting for readers) and closes the
  /// file, releasing its locks. Throws IoError if any of it fails (the file is then closed
  /// and, reopened, equals the last successful commit). Afterwards only the destructor may
  /// be called. A read-only file just closes.
  void close();
  /// Checkpoint: commits, then copies the committed log into the file and empties the log,
  /// so that the file alone is complete. Waits up to `wait_ms` ms for readers holding older
  /// snapshots; returns false if they still do (nothing changed), true when done. Throws
  /// IoError, ReadOnlyError.
  bool checkpoint(int wait_ms = 0);
  /// Writes a consistent copy of the last commit (this object's snapshot when read-only;
  /// a writer commits first) to the new file `dest` as one complete file without a log:
  /// through a temporary file in dest's directory, fsynced, then renamed without replacing
  /// (an existing dest is refused). Throws IoError, UsageError (dest exists).
  void backup(const std::string& dest);
  /// What opening found in the log.
  WalRecovery log_recovery() const;
  /// Frames of committed batches still only in the log (0: the file alone is complete).
  uint32_t log_committed_frames() const;
  /// The path of the file's log as opened: "<path>-wal" for the name the file was first
  /// opened by (beside a symbolic link's target), or the one recorded in the file when it is
  /// reached by another name (a hard link). Empty when no log is open.
  std::string log_path() const;

  const std::string& path() const;
  uint32_t page_size() const;
  /// Pages in the file, header and index root page included.
  uint32_t page_count() const;
  /// Pages on the persistent free list (header; pages freed in this session join it at the
  /// next checkpoint).
  uint32_t free_page_count() const;
  /// The free list from its head, in chain order, each page read and
  /// checked. Throws CorruptError: a page that is not a free page ("<path>: page 9: expected
  /// a free page, found a b-tree page"), a next pointer outside the file, a chain longer or
  /// shorter than the header's count (which also catches loops); IoError.
  std::vector<uint32_t> free_list() const;
  /// Every index, by slot order.
  std::vector<IndexInfo> indexes() const;
  /// The index named `name`, or nullopt.
  std::optional<IndexInfo> find_index(const std::string& name) const;
  /// The error for an index name this file does not hold, naming those it holds:
  /// NotFoundError "<path>: no index named X (indexes: A, B)" (slot order), or "<path>: no
  /// index named X (the file has no index)".
  NotFoundError no_index_error(const std::string& name) const;

  /// Builds a new index from `entries` (sorted here: parallel sort by (key, recno); each key
  /// must be a normalized key of def.type/def.format, shorter than page_size/4). Leaves and
  /// upper levels are filled as Firebird's fast_load (§2.4). Everything is checked before the
  /// file is touched; on any error the file is exactly as it was. New pages are written and
  /// synced first, then the index root page and header. Throws UsageError (name exists,
  /// bad name, key format not allowed), DuplicateKeyError, KeyError (key too long), IoError.
  IndexInfo bulk_load(const IndexDefinition& def, EntryBatch& entries);
  /// bulk_load() from entries that come already in index order, one at a time, so they
  /// need not fit in memory. The same checks and errors, but the order, the duplicates (the
  /// first adjacent pair in index order, as bulk_load reports it: DuplicateKeyError with both
  /// tags) and key lengths are checked as the entries stream in, while the new pages are
  /// written past the header's page count; on any error (the source's included) those pages
  /// are cut off again, so the file is byte-identical to before. Entries out of order:
  /// UsageError "bulk load: entries out of index order (entry <tag>)".
  IndexInfo bulk_load_sorted(const IndexDefinition& def, SortedEntrySource& entries);

  /// Walks the index's leaves and computes gstat's figures. Throws UsageError (no such index),
  /// CorruptError (a malformed page on the way). `on_page`, if set, is called with each page
  /// number the walk reads (a progress hook).
  IndexStats analyze(const std::string& name,
                     const std::function<void(uint32_t)>& on_page = {}) const;

  /// Creates an empty index (one empty root leaf) to fill with tree(name).insert(). Same
  /// checks and errors as bulk_load; durable on return.
  IndexInfo create_index(const IndexDefinition& def);
  /// Index `name` for lookups, scans, inserts and removes with normalized keys, over this
  /// file's buffer pool. Pages come from those freed earlier in this session, then from the
  /// free list, then from the end of the file; freed pages join the free list and root
  /// changes go to the index root page at commit(). On a read-only file, insert/remove
  /// throw ReadOnlyError. Throws NotFoundError (no such index).
  Tree tree(const std::string& name);
  /// Frames (pages) of the buffer pool behind tree(); default 64 MiB worth. At least 8. Only
  /// before the first tree() call (UsageError after).
  void set_cache_frames(size_t frames);
  /// Sizes the buffer pool to a memory budget of `bytes`: as many frames as fit when each
  /// costs its page plus the page directory searches build for it (at most a quarter of the
  /// page), i.e. bytes / (page_size × 5/4), at least 8 frames. Give
  /// it the memory left for this index (e.g. a container's limit minus the process's own
  /// needs): pages are then read once and searched from the pool, not re-read through the
  /// OS page cache. Only before the first tree() call (UsageError after).
  void set_cache_bytes(size_t bytes);
  /// Threads bulk_load builds leaf pages on (0, the default: std::thread::hardware_concurrency).
  /// The file's bytes are the same at any count.
  void set_build_threads(uint32_t threads);
  /// Drops every change through tree() since the last commit: the trees and
  /// the buffer pool are discarded without writing their dirty pages, the log's uncommitted
  /// frames (pages evicted since) are dropped, and the header and index roots are read back
  /// as of the last commit. Nothing reaches the log's committed part or the file. Tree
  /// handles from tree() are invalid afterwards. The destructor does this instead of
  /// commit() when it runs while an exception propagates. Throws IoError, CorruptError.
  void rollback();
  /// Cost of the last checkpoint (this session's, else the one recorded in the header):
  /// pages and bytes written in place and bytes synced in the log. A bulk load
  /// counts its new pages (written straight into the file) in all three.
  CommitStats last_checkpoint() const;
  /// Page numbers of the last checkpoint of this session (its batch in the log, header
  /// included), ascending (empty before the first).
  std::vector<uint32_t> last_checkpoint_pages() const;

 private:
  struct Impl;  // the state behind the handle
  friend struct IndexFileAccess;
  explicit IndexFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbtree
