// pbtree's cases in pbtree-bench: scans (BTree::find / cursors of IndexFile::tree() over a file
// built with IndexFile::bulk_load, buffer pool holding every page), cold_lookup (the same
// lookups through a 16-frame pool: pages read from the file), key_encode, bulk_build
// (IndexFile::bulk_load from unsorted keys, 1 or 2 TBB threads) and random/increasing insert
// (IndexFile::create_index + tree().insert, all pages in the pool, the final commit and
// checkpoint — log fsync, copy into the file, file fsync — timed).
#include <pbtree/index_file.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/buffer_pool.h"
#include "perf/bench_common.h"

namespace pbtree::bench {
namespace {

IndexDefinition make_def(const FormatCase& fc, const char* name, bool unique,
                         NodeLayout layout = NodeLayout::Firebird) {
  IndexDefinition def;
  def.layout = layout;
  def.name = name;
  def.type = fc.type;
  def.format = fc.format;
  def.unique = unique;
  return def;
}

// One file with two indexes of the data set: ID (unique, record number = ID) and COL
// (duplicates, record number = ID), both built by IndexFile::bulk_load in `layout` (contender
// "pbtree": Firebird's nodes; "pbtree-compact": docs/FORMAT.md §2.9) and read through
// IndexFile::tree() over the file's BufferPool, sized to a frame for every page of the file
// (warmed by a full scan of both and a search per 64 keys, which builds the page directories).
struct PbtreeScanFixture {
  FormatCase fc;
  TempDir dir;
  std::unique_ptr<IndexFile> idx;
  BTree* id_tree = nullptr;
  BTree* col_tree = nullptr;
  double id_bytes_per_entry = 0, col_bytes_per_entry = 0;
  KeyBuffer kb;

  PbtreeScanFixture(const FormatCase& f, uint64_t rows, NodeLayout layout) : fc(f) {
    const Dataset& d = dataset(rows);
    idx = IndexFile::open_or_create(dir.file("bench.pbt"), kBenchPageSize);
    {
      EntryBatch b;
      b.reserve(rows, rows * 12);
      for (uint64_t i = 0; i < rows; ++i) b.add(make_key(fc, int64_t(i + 1), kb), i + 1, i);
      idx->bulk_load(make_def(fc, "ID", true, layout), b);
    }
    {
      EntryBatch b;
      b.reserve(rows, rows * 12);
      for (uint64_t i = 0; i < rows; ++i) b.add(make_key(fc, d.col[i], kb), i + 1, i);
      idx->bulk_load(make_def(fc, "COL", false, layout), b);
    }
    id_bytes_per_entry = idx->analyze("ID").bytes_per_entry;
    col_bytes_per_entry = idx->analyze("COL").bytes_per_entry;
    idx->set_cache_frames(idx->page_count() + 64);
    id_tree = &btree_of(*idx, "ID");
    col_tree = &btree_of(*idx, "COL");
    uint64_t sum = 0;
    full(sum);
    for (Cursor c = id_tree->scan(); c.valid(); c.next()) sum += c.record_number();
    // Searches build the per-frame page directories (node/page_directory.h) lazily; one
    // search per 64 keys reaches every page of both trees, so the timed repetitions all run
    // on built directories (cold_lookup times the builds).
    std::vector<uint64_t> hits;
    for (uint64_t v = 1; v <= rows; v += 64) {
      id_tree->find(make_key(fc, int64_t(v), kb), hits);
      sum += hits.size();
      col_tree->find(make_key(fc, int64_t(v), kb), hits);
      sum += hits.size();
    }
    benchmark::DoNotOptimize(sum);
  }

  std::vector<uint64_t> found;  // reused: BTree::find(key, out) does not allocate per lookup
  uint64_t point(int64_t id) {
    id_tree->find(make_key(fc, id, kb), found);
    return found.size();
  }

  uint64_t narrow(int64_t start, int n, uint64_t& sum) {
    auto k = make_key(fc, start, kb);
    ScanRange r;
    r.lower = KeyBound{std::vector<uint8_t>(k.begin(), k.end()), true};
    Cursor c = col_tree->scan(std::move(r));
    int got = 0;
    for (; got < n && c.valid(); ++got, c.next()) fold_entry(sum, c.key(), c.record_number());
    return static_cast<uint64_t>(got);
  }

  KeyBuffer expected_kb;
  void fold_expected(uint64_t& sum, int64_t col, uint64_t id) {
    fold_entry(sum, make_key(fc, col, expected_kb), id);
  }
  // Directory counters of the pool (0 until the per-frame directories exist), per operation.
  DirectoryStats dir0{};
  void start_counters() { dir0 = id_tree->pool().directory_stats(); }
  void finish_counters(benchmark::State& st, double ops) const {
    const DirectoryStats d = id_tree->pool().directory_stats();
    st.counters["dir_builds_per_op"] = ops > 0 ? double(d.builds - dir0.builds) / ops : 0.0;
    st.counters["dir_bytes"] = double(d.bytes);
    // Directory memory as a share of the cached page bytes (every page is cached here).
    const BufferPool& pool = id_tree->pool();
    const double cached = double(pool.pages_in_use()) * double(pool.page_size());
    st.counters["dir_share"] = cached > 0 ? double(d.bytes) / cached : 0.0;
  }

  uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) {
    ScanRange r;
    auto k = make_key(fc, lo, kb);
    r.lower = KeyBound{std::vector<uint8_t>(k.begin(), k.end()), true};
    k = make_key(fc, hi, kb);
    r.upper = KeyBound{std::vector<uint8_t>(k.begin(), k.end()), true};
    uint64_t got = 0;
    for (Cursor c = col_tree->scan(std::move(r)); c.valid(); c.next(), ++got) {
      fold_entry(sum, c.key(), c.record_number());
    }
    return got;
  }

  uint64_t full(uint64_t& sum) {
    uint64_t got = 0;
    for (Cursor c = col_tree->scan(); c.valid(); c.next(), ++got) {
      fold_entry(sum, c.key(), c.record_number());
    }
    return got;
  }
};

// cold_lookup: the ID index of PbtreeScanFixture's data, bulk-built, closed and reopened with
// a pool of kColdFrames frames, so nearly every lookup reads its leaf (and often the level
// above) from the file (the OS page cache keeps the file itself in memory): pin, pread,
// checksum and page check, directory build on the way. Counters per lookup: pages read
// (misses_per_op) and directory builds.
constexpr size_t kColdFrames = 16;
struct ColdFixture {
  FormatCase fc;
  TempDir dir;
  std::unique_ptr<IndexFile> idx;
  BTree* tree = nullptr;
  KeyBuffer kb;
  std::vector<uint64_t> found;
  ColdFixture(const FormatCase& f, uint64_t rows, NodeLayout layout) : fc(f) {
    const std::string path = dir.file("cold.pbt");
    {
      auto w = IndexFile::open_or_create(path, kBenchPageSize);
      EntryBatch b;
      b.reserve(rows, rows * 12);
      for (uint64_t i = 0; i < rows; ++i) b.add(make_key(fc, int64_t(i + 1), kb), i + 1, i);
      w->bulk_load(make_def(fc, "ID", true, layout), b);
      w->close();
    }
    idx = IndexFile::open_or_create(path, kBenchPageSize);
    idx->set_cache_frames(kColdFrames);
    tree = &btree_of(*idx, "ID");
  }
  uint64_t point(int64_t id) {
    tree->find(make_key(fc, id, kb), found);
    return found.size();
  }
};

void register_cold_lookup(uint64_t rows) {
  for (const FormatCase& fc : format_cases()) {
    for (NodeLayout layout : {NodeLayout::Firebird, NodeLayout::Compact}) {
      const std::string contender = layout == NodeLayout::Firebird ? "pbtree" : "pbtree-compact";
      const std::string key = "cold/" + contender + "/" + fc.label() + "/" + std::to_string(rows);
      benchmark::RegisterBenchmark(
          bench_name("cold_lookup", contender, fc.label(), rows).c_str(),
          [fc, rows, layout, key](benchmark::State& st) {
            ColdFixture& f = fixture<ColdFixture>(
                key, [&] { return std::make_shared<ColdFixture>(fc, rows, layout); });
            const Dataset& d = dataset(rows);
            if (f.point(d.point_ids[0]) != 1 || f.point(static_cast<int64_t>(rows) + 1) != 0) {
              st.SkipWithError("cold_lookup: wrong answer");
            }
            BufferPool& pool = f.tree->pool();
            const uint64_t m0 = pool.stats().misses;
            const DirectoryStats d0 = pool.directory_stats();
            size_t i = 0;
            uint64_t hits = 0;
            for (auto _ : st) hits += f.point(d.point_ids[i++ & (kQueries - 1)]);
            benchmark::DoNotOptimize(hits);
            const double ops = double(st.iterations());
            st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
            if (ops > 0) {
              st.counters["misses_per_op"] = double(pool.stats().misses - m0) / ops;
              st.counters["dir_builds_per_op"] =
                  double(pool.directory_stats().builds - d0.builds) / ops;
            }
          });
    }
  }
}

// kQueries values per (format, variant): small = [1, 1000]; large = the top decades of the
// type with random sign (integer: |v| in [10^8, 2^31), bigint: [10^17, 2^63), int128:
// [10^36, 10^38)).
std::vector<__int128> encode_values(const FormatCase& fc, bool large) {
  std::mt19937_64 rng(large ? 5 : 3);
  std::vector<__int128> out(kQueries);
  for (auto& v : out) {
    if (!large) {
      v = static_cast<__int128>(rng() % 1000 + 1);
      continue;
    }
    __int128 m;
    if (fc.type.type == ColumnType::Integer) {
      m = 100'000'000 + static_cast<__int128>(rng() % (2'147'483'647ULL - 100'000'000));
    } else if (fc.type.type == ColumnType::Bigint) {
      m = static_cast<__int128>(100'000'000'000'000'000ULL + rng() % (9'223'372'036'854'775'807ULL -
                                                                      100'000'000'000'000'000ULL));
    } else {
      const __int128 e18 = 1'000'000'000'000'000'000LL;
      // 10^36 .. 10^38 - 1: high part in [10^18, 10^20) times 10^18, plus a low part.
      __int128 hi = e18 + static_cast<__int128>(rng()) % (99 * e18);
      m = hi * e18 + static_cast<__int128>(rng() % 1'000'000'000'000'000'000ULL);
    }
    v = (rng() & 1) ? -m : m;
  }
  return out;
}

void register_key_encode() {
  for (const FormatCase& fc : format_cases()) {
    for (bool large : {false, true}) {
      benchmark::RegisterBenchmark(
          bench_name("key_encode", "pbtree", fc.label(), kQueries, large ? "large" : "small")
              .c_str(),
          [fc, large](benchmark::State& st) {
            const std::vector<__int128> values = encode_values(fc, large);
            KeyBuffer kb;
            size_t i = 0, bytes = 0;
            for (auto _ : st) {
              bytes += build_key(fc.type, fc.format, Value::exact(values[i++ & (kQueries - 1)]),
                                 false, kb);
              benchmark::DoNotOptimize(kb.data[0]);
            }
            st.SetItemsProcessed(static_cast<int64_t>(st.iterations()));
            st.counters["key_bytes"] =
                st.iterations() ? double(bytes) / double(st.iterations()) : 0.0;
          });
    }
  }
}

// The unsorted input of bulk_build: COL keys with record number = ID, in ID order.
struct BulkInput {
  EntryBatch batch;
};

// batch_insert: BTree::insert_batch of rows / 100 random keys (10^5 into 10^7 with
// PBTREE_BENCH_LARGE=1, issue 11) into a bulk-built index of `rows` keys (bigint.decimal128),
// all pages in the pool (warmed by a scan), insert_batch + flush (the commit) timed; compare
// with random_insert of LMDB in the same run.
void register_batch_insert(uint64_t rows) {
  const FormatCase fc = format_cases()[2];
  const uint64_t batch_rows = std::max<uint64_t>(1, rows / 100);
  benchmark::RegisterBenchmark(
      bench_name("batch_insert", "pbtree", fc.label(), rows, "batch" + std::to_string(batch_rows))
          .c_str(),
      [fc, rows, batch_rows](benchmark::State& st) {
        const Dataset& d = dataset(rows);
        std::mt19937_64 rng(11);
        KeyBuffer kb;
        WallTimer wall;
        for (auto _ : st) {
          st.PauseTiming();
          EntryBatch base, batch;
          for (uint64_t i = 0; i < rows; ++i) base.add(make_key(fc, d.col[i], kb), i + 1, i);
          for (uint64_t i = 0; i < batch_rows; ++i) {
            batch.add(make_key(fc, static_cast<int64_t>(rng() % (4 * rows)), kb), rows + 1 + i, i);
          }
          auto dir = std::make_unique<TempDir>();
          auto idx = IndexFile::open_or_create(dir->file("batch.pbt"), kBenchPageSize);
          idx->bulk_load(make_def(fc, "COL", false), base);
          // Room for every page and the batch's new ones; the index warmed by a full scan.
          idx->set_cache_frames(2 * idx->page_count() + 1024);
          uint64_t warm = 0;
          for (Cursor c = btree_of(*idx, "COL").scan(); c.valid(); c.next())
            warm += c.record_number();
          benchmark::DoNotOptimize(warm);
          st.ResumeTiming();
          wall.time([&] {
            btree_of(*idx, "COL").insert_batch(batch);
            idx->commit();
          });
          st.PauseTiming();
          idx.reset();
          dir.reset();
          st.ResumeTiming();
        }
        st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * batch_rows));
        wall.finish(st, double(st.iterations() * batch_rows));
      });
}

void register_bulk_build(uint64_t rows) {
  for (const FormatCase& fc : format_cases()) {
    for (int threads : {1, 2}) {
      const std::string key = "bulk/" + fc.label() + "/" + std::to_string(rows);
      benchmark::RegisterBenchmark(
          bench_name("bulk_build", "pbtree", fc.label(), rows, "threads" + std::to_string(threads))
              .c_str(),
          [fc, rows, threads, key](benchmark::State& st) {
            BulkInput& in = fixture<BulkInput>(key, [&] {
              auto p = std::make_shared<BulkInput>();
              const Dataset& d = dataset(rows);
              KeyBuffer kb;
              p->batch.reserve(rows, rows * 12);
              for (uint64_t i = 0; i < rows; ++i)
                p->batch.add(make_key(fc, d.col[i], kb), i + 1, i);
              return p;
            });
            tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
                                   static_cast<size_t>(threads));
            double bpe = 0;
            WallTimer wall;
            for (auto _ : st) {
              st.PauseTiming();
              auto batch = std::make_unique<EntryBatch>(in.batch);
              auto dir = std::make_unique<TempDir>();
              auto idx = IndexFile::open_or_create(dir->file("bulk.pbt"), kBenchPageSize);
              st.ResumeTiming();
              wall.time([&] { idx->bulk_load(make_def(fc, "COL", false), *batch); });
              st.PauseTiming();
              if (bpe == 0) bpe = idx->analyze("COL").bytes_per_entry;
              idx.reset();
              dir.reset();
              batch.reset();
              st.ResumeTiming();
            }
            st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
            wall.finish(st, double(st.iterations() * rows));
            st.counters["bytes_per_entry"] = bpe;
          });
    }
  }
}

// An empty unique index (IndexFile::create_index) in a fresh file, filled through
// IndexFile::tree(); the buffer pool has a frame for every page it will get.
struct InsertEnv {
  TempDir dir;
  std::unique_ptr<IndexFile> idx;
  BTree* tree = nullptr;
  InsertEnv(const FormatCase& fc, uint64_t rows) {
    idx = IndexFile::open_or_create(dir.file("insert.pbt"), kBenchPageSize);
    idx->create_index(make_def(fc, "ID", true));
    idx->set_cache_frames(rows * 48 / kBenchPageSize + 1024);
    tree = &btree_of(*idx, "ID");
  }
  // Writes every page (IndexFile::flush) and returns file pages × page size / rows.
  double bytes_per_entry(uint64_t rows) {
    idx->commit();
    return double(idx->page_count()) * kBenchPageSize / double(rows);
  }
};

// random_insert / increasing_insert of `rows` IDs into an empty unique index, timed up to and
// including the commit (IndexFile::commit: dirty pages and header to the log, log fsync) and
// the checkpoint (IndexFile::checkpoint: the log copied into the file, file synced).
// Counters: allocations (operator new calls) per insert, directory builds per insert and the
// directory bytes at the end. From kLargeInsertRows up only bigint.decimal128 runs (Firebird
// layout), so that perf/run.sh stays within its time budget.
void register_inserts(uint64_t rows) {
  for (const char* workload : {"random_insert", "increasing_insert"}) {
    const bool random = std::string(workload) == "random_insert";
    for (const FormatCase& fc : format_cases()) {
      if (rows >= kLargeInsertRows &&
          !(fc.type.type == ColumnType::Bigint && fc.format == KeyFormat::Decimal128)) {
        continue;
      }
      benchmark::RegisterBenchmark(
          bench_name(workload, "pbtree", fc.label(), rows).c_str(),
          [fc, rows, random](benchmark::State& st) {
            drop_fixture();
            std::vector<int64_t> order = shuffled_ids(rows);
            if (!random) std::sort(order.begin(), order.end());
            KeyBuffer kb;
            double bpe = 0, allocs = 0, builds = 0, dir_bytes = 0;
            for (auto _ : st) {
              st.PauseTiming();
              auto env = std::make_unique<InsertEnv>(fc, rows);
              const DirectoryStats d0 = env->tree->pool().directory_stats();
              const uint64_t a0 = allocation_count();
              st.ResumeTiming();
              for (int64_t id : order) env->tree->insert(make_key(fc, id, kb), uint64_t(id));
              env->idx->commit();  // the commit: log written and fsynced
              // The checkpoint: the log copied into the file (and synced), as LMDB's and
              // SQLite's (rollback journal) commits write the file in place.
              if (!env->idx->checkpoint(1000)) {
                st.SkipWithError("insert: checkpoint did not run");
                break;
              }
              st.PauseTiming();
              allocs = double(allocation_count() - a0) / double(rows);
              const DirectoryStats d1 = env->tree->pool().directory_stats();
              builds = double(d1.builds - d0.builds) / double(rows);
              dir_bytes = double(d1.bytes);
              bpe = env->bytes_per_entry(rows);
              env.reset();
              st.ResumeTiming();
            }
            st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
            st.counters["bytes_per_entry"] = bpe;
            st.counters["allocs_per_insert"] = allocs;
            st.counters["dir_builds_per_insert"] = builds;
            st.counters["dir_bytes"] = dir_bytes;
          })
          ->UseRealTime();
    }
  }
}

}  // namespace

void register_pbtree(const std::vector<uint64_t>& scan_sizes) {
  for (uint64_t rows : scan_sizes) {
    for (const FormatCase& fc : format_cases()) {
      register_scans<PbtreeScanFixture>("pbtree", fc.label(), rows, [fc, rows] {
        return std::make_shared<PbtreeScanFixture>(fc, rows, NodeLayout::Firebird);
      });
      register_scans<PbtreeScanFixture>("pbtree-compact", fc.label(), rows, [fc, rows] {
        return std::make_shared<PbtreeScanFixture>(fc, rows, NodeLayout::Compact);
      });
    }
  }
  register_key_encode();
  register_bulk_build(build_rows());
  register_batch_insert(build_rows());
  register_cold_lookup(*std::min_element(scan_sizes.begin(), scan_sizes.end()));
  for (uint64_t rows : insert_sizes()) register_inserts(rows);
}

}  // namespace pbtree::bench
