// `pbtree load` in bounded memory: the CSV is parsed in parallel chunks (tools/csv_parallel.h)
// into the library's BulkLoader (<pbtree/bulk_loader.h>), which sorts and spills full buffers
// as runs and merges them into the build; this file adds the CLI's side: the progress line
// (tools/progress.h), which names the phase (parse, sort, merge, sample, build), --memory
// parsing, and errors that name the input's lines.
#pragma once

#include <pbtree/bulk_loader.h>
#include <pbtree/index_file.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "tools/loader.h"
#include "tools/progress.h"

namespace pbtree::tools {

/// Parses a --memory value: a whole number of bytes with an optional binary suffix K, M, G or T
/// (also KiB, MB..., any case): "65536", "64K", "256M", "1G". Throws ArgumentError ("bad memory
/// size 'x' (want bytes, e.g. 256M or 1G)", "--memory 1K is below the least, 64K").
size_t parse_memory_size(const std::string& text);

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
/// One bounded-memory load of index `def` from a CSV file.
class BoundedLoad {
 public:
  /// `memory`: bytes for entry buffers (kMinBulkLoadMemory or more); `temp_dir`: where run
  /// files go; `input`: the input's name in messages.
  BoundedLoad(const IndexDefinition& def, size_t memory, std::string temp_dir, std::string input,
              LoadProgress& progress);
  ~BoundedLoad();

  /// Reads CSV `path` ("-": standard input; ".zst": decompressed) parsed in parallel chunks
  /// (read_entries_parallel, tools/csv_parallel.h) on `threads` threads (0: the hardware
  /// threads) into the BulkLoader: the same entries, rows and errors (the first bad record in
  /// input order, "<file>:<line>: <what>"), and the same runs at any thread count. The chunks
  /// in flight (text and entries; two per thread, chunk_bytes_for() bytes of text each) get a
  /// quarter of the budget, the sort buffer the rest. Environment PBTREE_LOAD_CHUNK_BYTES
  /// (tests) sets the chunk size; it never changes the result.
  void read_csv(const std::string& path, const ColumnSource& source, uint32_t threads);
  /// Chunk size of read_csv: a quarter of `memory` over the 2 * threads + 2 chunks in
  /// flight (3 bytes held per byte of text), clamped to 4 KiB .. 4 MiB.
  static size_t chunk_bytes_for(size_t memory, uint32_t threads);
  uint64_t rows() const { return rows_; }

  /// --key-format auto: BulkLoader::choose_key_format on the entries read.
  KeyFormatChoice sample(uint32_t page_size);
  /// BulkLoader::switch_key_format; an EntryKeyError becomes InputError naming the line.
  void switch_format(KeyFormat format);
  const IndexDefinition& definition() const { return loader_.definition(); }

  /// Builds the index in `file` (phase build, or merge + build). A duplicate becomes
  /// InputError "<input>:<later line>: unique index I: value 7 appears twice (same as line
  /// 2)" (or "entry (7, 3) appears twice ..."), as bulk_load_from. Throws what
  /// BulkLoader::build throws; the file is then as it was.
  IndexInfo build(IndexFile& file);

 private:
  size_t memory_;
  std::string input_;
  LoadProgress& progress_;
  uint64_t rows_ = 0;
  BulkLoader loader_;
};

}  // namespace pbtree::tools
