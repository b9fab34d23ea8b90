// Shared pieces of pbtree-bench: the in-process data sets (fixed seeds), the key formats under
// test, temporary directories, a fixture cache (every contender's structures of one row count
// alive at once, so interleaved repetitions do not rebuild them), a byte-counting allocator
// for the in-memory peers, the benchmark naming scheme
// `<workload>/<contender>/<type>[.<key format>]/<rows>[/<variant>]`, the scan checksum every
// contender folds its entries into, and a count of operator new calls (allocations per op).
#pragma once

#include <benchmark/benchmark.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pbtree::bench {

/// Page size of every paged structure that lets us choose it (bytes).
inline constexpr uint32_t kBenchPageSize = 8192;
/// Entries a narrow_scan reads after its seek.
inline constexpr int kNarrowKeys = 100;
/// Queries precomputed per data set (cycled through by the lookup loops).
inline constexpr size_t kQueries = size_t{1} << 16;

/// One table of `rows` rows: ID = 1..rows (row i has ID i + 1), COL uniform in [1, rows]
/// (std::mt19937_64, seed 20261130). Queries use seed 7.
struct Dataset {
  uint64_t rows = 0;
  std::vector<int64_t> col;            ///< col[i] = COL of the row with ID i + 1
  std::vector<int64_t> point_ids;      ///< kQueries random existing IDs
  std::vector<int64_t> narrow_starts;  ///< kQueries random COL values in [1, rows]
  int64_t wide_lo = 0, wide_hi = 0;    ///< COL range of wide_scan (inclusive): half the keys
  uint64_t wide_expected = 0;          ///< entries with COL in [wide_lo, wide_hi]
};

/// The data set of `rows` rows (built on first use; the previous size is dropped).
const Dataset& dataset(uint64_t rows);
/// (COL, ID) of every row of dataset(rows), sorted: the order every scan of the COL index
/// yields (duplicates by ascending record number = ID). Built on first use, like dataset().
const std::vector<std::pair<int64_t, int64_t>>& sorted_cols(uint64_t rows);

/// Folds one scanned entry (the key bytes the contender hands out, and its record number) into
/// a scan checksum. Order-independent (a sum of per-entry hashes) but every key byte and the
/// key's length count, so a scan cannot skip decoding keys. Peers with int64 keys fold the 8
/// big-endian bytes. The key is mixed 8 bytes at a time (then its last 0..7 bytes as one
/// word), so the fold costs about the same for a 5-, 8- or 10-byte key: a byte-at-a-time hash
/// (FNV-1a, before 2026-12-02) took ~4 cycles per key byte, as much as the scan itself, and
/// charged longer keys for the harness's work.
inline void fold_entry(uint64_t& sum, std::span<const uint8_t> key, uint64_t recno) {
  const uint8_t* p = key.data();
  size_t n = key.size();
  uint64_t h = (recno ^ 0xCBF29CE484222325ULL) * 0x9E3779B97F4A7C15ULL ^ n;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= uint64_t{p[i]} << (8 * i);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
  sum += h ^ (h >> 29);
}
/// fold_entry of an int64 key: its 8 big-endian bytes.
inline void fold_int_entry(uint64_t& sum, int64_t key, uint64_t recno) {
  uint8_t b[8];
  uint64_t v = static_cast<uint64_t>(key);
  for (int i = 7; i >= 0; --i, v >>= 8) b[i] = static_cast<uint8_t>(v & 0xFF);
  fold_entry(sum, b, recno);
}

/// operator new calls since the start (perf/bench_main.cc replaces the global operator new);
/// C libraries' malloc calls (SQLite, LMDB) are not counted.
uint64_t allocation_count();

/// A random permutation of 1..rows (seed 99): the order of random_insert.
std::vector<int64_t> shuffled_ids(uint64_t rows);

/// A key format under test: column type + key format, e.g. bigint.decimal128.
struct FormatCase {
  const char* type_name;  ///< "integer", "bigint", "int128"
  TypeSpec type;
  KeyFormat format;
  std::string label() const;  ///< "bigint.decimal128"
};
/// integer.double, bigint.rescaled-double, bigint.decimal128, int128.bcd.
const std::vector<FormatCase>& format_cases();

/// The full normalized key of integer value `v` (ascending) in `fc`'s format.
inline std::span<const uint8_t> make_key(const FormatCase& fc, int64_t v, KeyBuffer& buf) {
  build_key(fc.type, fc.format, Value::exact(v), false, buf);
  return buf.bytes();
}

/// A fresh directory under $PBTREE_BENCH_DIR or /tmp, removed (with its contents) at
/// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Cache of big fixtures: returns the object stored under `key` (which ends in "/<rows>"),
/// building it with `make`; a key of another row count first destroys every fixture held (so
/// memory stays bounded by one row count's structures).
std::shared_ptr<void> cached_fixture(const std::string& key,
                                     const std::function<std::shared_ptr<void>()>& make);
template <class T>
T& fixture(const std::string& key, const std::function<std::shared_ptr<T>()>& make) {
  return *static_cast<T*>(cached_fixture(key, [&] { return std::shared_ptr<void>(make()); }).get());
}
/// Drops the cached fixture (e.g. before a build-heavy case).
void drop_fixture();

/// Rows of the insert and bulk_build cases: 10^6, or 10^7 if PBTREE_BENCH_LARGE=1;
/// PBTREE_BENCH_BUILD_ROWS=N overrides both (small runs while developing).
uint64_t build_rows();
/// Row counts of the insert cases: 10^6 and 10^7 (at 10^7 pbtree runs one key format,
/// kLargeInsertFormat, on the Firebird layout); PBTREE_BENCH_INSERT_ROWS=N gives {N} (all
/// formats), PBTREE_BENCH_BUILD_ROWS=N too.
std::vector<uint64_t> insert_sizes();
/// Insert sizes from this many rows up run one key format only (bigint.decimal128).
inline constexpr uint64_t kLargeInsertRows = 10'000'000;

/// Bytes currently held through CountingAllocator (all instantiations).
inline std::atomic<int64_t> g_counted_bytes{0};

/// std::allocator that adds every allocation's size to g_counted_bytes (so the in-memory
/// peers' bytes_per_entry is what they really asked the heap for, malloc overhead excluded).
template <class T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() = default;
  template <class U>
  CountingAllocator(const CountingAllocator<U>&) {}
  T* allocate(size_t n) {
    g_counted_bytes += static_cast<int64_t>(n * sizeof(T));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    g_counted_bytes -= static_cast<int64_t>(n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const CountingAllocator<U>&) const {
    return true;
  }
};

/// "<workload>/<contender>/<type>/<rows>[/<variant>]".
std::string bench_name(const std::string& workload, const std::string& contender,
                       const std::string& type, uint64_t rows, const std::string& variant = "");

/// Registers unique_scan, narrow_scan, wide_scan and full_scan of one contender at `rows`.
/// `Fix` (built lazily by `make`, one fixture alive at a time) provides, over the data set:
///   uint64_t point(int64_t id)   — entries with ID = id (1 expected), via the ID index;
///   uint64_t narrow(int64_t start, int n, uint64_t& sum) — seek COL >= start, read n entries;
///   uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) — every entry with COL in [lo, hi];
///   uint64_t full(uint64_t& sum) — every entry of the COL index in order;
///     (the scans fold_entry() each entry's key bytes and record number into `sum`)
///   void fold_expected(uint64_t& sum, int64_t col, uint64_t id) — what a scan folds for the
///     entry (col, id), computed from the value (the key bytes that contender hands out);
///   double id_bytes_per_entry, col_bytes_per_entry (bytes of the structure / entries).
/// Each case checks its answer once before timing (SkipWithError on a wrong count or on a
/// checksum that differs from the one folded from sorted_cols()).
template <class Fix>
void register_scans(const std::string& contender, const std::string& type, uint64_t rows,
                    std::function<std::shared_ptr<Fix>()> make) {
  const std::string key = contender + "/" + type + "/" + std::to_string(rows);
  auto get = [key, make]() -> Fix& { return fixture<Fix>(key, make); };
  benchmark::RegisterBenchmark(
      bench_name("unique_scan", contender, type, rows).c_str(), [get, rows](benchmark::State& st) {
        Fix& f = get();
        const Dataset& d = dataset(rows);
        if (f.point(d.point_ids[0]) != 1 || f.point(static_cast<int64_t>(rows) + 1) != 0) {
          st.SkipWithError("unique_scan: wrong answer");
        }
        size_t i = 0;
        uint64_t hits = 0;
        if constexpr (requires { f.start_counters(); }) f.start_counters();
        for (auto _ : st) hits += f.point(d.point_ids[i++ & (kQueries - 1)]);
        benchmark::DoNotOptimize(hits);
        st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
        if constexpr (requires { f.finish_counters(st, 1.0); }) {
          f.finish_counters(st, double(st.iterations()));
        }
        st.counters["bytes_per_entry"] = f.id_bytes_per_entry;
      });
  benchmark::RegisterBenchmark(
      bench_name("narrow_scan", contender, type, rows).c_str(), [get, rows](benchmark::State& st) {
        Fix& f = get();
        const Dataset& d = dataset(rows);
        uint64_t sum = 0;
        if (f.narrow(1, kNarrowKeys, sum) != kNarrowKeys) st.SkipWithError("narrow_scan: short");
        {
          const auto& sorted = sorted_cols(rows);
          const int64_t start = d.narrow_starts[0];
          auto it =
              std::lower_bound(sorted.begin(), sorted.end(), std::pair<int64_t, int64_t>{start, 0});
          uint64_t want = 0, got = 0;
          for (int k = 0; k < kNarrowKeys && it != sorted.end(); ++k, ++it) {
            f.fold_expected(want, it->first, uint64_t(it->second));
          }
          f.narrow(start, kNarrowKeys, got);
          if (got != want) st.SkipWithError("narrow_scan: wrong checksum");
        }
        size_t i = 0;
        uint64_t n = 0;
        if constexpr (requires { f.start_counters(); }) f.start_counters();
        for (auto _ : st) n += f.narrow(d.narrow_starts[i++ & (kQueries - 1)], kNarrowKeys, sum);
        benchmark::DoNotOptimize(sum);
        st.SetItemsProcessed(static_cast<int64_t>(n));
        if constexpr (requires { f.finish_counters(st, 1.0); }) {
          f.finish_counters(st, double(st.iterations()));
        }
        st.counters["bytes_per_entry"] = f.col_bytes_per_entry;
      });
  benchmark::RegisterBenchmark(bench_name("wide_scan", contender, type, rows).c_str(),
                               [get, rows](benchmark::State& st) {
                                 Fix& f = get();
                                 const Dataset& d = dataset(rows);
                                 uint64_t sum = 0, n = 0, want = 0;
                                 for (const auto& [c, id] : sorted_cols(rows)) {
                                   if (c >= d.wide_lo && c <= d.wide_hi) {
                                     f.fold_expected(want, c, uint64_t(id));
                                   }
                                 }
                                 f.range(d.wide_lo, d.wide_hi, sum);
                                 if (sum != want) st.SkipWithError("wide_scan: wrong checksum");
                                 for (auto _ : st) {
                                   uint64_t got = f.range(d.wide_lo, d.wide_hi, sum);
                                   if (got != d.wide_expected) {
                                     st.SkipWithError("wide_scan: wrong count");
                                     break;
                                   }
                                   n += got;
                                 }
                                 benchmark::DoNotOptimize(sum);
                                 st.SetItemsProcessed(static_cast<int64_t>(n));
                                 st.counters["bytes_per_entry"] = f.col_bytes_per_entry;
                               });
  benchmark::RegisterBenchmark(bench_name("full_scan", contender, type, rows).c_str(),
                               [get, rows](benchmark::State& st) {
                                 Fix& f = get();
                                 uint64_t sum = 0, n = 0, want = 0;
                                 for (const auto& [c, id] : sorted_cols(rows)) {
                                   f.fold_expected(want, c, uint64_t(id));
                                 }
                                 f.full(sum);
                                 if (sum != want) st.SkipWithError("full_scan: wrong checksum");
                                 for (auto _ : st) {
                                   uint64_t got = f.full(sum);
                                   if (got != rows) {
                                     st.SkipWithError("full_scan: wrong count");
                                     break;
                                   }
                                   n += got;
                                 }
                                 benchmark::DoNotOptimize(sum);
                                 st.SetItemsProcessed(static_cast<int64_t>(n));
                                 st.counters["bytes_per_entry"] = f.col_bytes_per_entry;
                               });
}

/// Wall-clock time of the timed parts of a multi-threaded case (Google Benchmark's CPU time
/// counts the main thread only). finish() sets counters wall_items_per_second and
/// wall_ns_per_op, which report.py uses for bulk_build.
class WallTimer {
 public:
  template <class F>
  void time(F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  void finish(benchmark::State& st, double items) const {
    if (seconds_ <= 0 || st.iterations() == 0) return;
    st.counters["wall_items_per_second"] = items / seconds_;
    st.counters["wall_ns_per_op"] = seconds_ * 1e9 / double(st.iterations());
  }

 private:
  double seconds_ = 0;
};

/// Registration entry points (one per translation unit) and skip notes printed by main().
void register_pbtree(const std::vector<uint64_t>& scan_sizes);
void register_peers(const std::vector<uint64_t>& scan_sizes);
std::vector<std::string> peer_skip_notes();

}  // namespace pbtree::bench
