// Bulk loading in bounded memory: BulkLoader takes an index's entries in any order, holds them
// in a buffer of a set size, sorts each full buffer and spills it as a sorted run to an unnamed
// temporary file, and at build() merges the runs, streaming, into IndexFile::bulk_load_sorted.
// Input that fits in one buffer never touches a temporary file; it is built by
// IndexFile::bulk_load. `pbtree load` reads its CSV through this class.
#pragma once

#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <pbtree/types.h>
#include <pbtree/what_if.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace pbtree {

/// Bytes one entry costs in a BulkLoader's buffer at the peak of its sort, besides its key:
/// its EntryBatch::Item (32 bytes), two 16-byte sort records and the 32-byte sorted copy of
/// its Item. The keys count twice (the sort lays them out anew beside the old ones).
inline constexpr size_t kBulkLoadBytesPerEntry = 96;
/// Bytes a buffer of `entries` entries holding `key_bytes` key bytes needs at the peak of its
/// sort: the unit of BulkLoadOptions::memory (and of `pbtree load --memory`).
inline constexpr size_t bulk_load_bytes(size_t entries, size_t key_bytes) {
  return entries * kBulkLoadBytesPerEntry + 2 * key_bytes;
}
/// The least BulkLoadOptions::memory: 64 KiB.
inline constexpr size_t kMinBulkLoadMemory = size_t{64} << 10;
/// The default BulkLoadOptions::memory: 256 MiB, but at most a quarter of the physical memory
/// (and at least kMinBulkLoadMemory).
size_t default_bulk_load_memory();

/// How a BulkLoader holds and spills entries, and how it reports progress.
struct BulkLoadOptions {
  /// Bytes for the entry buffer (bulk_load_bytes) and, at build(), for the merge's read
  /// buffers; at least kMinBulkLoadMemory (smaller values are raised to it). 0: the default.
  size_t memory = 0;
  /// The buffer's share of `memory` in bytes, when the caller keeps the rest for entries of
  /// its own in flight (the CLI's parallel CSV parse keeps a quarter); 0: all of `memory`.
  size_t buffer_bytes = 0;
  /// Directory of the temporary run file (created only if a buffer fills; opened with
  /// O_TMPFILE, else created and unlinked at once, so nothing of it survives the process).
  std::string temp_dir = ".";
  /// Called when a phase starts: "sort run N" (a full buffer sorted and spilled), "read"
  /// (taking entries again after a spill), "merge" (runs merged into fewer, when there are
  /// more than one merge takes at once), "sample" (choose_key_format), "sort + build" or
  /// "merge + build" (build()); `done` and `total` count entries (total 0: unknown).
  std::function<void(std::string_view phase, uint64_t done, uint64_t total)> on_phase;
  /// Called with the phase's count of entries done, once per entry while runs are merged,
  /// sampled or built from runs, and at the end of a phase; must be cheap.
  std::function<void(uint64_t done)> on_progress;
};

/// A key that the format chosen by BulkLoader::switch_key_format cannot hold (an exact
/// re-encoding fails), found while the entries are re-encoded: `tag` is the entry's tag.
class EntryKeyError : public KeyError {
 public:
  EntryKeyError(const std::string& what, uint64_t tag) : KeyError(what), tag(tag) {}
  uint64_t tag;
};

/// One bounded-memory bulk load of a new index `def` (single-segment or compound). Keys must
/// be normalized keys of def.type in def.format (<pbtree/keys.h> build_key, TypedIndex's
/// encoding), shorter than page_size / 4 of the file built into. Not thread-safe: one thread
/// at a time calls it. Move-only.
class BulkLoader {
 public:
  /// Throws UsageError if `def` has no name.
  explicit BulkLoader(const IndexDefinition& def, BulkLoadOptions options = {});
  ~BulkLoader();
  BulkLoader(BulkLoader&&) noexcept;
  BulkLoader& operator=(BulkLoader&&) noexcept;

  /// Adds one entry; `tag` is the caller's (e.g. the input line), named in errors. A buffer
  /// that would pass the budget with it is first sorted and spilled as a run. Throws
  /// UsageError (record number above kMaxRecordNumber, or after build()), IoError (the run
  /// file: cannot create, no space left).
  void add(std::span<const uint8_t> key, uint64_t recno, uint64_t tag = 0);
  /// Adds every entry of `entries`, in its order (then left empty); the same as add() of
  /// each, at the cost of one copy of the batch while it fits the buffer whole.
  void add(EntryBatch&& entries);
  /// Entries added so far.
  uint64_t entries() const;
  /// Sorted runs spilled to the temporary file so far (0: every entry is in memory).
  size_t runs() const;
  /// The definition the index will be built with (def.format follows switch_key_format).
  const IndexDefinition& definition() const;

  /// What `--key-format auto` would choose for these entries in def.layout at `page_size`
  /// bytes: choose_key_format() over every kAutoSampleEvery-th entry in index order (the
  /// sample recompute_auto_choice takes from the built index). Call after the last add().
  /// Throws KeyError if a key is not one of def.type in def.format; IoError, CorruptError
  /// (the run file).
  KeyFormatChoice choose_key_format(uint32_t page_size);
  /// Re-encodes every key from the current def.format into `format`, which must be exact and
  /// ordered for def.type (an allowed format: check_key_format), so the order of the entries
  /// is kept. In memory it runs now; over runs, while build() merges them. Throws
  /// EntryKeyError on a value `format` cannot hold, UsageError on a format def.type does not
  /// allow.
  void switch_key_format(KeyFormat format);

  /// Builds the index in `file`: IndexFile::bulk_load of the buffer if there was never a
  /// run, else the runs merged (fewer first, if more than one merge takes) into
  /// IndexFile::bulk_load_sorted. Once only. Throws what those throw (DuplicateKeyError with
  /// both entries' tags; the file is then as it was), EntryKeyError, IoError, CorruptError.
  IndexInfo build(IndexFile& file);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace pbtree
