// `pbtree load` in bounded memory (issue 11 items 4, 6, 7): entries come as chunks in input
// order (EntryChunkSource; today the CSV reader, tools/loader.h read_entry_chunk); a chunk
// that fills the memory budget is sorted and spilled as a run to an unnamed temporary file
// (file/entry_runs.h); at the end the runs are merged, streaming, into the bulk build
// (IndexFile::bulk_load_sorted). Input that fits in one buffer never touches a temporary
// file. --key-format auto samples the sorted entries, so the input is read once. A progress
// line (tools/progress.h) names the phase: parse, sort, merge, sample, build.
#pragma once

#include <pbtree/index_file.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "btree/what_if.h"
#include "file/entry_runs.h"
#include "tools/csv_parallel.h"
#include "tools/csv_reader.h"
#include "tools/loader.h"
#include "tools/progress.h"

namespace pbtree::tools {

/// Default --memory: 256 MiB, but at most a quarter of the physical memory.
size_t default_load_memory();
/// Reserves room in `batch` (empty) for a buffer of `memory` bytes (batch_sort_bytes; at most
/// half the physical memory): no reallocation while it fills, and reserved pages never
/// touched cost no memory.
void reserve_chunk(EntryBatch& batch, size_t memory);
/// Least --memory: 64 KiB.
inline constexpr size_t kMinLoadMemory = size_t{64} << 10;

/// Parses a --memory value: a whole number of bytes with an optional binary suffix K, M, G or T
/// (also KiB, MB..., any case): "65536", "64K", "256M", "1G". Throws ArgumentError ("bad memory
/// size 'x' (want bytes, e.g. 256M or 1G)", "--memory 1K is below the least, 64K").
size_t parse_memory_size(const std::string& text);

/// Entries in input order, one chunk at a time.
class EntryChunkSource {
 public:
  virtual ~EntryChunkSource() = default;
  /// Appends the next entries to `batch` (given empty) until batch_sort_bytes() of the batch
  /// would pass `max_bytes` with one more; returns false if the input had none left. Calls
  /// `on_rows(rows read so far)` now and then (at least every few MiB of entries). Throws
  /// InputError.
  virtual bool next_chunk(EntryBatch& batch, size_t max_bytes,
                          const std::function<void(uint64_t)>& on_rows) = 0;
  /// Data rows read so far.
  virtual uint64_t rows() const = 0;
  /// True once the input is known to be used up (next_chunk would return false).
  virtual bool ended() const = 0;
  /// Part of the input read so far, 0..1; negative if the input size is unknown.
  virtual double fraction_read() const = 0;
};

/// EntryChunkSource over a CsvReader (read_entry_chunk). `input_bytes`: size of the input
/// file if known (a plain file), else 0.
class CsvChunkSource : public EntryChunkSource {
 public:
  CsvChunkSource(CsvReader& reader, const ColumnSource& source, uint64_t input_bytes)
      : reader_(reader), source_(source), input_bytes_(input_bytes) {}
  bool next_chunk(EntryBatch& batch, size_t max_bytes,
                  const std::function<void(uint64_t)>& on_rows) override;
  uint64_t rows() const override { return state_.rows; }
  bool ended() const override { return state_.ended; }
  double fraction_read() const override;

 private:
  CsvReader& reader_;
  const ColumnSource& source_;
  uint64_t input_bytes_;
  ReadState state_;
};

/// The progress line of one load: "load I: parse: 1,200,000 rows, 1.3 M rows/s, 40% of
/// input, ETA 2 s", then "load I: sort run 1: ...", "load I: merge + build: 600,000 /
/// 2,000,000 rows (30%), ...". Messages (`pbtree: read N rows from X`) end the line first.
class LoadProgress {
 public:
  /// `progress`: the line (nullptr or disabled: none); `messages`: stream of the --progress
  /// messages or nullptr. With an enabled line, a thread redraws it every
  /// Progress::kRedrawMs ms (also while one call, e.g. a buffer's sort, holds the count
  /// still); every draw, phase change and message is made under one mutex.
  LoadProgress(Progress* progress, std::ostream* messages, const std::string& index);
  ~LoadProgress();
  LoadProgress(const LoadProgress&) = delete;
  LoadProgress& operator=(const LoadProgress&) = delete;
  /// Starts phase `phase` ("parse", "sort run 3", ...) with count `done` of `total` (0:
  /// unknown) rows.
  void phase(const std::string& phase, uint64_t done, uint64_t total);
  /// The count of the phase (drawn by the next redraw). Cheap: one relaxed atomic store.
  void set(uint64_t done) { count_.store(done, std::memory_order_relaxed); }
  /// Fraction of the input read, for the parse phase's ETA (negative: unknown).
  void set_input_fraction(double f) { fraction_.store(f, std::memory_order_relaxed); }
  double input_fraction() const { return fraction_.load(std::memory_order_relaxed); }
  /// Ends the line and prints `text` to the message stream (if any).
  void message(const std::string& text);
  /// Draws the final count and ends the line.
  void finish();

 private:
  std::string detail() const;
  void tick();

  Progress* progress_;
  std::ostream* messages_;
  std::string index_;
  std::string phase_;
  uint64_t phase_start_count_ = 0;
  uint64_t total_ = 0;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> fraction_{-1};
  std::chrono::steady_clock::time_point load_start_, phase_start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};
/// One bounded-memory load of index `def`.
class BoundedLoad {
 public:
  /// `memory`: bytes for entry buffers (kMinLoadMemory or more); `temp_dir`: where run files
  /// go; `input`: the input's name in messages.
  BoundedLoad(const IndexDefinition& def, size_t memory, std::string temp_dir, std::string input,
              LoadProgress& progress);
  ~BoundedLoad();

  /// Reads every chunk of `chunks` (phase parse); each full buffer is sorted (phase sort) and
  /// spilled as a run. Throws InputError, IoError.
  void read(EntryChunkSource& chunks);
  /// read() over CSV `path` ("-": standard input; ".zst": decompressed) parsed in parallel
  /// chunks (read_entries_parallel, tools/csv_parallel.h) on `threads` threads (0: the
  /// hardware threads): the same entries, rows and errors (the first bad record in input
  /// order, "<file>:<line>: <what>"), and the same runs as read() at any thread count. The
  /// chunks in flight (text and entries; two per thread, chunk_bytes_for() bytes of text
  /// each) get a quarter of the budget, the sort buffer the rest. Environment
  /// PBTREE_LOAD_CHUNK_BYTES (tests) sets the chunk size; it never changes the result.
  void read_csv(const std::string& path, const ColumnSource& source, uint32_t threads);
  /// Chunk size of read_csv: a quarter of `memory` over the 2 * threads + 2 chunks in
  /// flight (3 bytes held per byte of text), clamped to 4 KiB .. 4 MiB.
  static size_t chunk_bytes_for(size_t memory, uint32_t threads);
  uint64_t rows() const { return rows_; }
  /// Sorted runs on disk (0: every entry is in memory, no temporary file exists).
  size_t runs() const { return runs_.size(); }

  /// --key-format auto: sample_key_format()'s choice on the entries read (in default format).
  KeyFormatChoice sample(uint32_t page_size);
  /// Re-encodes every key from the current format into `format` (an allowed format of the
  /// type: exact and ordered, so the order of the entries is kept). Throws InputError naming
  /// the line of a value the format cannot hold.
  void switch_format(KeyFormat format);
  const IndexDefinition& definition() const { return def_; }

  /// Builds the index in `file` (phase build, or merge + build). A duplicate becomes
  /// InputError "<input>:<later line>: unique index I: value 7 appears twice (same as line
  /// 2)" (or "entry (7, 3) appears twice ..."), as bulk_load_from. Throws what
  /// IndexFile::bulk_load_sorted throws; the file is then as it was.
  IndexInfo build(IndexFile& file);

 private:
  void spill(EntryBatch& batch);
  void reduce();

  IndexDefinition def_;
  size_t memory_;
  std::string temp_dir_, input_;
  LoadProgress& progress_;
  uint64_t rows_ = 0;
  EntryBatch batch_;  // every entry, when they fit in one buffer
  std::unique_ptr<RunFile> file_;
  std::vector<RunFile::Run> runs_;
  bool reduced_ = false;
  std::optional<KeyFormat> reencode_from_;  // runs hold keys in this format
};

}  // namespace pbtree::tools
