// Sorted runs of bulk-load entries spilled to one unnamed temporary file, and their k-way
// streaming merge back into index order, so that a bulk build needs memory for one buffer of
// entries, not for the whole input (`pbtree load --memory`, tools/load_pipeline.h).
//
// The temporary file (RunFile) is opened with O_TMPFILE, so it never has a name; where the
// file system refuses O_TMPFILE it is created by mkstemp and unlinked at once. Either way
// nothing of it survives the process, even a SIGKILL. Runs lie back to back in it; where each
// starts, its length and its entry count are kept in memory (RunFile::Run), not in the file.
//
// Run format (docs/FORMAT.md §5), one record per entry, in index order within the run:
//   varint  prefix   bytes the key shares with the previous key of the run (0 for the first)
//   varint  suffix   length in bytes of the rest of the key
//   bytes   suffix   the key bytes after the prefix
//   varint  recno    record number (0 .. 2^40 - 1)
//   varint  tag      the caller's tag (the input line)
// Varints are util/coding.h's (7-bit groups, least significant first, 0x80 = more follows).
#pragma once

#include <pbtree/index_file.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pbtree {

/// One unnamed temporary file of sorted runs. Not thread-safe.
class RunFile {
 public:
  /// Where a run lies in the file.
  struct Run {
    uint64_t offset = 0;   ///< byte offset of its first record
    uint64_t bytes = 0;    ///< its length in bytes
    uint64_t entries = 0;  ///< its records
  };

  /// Creates the file in directory `dir` (O_TMPFILE, else mkstemp + unlink). Throws IoError
  /// "<dir>: cannot create a temporary file: <strerror>".
  explicit RunFile(const std::string& dir);
  ~RunFile();
  RunFile(const RunFile&) = delete;
  RunFile& operator=(const RunFile&) = delete;

  /// Appends the entries of `batch`, in the order of batch.items() (the caller sorted them),
  /// as one run, through a write buffer of `buffer_bytes`. Throws IoError (e.g. "<dir>:
  /// temporary file: write: No space left on device").
  Run append(const EntryBatch& batch, size_t buffer_bytes);

  /// Bytes written so far (the end of the last run).
  uint64_t size() const { return size_; }
  /// Longest key of any run so far (bytes).
  size_t max_key() const { return max_key_; }
  /// Gives back the disk space of `run` (fallocate PUNCH_HOLE; ignored where unsupported).
  void release(const Run& run);
  /// The directory given at construction (for messages).
  const std::string& dir() const { return dir_; }

  // Used by RunWriter / RunCursor (file/entry_runs.cc).
  void write_at(uint64_t offset, const uint8_t* data, size_t n);
  void read_at(uint64_t offset, uint8_t* data, size_t n) const;
  void note_written(uint64_t end, size_t key_length) {
    if (end > size_) size_ = end;
    if (key_length > max_key_) max_key_ = key_length;
  }

 private:
  std::string dir_;
  int fd_ = -1;
  uint64_t size_ = 0;
  size_t max_key_ = 0;
};

/// Least bytes of read buffer one run needs while merged: room for two of its longest records.
size_t run_buffer_floor(size_t max_key);

/// Runs a merge can take at once within `memory_bytes` (each gets a read buffer of at least
/// run_buffer_floor(max_key) bytes; one more buffer for the output of an intermediate merge):
/// at least 2, at most 1024.
size_t merge_fan_in(size_t memory_bytes, size_t max_key);

/// The entries of several runs, merged in index order: key (compare_keys with `descending`),
/// record number, tag. Each run is read through its own buffer of memory_bytes / runs bytes
/// (at least run_buffer_floor, at most 1 MiB). Entries are valid until the next next().
/// Throws IoError on a read error, CorruptError on a malformed record.
class RunMerge : public SortedEntrySource {
 public:
  RunMerge(const RunFile& file, const std::vector<RunFile::Run>& runs, bool descending,
           size_t memory_bytes);
  ~RunMerge() override;
  bool next(SortedEntry& entry) override;

 private:
  struct Cursor;
  bool less(size_t a, size_t b) const;
  void sift_down(size_t i);

  bool descending_;
  std::vector<std::unique_ptr<Cursor>> cursors_;
  std::vector<size_t> heap_;  // indices into cursors_, a binary min-heap
  bool pending_ = false;      // heap_[0]'s entry was handed out: advance it first
};

/// Merges groups of runs into longer runs, appended to `file` (the space of merged runs is
/// released), until at most merge_fan_in(memory_bytes, file.max_key()) remain; returns
/// them. `on_entry` (if set) is called once per entry written. Throws IoError, CorruptError.
std::vector<RunFile::Run> reduce_runs(RunFile& file, std::vector<RunFile::Run> runs,
                                      bool descending, size_t memory_bytes,
                                      const std::function<void()>& on_entry = {});

}  // namespace pbtree
