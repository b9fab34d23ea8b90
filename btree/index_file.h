// The public face of a pbtree file: create or open it, list its indexes, bulk-build a new
// index from (key, record number) pairs, and compute gstat statistics of an index.
// Layout of the file: docs/FORMAT.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "keys/key.h"
#include "page/btree_page.h"
#include "page/errors.h"
#include "page/io.h"
#include "page/wal.h"

namespace pbtree {

/// Page sizes a file may have (bytes).
inline constexpr uint32_t kPageSizes[] = {4096, 8192, 16384, 32768};
inline constexpr uint32_t kDefaultPageSize = 8192;
/// Record numbers are 40-bit (Firebird's RecordNumber): 0 .. 2^40 - 1.
inline constexpr uint64_t kMaxRecordNumber = (uint64_t{1} << 40) - 1;

/// What an index is built on. Single-segment for now.
struct IndexDefinition {
  std::string name;  ///< 1..31 bytes, [A-Za-z0-9_$]
  TypeSpec type;
  /// TypeDefault: the type's default_key_format() (Firebird 5's choice, the CLI's default),
  /// resolved by create_index/bulk_load; an explicit format must suit the type.
  KeyFormat format = KeyFormat::TypeDefault;
  bool unique = false;
  bool descending = false;
  NodeLayout layout = NodeLayout::Firebird;  ///< node coding of every page of the tree
  bool auto_format = false;  ///< `format` was chosen by --key-format auto (slot flag 0x80)
};

/// An index as stored in the index root page.
struct IndexInfo {
  IndexDefinition def;
  uint32_t id = 0;         ///< slot in the index root page, 0-based (gstat prints it)
  uint32_t root_page = 0;  ///< page number of the B-tree root
};

/// Entries to bulk-build from: key bytes (already normalized, any order) and record numbers,
/// plus a caller tag per entry (e.g. the input line) that errors report. Keys are stored
/// back to back in one arena.
class EntryBatch {
 public:
  /// Appends one entry. Throws UsageError if recno > kMaxRecordNumber.
  void add(std::span<const uint8_t> key, uint64_t recno, uint64_t tag);
  size_t size() const { return items_.size(); }
  void reserve(size_t entries, size_t key_bytes);

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

/// A duplicate: a unique index would get two equal non-NULL keys, or any index an equal (key,
/// record number) pair. Thrown by BTree::insert, BTree::insert_batch and IndexFile::bulk_load.
/// `index`: the index name. `value`: the key as the CLI prints it (key_value_text).
/// `record_number`: for a unique violation the record number already stored (bulk_load: the
/// first of the two in index order), for an equal pair the repeated one. `tag_a`/`tag_b`:
/// the callers' tags of the two entries (bulk_load; insert_batch sets tag_b to the new
/// entry's tag; 0 where there is none). Messages, e.g.
///   unique index U: value -5 already exists (record 1000001)
///   index I: entry (5, 7) already exists
///   unique index U: value 7 appears twice (entries 2 and 4)       (bulk_load)
class DuplicateKeyError : public UsageError {
 public:
  DuplicateKeyError(const std::string& what, std::string index, std::string value,
                    uint64_t record_number, uint64_t tag_a = 0, uint64_t tag_b = 0)
      : UsageError(what),
        index(std::move(index)),
        value(std::move(value)),
        record_number(record_number),
        tag_a(tag_a),
        tag_b(tag_b) {}
  std::string index;
  std::string value;
  uint64_t record_number;
  uint64_t tag_a, tag_b;
};

/// `key` as the CLI prints it (key_to_text under def's type, format and descending flag);
/// the key's hex bytes (hex_bytes) if it does not decode under that format.
std::string key_value_text(const IndexDefinition& def, std::span<const uint8_t> key);

/// Firebird 3's gstat figures for one index (§3.2 of the format notes), plus ours.
struct IndexStats {
  uint32_t root_page = 0;
  uint32_t depth = 0;          ///< root level + 1
  uint64_t leaf_buckets = 0;   ///< leaf pages
  uint64_t nodes = 0;          ///< leaf nodes, END markers excluded
  double avg_node_length = 0;  ///< bytes, full encoded node incl. record number
  uint64_t total_dup = 0;
  uint64_t max_dup = 0;
  double avg_key_length = 0;  ///< bytes: flag + prefix/length bytes (gstat's approximation) + data
  double compression_ratio = 0;  ///< (avg prefix + avg data) / avg key length
  double avg_prefix_length = 0;
  double avg_data_length = 0;
  uint64_t clustering_factor = 0;
  double clustering_ratio = 0;
  uint64_t fill_distribution[5] = {0, 0, 0, 0, 0};  ///< leaves per 20% fill band
  uint64_t index_pages = 0;                         ///< all levels
  double bytes_per_entry = 0;                       ///< index_pages × page_size / nodes
  double avg_leaf_fill = 0;  ///< mean over leaves of (btr_length − h) / (page_size − h), 0..1
};

class BTree;

/// One pbtree file. Not thread-safe (one user at a time) in this slice, except that the
/// BTree objects from tree() take many concurrent readers plus one writer.
class IndexFile {
 public:
  /// Opens `path`, creating it with `page_size` if it does not exist (under a temporary name
  /// moved into place, never over a file another process created meanwhile: that one is
  /// opened instead; btree/file_create.h). page_size 0 means: the
  /// existing file's size, or kDefaultPageSize for a new file. Throws UsageError if the file
  /// exists with another page size or page_size is not in kPageSizes; IoError, CorruptError.
  static std::unique_ptr<IndexFile> open_or_create(const std::string& path, uint32_t page_size);
  /// Opens an existing file, recovering its write-ahead log "<path>-wal" first (page/wal.h:
  /// a committed batch is replayed, anything else dropped; read-only opens read a committed
  /// batch from the log without writing). Writable opens start the log. All system calls go
  /// through `io` (tests inject page/io.h's FaultyIo). Throws IoError (missing file),
  /// CorruptError.
  /// Writable: the one writer of the file; a second writer anywhere (another process or
  /// another IndexFile here) waits up to `busy_timeout_ms` ms (-1: default_busy_timeout_ms()
  /// of page/file_lock.h, 0 at start) and then gets LockedError. Read-only: a snapshot of the
  /// last commit, held until the object is destroyed (it defers checkpoints meanwhile).
  /// Processes, locks and the log: docs/LIBRARY.md, docs/FORMAT.md §3.
  static std::unique_ptr<IndexFile> open(const std::string& path, bool writable = false,
                                         Io& io = posix_io(), int busy_timeout_ms = -1);
  /// Rolls back what was not committed (the same whether the scope is left normally or by an
  /// exception), then closes; never throws. Call commit() or close() to keep changes.
  ~IndexFile();

  /// Commit: makes every change through tree() durable (the log written and synced; see
  /// flush(), the former name). Throws IoError (the file must then be reopened and is at the
  /// previous commit), ReadOnlyError.
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
  /// What opening found in the log (page/wal.h).
  WalRecovery log_recovery() const;
  /// Frames of committed batches still only in the log (0: the file alone is complete).
  uint32_t log_committed_frames() const;

  const std::string& path() const;
  uint32_t page_size() const;
  /// Pages in the file, header and index root page included.
  uint32_t page_count() const;
  /// Pages on the persistent free list (header; pages freed in this session join it at the
  /// next checkpoint).
  uint32_t free_page_count() const;
  /// The free list from its head, in chain order (page/file_format.h), each page read and
  /// checked. Throws CorruptError: a page that is not a free page ("<path>: page 9: expected
  /// a free page, found a b-tree page"), a next pointer outside the file, a chain longer or
  /// shorter than the header's count (which also catches loops); IoError.
  std::vector<uint32_t> free_list() const;
  /// Every index, by slot order.
  std::vector<IndexInfo> indexes() const;
  /// The index named `name`, or nullopt.
  std::optional<IndexInfo> find_index(const std::string& name) const;

  /// Builds a new index from `entries` (sorted here: parallel sort by (key, recno); each key
  /// must be a normalized key of def.type/def.format, shorter than page_size/4). Leaves and
  /// upper levels are filled as Firebird's fast_load (§2.8). Everything is checked before the
  /// file is touched; on any error the file is exactly as it was. New pages are written and
  /// synced first, then the index root page and header. Throws UsageError (name exists,
  /// bad name, key format not allowed), DuplicateKeyError, KeyError (key too long), IoError.
  IndexInfo bulk_load(const IndexDefinition& def, EntryBatch& entries);

  /// Walks the index's leaves and computes gstat's figures. Throws UsageError (no such index),
  /// CorruptError (a malformed page on the way). `on_page`, if set, is called with each page
  /// number the walk reads (a progress hook; tools/progress.h).
  IndexStats analyze(const std::string& name,
                     const std::function<void(uint32_t)>& on_page = {}) const;

  /// Reads page `page_no` (page_size bytes) of this object's snapshot (the file plus the
  /// committed log frames it saw at open) into `out`, checking checksum, page number and,
  /// unless `expected_type` is 0, the page type (page/page_file.h). Throws IoError,
  /// CorruptError.
  void read_page(uint32_t page_no, uint8_t* out, uint8_t expected_type = 0) const;

  /// Creates an empty index (one empty root leaf) to fill with tree(name).insert(). Same
  /// checks and errors as bulk_load; durable on return.
  IndexInfo create_index(const IndexDefinition& def);
  /// The living B-tree of index `name` (btree/btree.h) for lookups, scans, inserts and
  /// removes, over this file's buffer pool. Pages come from those freed earlier in this
  /// session, then from the free list, then from the end of the file; freed pages join the
  /// free list and root changes go to the index root page at flush().
  /// On a read-only file, insert/remove throw UsageError. Throws UsageError (no such index).
  BTree& tree(const std::string& name);
  /// Frames of the buffer pool behind tree(); default BufferPool::kDefaultBytes worth. Only
  /// before the first tree() call (UsageError after).
  void set_cache_frames(size_t frames);
  /// commit()'s former name. Makes every change through tree() durable. The previous checkpoint's batch
  /// goes into the file if the log still holds it; then the dirty pages, the index root page
  /// (if a root changed), the freed pages (as free-list pages) and the header (checkpoint
  /// counter + 1, page count, free list, this checkpoint's cost) go to the log with a commit
  /// record, and the log is synced: the commit point and the last I/O (page/wal.h). The
  /// pages reach the file later (next checkpoint, close, or recovery at the next open).
  /// Nothing changed: no checkpoint. Must not run concurrently with inserts/removes. Throws
  /// IoError; after one, the file must be reopened (the log refuses further work) and is at
  /// the previous checkpoint.
  void flush();
  /// Drops every change through tree() since the last checkpoint (flush()): the trees and
  /// the buffer pool are discarded without writing their dirty pages, the log's uncommitted
  /// frames (pages evicted since) are dropped, and the header and index roots are read back
  /// as of the last checkpoint. Nothing reaches the log's committed part or the file. BTree
  /// references from tree() are invalid afterwards. The destructor does this instead of
  /// flush() when it runs while an exception propagates. Throws IoError, CorruptError.
  void rollback();
  /// Cost of the last checkpoint (this session's, else the one recorded in the header):
  /// pages and bytes written in place and bytes synced in the log (page/wal.h). A bulk load
  /// counts its new pages (written straight into the file) in all three.
  CheckpointStats last_checkpoint() const;
  /// Page numbers of the last checkpoint of this session (its batch in the log, header
  /// included), ascending (empty before the first).
  std::vector<uint32_t> last_checkpoint_pages() const;

  struct Impl;

 private:
  explicit IndexFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pbtree
