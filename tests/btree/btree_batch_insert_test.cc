// Tests of BTree::insert_batch (btree/batch_insert.cc): merge-append fills leaves as a bulk
// build does and holds the same entries; random batches (duplicates, violations rolled back
// whole) against a std::multimap model on both layouts, ascending and descending.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/pbtree-batch-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
  }
  ~TempDir() {
    for (const auto& f : files_) {
      std::remove(f.c_str());
      std::remove((f + "-wal").c_str());
    }
    ::rmdir(dir_.c_str());
  }
  std::string file(const std::string& name) {
    files_.push_back(dir_ + "/" + name);
    return files_.back();
  }

 private:
  std::string dir_;
  std::vector<std::string> files_;
};

IndexDefinition bigint(const std::string& name, bool unique, bool descending, NodeLayout layout) {
  IndexDefinition def;
  def.name = name;
  def.type.type = ColumnType::Bigint;
  def.format = default_key_format(def.type);
  def.unique = unique;
  def.descending = descending;
  def.layout = layout;
  return def;
}

Bytes key_of(const IndexDefinition& def, int64_t v) {
  KeyBuffer buf;
  build_key(def.type, def.format, parse_value(def.type, std::to_string(v)), def.descending, buf);
  return Bytes(buf.data, buf.data + buf.length);
}

std::vector<std::pair<Bytes, uint64_t>> entries_of(BTree& tree) {
  std::vector<std::pair<Bytes, uint64_t>> out;
  for (Cursor c = tree.scan(); c.valid(); c.next()) {
    out.emplace_back(Bytes(c.key().begin(), c.key().end()), c.record_number());
  }
  return out;
}

TEST(BtreeBatchInsert, MergeAppendFillsLeavesAsABulkBuildAndHoldsItsEntries) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("a.pbt"), 8192);
  const IndexDefinition a = bigint("A", false, false, NodeLayout::Firebird);
  std::mt19937_64 rng(20261201);
  std::vector<int64_t> values(200000);
  for (auto& v : values) v = static_cast<int64_t>(rng() >> 1);
  EntryBatch first, rest, all;
  for (uint64_t i = 0; i < values.size(); ++i) {
    Bytes k = key_of(a, values[i]);
    (i < 1000 ? first : rest).add(k, i, i);
    all.add(k, i, i);
  }
  f->bulk_load(a, first);
  EXPECT_EQ(btree_of(*f, "A").insert_batch(rest), 199000u);
  f->commit();
  const IndexStats st = f->analyze("A");
  EXPECT_EQ(st.nodes, 200000u);
  EXPECT_GE(st.avg_leaf_fill, 0.90);
  f->bulk_load(bigint("B", false, false, NodeLayout::Firebird), all);
  const IndexStats sb = f->analyze("B");
  EXPECT_EQ(st.leaf_buckets, sb.leaf_buckets);
  EXPECT_EQ(st.depth, sb.depth);
  EXPECT_EQ(entries_of(btree_of(*f, "A")), entries_of(btree_of(*f, "B")));
  EXPECT_EQ(btree_of(*f, "A").verify().entries, 200000u);
}

TEST(BtreeBatchInsert, PagesARunGivesUpGoToTheFreeListAndAreReused) {
  TempDir tmp;
  const std::string path = tmp.file("r.pbt");
  auto f = IndexFile::open_or_create(path, 4096);
  const IndexDefinition d = bigint("R", false, false, NodeLayout::Firebird);
  EntryBatch b0;
  for (int64_t i = 0; i < 5000; ++i) b0.add(key_of(d, i * 10), static_cast<uint64_t>(i), 0);
  f->bulk_load(d, b0);
  // Single inserts split the leaves of [0, 30000) into pages that are not full.
  std::vector<int64_t> singles(3000);
  for (int64_t i = 0; i < 3000; ++i) singles[size_t(i)] = i * 10 + 5;
  std::shuffle(singles.begin(), singles.end(), std::mt19937_64(7));
  for (int64_t v : singles) btree_of(*f, "R").insert(key_of(d, v), uint64_t(10000 + v));
  f->commit();
  const uint32_t leaves_before = f->analyze("R").leaf_buckets;
  EXPECT_EQ(f->free_page_count(), 0u);
  // A batch touching every one of them rewrites them full: fewer pages, the rest freed.
  EntryBatch b1;
  for (int64_t i = 0; i < 3000; i += 50) b1.add(key_of(d, i * 10 + 1), uint64_t(20000 + i), 0);
  btree_of(*f, "R").insert_batch(b1);
  f->commit();
  const uint32_t freed = f->free_page_count();
  EXPECT_GT(freed, 0u);
  EXPECT_EQ(f->analyze("R").leaf_buckets, leaves_before - freed);
  const uint32_t pages = f->page_count();
  // A batch that grows the run takes the freed pages before the file grows.
  EntryBatch b2;
  for (int64_t i = 0; i < 3000; ++i) b2.add(key_of(d, i * 10 + 2), uint64_t(30000 + i), 0);
  btree_of(*f, "R").insert_batch(b2);
  f->commit();
  EXPECT_LT(f->free_page_count(), freed);
  EXPECT_EQ(btree_of(*f, "R").verify().entries, 5000u + 3000u + 60u + 3000u);
  EXPECT_GE(f->page_count(), pages);
}

// Random batches against a std::multimap model. Values come from a small range so batches
// hit existing keys; about one batch in four carries a violation (a (key, recno) pair
// already stored, or an equal key in a unique index) and must be rolled back whole.
void run_model(NodeLayout layout, bool descending, bool unique) {
  const uint64_t seed =
      20261201 + (layout == NodeLayout::Compact ? 10 : 0) + descending * 2 + unique;
  SCOPED_TRACE(::testing::Message() << "seed " << seed << " layout " << static_cast<int>(layout)
                                    << " descending " << descending << " unique " << unique);
  std::mt19937_64 rng(seed);
  TempDir tmp;
  const std::string path = tmp.file("m.pbt");
  auto f = IndexFile::open_or_create(path, 4096);
  const IndexDefinition def = bigint("M", unique, descending, layout);
  f->create_index(def);
  std::multimap<int64_t, uint64_t> model;  // value -> record numbers
  uint64_t next_recno = 1;
  int failures = 0;
  for (int round = 0; round < 16; ++round) {
    EntryBatch batch;
    std::vector<std::pair<int64_t, uint64_t>> added;
    const int n = 1 + static_cast<int>(rng() % 300);
    std::map<int64_t, int> batch_values;
    for (int i = 0; i < n; ++i) {
      int64_t v = static_cast<int64_t>(rng() % 20000) - 10000;
      if (unique && (model.count(v) != 0 || batch_values.count(v) != 0)) continue;
      batch_values[v]++;
      const uint64_t r = next_recno++;
      batch.add(key_of(def, v), r, static_cast<uint64_t>(i));
      added.emplace_back(v, r);
    }
    const bool violate = !model.empty() && rng() % 4 == 0;
    if (violate) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      // A stored pair again (or, unique, the stored value under a new record number).
      batch.add(key_of(def, it->first), unique ? next_recno++ : it->second, 999999);
    }
    if (violate) {
      EXPECT_THROW(btree_of(*f, "M").insert_batch(batch), UsageError);
      f->rollback();
      ++failures;
    } else {
      EXPECT_EQ(btree_of(*f, "M").insert_batch(batch), added.size());
      f->commit();
      for (const auto& [v, r] : added) model.emplace(v, r);
    }
    if (round % 6 == 5) {  // reopen: the committed state is what survives
      f.reset();
      f = IndexFile::open(path, {.writable = true});
    }
    // The model in index order: (key, record number), keys in index order.
    std::vector<std::pair<Bytes, uint64_t>> expect;
    for (const auto& [v, r] : model) expect.emplace_back(key_of(def, v), r);
    std::sort(expect.begin(), expect.end(), [&](const auto& x, const auto& y) {
      int c = compare_keys(x.first, y.first, descending);
      return c != 0 ? c < 0 : x.second < y.second;
    });
    ASSERT_EQ(entries_of(btree_of(*f, "M")), expect) << "round " << round;
    ASSERT_EQ(btree_of(*f, "M").verify().entries, model.size());
  }
  EXPECT_GT(failures, 0);
}

TEST(BtreeBatchInsert, ModelFirebirdAscending) {
  run_model(NodeLayout::Firebird, false, false);
}
TEST(BtreeBatchInsert, ModelFirebirdDescendingUnique) {
  run_model(NodeLayout::Firebird, true, true);
}
TEST(BtreeBatchInsert, ModelCompactAscendingUnique) {
  run_model(NodeLayout::Compact, false, true);
}
TEST(BtreeBatchInsert, ModelCompactDescending) {
  run_model(NodeLayout::Compact, true, false);
}

TEST(BtreeBatchInsert, ViolationLeavesTheTreeUnchangedBeforeRollback) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("v.pbt"), 4096);
  const IndexDefinition d = bigint("V", true, false, NodeLayout::Firebird);
  EntryBatch b0;
  for (int64_t i = 0; i < 3000; ++i) b0.add(key_of(d, i), static_cast<uint64_t>(i), 0);
  f->bulk_load(d, b0);
  const auto before = entries_of(btree_of(*f, "V"));
  const uint32_t root = btree_of(*f, "V").root();
  EntryBatch bad;
  bad.add(key_of(d, 5000), 7000, 1);
  bad.add(key_of(d, 17), 7001, 2);  // 17 is stored: unique violation
  EXPECT_THROW(btree_of(*f, "V").insert_batch(bad), UsageError);
  EXPECT_EQ(btree_of(*f, "V").root(), root);
  EXPECT_EQ(entries_of(btree_of(*f, "V")), before);
}

}  // namespace
}  // namespace pbtree
