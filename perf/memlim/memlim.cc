// pbtree-memlim: the per-engine worker of perf/memory_limited.sh. One process per step, so the
// script can put the query phase alone into a memory cgroup:
//   build ENGINE CASE DIR ROWS     builds the engine's store of one case in DIR (no limit),
//                                  then syncs every file and drops it from the page cache;
//   drop DIR                       fsync + posix_fadvise(DONTNEED) of every file under DIR;
//   query ENGINE CASE DIR ROWS WORKLOAD WARMUP MAX_OPS BUDGET_MIB REP SECONDS [--verify]
//                                  WARMUP ops, then up to MAX_OPS ops or SECONDS; prints
//                                  two result lines (phase=cold: the warm-up, phase=steady:
//                                  the timed ops; full: one scan, phase=steady only);
//   col N ROWS                     COL of rows 1..N (the self-test compares it with the seed).
// Engines: pbtree (Firebird layout, default key format), pbtree-compact (compact layout,
// --key-format auto's choice), pbtree-compact-4k (the same with 4 KiB pages), lmdb, sqlite,
// sqlite-mmap (queries sqlite's files with mmap), rocksdb. Cases (the seed's shapes at ROWS rows,
// data/seed/README.md): id (unique BIGINT 1..ROWS), col (BIGINT with duplicates: 1 +
// SplitMix64(seed 0x5EED0001) mod ROWS per row), int128 (INT128 column holding the row's ID,
// unique). Record number = ID everywhere. Workloads: lookup (all entries equal to a random existing
// value), narrow (seek >= a random value, read 100 entries), full (every entry once). Queries come
// from std::mt19937_64 seeded with 7 + REP, so every engine answers the same queries in one
// repetition; the `checksum` field (a sum of per-entry record-number hashes) must agree between
// engines, and --verify decodes every key and checks it against the value its record number was
// built from. Each engine's own settings and their sources: perf/PEERS.md.
#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <pbtree/what_if.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef PBTREE_BENCH_HAVE_LMDB
#include <lmdb.h>
#endif
#ifdef PBTREE_BENCH_HAVE_SQLITE
#include <sqlite3.h>
#endif
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#endif

namespace fs = std::filesystem;

namespace {

using pbtree::KeyBuffer;
using pbtree::KeyFormat;
using pbtree::TypeSpec;
using pbtree::Value;

constexpr int kNarrow = 100;
/// Memory an engine's own cache gets under a budget (pbtree's buffer pool, SQLite's
/// cache_size, RocksDB's block cache): the budget minus a reserve for the process itself
/// (code, heap, stacks: ~16 MiB RSS measured) of 24 MiB, or half the budget if that is less.
/// Reads through the page cache leave copies there, but clean page-cache pages are the first
/// thing the cgroup reclaims, so the engine's own cache (which needs no re-read and no
/// re-decode) should get what is left. LMDB has no cache of its own (the page cache is its
/// cache). PBTREE_MEMLIM_CACHE=half gives every engine half the budget instead (the rule
/// before 2026-12-03, kept for the before/after comparison in perf/RESULTS.md);
/// PBTREE_MEMLIM_CACHE=N gives N MiB.
uint64_t own_cache_bytes(uint64_t budget) {
  const char* rule = std::getenv("PBTREE_MEMLIM_CACHE");
  if (rule && std::string(rule) == "half") return budget / 2;
  if (rule && *rule >= '1' && *rule <= '9') return std::stoull(rule) << 20;  // MiB (experiments)
  const uint64_t reserve = std::min<uint64_t>(uint64_t{24} << 20, budget / 2);
  return budget - reserve;
}

enum class Case { Id, Col, Int128 };

Case parse_case(const std::string& s) {
  if (s == "id") return Case::Id;
  if (s == "col") return Case::Col;
  if (s == "int128") return Case::Int128;
  throw std::runtime_error("unknown case '" + s + "' (id, col, int128)");
}

/// COL of the row with ID `id` (1-based) at `rows` rows: the id-th output of SplitMix64
/// started at 0x5EED0001, mod rows, plus 1 (data/seed/README.md; rows = 10^6 gives t_int.csv).
int64_t col_of(uint64_t id, uint64_t rows) {
  uint64_t z = 0x5EED0001ULL + id * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return int64_t(1 + z % rows);
}

/// The value of the case's column in row `id`.
int64_t value_of(Case c, uint64_t id, uint64_t rows) {
  return c == Case::Col ? col_of(id, rows) : int64_t(id);
}

/// (value, id) of every row in index order.
std::vector<std::pair<int64_t, uint64_t>> sorted_entries(Case c, uint64_t rows) {
  std::vector<std::pair<int64_t, uint64_t>> v(rows);
  for (uint64_t id = 1; id <= rows; ++id) v[id - 1] = {value_of(c, id, rows), id};
  if (c == Case::Col) std::sort(v.begin(), v.end());
  return v;
}

uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// What a query run folds: `common` (record numbers, the same for every engine), `keys` (the
/// key bytes as the engine hands them out: read, not compared) and, with verify, a check of
/// every decoded key against its record number.
struct Fold {
  Case c = Case::Id;
  uint64_t rows = 0;
  bool verify = false;
  uint64_t common = 0, keys = 0, entries = 0;
  void key_bytes(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    uint64_t h = n;
    for (; n >= 8; b += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, b, 8);
      h = mix(h ^ w);
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; ++i) w |= uint64_t{b[i]} << (8 * i);
    keys += mix(h ^ w);
  }
  // One entry: its record number and (verify only) the value its key decodes to.
  void entry(uint64_t recno, int64_t value) {
    common += mix(recno);
    ++entries;
    if (verify && value != value_of(c, recno, rows)) {
      throw std::runtime_error(fmt::format("verify: record {} has key value {}, expected {}", recno,
                                           value, value_of(c, recno, rows)));
    }
  }
};

void put_be(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = uint8_t(v & 0xFF);
}
uint64_t get_be(const void* data) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}
// 16-byte big-endian two's complement with the sign bit flipped: memcmp order = int128 order.
void put_i128(uint8_t* p, int64_t v) {
  const uint64_t hi = uint64_t(v < 0 ? -1 : 0) ^ 0x8000000000000000ULL;
  put_be(p, hi);
  put_be(p + 8, uint64_t(v));
}
int64_t get_i128(const void* p) {
  return int64_t(get_be(static_cast<const uint8_t*>(p) + 8));
}

/// One engine's store of one case.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual void build(const std::string& dir, Case c, uint64_t rows) = 0;
  /// Opens the store for queries under a `budget` of bytes; `full_scan`: the one query will
  /// read everything in order (engines that tune readahead per access pattern do so).
  virtual void open(const std::string& dir, Case c, uint64_t rows, uint64_t budget,
                    bool full_scan) = 0;
  /// Entries equal to `v`, folded.
  virtual uint64_t lookup(int64_t v, Fold& f) = 0;
  /// Seek >= v, fold n entries.
  virtual uint64_t narrow(int64_t v, int n, Fold& f) = 0;
  virtual uint64_t full(Fold& f) = 0;
};

// ------------------------------------------------------------------------------------------
// pbtree: one file "index.pbt" holding one index "K" (record number = ID), bulk-built from
// entries in index order (IndexFile::bulk_load_sorted). Compact: the format --key-format auto
// picks (WhatIfEstimator over every 4th entry, choose_key_format), as `pbtree load` does.
class PbtreeEngine : public Engine {
 public:
  PbtreeEngine(pbtree::NodeLayout layout, uint32_t page_size)
      : layout_(layout), page_size_(page_size) {}

  static TypeSpec type_of(Case c) {
    return TypeSpec::parse(c == Case::Int128 ? "int128" : "bigint");
  }

  void build(const std::string& dir, Case c, uint64_t rows) override {
    const TypeSpec type = type_of(c);
    pbtree::IndexDefinition def;
    def.name = "K";
    def.type = type;
    def.layout = layout_;
    def.unique = c != Case::Col;
    def.format = pbtree::default_key_format(type);
    const auto entries = sorted_entries(c, rows);
    if (layout_ == pbtree::NodeLayout::Compact) {
      pbtree::WhatIfEstimator::Options o;
      o.type = type;
      o.source = def.format;
      o.page_size = page_size_;
      o.layouts = {layout_};
      pbtree::WhatIfEstimator est(o);
      for (size_t i = 0; i < entries.size(); i += pbtree::kAutoSampleEvery) {
        pbtree::build_key(type, def.format, Value::exact(entries[i].first), false, kb_);
        est.add(kb_.bytes(), entries[i].second);
      }
      const uint64_t sampled = est.entries();
      def.format = pbtree::choose_key_format(type, layout_, est.finish(), sampled).format;
    }
    std::fprintf(stderr, "pbtree-memlim: pbtree %s, %u-byte pages, key format %s\n",
                 layout_ == pbtree::NodeLayout::Compact ? "compact" : "firebird", page_size_,
                 std::string(pbtree::key_format_name(def.format)).c_str());
    struct Source : pbtree::SortedEntrySource {
      const std::vector<std::pair<int64_t, uint64_t>>& e;
      const TypeSpec& type;
      KeyFormat format;
      KeyBuffer kb;
      size_t at = 0;
      Source(const std::vector<std::pair<int64_t, uint64_t>>& es, const TypeSpec& t, KeyFormat f)
          : e(es), type(t), format(f) {}
      bool next(pbtree::SortedEntry& out) override {
        if (at == e.size()) return false;
        pbtree::build_key(type, format, Value::exact(e[at].first), false, kb);
        out.key = kb.bytes();
        out.recno = e[at].second;
        out.tag = at++;
        return true;
      }
    } src(entries, type, def.format);
    auto file = pbtree::IndexFile::open_or_create(dir + "/index.pbt", page_size_);
    file->bulk_load_sorted(def, src);
    file->close();
  }

  void open(const std::string& dir, Case c, uint64_t, uint64_t budget, bool) override {
    file_ = pbtree::IndexFile::open(dir + "/index.pbt");
    const auto info = file_->find_index("K");
    if (!info) throw std::runtime_error(dir + "/index.pbt: no index K");
    type_ = type_of(c);
    format_ = pbtree::resolve_key_format(type_, info->def.format);
    const char* rule = std::getenv("PBTREE_MEMLIM_CACHE");
    if (rule && std::string(rule) == "half") {  // before: frames = half the budget / page
      file_->set_cache_frames(std::max<size_t>(64, own_cache_bytes(budget) / file_->page_size()));
    } else {
      file_->set_cache_bytes(own_cache_bytes(budget));
    }
    tree_ = file_->tree("K");
  }

  void fold(const pbtree::IndexCursor& cur, Fold& f) {
    const auto k = cur.key();
    f.key_bytes(k.data(), k.size());
    f.entry(cur.record_number(), f.verify ? decode(k) : 0);
  }
  int64_t decode(std::span<const uint8_t> k) {
    std::string storage;
    return int64_t(pbtree::key_to_value(type_, format_, false, k, storage).coefficient);
  }

  uint64_t lookup(int64_t v, Fold& f) override {
    pbtree::build_key(type_, format_, Value::exact(v), false, kb_);
    tree_->find(kb_.bytes(), found_);
    for (uint64_t r : found_) {
      f.key_bytes(kb_.data, kb_.length);  // find() matched these bytes
      f.entry(r, v);
    }
    return found_.size();
  }
  uint64_t narrow(int64_t v, int n, Fold& f) override {
    pbtree::build_key(type_, format_, Value::exact(v), false, kb_);
    pbtree::ScanRange r;
    r.lower = pbtree::KeyBound{std::vector<uint8_t>(kb_.data, kb_.data + kb_.length), true};
    int got = 0;
    for (pbtree::IndexCursor c = tree_->scan(std::move(r)); got < n && c.valid(); c.next(), ++got) {
      fold(c, f);
    }
    return uint64_t(got);
  }
  uint64_t full(Fold& f) override {
    uint64_t got = 0;
    for (pbtree::IndexCursor c = tree_->scan(); c.valid(); c.next(), ++got) fold(c, f);
    return got;
  }

 private:
  pbtree::NodeLayout layout_;
  uint32_t page_size_;
  std::unique_ptr<pbtree::IndexFile> file_;
  std::optional<pbtree::Tree> tree_;  // the installed handle: perf/ uses the public API
  TypeSpec type_;
  KeyFormat format_ = KeyFormat::Decimal128;
  KeyBuffer kb_;
  std::vector<uint64_t> found_;
};

// ------------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_LMDB
void mdb_check(int rc, const char* what) {
  if (rc != MDB_SUCCESS) {
    throw std::runtime_error(fmt::format("lmdb {}: {}", what, mdb_strerror(rc)));
  }
}

// LMDB: one environment per case, one database "k". id: MDB_INTEGERKEY, native uint64 keys
// (IDs are positive, so unsigned order is value order), native recno data. col:
// MDB_INTEGERKEY|MDB_DUPSORT|MDB_DUPFIXED|MDB_INTEGERDUP (native col -> native id). int128:
// 16-byte sign-flipped big-endian keys (memcmp order). Built with MDB_APPEND / MDB_APPENDDUP
// in key order, MDB_WRITEMAP|MDB_NOSYNC and one mdb_env_sync at the end; read with
// MDB_RDONLY|MDB_NORDAHEAD (random reads: no readahead around each faulted page).
class LmdbEngine : public Engine {
 public:
  ~LmdbEngine() override {
    if (cur_) mdb_cursor_close(cur_);
    if (txn_) mdb_txn_abort(txn_);
    if (env_) mdb_env_close(env_);
  }
  static unsigned db_flags(Case c) {
    if (c == Case::Id) return MDB_INTEGERKEY;
    if (c == Case::Col) return MDB_INTEGERKEY | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP;
    return 0;
  }
  void env_open(const std::string& dir, uint64_t rows, unsigned flags) {
    mdb_check(mdb_env_create(&env_), "env_create");
    mdb_check(mdb_env_set_maxdbs(env_, 2), "set_maxdbs");
    mdb_check(mdb_env_set_mapsize(env_, size_t(rows) * 96 + (size_t{64} << 20)), "mapsize");
    mdb_check(mdb_env_open(env_, dir.c_str(), flags, 0644), "env_open");
  }
  void build(const std::string& dir, Case c, uint64_t rows) override {
    env_open(dir, rows, MDB_WRITEMAP | MDB_NOSYNC);
    MDB_txn* txn;
    mdb_check(mdb_txn_begin(env_, nullptr, 0, &txn), "txn_begin");
    mdb_check(mdb_dbi_open(txn, "k", MDB_CREATE | db_flags(c), &dbi_), "dbi_open");
    const auto entries = sorted_entries(c, rows);
    uint8_t kb[16];
    uint64_t kn = 0, dn = 0;
    MDB_val k, d{8, &dn};
    const unsigned put = c == Case::Col ? MDB_APPENDDUP : MDB_APPEND;
    for (const auto& [v, id] : entries) {
      if (c == Case::Int128) {
        put_i128(kb, v);
        k = MDB_val{16, kb};
      } else {
        kn = uint64_t(v);
        k = MDB_val{8, &kn};
      }
      dn = id;
      mdb_check(mdb_put(txn, dbi_, &k, &d, put), "put");
    }
    mdb_check(mdb_txn_commit(txn), "commit");
    mdb_check(mdb_env_sync(env_, 1), "env_sync");
  }
  void open(const std::string& dir, Case c, uint64_t rows, uint64_t, bool full_scan) override {
    c_ = c;
    // MDB_NORDAHEAD for random reads only: a full scan faulting 4 KiB at a time without
    // readahead took 26-33 s at 10^7 rows (COL), so the scan keeps the OS's readahead.
    env_open(dir, rows, MDB_RDONLY | (full_scan ? 0u : unsigned{MDB_NORDAHEAD}));
    mdb_check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn_), "txn_begin");
    mdb_check(mdb_dbi_open(txn_, "k", db_flags(c), &dbi_), "dbi_open");
    mdb_check(mdb_cursor_open(txn_, dbi_, &cur_), "cursor_open");
  }
  MDB_val key_of(int64_t v) {
    if (c_ == Case::Int128) {
      put_i128(kbuf_, v);
      return MDB_val{16, kbuf_};
    }
    kn_ = uint64_t(v);
    return MDB_val{8, &kn_};
  }
  void fold(const MDB_val& k, const MDB_val& d, Fold& f) {
    f.key_bytes(k.mv_data, k.mv_size);
    uint64_t r;
    std::memcpy(&r, d.mv_data, 8);
    int64_t v;
    if (c_ == Case::Int128) {
      v = get_i128(k.mv_data);
    } else {
      uint64_t u;
      std::memcpy(&u, k.mv_data, 8);
      v = int64_t(u);
    }
    f.entry(r, v);
  }
  uint64_t lookup(int64_t v, Fold& f) override {
    MDB_val k = key_of(v), d;
    if (c_ != Case::Col) {
      if (mdb_get(txn_, dbi_, &k, &d) != MDB_SUCCESS) return 0;
      fold(k, d, f);
      return 1;
    }
    uint64_t got = 0;
    for (int rc = mdb_cursor_get(cur_, &k, &d, MDB_SET_KEY); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur_, &k, &d, MDB_NEXT_DUP)) {
      fold(k, d, f);
      ++got;
    }
    return got;
  }
  uint64_t narrow(int64_t v, int n, Fold& f) override {
    MDB_val k = key_of(v), d;
    int got = 0;
    for (int rc = mdb_cursor_get(cur_, &k, &d, MDB_SET_RANGE); rc == MDB_SUCCESS && got < n;
         rc = mdb_cursor_get(cur_, &k, &d, MDB_NEXT), ++got) {
      fold(k, d, f);
    }
    return uint64_t(got);
  }
  uint64_t full(Fold& f) override {
    MDB_val k, d;
    uint64_t got = 0;
    for (int rc = mdb_cursor_get(cur_, &k, &d, MDB_FIRST); rc == MDB_SUCCESS;
         rc = mdb_cursor_get(cur_, &k, &d, MDB_NEXT), ++got) {
      fold(k, d, f);
    }
    return got;
  }

 private:
  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cur_ = nullptr;
  MDB_dbi dbi_ = 0;
  Case c_ = Case::Id;
  uint8_t kbuf_[16];
  uint64_t kn_ = 0;
};
#endif

// ------------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_SQLITE
void sq_exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error("sqlite: " + sql + ": " + msg);
  }
}

// SQLite: file "t.db", table t(k, r). id: INTEGER PRIMARY KEY (the rowid b-tree: k is the
// rowid); col: WITHOUT ROWID, PRIMARY KEY(k, r); int128: WITHOUT ROWID, k a 16-byte BLOB
// (memcmp order), PRIMARY KEY(k). Built in key order in one transaction (journal off); read
// with cache_size = own_cache_bytes(budget), mmap_size 0 ("sqlite") or the file's size
// ("sqlite-mmap").
class SqliteEngine : public Engine {
 public:
  explicit SqliteEngine(bool mmap) : mmap_(mmap) {}
  ~SqliteEngine() override {
    for (sqlite3_stmt* s : {lookup_, narrow_, full_}) sqlite3_finalize(s);
    if (db_) sqlite3_close(db_);
  }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) {
      throw std::runtime_error(std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
    }
    return s;
  }
  void build(const std::string& dir, Case c, uint64_t rows) override {
    if (sqlite3_open((dir + "/t.db").c_str(), &db_) != SQLITE_OK) {
      throw std::runtime_error("sqlite3_open failed");
    }
    sq_exec(db_, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144");
    sq_exec(db_, c == Case::Id    ? "CREATE TABLE t(k INTEGER PRIMARY KEY, r INTEGER)"
                 : c == Case::Col ? "CREATE TABLE t(k INTEGER, r INTEGER, PRIMARY KEY(k, r)) "
                                    "WITHOUT ROWID"
                                  : "CREATE TABLE t(k BLOB PRIMARY KEY, r INTEGER) WITHOUT ROWID");
    sq_exec(db_, "BEGIN");
    sqlite3_stmt* s = prepare("INSERT INTO t(k, r) VALUES(?1, ?2)");
    uint8_t kb[16];
    for (const auto& [v, id] : sorted_entries(c, rows)) {
      if (c == Case::Int128) {
        put_i128(kb, v);
        sqlite3_bind_blob(s, 1, kb, 16, SQLITE_STATIC);
      } else {
        sqlite3_bind_int64(s, 1, v);
      }
      sqlite3_bind_int64(s, 2, int64_t(id));
      if (sqlite3_step(s) != SQLITE_DONE) {
        throw std::runtime_error(std::string("sqlite insert: ") + sqlite3_errmsg(db_));
      }
      sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    sq_exec(db_, "COMMIT");
  }
  void open(const std::string& dir, Case c, uint64_t, uint64_t budget, bool) override {
    c_ = c;
    const std::string path = dir + "/t.db";
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      throw std::runtime_error("sqlite3_open_v2 failed: " + path);
    }
    // cache_size counts page images only; every cached page also costs SQLite's page header
    // and its pcache1 slot (a few hundred bytes at 8 KiB pages): a 488 MiB cache under the
    // 512 MiB budget grew to 520 MB of heap on a full scan and the cgroup killed the process.
    // So the pages get 8192 / (8192 + 512) of what the budget leaves.
    const uint64_t cache_kib = own_cache_bytes(budget) / 1024 * 8192 / (8192 + 512);
    sq_exec(db_, fmt::format("PRAGMA cache_size=-{}; PRAGMA mmap_size={}", cache_kib,
                             mmap_ ? fs::file_size(path) : 0));
    lookup_ = prepare("SELECT k, r FROM t WHERE k = ?1");
    narrow_ = prepare("SELECT k, r FROM t WHERE k >= ?1 ORDER BY k LIMIT ?2");
    full_ = prepare("SELECT k, r FROM t ORDER BY k");
  }
  void bind_key(sqlite3_stmt* s, int64_t v) {
    if (c_ == Case::Int128) {
      put_i128(kb_, v);
      sqlite3_bind_blob(s, 1, kb_, 16, SQLITE_STATIC);
    } else {
      sqlite3_bind_int64(s, 1, v);
    }
  }
  uint64_t drain(sqlite3_stmt* s, Fold& f) {
    uint64_t got = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      int64_t v;
      if (c_ == Case::Int128) {
        const void* p = sqlite3_column_blob(s, 0);
        f.key_bytes(p, 16);
        v = get_i128(p);
      } else {
        v = sqlite3_column_int64(s, 0);
        f.key_bytes(&v, 8);
      }
      f.entry(uint64_t(sqlite3_column_int64(s, 1)), v);
      ++got;
    }
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
    sqlite3_reset(s);
    return got;
  }
  uint64_t lookup(int64_t v, Fold& f) override {
    bind_key(lookup_, v);
    return drain(lookup_, f);
  }
  uint64_t narrow(int64_t v, int n, Fold& f) override {
    bind_key(narrow_, v);
    sqlite3_bind_int(narrow_, 2, n);
    return drain(narrow_, f);
  }
  uint64_t full(Fold& f) override { return drain(full_, f); }

 private:
  bool mmap_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt *lookup_ = nullptr, *narrow_ = nullptr, *full_ = nullptr;
  Case c_ = Case::Id;
  uint8_t kb_[16];
};
#endif

// ------------------------------------------------------------------------------------------
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
void rs_check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(fmt::format("rocksdb {}: {}", what, s.ToString()));
}

// RocksDB: one DB per case in DIR/db. id: 8-byte big-endian key -> 8-byte recno; int128:
// 16-byte key -> recno; col: key = col (8 bytes BE) + id (8 bytes BE), empty value, with an
// 8-byte prefix extractor so the bloom filter serves equality lookups. Default block-based
// table (restart interval 16: keys delta-coded within blocks), bloom filter 10 bits/key,
// block cache LRU of own_cache_bytes(budget); partitioned index and filters, cached in the
// block cache with the top level pinned. Built
// from the sorted entries by SstFileWriter + IngestExternalFile (bulk load, no memtable, no
// compaction).
class RocksEngine : public Engine {
 public:
  rocksdb::Options options(Case c, uint64_t budget) {
    rocksdb::Options o;
    rocksdb::BlockBasedTableOptions t;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    // Partitioned index and filters (RocksDB's wiki, "Partitioned Index/Filters": bounded
    // memory for large databases): the 10 bits/key filter alone is 125 MB at 10^8 keys, more
    // than a 128 MiB budget, so a whole filter in the table reader's heap gets the process
    // killed by the cgroup, and a whole filter through a small block cache is re-read on
    // every Get. Partitions (4 KiB) go through the block cache like data blocks, with only the
    // top-level index of the partitions pinned.
    t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    t.partition_filters = true;
    t.metadata_block_size = 4096;
    t.cache_index_and_filter_blocks = true;
    t.cache_index_and_filter_blocks_with_high_priority = true;
    t.pin_top_level_index_and_filter = true;
    if (budget > 0) t.block_cache = rocksdb::NewLRUCache(own_cache_bytes(budget));
    if (c == Case::Col) {
      o.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(8));
      t.whole_key_filtering = false;
    }
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
  }
  void build(const std::string& dir, Case c, uint64_t rows) override {
    rocksdb::Options o = options(c, 0);
    o.create_if_missing = true;
    const std::string sst = dir + "/bulk.sst";
    {
      rocksdb::SstFileWriter w(rocksdb::EnvOptions(), o);
      rs_check(w.Open(sst), "sst open");
      uint8_t kb[16], vb[8];
      for (const auto& [v, id] : sorted_entries(c, rows)) {
        size_t kn = 8;
        if (c == Case::Int128) {
          put_i128(kb, v);
          kn = 16;
        } else {
          put_be(kb, uint64_t(v));
          if (c == Case::Col) {
            put_be(kb + 8, id);
            kn = 16;
          }
        }
        put_be(vb, id);
        rs_check(w.Put(rocksdb::Slice(reinterpret_cast<char*>(kb), kn),
                       c == Case::Col ? rocksdb::Slice()
                                      : rocksdb::Slice(reinterpret_cast<char*>(vb), 8)),
                 "sst put");
      }
      rs_check(w.Finish(), "sst finish");
    }
    rocksdb::DB* db = nullptr;
    rs_check(rocksdb::DB::Open(o, dir + "/db", &db), "open");
    rocksdb::IngestExternalFileOptions io;
    io.move_files = true;
    rs_check(db->IngestExternalFile({sst}, io), "ingest");
    rs_check(db->Close(), "close");
    delete db;
  }
  void open(const std::string& dir, Case c, uint64_t, uint64_t budget, bool full_scan) override {
    c_ = c;
    rocksdb::DB* db = nullptr;
    rs_check(rocksdb::DB::OpenForReadOnly(options(c, budget), dir + "/db", &db), "open");
    db_.reset(db);
    rocksdb::ReadOptions scan;
    scan.total_order_seek = true;
    if (full_scan) {  // a long sequential scan: read 2 MiB ahead, do not churn the cache
      scan.readahead_size = size_t{2} << 20;
      scan.fill_cache = false;
    }
    it_.reset(db_->NewIterator(scan));
    rocksdb::ReadOptions eq;
    eq.prefix_same_as_start = true;
    eq_it_.reset(db_->NewIterator(eq));
  }
  rocksdb::Slice key_of(int64_t v) {
    if (c_ == Case::Int128) {
      put_i128(kb_, v);
      return rocksdb::Slice(reinterpret_cast<char*>(kb_), 16);
    }
    put_be(kb_, uint64_t(v));
    return rocksdb::Slice(reinterpret_cast<char*>(kb_), 8);
  }
  void fold(const rocksdb::Slice& k, const rocksdb::Slice& val, Fold& f) {
    f.key_bytes(k.data(), k.size());
    if (c_ == Case::Col) {
      f.entry(get_be(k.data() + 8), int64_t(get_be(k.data())));
    } else {
      f.entry(get_be(val.data()),
              c_ == Case::Int128 ? get_i128(k.data()) : int64_t(get_be(k.data())));
    }
  }
  uint64_t lookup(int64_t v, Fold& f) override {
    const rocksdb::Slice k = key_of(v);
    if (c_ != Case::Col) {
      if (!db_->Get(rocksdb::ReadOptions(), k, &val_).ok()) return 0;
      fold(k, val_, f);
      return 1;
    }
    uint64_t got = 0;
    for (eq_it_->Seek(k); eq_it_->Valid(); eq_it_->Next(), ++got) {
      fold(eq_it_->key(), eq_it_->value(), f);
    }
    rs_check(eq_it_->status(), "iterate");
    return got;
  }
  uint64_t narrow(int64_t v, int n, Fold& f) override {
    int got = 0;
    for (it_->Seek(key_of(v)); got < n && it_->Valid(); it_->Next(), ++got) {
      fold(it_->key(), it_->value(), f);
    }
    rs_check(it_->status(), "iterate");
    return uint64_t(got);
  }
  uint64_t full(Fold& f) override {
    uint64_t got = 0;
    for (it_->SeekToFirst(); it_->Valid(); it_->Next(), ++got) {
      fold(it_->key(), it_->value(), f);
    }
    rs_check(it_->status(), "iterate");
    return got;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<rocksdb::Iterator> it_, eq_it_;
  Case c_ = Case::Id;
  uint8_t kb_[16];
  std::string val_;
};
#endif

std::unique_ptr<Engine> make_engine(const std::string& name) {
  using pbtree::NodeLayout;
  if (name == "pbtree") {
    return std::make_unique<PbtreeEngine>(NodeLayout::Firebird, pbtree::kDefaultPageSize);
  }
  if (name == "pbtree-compact") {
    return std::make_unique<PbtreeEngine>(NodeLayout::Compact, pbtree::kDefaultPageSize);
  }
  // 4 KiB pages (LMDB's page size): a miss under a tight budget reads half of what an 8 KiB
  // page costs (pbtree load --page-size 4096).
  if (name == "pbtree-compact-4k") return std::make_unique<PbtreeEngine>(NodeLayout::Compact, 4096);
#ifdef PBTREE_BENCH_HAVE_LMDB
  if (name == "lmdb") return std::make_unique<LmdbEngine>();
#endif
#ifdef PBTREE_BENCH_HAVE_SQLITE
  if (name == "sqlite") return std::make_unique<SqliteEngine>(false);
  if (name == "sqlite-mmap") return std::make_unique<SqliteEngine>(true);
#endif
#ifdef PBTREE_BENCH_HAVE_ROCKSDB
  if (name == "rocksdb") return std::make_unique<RocksEngine>();
#endif
  throw std::runtime_error("engine '" + name + "' unknown or not built in");
}

// Every regular file under dir: fsync, then drop its pages from the page cache.
void drop_dir(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const int fd = ::open(e.path().c_str(), O_RDONLY);
    if (fd < 0) throw std::runtime_error("open " + e.path().string() + ": " + strerror(errno));
    if (::fsync(fd) != 0 || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
      ::close(fd);
      throw std::runtime_error("fsync/fadvise " + e.path().string() + ": " + strerror(errno));
    }
    ::close(fd);
  }
}

// Bytes the files under dir occupy on disk (allocated blocks, logs and lock files included):
// LMDB's data file is as long as its map (sparse), so its length would overstate it.
uint64_t dir_bytes(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0) {
      n += uint64_t(st.st_blocks) * 512;
    }
  }
  return n;
}

struct IoSample {
  uint64_t read_bytes = 0, majflt = 0;
  std::chrono::steady_clock::time_point t;
};
IoSample sample() {
  IoSample s;
  std::ifstream io("/proc/self/io");
  std::string name;
  uint64_t v;
  while (io >> name >> v) {
    if (name == "read_bytes:") s.read_bytes = v;
  }
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  s.majflt = uint64_t(ru.ru_majflt);
  s.t = std::chrono::steady_clock::now();
  return s;
}

uint64_t peak_rss_bytes() {
  std::ifstream st("/proc/self/status");
  std::string line;
  while (std::getline(st, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

int run_query(int argc, char** argv) {
  if (argc < 12) throw std::runtime_error("query: missing arguments");
  const std::string engine = argv[2];
  const Case c = parse_case(argv[3]);
  const std::string dir = argv[4];
  const uint64_t rows = std::stoull(argv[5]);
  const std::string workload = argv[6];
  uint64_t warmup = std::stoull(argv[7]), max_ops = std::stoull(argv[8]);
  const uint64_t budget_mib = std::stoull(argv[9]);
  const int rep = std::stoi(argv[10]);
  const double max_seconds = std::stod(argv[11]);
  const bool verify = argc > 12 && std::string(argv[12]) == "--verify";
  if (workload != "lookup" && workload != "narrow" && workload != "full") {
    throw std::runtime_error("unknown workload '" + workload + "' (lookup, narrow, full)");
  }
  if (workload == "full") warmup = 0, max_ops = 1;  // one scan, from a cold start
  const uint64_t size = dir_bytes(dir);
  auto e = make_engine(engine);
  std::mt19937_64 rng(7 + uint64_t(rep));
  // lookups of col draw a row and look up its COL (so every lookup hits); scans start at a
  // uniform value in [1, rows].
  auto next_value = [&] {
    const uint64_t id = 1 + rng() % rows;
    return workload == "lookup" ? value_of(c, id, rows) : int64_t(id);
  };
  Fold f;
  f.c = c;
  f.rows = rows;
  f.verify = verify;
  auto one = [&] {
    if (workload == "full") {
      const uint64_t n = e->full(f);
      if (n != rows) throw std::runtime_error(fmt::format("full scan: {} of {} entries", n, rows));
      return;
    }
    const int64_t v = next_value();
    if (workload == "lookup") {
      const uint64_t n = e->lookup(v, f);
      if (n == 0 || (c != Case::Col && n != 1)) {
        throw std::runtime_error(fmt::format("lookup {}: {} entries", v, n));
      }
    } else {
      const uint64_t want = std::min<uint64_t>(kNarrow, rows - uint64_t(v) + 1);
      const uint64_t n = e->narrow(v, kNarrow, f);
      if (c != Case::Col && n != want) {
        throw std::runtime_error(fmt::format("narrow from {}: {} entries, want {}", v, n, want));
      }
    }
  };
  const IoSample s0 = sample();
  e->open(dir, c, rows, budget_mib << 20, workload == "full");
  for (uint64_t i = 0; i < warmup; ++i) one();
  const uint64_t cold_sum = f.common;
  const IoSample s1 = sample();
  // Timed phase: up to max_ops operations or max_seconds, whichever comes first.
  uint64_t ops = 0;
  const auto deadline = s1.t + std::chrono::duration<double>(max_seconds);
  while (ops < max_ops) {
    one();
    if ((++ops & 15) == 0 && std::chrono::steady_clock::now() >= deadline) break;
  }
  const IoSample s2 = sample();
  const uint64_t rss = peak_rss_bytes();
  auto line = [&](const char* phase, const IoSample& a, const IoSample& b, uint64_t n,
                  uint64_t checksum) {
    const double secs = std::chrono::duration<double>(b.t - a.t).count();
    const double dn = double(std::max<uint64_t>(n, 1));
    std::printf(
        "%s %s budget=%llu ops_per_s=%.6g bytes_read_per_op=%.1f majflt_per_op=%.3f "
        "size_bytes=%llu peak_rss_bytes=%llu case=%s phase=%s rows=%llu rep=%d ops=%llu "
        "seconds=%.3f entries=%llu checksum=%016llx\n",
        engine.c_str(), workload.c_str(), (unsigned long long)budget_mib,
        secs > 0 ? double(n) / secs : 0.0, double(b.read_bytes - a.read_bytes) / dn,
        double(b.majflt - a.majflt) / dn, (unsigned long long)size, (unsigned long long)rss,
        argv[3], phase, (unsigned long long)rows, rep, (unsigned long long)n, secs,
        (unsigned long long)f.entries, (unsigned long long)checksum);
  };
  if (warmup > 0) line("cold", s0, s1, warmup, cold_sum);
  line("steady", s1, s2, ops, f.common);
  std::fflush(stdout);
  return 0;
}

int usage() {
  std::fprintf(stderr,
               "usage: pbtree-memlim build ENGINE CASE DIR ROWS\n"
               "       pbtree-memlim drop DIR\n"
               "       pbtree-memlim query ENGINE CASE DIR ROWS WORKLOAD WARMUP OPS BUDGET_MIB "
               "REP SECONDS [--verify]\n"
               "       pbtree-memlim col N ROWS   (prints COL of rows 1..N)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  try {
    if (cmd == "build" && argc == 6) {
      const std::string dir = argv[4];
      fs::create_directories(dir);
      make_engine(argv[2])->build(dir, parse_case(argv[3]), std::stoull(argv[5]));
      drop_dir(dir);
      std::printf("%llu\n", (unsigned long long)dir_bytes(dir));
      return 0;
    }
    if (cmd == "drop" && argc == 3) {
      drop_dir(argv[2]);
      return 0;
    }
    if (cmd == "col" && argc == 4) {
      const uint64_t n = std::stoull(argv[2]), rows = std::stoull(argv[3]);
      for (uint64_t id = 1; id <= n; ++id) std::printf("%lld\n", (long long)col_of(id, rows));
      return 0;
    }
    if (cmd == "query") return run_query(argc, argv);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "pbtree-memlim: %s: %s\n", cmd.c_str(), ex.what());
    return 1;
  }
  return usage();
}
