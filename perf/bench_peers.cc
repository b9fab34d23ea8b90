// Peers of pbtree in pbtree-bench, on the same data sets and queries: SQLite (rowid table for
// ID + index t_col on COL, file in a temp dir, page_size 8192, prepared statements; mmap
// variant), LMDB (native 8-byte MDB_INTEGERKEY keys; "id" database, "col" database with
// MDB_DUPSORT|MDB_DUPFIXED), RocksDB (SST files ingested, bloom filter, block cache), abseil
// (btree_map for ID, btree_multimap for COL, both built in key order) and a sorted
// std::vector with std::lower_bound (the in-memory floor). Every setting and its source:
// perf/PEERS.md. Each optional peer is compiled in only if CMake found it
// (PBTREE_BENCH_HAVE_SQLITE / _LMDB / _ABSL / _ROCKSDB); otherwise main() prints a skip note.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "perf/bench_common.h"

#ifdef PBTREE_BENCH_HAVE_SQLITE
#include <sqlite3.h>
#endif
#ifdef PBTREE_BENCH_HAVE_LMDB
#include <lmdb.h>
#endif
#ifdef PBTREE_BENCH_HAVE_ABSL
#include <absl/container/btree_map.h>
#endif
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#endif

namespace pbtree::bench {
namespace {

using Pair = std::pair<int64_t, int64_t>;

// (col, id) of every row, unsorted (ID order).
std::vector<Pair> col_pairs(const Dataset& d) {
  std::vector<Pair> v(d.rows);
  for (uint64_t i = 0; i < d.rows; ++i) v[i] = {d.col[i], int64_t(i + 1)};
  return v;
}

// ----------------------------------------------------------------------------------------
// vector: sorted (id, col) and (col, id) pairs; bytes = capacity × 16 (size estimate).
struct VectorFixture {
  std::vector<Pair> ids, cols;
  double id_bytes_per_entry = 0, col_bytes_per_entry = 0;
  explicit VectorFixture(uint64_t rows) {
    const Dataset& d = dataset(rows);
    ids.resize(rows);
    for (uint64_t i = 0; i < rows; ++i) ids[i] = {int64_t(i + 1), d.col[i]};
    cols = col_pairs(d);
    std::sort(cols.begin(), cols.end());
    id_bytes_per_entry = double(ids.capacity() * sizeof(Pair)) / double(rows);
    col_bytes_per_entry = double(cols.capacity() * sizeof(Pair)) / double(rows);
  }
  static bool by_first(const Pair& p, int64_t k) { return p.first < k; }
  uint64_t point(int64_t id) {
    auto it = std::lower_bound(ids.begin(), ids.end(), id, by_first);
    return it != ids.end() && it->first == id ? 1 : 0;
  }
  uint64_t narrow(int64_t start, int n, uint64_t& sum) {
    auto it = std::lower_bound(cols.begin(), cols.end(), start, by_first);
    int got = 0;
    for (; got < n && it != cols.end(); ++got, ++it)
      fold_int_entry(sum, it->first, uint64_t(it->second));
    return uint64_t(got);
  }
  uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) {
    uint64_t got = 0;
    for (auto it = std::lower_bound(cols.begin(), cols.end(), lo, by_first);
         it != cols.end() && it->first <= hi; ++it, ++got) {
      fold_int_entry(sum, it->first, uint64_t(it->second));
    }
    return got;
  }
  static void fold_expected(uint64_t& sum, int64_t col, uint64_t id) {
    fold_int_entry(sum, col, id);
  }
  uint64_t full(uint64_t& sum) {
    for (const Pair& p : cols) fold_int_entry(sum, p.first, uint64_t(p.second));
    return cols.size();
  }
};

// ----------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_ABSL
using AbslMap = absl::btree_map<int64_t, int64_t, std::less<int64_t>,
                                CountingAllocator<std::pair<const int64_t, int64_t>>>;
using AbslMulti = absl::btree_multimap<int64_t, int64_t, std::less<int64_t>,
                                       CountingAllocator<std::pair<const int64_t, int64_t>>>;

// absl: bytes = what the containers asked the allocator for (CountingAllocator).
struct AbslFixture {
  AbslMap ids;
  AbslMulti cols;
  double id_bytes_per_entry = 0, col_bytes_per_entry = 0;
  explicit AbslFixture(uint64_t rows) {
    const Dataset& d = dataset(rows);
    int64_t before = g_counted_bytes.load();
    for (uint64_t i = 0; i < rows; ++i) ids.emplace_hint(ids.end(), int64_t(i + 1), d.col[i]);
    int64_t mid = g_counted_bytes.load();
    // In key order with the end hint (full nodes, as a sorted bulk build gives), like ids.
    std::vector<Pair> sorted = col_pairs(d);
    std::sort(sorted.begin(), sorted.end());
    for (const Pair& p : sorted) cols.emplace_hint(cols.end(), p.first, p.second);
    id_bytes_per_entry = double(mid - before) / double(rows);
    col_bytes_per_entry = double(g_counted_bytes.load() - mid) / double(rows);
  }
  uint64_t point(int64_t id) { return ids.find(id) != ids.end() ? 1 : 0; }
  uint64_t narrow(int64_t start, int n, uint64_t& sum) {
    auto it = cols.lower_bound(start);
    int got = 0;
    for (; got < n && it != cols.end(); ++got, ++it)
      fold_int_entry(sum, it->first, uint64_t(it->second));
    return uint64_t(got);
  }
  uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) {
    uint64_t got = 0;
    for (auto it = cols.lower_bound(lo); it != cols.end() && it->first <= hi; ++it, ++got) {
      fold_int_entry(sum, it->first, uint64_t(it->second));
    }
    return got;
  }
  static void fold_expected(uint64_t& sum, int64_t col, uint64_t id) {
    fold_int_entry(sum, col, id);
  }
  uint64_t full(uint64_t& sum) {
    uint64_t got = 0;
    for (const auto& p : cols) fold_int_entry(sum, p.first, uint64_t(p.second)), ++got;
    return got;
  }
};
#endif

// ----------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_SQLITE
void sq_check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw std::runtime_error(fmt::format("sqlite {}: {}", what, sqlite3_errmsg(db)));
  }
}

void sq_exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error("sqlite: " + sql + ": " + msg);
  }
}

// A database file in a temp dir: table t(id INTEGER PRIMARY KEY, col INTEGER) (its rowid
// b-tree is the ID index), page cache big enough for every page, no journal, no sync unless
// `durable` (the insert cases: synchronous=FULL, so COMMIT fsyncs the file), exclusive locking
// (the cache stays valid between statements: no per-query lock + recheck).
enum class SqliteMode { Fixture, RollbackFull, WalNormal, WalFull };

struct SqliteDb {
  TempDir dir;
  sqlite3* db = nullptr;
  // Fixture: no journal, no sync (read fixtures); the insert cases' durable modes: see
  // register_peer_inserts. `mmap`: mmap_size covers the whole file (the "sqlite-mmap" variant).
  explicit SqliteDb(uint64_t rows, SqliteMode mode = SqliteMode::Fixture, bool mmap = false) {
    if (sqlite3_open(dir.file("bench.db").c_str(), &db) != SQLITE_OK) {
      throw std::runtime_error("sqlite3_open failed");
    }
    const char* journal = mode == SqliteMode::Fixture        ? "OFF"
                          : mode == SqliteMode::RollbackFull ? "DELETE"
                                                             : "WAL";
    const char* sync = mode == SqliteMode::Fixture     ? "OFF"
                       : mode == SqliteMode::WalNormal ? "NORMAL"
                                                       : "FULL";
    sq_exec(db, fmt::format(
                    "PRAGMA page_size=8192; PRAGMA journal_mode={}; PRAGMA synchronous={};"
                    "PRAGMA locking_mode=EXCLUSIVE; PRAGMA mmap_size={};"
                    "PRAGMA cache_size=-{}; CREATE TABLE t(id INTEGER PRIMARY KEY, col INTEGER)",
                    journal, sync, mmap ? rows * 128 + (uint64_t{64} << 20) : 0,
                    rows * 64 / 1024 + 65536));
  }
  ~SqliteDb() { sqlite3_close(db); }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    sq_check(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), db, sql);
    return s;
  }
  // Inserts (id, col) rows in `order` in one transaction.
  void insert(const std::vector<int64_t>& order, const Dataset& d) {
    sq_exec(db, "BEGIN");
    sqlite3_stmt* s = prepare("INSERT INTO t(id, col) VALUES(?1, ?2)");
    for (int64_t id : order) {
      sqlite3_bind_int64(s, 1, id);
      sqlite3_bind_int64(s, 2, d.col[size_t(id - 1)]);
      sq_check(sqlite3_step(s), db, "insert");
      sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    sq_exec(db, "COMMIT");
  }
  int64_t scalar(const char* sql) {
    sqlite3_stmt* s = prepare(sql);
    sq_check(sqlite3_step(s), db, sql);
    int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
  }
  // Bytes of b-tree `name` via the dbstat virtual table, or -1 if dbstat is not compiled in.
  int64_t btree_bytes(const char* name) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT SUM(pgsize) FROM dbstat WHERE name = ?1", -1, &s, nullptr) !=
        SQLITE_OK) {
      return -1;
    }
    sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
    int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return v;
  }
};

struct SqliteFixture {
  SqliteDb sq;
  sqlite3_stmt *point_s, *narrow_s, *range_s, *full_s;
  double id_bytes_per_entry = 0, col_bytes_per_entry = 0;
  explicit SqliteFixture(uint64_t rows, bool mmap = false) : sq(rows, SqliteMode::Fixture, mmap) {
    const Dataset& d = dataset(rows);
    std::vector<int64_t> order(rows);
    for (uint64_t i = 0; i < rows; ++i) order[i] = int64_t(i + 1);
    sq.insert(order, d);
    sq_exec(sq.db, "CREATE INDEX t_col ON t(col)");
    int64_t tb = sq.btree_bytes("t"), ib = sq.btree_bytes("t_col");
    if (tb < 0 || ib < 0) {  // no dbstat: split the file evenly
      tb = ib = sq.scalar("PRAGMA page_count") * 8192 / 2;
    }
    id_bytes_per_entry = double(tb) / double(rows);
    col_bytes_per_entry = double(ib) / double(rows);
    point_s = sq.prepare("SELECT col FROM t WHERE id = ?1");
    narrow_s =
        sq.prepare("SELECT col, id FROM t INDEXED BY t_col WHERE col >= ?1 ORDER BY col LIMIT ?2");
    range_s = sq.prepare("SELECT col, id FROM t INDEXED BY t_col WHERE col BETWEEN ?1 AND ?2");
    full_s = sq.prepare("SELECT col, id FROM t INDEXED BY t_col WHERE col >= 0 ORDER BY col");
    uint64_t sum = 0;  // warm the page cache: both b-trees
    full(sum);
    sum += uint64_t(sq.scalar("SELECT SUM(col) FROM t"));
    benchmark::DoNotOptimize(sum);
  }
  ~SqliteFixture() {
    for (sqlite3_stmt* s : {point_s, narrow_s, range_s, full_s}) sqlite3_finalize(s);
  }
  // Steps `s` to the end; with `fold`, folds (column 0 = COL, column 1 = ID) per row.
  uint64_t drain(sqlite3_stmt* s, uint64_t& sum, bool fold = true) {
    uint64_t got = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      if (fold) {
        fold_int_entry(sum, sqlite3_column_int64(s, 0), uint64_t(sqlite3_column_int64(s, 1)));
      }
      ++got;
    }
    sq_check(rc, sq.db, "step");
    sqlite3_reset(s);
    return got;
  }
  static void fold_expected(uint64_t& sum, int64_t col, uint64_t id) {
    fold_int_entry(sum, col, id);
  }
  uint64_t point(int64_t id) {
    uint64_t sum = 0;
    sqlite3_bind_int64(point_s, 1, id);
    return drain(point_s, sum, false);
  }
  uint64_t narrow(int64_t start, int n, uint64_t& sum) {
    sqlite3_bind_int64(narrow_s, 1, start);
    sqlite3_bind_int64(narrow_s, 2, n);
    return drain(narrow_s, sum);
  }
  uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) {
    sqlite3_bind_int64(range_s, 1, lo);
    sqlite3_bind_int64(range_s, 2, hi);
    return drain(range_s, sum);
  }
  uint64_t full(uint64_t& sum) { return drain(full_s, sum); }
};
#endif

// ----------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_LMDB
void mdb_check(int rc, const char* what) {
  if (rc != MDB_SUCCESS)
    throw std::runtime_error(fmt::format("lmdb {}: {}", what, mdb_strerror(rc)));
}

void put_be(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = uint8_t(v & 0xFF);
}

// Native 8-byte keys (MDB_INTEGERKEY: compared as unsigned integers, as fast as LMDB's keys
// get; every ID and COL here is positive, so that order is the value order).
MDB_val native_val(uint64_t& slot, int64_t v) {
  slot = uint64_t(v);
  return MDB_val{8, &slot};
}
uint64_t get_native(const void* data) {
  uint64_t v;
  std::memcpy(&v, data, 8);
  return v;
}

// An environment in a temp dir with databases "id" (MDB_INTEGERKEY: native id -> BE col) and
// "col" (MDB_INTEGERKEY|MDB_DUPSORT|MDB_DUPFIXED|MDB_INTEGERDUP: native col -> native id
// duplicates). `env_flags`: MDB_NOSYNC for the read fixtures (plus MDB_NORDAHEAD: no
// readahead around faulted pages), 0 for the durable insert cases (each commit fsyncs), or a
// named variant's flags (MDB_WRITEMAP, MDB_NOSYNC). Settings and sources: perf/PEERS.md.
struct LmdbEnv {
  TempDir dir;
  MDB_env* env = nullptr;
  MDB_dbi id_dbi = 0, col_dbi = 0;
  explicit LmdbEnv(uint64_t rows, unsigned env_flags) {
    mdb_check(mdb_env_create(&env), "env_create");
    mdb_check(mdb_env_set_maxdbs(env, 4), "set_maxdbs");
    mdb_check(mdb_env_set_mapsize(env, size_t(rows) * 256 + (size_t{256} << 20)), "set_mapsize");
    mdb_check(mdb_env_open(env, dir.path().c_str(), env_flags, 0644), "env_open");
    MDB_txn* txn;
    mdb_check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin");
    mdb_check(mdb_dbi_open(txn, "id", MDB_CREATE | MDB_INTEGERKEY, &id_dbi), "dbi_open id");
    mdb_check(
        mdb_dbi_open(txn, "col",
                     MDB_CREATE | MDB_INTEGERKEY | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP,
                     &col_dbi),
        "dbi_open col");
    mdb_check(mdb_txn_commit(txn), "commit");
  }
  ~LmdbEnv() { mdb_env_close(env); }
  // Puts (id, col) for ids in `order` into "id" in one write transaction (`flags`: MDB_APPEND
  // when the ids come in increasing order).
  void insert_ids(const std::vector<int64_t>& order, const Dataset& d, unsigned flags) {
    MDB_txn* txn;
    mdb_check(mdb_txn_begin(env, nullptr, 0, &txn), "txn_begin");
    uint64_t kn = 0;
    uint8_t vb[8];
    MDB_val v{8, vb};
    for (int64_t id : order) {
      MDB_val k = native_val(kn, id);
      put_be(vb, uint64_t(d.col[size_t(id - 1)]));
      mdb_check(mdb_put(txn, id_dbi, &k, &v, flags), "put id");
    }
    mdb_check(mdb_txn_commit(txn), "commit");
  }
};

struct LmdbFixture {
  LmdbEnv e;
  MDB_txn* rtxn = nullptr;
  MDB_cursor* cur = nullptr;
  double id_bytes_per_entry = 0, col_bytes_per_entry = 0;
  explicit LmdbFixture(uint64_t rows) : e(rows, MDB_NOSYNC | MDB_NORDAHEAD) {
    const Dataset& d = dataset(rows);
    std::vector<int64_t> order(rows);
    for (uint64_t i = 0; i < rows; ++i) order[i] = int64_t(i + 1);
    e.insert_ids(order, d, MDB_APPEND);
    std::vector<Pair> cols = col_pairs(d);
    std::sort(cols.begin(), cols.end());
    MDB_txn* txn;
    mdb_check(mdb_txn_begin(e.env, nullptr, 0, &txn), "txn_begin");
    uint64_t kn = 0, vn = 0;
    for (const Pair& p : cols) {
      MDB_val k = native_val(kn, p.first), v = native_val(vn, p.second);
      mdb_check(mdb_put(txn, e.col_dbi, &k, &v, MDB_APPENDDUP), "put col");
    }
    MDB_stat st;
    mdb_check(mdb_stat(txn, e.id_dbi, &st), "stat");
    mdb_check(mdb_txn_commit(txn), "commit");
    MDB_envinfo info;
    mdb_check(mdb_env_info(e.env, &info), "env_info");
    const double id_bytes =
        double(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages) * st.ms_psize;
    // mdb_stat of a DUPSORT database leaves out its sub-databases: take the environment's
    // used pages minus the "id" database's.
    const double all_bytes = double(info.me_last_pgno + 1) * st.ms_psize;
    id_bytes_per_entry = id_bytes / double(rows);
    col_bytes_per_entry = (all_bytes - id_bytes) / double(rows);
    mdb_check(mdb_txn_begin(e.env, nullptr, MDB_RDONLY, &rtxn), "txn_begin ro");
    mdb_check(mdb_cursor_open(rtxn, e.col_dbi, &cur), "cursor_open");
    uint64_t sum = 0;
    full(sum);
    benchmark::DoNotOptimize(sum);
  }
  ~LmdbFixture() {
    mdb_cursor_close(cur);
    mdb_txn_abort(rtxn);
  }
  uint64_t kslot = 0;
  uint64_t point(int64_t id) {
    MDB_val k = native_val(kslot, id), v;
    return mdb_get(rtxn, e.id_dbi, &k, &v) == MDB_SUCCESS ? 1 : 0;
  }
  // The key bytes LMDB hands out: the native 8 bytes.
  static void fold_expected(uint64_t& sum, int64_t col, uint64_t id) {
    uint64_t n = uint64_t(col);
    fold_entry(sum, {reinterpret_cast<const uint8_t*>(&n), 8}, id);
  }
  uint64_t narrow(int64_t start, int n, uint64_t& sum) {
    MDB_val k = native_val(kslot, start), v;
    int got = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == MDB_SUCCESS && got < n;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
      fold_entry(sum, {static_cast<const uint8_t*>(k.mv_data), k.mv_size}, get_native(v.mv_data));
      ++got;
    }
    return uint64_t(got);
  }
  uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) {
    MDB_val k = native_val(kslot, lo), v;
    uint64_t got = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
         rc == MDB_SUCCESS && get_native(k.mv_data) <= uint64_t(hi);
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
      fold_entry(sum, {static_cast<const uint8_t*>(k.mv_data), k.mv_size}, get_native(v.mv_data));
      ++got;
    }
    return got;
  }
  uint64_t full(uint64_t& sum) {
    MDB_val k, v;
    uint64_t got = 0;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
      fold_entry(sum, {static_cast<const uint8_t*>(k.mv_data), k.mv_size}, get_native(v.mv_data));
      ++got;
    }
    return got;
  }
};
#endif

// ----------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
void rs_check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(fmt::format("rocksdb {}: {}", what, s.ToString()));
}
rocksdb::Slice slice(const uint8_t* p, size_t n) {
  return rocksdb::Slice(reinterpret_cast<const char*>(p), n);
}
uint64_t get_be64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | uint8_t(p[i]);
  return v;
}

// A RocksDB database in a temp dir: default block-based table (keys delta-coded within
// blocks, restart interval 16), a bloom filter (10 bits/key) for point lookups, an LRU block
// cache sized to hold every block of the case (`rows` × 64 bytes + 64 MiB), index and filter
// blocks in that cache. `prefix8`: an 8-byte prefix extractor (the col database: key = BE col
// + BE id, so the filter serves seeks by COL). Settings and sources: perf/PEERS.md.
struct RocksDb {
  TempDir dir;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::Options options;
  RocksDb(uint64_t rows, bool prefix8) {
    rocksdb::BlockBasedTableOptions t;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    t.block_cache = rocksdb::NewLRUCache(size_t(rows) * 64 + (size_t{64} << 20));
    t.cache_index_and_filter_blocks = true;
    // Partitioned index and filters (RocksDB's wiki, "Partitioned Index/Filters"): the one
    // ingested file's whole filter is 12 MB at 10^7 keys, larger than one shard of the LRU
    // cache (64 shards), so it was never cached and every Get read and parsed it again
    // (3.4 ms per lookup at 10^7 rows against 2.2 µs at 10^6). 4 KiB partitions are cached
    // like data blocks.
    t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    t.partition_filters = true;
    t.metadata_block_size = 4096;
    t.pin_top_level_index_and_filter = true;
    if (prefix8) {
      options.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(8));
      t.whole_key_filtering = false;
    }
    options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    options.create_if_missing = true;
    rocksdb::DB* p = nullptr;
    rs_check(rocksdb::DB::Open(options, dir.file("db"), &p), "open");
    db.reset(p);
  }
  // Bulk load: `kv` (sorted by key) written to one SST file by SstFileWriter and ingested.
  template <class Fill>
  void ingest(Fill&& fill) {
    const std::string sst = dir.file("bulk.sst");
    rocksdb::SstFileWriter w(rocksdb::EnvOptions(), options);
    rs_check(w.Open(sst), "sst open");
    fill(w);
    rs_check(w.Finish(), "sst finish");
    rocksdb::IngestExternalFileOptions io;
    io.move_files = true;
    rs_check(db->IngestExternalFile({sst}, io), "ingest");
  }
  uint64_t sst_bytes() {
    uint64_t n = 0;
    db->GetIntProperty("rocksdb.total-sst-files-size", &n);
    return n;
  }
};

// RocksDB: "id" (8-byte BE id -> 8-byte BE col) and "col" (key = BE col + BE id, empty value)
// databases, both bulk-loaded with SstFileWriter + IngestExternalFile and warmed by a scan.
struct RocksFixture {
  RocksDb ids, cols;
  std::unique_ptr<rocksdb::Iterator> it;
  std::string val;
  double id_bytes_per_entry = 0, col_bytes_per_entry = 0;
  explicit RocksFixture(uint64_t rows) : ids(rows, false), cols(rows, true) {
    const Dataset& d = dataset(rows);
    ids.ingest([&](rocksdb::SstFileWriter& w) {
      uint8_t kb[8], vb[8];
      for (uint64_t i = 0; i < rows; ++i) {
        put_be(kb, i + 1);
        put_be(vb, uint64_t(d.col[i]));
        rs_check(w.Put(slice(kb, 8), slice(vb, 8)), "sst put");
      }
    });
    const auto& sorted = sorted_cols(rows);
    cols.ingest([&](rocksdb::SstFileWriter& w) {
      uint8_t kb[16];
      for (const auto& [c, id] : sorted) {
        put_be(kb, uint64_t(c));
        put_be(kb + 8, uint64_t(id));
        rs_check(w.Put(slice(kb, 16), rocksdb::Slice()), "sst put");
      }
    });
    id_bytes_per_entry = double(ids.sst_bytes()) / double(rows);
    col_bytes_per_entry = double(cols.sst_bytes()) / double(rows);
    rocksdb::ReadOptions ro;
    ro.total_order_seek = true;
    it.reset(cols.db->NewIterator(ro));
    uint64_t sum = 0;
    full(sum);
    std::unique_ptr<rocksdb::Iterator> all(ids.db->NewIterator(ro));
    for (all->SeekToFirst(); all->Valid(); all->Next()) sum += all->value().size();
    benchmark::DoNotOptimize(sum);
  }
  uint8_t kb[8];
  uint64_t point(int64_t id) {
    put_be(kb, uint64_t(id));
    return ids.db->Get(rocksdb::ReadOptions(), slice(kb, 8), &val).ok() ? 1 : 0;
  }
  static void fold_expected(uint64_t& sum, int64_t col, uint64_t id) {
    fold_int_entry(sum, col, id);
  }
  // Folds the COL part of the key (8 bytes) and the id read from the key's tail.
  void fold(uint64_t& sum) {
    const rocksdb::Slice k = it->key();
    fold_entry(sum, {reinterpret_cast<const uint8_t*>(k.data()), 8}, get_be64(k.data() + 8));
  }
  uint64_t narrow(int64_t start, int n, uint64_t& sum) {
    put_be(kb, uint64_t(start));
    int got = 0;
    for (it->Seek(slice(kb, 8)); got < n && it->Valid(); it->Next(), ++got) fold(sum);
    return uint64_t(got);
  }
  uint64_t range(int64_t lo, int64_t hi, uint64_t& sum) {
    put_be(kb, uint64_t(lo));
    uint64_t got = 0;
    for (it->Seek(slice(kb, 8)); it->Valid() && get_be64(it->key().data()) <= uint64_t(hi);
         it->Next(), ++got) {
      fold(sum);
    }
    return got;
  }
  uint64_t full(uint64_t& sum) {
    uint64_t got = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++got) fold(sum);
    return got;
  }
};
#endif

// ----------------------------------------------------------------------------------------
// Inserts and bulk builds of the peers.

void register_peer_inserts(uint64_t rows) {
  for (const char* workload : {"random_insert", "increasing_insert"}) {
    const bool random = std::string(workload) == "random_insert";
    auto order_of = [rows, random] {
      std::vector<int64_t> order = shuffled_ids(rows);
      if (!random) std::sort(order.begin(), order.end());
      return order;
    };
#ifdef PBTREE_BENCH_HAVE_ABSL
    benchmark::RegisterBenchmark(
        bench_name(workload, "absl", "bigint", rows).c_str(),
        [rows, order_of](benchmark::State& st) {
          drop_fixture();
          const Dataset& d = dataset(rows);
          const std::vector<int64_t> order = order_of();
          double bpe = 0;
          double allocs = 0;
          for (auto _ : st) {
            auto m = std::make_unique<AbslMap>();
            int64_t before = g_counted_bytes.load();
            const uint64_t a0 = allocation_count();
            for (int64_t id : order) m->emplace(id, d.col[size_t(id - 1)]);  // no commit
            st.PauseTiming();
            allocs = double(allocation_count() - a0) / double(rows);
            bpe = double(g_counted_bytes.load() - before) / double(rows);
            m.reset();
            st.ResumeTiming();
          }
          st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
          st.counters["bytes_per_entry"] = bpe;
          st.counters["allocs_per_insert"] = allocs;
        })
        ->UseRealTime();
#endif
#ifdef PBTREE_BENCH_HAVE_SQLITE
    // SQLite's inserts run at 10^6 only: no insert target compares with it, and its three
    // repetitions of 10^7 random inserts took minutes of perf/run.sh's 15.
    // "sqlite": rollback journal (DELETE), synchronous=FULL: COMMIT writes the file in place
    // and fsyncs it. "sqlite-wal-normal" / "sqlite-wal-full": WAL with synchronous=NORMAL
    // (COMMIT does not fsync the log; the checkpoint does) / FULL (COMMIT fsyncs the log); both
    // time COMMIT plus PRAGMA wal_checkpoint(TRUNCATE) (the log copied into the file, synced).
    for (const auto& [contender, mode] :
         {std::pair<const char*, SqliteMode>{"sqlite", SqliteMode::RollbackFull},
          {"sqlite-wal-normal", SqliteMode::WalNormal},
          {"sqlite-wal-full", SqliteMode::WalFull}}) {
      if (rows > 1000000) break;
      benchmark::RegisterBenchmark(
          bench_name(workload, contender, "bigint", rows).c_str(),
          [rows, order_of, mode](benchmark::State& st) {
            drop_fixture();
            const Dataset& d = dataset(rows);
            const std::vector<int64_t> order = order_of();
            double bpe = 0;
            for (auto _ : st) {
              st.PauseTiming();
              auto db = std::make_unique<SqliteDb>(rows, mode);
              st.ResumeTiming();
              db->insert(order, d);  // one transaction and its COMMIT
              if (mode != SqliteMode::RollbackFull) {
                sq_exec(db->db, "PRAGMA wal_checkpoint(TRUNCATE)");
              }
              st.PauseTiming();
              int64_t b = db->btree_bytes("t");
              bpe = double(b >= 0 ? b : db->scalar("PRAGMA page_count") * 8192) / double(rows);
              db.reset();
              st.ResumeTiming();
            }
            st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
            st.counters["bytes_per_entry"] = bpe;
          })
          ->UseRealTime();
    }
#endif
#ifdef PBTREE_BENCH_HAVE_LMDB
    // "lmdb": default flags, the commit fsyncs the data file (in place: no log, no
    // checkpoint); "lmdb-writemap": MDB_WRITEMAP (writes through the map), same guarantee;
    // "lmdb-nosync": MDB_NOSYNC, the commit does not fsync (durability left to the OS).
    // Increasing inserts use MDB_APPEND (keys arrive in order).
    for (const auto& [contender, env_flags] : {std::pair<const char*, unsigned>{"lmdb", 0u},
                                               {"lmdb-writemap", unsigned{MDB_WRITEMAP}},
                                               {"lmdb-nosync", unsigned{MDB_NOSYNC}}}) {
      const unsigned put_flags = random ? 0u : unsigned{MDB_APPEND};
      benchmark::RegisterBenchmark(
          bench_name(workload, contender, "bigint", rows).c_str(),
          [rows, order_of, env_flags, put_flags](benchmark::State& st) {
            drop_fixture();
            const Dataset& d = dataset(rows);
            const std::vector<int64_t> order = order_of();
            double bpe = 0;
            for (auto _ : st) {
              st.PauseTiming();
              auto env = std::make_unique<LmdbEnv>(rows, env_flags);
              st.ResumeTiming();
              env->insert_ids(order, d, put_flags);  // one write transaction and its commit
              st.PauseTiming();
              MDB_envinfo info;
              mdb_check(mdb_env_info(env->env, &info), "env_info");
              bpe = double(info.me_last_pgno + 1) * 4096.0 / double(rows);
              env.reset();
              st.ResumeTiming();
            }
            st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
            st.counters["bytes_per_entry"] = bpe;
          })
          ->UseRealTime();
    }
#endif
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
    // RocksDB: Put per row (memtable + WAL), then SyncWAL (the commit: the log fsynced) and
    // Flush (the checkpoint: memtable written to an SST file and synced), both timed.
    benchmark::RegisterBenchmark(
        bench_name(workload, "rocksdb", "bigint", rows).c_str(),
        [rows, order_of](benchmark::State& st) {
          drop_fixture();
          const Dataset& d = dataset(rows);
          const std::vector<int64_t> order = order_of();
          double bpe = 0;
          for (auto _ : st) {
            st.PauseTiming();
            auto db = std::make_unique<RocksDb>(rows, false);
            st.ResumeTiming();
            uint8_t kb[8], vb[8];
            for (int64_t id : order) {
              put_be(kb, uint64_t(id));
              put_be(vb, uint64_t(d.col[size_t(id - 1)]));
              rs_check(db->db->Put(rocksdb::WriteOptions(), slice(kb, 8), slice(vb, 8)), "put");
            }
            rs_check(db->db->SyncWAL(), "SyncWAL");
            rs_check(db->db->Flush(rocksdb::FlushOptions()), "Flush");
            st.PauseTiming();
            bpe = double(db->sst_bytes()) / double(rows);
            db.reset();
            st.ResumeTiming();
          }
          st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
          st.counters["bytes_per_entry"] = bpe;
        })
        ->UseRealTime();
#endif
  }
}

void register_peer_bulk(uint64_t rows) {
  benchmark::RegisterBenchmark(bench_name("bulk_build", "vector", "bigint", rows).c_str(),
                               [rows](benchmark::State& st) {
                                 drop_fixture();
                                 const std::vector<Pair> input = col_pairs(dataset(rows));
                                 WallTimer wall;
                                 for (auto _ : st) {
                                   st.PauseTiming();
                                   std::vector<Pair> v = input;
                                   st.ResumeTiming();
                                   wall.time([&] { std::sort(v.begin(), v.end()); });
                                   benchmark::DoNotOptimize(v.data());
                                 }
                                 st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
                                 wall.finish(st, double(st.iterations() * rows));
                                 st.counters["bytes_per_entry"] = double(sizeof(Pair));
                               });
#ifdef PBTREE_BENCH_HAVE_ABSL
  benchmark::RegisterBenchmark(
      bench_name("bulk_build", "absl", "bigint", rows).c_str(), [rows](benchmark::State& st) {
        drop_fixture();
        const std::vector<Pair> input = col_pairs(dataset(rows));
        double bpe = 0;
        WallTimer wall;
        for (auto _ : st) {
          int64_t before = g_counted_bytes.load();
          std::unique_ptr<AbslMulti> m;
          wall.time([&] { m = std::make_unique<AbslMulti>(input.begin(), input.end()); });
          st.PauseTiming();
          bpe = double(g_counted_bytes.load() - before) / double(rows);
          m.reset();
          st.ResumeTiming();
        }
        st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
        wall.finish(st, double(st.iterations() * rows));
        st.counters["bytes_per_entry"] = bpe;
      });
#endif
#ifdef PBTREE_BENCH_HAVE_SQLITE
  benchmark::RegisterBenchmark(
      bench_name("bulk_build", "sqlite", "bigint", rows).c_str(), [rows](benchmark::State& st) {
        drop_fixture();
        const Dataset& d = dataset(rows);
        SqliteDb db(rows);
        std::vector<int64_t> order(rows);
        for (uint64_t i = 0; i < rows; ++i) order[i] = int64_t(i + 1);
        db.insert(order, d);
        double bpe = 0;
        WallTimer wall;
        for (auto _ : st) {
          wall.time([&] { sq_exec(db.db, "CREATE INDEX t_col ON t(col)"); });
          st.PauseTiming();
          int64_t b = db.btree_bytes("t_col");
          bpe = b >= 0 ? double(b) / double(rows) : 0.0;
          sq_exec(db.db, "DROP INDEX t_col");
          st.ResumeTiming();
        }
        st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * rows));
        wall.finish(st, double(st.iterations() * rows));
        st.counters["bytes_per_entry"] = bpe;
      });
#endif
}

}  // namespace

void register_peers(const std::vector<uint64_t>& scan_sizes) {
  for (uint64_t rows : scan_sizes) {
#ifdef PBTREE_BENCH_HAVE_ABSL
    register_scans<AbslFixture>("absl", "bigint", rows,
                                [rows] { return std::make_shared<AbslFixture>(rows); });
#endif
    register_scans<VectorFixture>("vector", "bigint", rows,
                                  [rows] { return std::make_shared<VectorFixture>(rows); });
#ifdef PBTREE_BENCH_HAVE_SQLITE
    register_scans<SqliteFixture>("sqlite", "bigint", rows,
                                  [rows] { return std::make_shared<SqliteFixture>(rows); });
    register_scans<SqliteFixture>("sqlite-mmap", "bigint", rows,
                                  [rows] { return std::make_shared<SqliteFixture>(rows, true); });
#endif
#ifdef PBTREE_BENCH_HAVE_LMDB
    register_scans<LmdbFixture>("lmdb", "bigint", rows,
                                [rows] { return std::make_shared<LmdbFixture>(rows); });
#endif
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
    register_scans<RocksFixture>("rocksdb", "bigint", rows,
                                 [rows] { return std::make_shared<RocksFixture>(rows); });
#endif
  }
  register_peer_bulk(build_rows());
  for (uint64_t rows : insert_sizes()) register_peer_inserts(rows);
}

std::vector<std::string> peer_skip_notes() {
  std::vector<std::string> notes;
#ifndef PBTREE_BENCH_HAVE_SQLITE
  notes.push_back("pbtree-bench: skip sqlite cases (built without SQLite3)");
#endif
#ifndef PBTREE_BENCH_HAVE_LMDB
  notes.push_back("pbtree-bench: skip lmdb cases (built without LMDB)");
#endif
#ifndef PBTREE_BENCH_HAVE_ABSL
  notes.push_back("pbtree-bench: skip absl cases (built without abseil)");
#endif
#ifndef PBTREE_BENCH_HAVE_ROCKSDB
  notes.push_back("pbtree-bench: skip rocksdb cases (built without RocksDB)");
#endif
  return notes;
}

}  // namespace pbtree::bench
