// The living B-tree inside an IndexFile: empty indexes filled by inserts, changes made
// durable by flush() and seen after reopening, and bulk-built vs inserted indexes giving the
// same scans.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <map>
#include <random>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;
using Entry = std::pair<std::vector<uint8_t>, uint64_t>;

IndexDefinition def_of(const std::string& name, const std::string& type, bool unique,
                       bool descending) {
  IndexDefinition d;
  d.name = name;
  d.type = TypeSpec::parse(type);
  d.format = default_key_format(d.type);
  d.unique = unique;
  d.descending = descending;
  return d;
}

std::vector<uint8_t> key_of(const IndexDefinition& d, const Value& v) {
  KeyBuffer kb;
  build_key(d.type, d.format, v, d.descending, kb);
  return std::vector<uint8_t>(kb.data, kb.data + kb.length);
}

std::vector<Entry> scan_all(const BTree& t, bool backward) {
  ScanRange r;
  r.backward = backward;
  return testing::collect(t.scan(r));
}

TEST(FileBtreeTreeFile, InsertedEntriesSurviveFlushAndReopen) {
  TempPath tmp;
  IndexDefinition d = def_of("BY_ID", "bigint", true, false);
  {
    auto f = IndexFile::open_or_create(tmp.path(), 4096);
    f->create_index(d);
    BTree& t = btree_of(*f, "BY_ID");
    for (int64_t i = 0; i < 8000; ++i) t.insert(key_of(d, Value::exact((i * 7919) % 8000)), i);
    t.insert(key_of(d, Value::null()), 99999);
    f->commit();
  }
  auto f = IndexFile::open(tmp.path());
  BTree& t = btree_of(*f, "BY_ID");
  EXPECT_EQ(t.find(key_of(d, Value::exact(7919))), (std::vector<uint64_t>{1}));
  EXPECT_EQ(t.find(key_of(d, Value::null())), (std::vector<uint64_t>{99999}));
  TreeCheck c = t.verify();
  EXPECT_EQ(c.entries, 8001u);
  EXPECT_EQ(f->analyze("BY_ID").nodes, 8001u);
  EXPECT_EQ(f->find_index("BY_ID")->root_page, t.root());
  EXPECT_THROW(t.insert(key_of(d, Value::exact(-1)), 5), UsageError);  // read-only file
}

TEST(FileBtreeTreeFile, CacheBytesSizesThePoolToTheBudget) {
  TempPath tmp;
  IndexDefinition d = def_of("BY_ID", "bigint", true, false);
  {
    auto f = IndexFile::open_or_create(tmp.path(), 8192);
    f->create_index(d);
    f->close();
  }
  auto f = IndexFile::open(tmp.path());
  f->set_cache_bytes(size_t{64} << 20);  // 64 MiB / 10 KiB per 8 KiB frame
  EXPECT_EQ(btree_of(*f, "BY_ID").pool().frame_count(), 6553u);
  EXPECT_THROW(f->set_cache_bytes(size_t{1} << 20), UsageError);  // the pool exists
}

TEST(FileBtreeTreeFile, RemovesOfABulkBuiltIndexAreDurable) {
  TempPath tmp;
  IndexDefinition d = def_of("V", "varchar(20)", false, true);
  std::vector<std::string> words;
  for (int i = 0; i < 5000; ++i) words.push_back(fmt::format("w{:05}", (i * 37) % 5000));
  {
    auto f = IndexFile::open_or_create(tmp.path(), 4096);
    EntryBatch batch;
    for (size_t i = 0; i < words.size(); ++i) {
      batch.add(key_of(d, Value::of_text(words[i])), i, i);
    }
    f->bulk_load(d, batch);
    BTree& t = btree_of(*f, "V");
    for (size_t i = 0; i < words.size(); i += 2) t.remove(key_of(d, Value::of_text(words[i])), i);
    f->commit();
  }
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  BTree& t = btree_of(*f, "V");
  EXPECT_EQ(t.verify().entries, 2500u);
  EXPECT_EQ(t.find(key_of(d, Value::of_text(words[0]))), std::vector<uint64_t>{});
  EXPECT_EQ(t.find(key_of(d, Value::of_text(words[1]))), (std::vector<uint64_t>{1}));
}

struct BulkCase {
  const char* type;
  bool unique;
  bool descending;
};

class FileBtreeTreeBulkVsInsert : public ::testing::TestWithParam<BulkCase> {};

TEST_P(FileBtreeTreeBulkVsInsert, SameScans) {
  const BulkCase& bc = GetParam();
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 4096);
  IndexDefinition bulk = def_of("BULK", bc.type, bc.unique, bc.descending);
  IndexDefinition ins = def_of("INS", bc.type, bc.unique, bc.descending);
  std::mt19937_64 rng(42);
  EntryBatch batch;
  std::vector<Entry> entries;
  auto less = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    return compare_keys(a, b, false) < 0;
  };
  std::map<std::vector<uint8_t>, int, decltype(less)> seen(less);
  for (uint64_t i = 0; i < 8000; ++i) {
    Value v =
        rng() % 50 == 0 ? Value::null() : Value::exact(static_cast<int64_t>(rng() % 10000) - 5000);
    std::vector<uint8_t> k = key_of(bulk, v);
    if (bc.unique && v.kind != Value::Kind::Null && seen[k]++ > 0) continue;
    batch.add(k, i, i);
    entries.emplace_back(std::move(k), i);
  }
  f->bulk_load(bulk, batch);
  f->create_index(ins);
  BTree& t = btree_of(*f, "INS");
  for (const Entry& e : entries) t.insert(e.first, e.second);
  BTree& b = btree_of(*f, "BULK");
  EXPECT_EQ(b.verify().entries, entries.size());
  EXPECT_EQ(t.verify().entries, entries.size());
  EXPECT_EQ(scan_all(b, false), scan_all(t, false));
  EXPECT_EQ(scan_all(b, true), scan_all(t, true));
  // And the bulk-built tree takes inserts too.
  b.insert(key_of(bulk, Value::exact(123456)), 777777);
  EXPECT_EQ(b.find(key_of(bulk, Value::exact(123456))), (std::vector<uint64_t>{777777}));
  EXPECT_EQ(b.verify().entries, entries.size() + 1);
}

INSTANTIATE_TEST_SUITE_P(Types, FileBtreeTreeBulkVsInsert,
                         ::testing::Values(BulkCase{"bigint", false, false},
                                           BulkCase{"integer", true, true},
                                           BulkCase{"numeric(18,2)", false, true},
                                           BulkCase{"int128", false, false}),
                         // Named by position: the default name prints the struct's bytes,
                         // padding included, which differ from run to run.
                         [](const auto& info) { return "Case" + std::to_string(info.index); });

}  // namespace
}  // namespace pbtree
