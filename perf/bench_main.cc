// pbtree-bench main(): the shared data sets and helpers of bench_common.h, registration of
// every case (pbtree and peers, grouped so each big fixture is built once), and skip notes for
// peers compiled out, and the replaced global operator new that counts allocations.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>

#include "perf/bench_common.h"

namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

// Replaced global allocation functions (every other operator new form forwards to these two):
// count the calls, allocate with malloc.
void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  return ::operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}

namespace pbtree::bench {

uint64_t allocation_count() {
  return g_allocations.load(std::memory_order_relaxed);
}

namespace {
std::shared_ptr<Dataset> g_dataset;
std::shared_ptr<std::vector<std::pair<int64_t, int64_t>>> g_sorted;
uint64_t g_sorted_rows = 0;
std::string g_fixture_rows;  // the row count of every fixture in g_fixtures
std::map<std::string, std::shared_ptr<void>> g_fixtures;
}  // namespace

const Dataset& dataset(uint64_t rows) {
  if (g_dataset && g_dataset->rows == rows) return *g_dataset;
  g_dataset.reset();
  auto d = std::make_shared<Dataset>();
  d->rows = rows;
  std::mt19937_64 rng(20261130);
  std::uniform_int_distribution<int64_t> any(1, static_cast<int64_t>(rows));
  d->col.resize(rows);
  for (auto& c : d->col) c = any(rng);
  std::mt19937_64 q(7);
  d->point_ids.resize(kQueries);
  d->narrow_starts.resize(kQueries);
  for (size_t i = 0; i < kQueries; ++i) {
    d->point_ids[i] = any(q);
    d->narrow_starts[i] = any(q);
  }
  d->wide_lo = static_cast<int64_t>(rows / 4) + 1;
  d->wide_hi = d->wide_lo + static_cast<int64_t>(rows / 2) - 1;
  d->wide_expected = static_cast<uint64_t>(std::count_if(
      d->col.begin(), d->col.end(), [&](int64_t c) { return c >= d->wide_lo && c <= d->wide_hi; }));
  g_dataset = d;
  return *g_dataset;
}

const std::vector<std::pair<int64_t, int64_t>>& sorted_cols(uint64_t rows) {
  if (g_sorted && g_sorted_rows == rows) return *g_sorted;
  g_sorted.reset();
  const Dataset& d = dataset(rows);
  auto v = std::make_shared<std::vector<std::pair<int64_t, int64_t>>>(rows);
  for (uint64_t i = 0; i < rows; ++i) (*v)[i] = {d.col[i], int64_t(i + 1)};
  std::sort(v->begin(), v->end());
  g_sorted = v;
  g_sorted_rows = rows;
  return *g_sorted;
}

std::vector<int64_t> shuffled_ids(uint64_t rows) {
  std::vector<int64_t> ids(rows);
  std::iota(ids.begin(), ids.end(), int64_t{1});
  std::mt19937_64 rng(99);
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

std::string FormatCase::label() const {
  return fmt::format("{}.{}", type_name, key_format_name(format));
}

const std::vector<FormatCase>& format_cases() {
  static const std::vector<FormatCase> cases = {
      {"integer", TypeSpec::parse("integer"), KeyFormat::Double},
      {"bigint", TypeSpec::parse("bigint"), KeyFormat::RescaledDouble},
      {"bigint", TypeSpec::parse("bigint"), KeyFormat::Decimal128},
      {"int128", TypeSpec::parse("int128"), KeyFormat::Bcd},
  };
  return cases;
}

TempDir::TempDir() {
  const char* base = std::getenv("PBTREE_BENCH_DIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/pbtree-bench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::shared_ptr<void> cached_fixture(const std::string& key,
                                     const std::function<std::shared_ptr<void>()>& make) {
  // Keys end in "/<rows>". Every fixture of one row count stays alive, so that repetitions
  // interleaved across contenders (--benchmark_enable_random_interleaving, perf/run.sh) do
  // not rebuild them; a fixture of another row count drops them all first (memory bound:
  // every contender's structures at one size, ~4 GB at 10^7 rows).
  const std::string rows = key.substr(key.rfind('/') + 1);
  if (auto it = g_fixtures.find(key); it != g_fixtures.end()) return it->second;
  if (rows != g_fixture_rows) {
    g_fixtures.clear();
    g_fixture_rows = rows;
  }
  auto f = make();
  g_fixtures[key] = f;
  return f;
}

void drop_fixture() {
  g_fixtures.clear();
  g_fixture_rows.clear();
}

std::vector<uint64_t> insert_sizes() {
  if (const char* s = std::getenv("PBTREE_BENCH_INSERT_ROWS"); s && *s) return {std::stoull(s)};
  if (const char* s = std::getenv("PBTREE_BENCH_BUILD_ROWS"); s && *s) return {std::stoull(s)};
  return {1'000'000, 10'000'000};
}

uint64_t build_rows() {
  if (const char* s = std::getenv("PBTREE_BENCH_BUILD_ROWS"); s && *s) return std::stoull(s);
  const char* large = std::getenv("PBTREE_BENCH_LARGE");
  return large && std::string(large) == "1" ? 10'000'000 : 1'000'000;
}

std::string bench_name(const std::string& workload, const std::string& contender,
                       const std::string& type, uint64_t rows, const std::string& variant) {
  std::string n = fmt::format("{}/{}/{}/{}", workload, contender, type, rows);
  if (!variant.empty()) n += "/" + variant;
  return n;
}

}  // namespace pbtree::bench

int main(int argc, char** argv) {
  using namespace pbtree::bench;
  // Scan sizes: 10^6 and 10^7; PBTREE_BENCH_SCAN_ROWS (comma-free single number) overrides
  // both, e.g. 100000 while developing.
  std::vector<uint64_t> sizes = {1'000'000, 10'000'000};
  if (const char* s = std::getenv("PBTREE_BENCH_SCAN_ROWS"); s && *s) {
    sizes = {std::stoull(s)};
  }
  register_pbtree(sizes);
  register_peers(sizes);
  for (const auto& note : peer_skip_notes()) std::fprintf(stderr, "%s\n", note.c_str());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  drop_fixture();
  return 0;
}
