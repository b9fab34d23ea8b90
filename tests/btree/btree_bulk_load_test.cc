// Tests of IndexFile::bulk_load and analyze (include/pbtree/index_file.h): exact page bytes and
// gstat figures for small indexes derived by hand from fast_load's rules, reopen round trips,
// failed loads leaving the file byte-identical, structural checks against a sorted model, and
// corrupt files raising CorruptError instead of hanging.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "btree/bulk_build.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "page/file_header.h"
#include "page/page_file.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/pbtree-bulk-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
  }
  ~TempDir() {
    for (const auto& f : files_) std::remove(f.c_str());
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

Bytes file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

IndexDefinition varchar1(const std::string& name, bool unique = false) {
  IndexDefinition def;
  def.name = name;
  def.type.type = ColumnType::Varchar;
  def.type.length = 1;
  def.format = KeyFormat::Text;
  def.unique = unique;
  return def;
}

IndexDefinition integer(const std::string& name, bool unique = false, bool descending = false) {
  IndexDefinition def;
  def.name = name;
  def.type.type = ColumnType::Integer;
  def.format = KeyFormat::Double;
  def.unique = unique;
  def.descending = descending;
  return def;
}

TEST(BtreeBulkLoad, EmptyInputGivesOneEmptyLeaf) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("a.pbt"), 4096);
  EntryBatch batch;
  IndexInfo info = f->bulk_load(integer("I_EMPTY"), batch);
  EXPECT_EQ(info.root_page, 2u);
  EXPECT_EQ(info.id, 0u);
  EXPECT_EQ(f->page_count(), 3u);
  Bytes page(4096);
  read_file_page(*f, 2, page.data());
  BtreeHeader h = read_btree_header(page.data());
  EXPECT_EQ(h.length, 40);
  EXPECT_EQ(h.level, 0);
  EXPECT_EQ(h.jump_interval, 576);
  EXPECT_EQ(page[39], 0x20);
  IndexStats st = f->analyze("I_EMPTY");
  EXPECT_EQ(st.depth, 1u);
  EXPECT_EQ(st.leaf_buckets, 1u);
  EXPECT_EQ(st.nodes, 0u);
  EXPECT_EQ(st.index_pages, 1u);
  EXPECT_EQ(st.avg_node_length, 0.0);
  EXPECT_EQ(st.fill_distribution[0], 1u);
}

// The example page of tests/node/page_btree_test.cc, built by bulk_load from unsorted input.
TEST(BtreeBulkLoad, ExampleLeafPageBytes) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("a.pbt"), 8192);
  EntryBatch batch;
  batch.add(Bytes{0xC0, 0x24}, 3, 4);
  batch.add(Bytes{0xC0, 0x08}, 7, 3);
  batch.add(Bytes{0xBF, 0xF0}, 0, 0);
  batch.add(Bytes{0xC0, 0x08}, 2, 2);
  batch.add(Bytes{0xC0}, 1, 1);
  f->bulk_load(integer("I_EX"), batch);
  Bytes page(8192);
  read_file_page(*f, 2, page.data());
  EXPECT_EQ(Bytes(page.begin() + 39, page.begin() + 61),
            (Bytes{0x00, 0x00, 0x00, 0x02, 0xBF, 0xF0, 0xA1, 0x00, 0x00, 0xC0, 0xA2,
                   0x00, 0x01, 0x08, 0x87, 0x00, 0x02, 0xA3, 0x00, 0x01, 0x24, 0x20}));
  BtreeHeader h = read_btree_header(page.data());
  EXPECT_EQ(h.length, 61);
  EXPECT_EQ(h.prefix_total, 4u);
  EXPECT_EQ(h.jump_interval, 576);
  EXPECT_EQ(h.jump_count, 0);
}

TEST(BtreeBulkLoad, ExampleLeafStatistics) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("a.pbt"), 8192);
  EntryBatch batch;
  batch.add(Bytes{0xBF, 0xF0}, 0, 0);
  batch.add(Bytes{0xC0}, 1, 1);
  batch.add(Bytes{0xC0, 0x08}, 2, 2);
  batch.add(Bytes{0xC0, 0x08}, 7, 3);
  batch.add(Bytes{0xC0, 0x24}, 3, 4);
  f->bulk_load(integer("I_EX"), batch);
  IndexStats st = f->analyze("I_EX");
  EXPECT_EQ(st.root_page, 2u);
  EXPECT_EQ(st.depth, 1u);
  EXPECT_EQ(st.leaf_buckets, 1u);
  EXPECT_EQ(st.nodes, 5u);
  EXPECT_DOUBLE_EQ(st.avg_node_length, 21.0 / 5);  // 6 + 4 + 4 + 3 + 4
  EXPECT_EQ(st.total_dup, 1u);
  EXPECT_EQ(st.max_dup, 1u);
  EXPECT_DOUBLE_EQ(st.avg_key_length, 14.0 / 5);  // packed 4 + 2 + 3 + 2 + 3
  EXPECT_DOUBLE_EQ(st.avg_prefix_length, 4.0 / 5);
  EXPECT_DOUBLE_EQ(st.avg_data_length, 5.0 / 5);
  EXPECT_DOUBLE_EQ(st.compression_ratio, 9.0 / 14);
  EXPECT_EQ(st.clustering_factor, 1u);
  EXPECT_DOUBLE_EQ(st.clustering_ratio, 1.0 / 5);
  EXPECT_EQ(st.fill_distribution[0], 1u);
  EXPECT_EQ(st.index_pages, 1u);
  EXPECT_DOUBLE_EQ(st.bytes_per_entry, 8192.0 / 5);
  EXPECT_DOUBLE_EQ(st.avg_leaf_fill, 22.0 / (8192 - 39));
}

// 3000 duplicates of key 41 (varchar(1), 4 KiB pages, jump interval 544), recnos 0..2999.
// Leaf nodes: the first on a page 4 bytes (ONE_LENGTH), the rest 3 bytes (ZERO_LENGTH).
// Jump nodes after nodes 181, 362, 543, 725, 906, 1087, 1269 (5 bytes, then 4 each: 29).
// Node 1340 would pass 4090 (40 + 3k + 29 + 3 > 4090), so node 1339 becomes END_BUCKET
// (4 bytes): each full leaf holds 1339 entries and has btr_length 4090. Leaves 1339 + 1339 +
// 322; the last leaf: 39 + 4 + 321 * 3 + END_LEVEL + one 5-byte jump node = 1012 bytes.
// Pages: leaf 2, leaf 3, root 4 (allocated at the first split), leaf 5.
class BtreeDuplicateRun : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_.file("d.pbt");
    auto f = IndexFile::open_or_create(path_, 4096);
    EntryBatch batch;
    for (uint64_t r = 0; r < 3000; ++r) batch.add(Bytes{0x41}, 2999 - r, r);
    info_ = f->bulk_load(varchar1("I_DUP"), batch);
  }
  TempDir tmp_;
  std::string path_;
  IndexInfo info_;
};

TEST_F(BtreeDuplicateRun, Statistics) {
  auto f = IndexFile::open(path_);
  IndexStats st = f->analyze("I_DUP");
  EXPECT_EQ(st.root_page, 4u);
  EXPECT_EQ(st.depth, 2u);
  EXPECT_EQ(st.leaf_buckets, 3u);
  EXPECT_EQ(st.nodes, 3000u);
  EXPECT_DOUBLE_EQ(st.avg_node_length, (4018.0 + 4018 + 967) / 3000);
  EXPECT_EQ(st.total_dup, 2999u);
  EXPECT_EQ(st.max_dup, 2999u);
  EXPECT_DOUBLE_EQ(st.avg_key_length, 2.0);
  EXPECT_DOUBLE_EQ(st.avg_prefix_length, 2997.0 / 3000);
  EXPECT_DOUBLE_EQ(st.avg_data_length, 3.0 / 3000);
  EXPECT_DOUBLE_EQ(st.compression_ratio, 0.5);
  EXPECT_EQ(st.clustering_factor, 13u);  // recno / 239: data pages 0..12
  EXPECT_EQ(st.fill_distribution[0], 0u);
  EXPECT_EQ(st.fill_distribution[1], 1u);
  EXPECT_EQ(st.fill_distribution[4], 2u);
  EXPECT_EQ(st.index_pages, 4u);
  EXPECT_DOUBLE_EQ(st.bytes_per_entry, 4.0 * 4096 / 3000);
  EXPECT_DOUBLE_EQ(st.avg_leaf_fill, (2 * 4022.0 / 4028 + 968.0 / 4052) / 3);
}

TEST_F(BtreeDuplicateRun, LeafPagesAndJumpNodes) {
  auto f = IndexFile::open(path_);
  Bytes page(4096);
  read_file_page(*f, 2, page.data());
  BtreeHeader h = read_btree_header(page.data());
  EXPECT_EQ(h.length, 4090);
  EXPECT_EQ(h.sibling, 3u);
  EXPECT_EQ(h.left_sibling, 0u);
  EXPECT_EQ(h.jump_interval, 544);
  EXPECT_EQ(h.jump_count, 7);
  EXPECT_EQ(h.jump_size, 29);
  EXPECT_EQ(h.prefix_total, 1339u);  // 1338 duplicates + the END_BUCKET's prefix 1
  std::vector<JumpEntry> jumps = decode_jump_table(page.data(), 4096);
  std::vector<uint32_t> targets;
  for (const auto& j : jumps) targets.push_back((j.node_offset - 39 - 29 - 4) / 3 + 1);
  EXPECT_EQ(targets, (std::vector<uint32_t>{181, 362, 543, 725, 906, 1087, 1269}));
  BtreePageImage leaf = decode_page(page.data(), 4096);
  ASSERT_EQ(leaf.entries.size(), 1339u);
  EXPECT_EQ(leaf.entries.front().recno, 0u);
  EXPECT_EQ(leaf.entries.back().recno, 1338u);
  ASSERT_TRUE(leaf.end_bucket.has_value());
  EXPECT_EQ(leaf.end_bucket->recno, 1339u);

  read_file_page(*f, 5, page.data());
  h = read_btree_header(page.data());
  EXPECT_EQ(h.length, 1012);
  EXPECT_EQ(h.left_sibling, 3u);
  EXPECT_EQ(h.sibling, 0u);
  EXPECT_EQ(h.jump_count, 1);
  BtreePageImage last = decode_page(page.data(), 4096);
  EXPECT_EQ(last.entries.size(), 322u);
  EXPECT_EQ(last.entries.front().recno, 2678u);
}

TEST_F(BtreeDuplicateRun, RootPageBytes) {
  auto f = IndexFile::open(path_);
  Bytes page(4096);
  read_file_page(*f, 4, page.data());
  BtreeHeader h = read_btree_header(page.data());
  EXPECT_EQ(h.level, 1);
  EXPECT_EQ(h.length, 52);
  EXPECT_EQ(h.prefix_total, 1u);
  // Degenerate node -> 2; (41, recno 1339) -> 3; duplicate (recno 2678) -> 5; END_LEVEL.
  EXPECT_EQ(Bytes(page.begin() + 39, page.begin() + 52),
            (Bytes{0x60, 0x00, 0x02, 0xBB, 0x29, 0x03, 0x00, 0x41, 0x96, 0x53, 0x05, 0x01, 0x20}));
}

TEST_F(BtreeDuplicateRun, SiblingLoopIsCorruptNotAHang) {
  {
    PageFile pf = PageFile::open(path_, true);
    pf.set_page_size(4096);
    Bytes page(4096);
    pf.read(3, page.data());
    put_u32(page.data() + 16, 2);  // second leaf -> first leaf
    pf.write(3, page.data());
  }
  auto f = IndexFile::open(path_);
  try {
    f->analyze("I_DUP");
    FAIL() << "no exception";
  } catch (const CorruptError& e) {
    EXPECT_EQ(std::string(e.what()),
              path_ + ": index I_DUP: page 2 (b-tree): reached twice (sibling or child loop)");
  }
}

TEST_F(BtreeDuplicateRun, ChecksumMismatchIsCorrupt) {
  {
    std::fstream io(path_, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(3 * 4096 + 100);
    io.put('\x55');
  }
  auto f = IndexFile::open(path_);
  try {
    f->analyze("I_DUP");
    FAIL() << "no exception";
  } catch (const CorruptError& e) {
    EXPECT_EQ(std::string(e.what()), path_ + ": page 3 (b-tree): checksum mismatch");
  }
}

TEST_F(BtreeDuplicateRun, WrongLevelIsCorrupt) {
  {
    PageFile pf = PageFile::open(path_, true);
    pf.set_page_size(4096);
    Bytes page(4096);
    pf.read(3, page.data());
    page[33] = 1;
    pf.write(3, page.data());
  }
  auto f = IndexFile::open(path_);
  try {
    f->analyze("I_DUP");
    FAIL() << "no exception";
  } catch (const CorruptError& e) {
    EXPECT_EQ(std::string(e.what()),
              path_ + ": index I_DUP: page 3 (b-tree): level 1 where level 0 was expected");
  }
}

TEST(BtreeBulkLoad, ReopenGivesTheSameIndexes) {
  TempDir tmp;
  std::string path = tmp.file("r.pbt");
  IndexStats before;
  {
    auto f = IndexFile::open_or_create(path, 8192);
    EntryBatch a, b;
    for (uint32_t i = 0; i < 5000; ++i) {
      a.add(Bytes{uint8_t(0xC0 + (i >> 8)), uint8_t(i)}, i, i);
      b.add(Bytes{0x41}, i, i);
    }
    f->bulk_load(integer("I_A", true), a);
    f->bulk_load(varchar1("I_B"), b);
    before = f->analyze("I_A");
  }
  auto f = IndexFile::open(path);
  EXPECT_EQ(f->page_size(), 8192u);
  std::vector<IndexInfo> idx = f->indexes();
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx[0].def.name, "I_A");
  EXPECT_EQ(idx[0].id, 0u);
  EXPECT_TRUE(idx[0].def.unique);
  EXPECT_EQ(idx[0].def.type.type, ColumnType::Integer);
  EXPECT_EQ(idx[1].def.name, "I_B");
  EXPECT_EQ(idx[1].id, 1u);
  EXPECT_EQ(idx[1].def.format, KeyFormat::Text);
  EXPECT_EQ(idx[1].def.type.length, 1);
  EXPECT_FALSE(idx[1].def.unique);
  IndexStats after = f->analyze("I_A");
  EXPECT_EQ(after.root_page, before.root_page);
  EXPECT_EQ(after.nodes, 5000u);
  EXPECT_EQ(after.leaf_buckets, before.leaf_buckets);
  EXPECT_EQ(f->analyze("I_B").nodes, 5000u);
  EXPECT_FALSE(f->find_index("I_C").has_value());
}

class BtreeFailedLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_.file("f.pbt");
    {
      auto f = IndexFile::open_or_create(path_, 4096);
      EntryBatch batch;
      for (uint32_t i = 0; i < 2000; ++i) batch.add(Bytes{0xC0, uint8_t(i >> 8), uint8_t(i)}, i, i);
      f->bulk_load(integer("I_OLD", true), batch);
    }  // closed: the checkpoint's batch is in place (page/wal.h)
    before_ = file_bytes(path_);
  }
  void expect_unchanged() {
    EXPECT_EQ(file_bytes(path_), before_);
    auto f = IndexFile::open(path_);
    EXPECT_EQ(f->indexes().size(), 1u);
    EXPECT_EQ(f->analyze("I_OLD").nodes, 2000u);
  }
  TempDir tmp_;
  std::string path_;
  Bytes before_;
};

TEST_F(BtreeFailedLoad, DuplicateInUniqueIndex) {
  auto f = IndexFile::open(path_, {.writable = true});
  EntryBatch batch;
  for (uint32_t i = 0; i < 3000; ++i) batch.add(Bytes{0xC1, uint8_t(i >> 8), uint8_t(i)}, i, i);
  batch.add(Bytes{0xC1, 0x05, 0x07}, 9999, 77777);
  try {
    f->bulk_load(integer("I_NEW", true), batch);
    FAIL() << "no exception";
  } catch (const DuplicateKeyError& e) {
    EXPECT_EQ(e.tag_a, 1287u);
    EXPECT_EQ(e.tag_b, 77777u);
    EXPECT_STREQ(e.what(),
                 "unique index I_NEW: value 172256 appears twice (entries 1287 and 77777)");
  }
  expect_unchanged();
}

TEST_F(BtreeFailedLoad, SameKeyAndRecordNumber) {
  auto f = IndexFile::open(path_, {.writable = true});
  EntryBatch batch;
  batch.add(Bytes{0xC1}, 5, 1);
  batch.add(Bytes{0xC1}, 5, 2);
  EXPECT_THROW(f->bulk_load(integer("I_NEW"), batch), DuplicateKeyError);
  expect_unchanged();
}

TEST_F(BtreeFailedLoad, KeyTooLong) {
  auto f = IndexFile::open(path_, {.writable = true});
  EntryBatch batch;
  batch.add(Bytes(9, 0xC1), 5, 1);
  EXPECT_THROW(f->bulk_load(integer("I_NEW"), batch), KeyError);
  expect_unchanged();
}

TEST_F(BtreeFailedLoad, NameExists) {
  auto f = IndexFile::open(path_, {.writable = true});
  EntryBatch batch;
  EXPECT_THROW(f->bulk_load(integer("I_OLD"), batch), UsageError);
  expect_unchanged();
}

TEST_F(BtreeFailedLoad, BadName) {
  auto f = IndexFile::open(path_, {.writable = true});
  EntryBatch batch;
  EXPECT_THROW(f->bulk_load(integer("I-NEW"), batch), UsageError);
  EXPECT_THROW(f->bulk_load(integer(std::string(32, 'A')), batch), UsageError);
  expect_unchanged();
}

TEST_F(BtreeFailedLoad, ReadOnly) {
  auto f = IndexFile::open(path_);
  EntryBatch batch;
  EXPECT_THROW(f->bulk_load(integer("I_NEW"), batch), UsageError);
  expect_unchanged();
}

TEST(BtreeBulkLoad, NullKeysInUniqueIndexAreAllowed) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("n.pbt"), 4096);
  EntryBatch asc, desc;
  for (uint32_t i = 0; i < 10; ++i) {
    asc.add(Bytes{}, i, i);
    desc.add(Bytes{0xFF}, i, i);
  }
  f->bulk_load(integer("I_ASC", true), asc);
  f->bulk_load(integer("I_DESC", true, true), desc);
  EXPECT_EQ(f->analyze("I_ASC").total_dup, 9u);
  EXPECT_EQ(f->analyze("I_DESC").total_dup, 9u);
}

// Every leaf entry, in order, against the sorted input; separators equal the children's first
// keys; END_BUCKET copies equal the right sibling's first entry.
void check_tree_against_model(IndexFile& f, const IndexInfo& info,
                              std::vector<std::pair<Bytes, uint64_t>> model, bool descending) {
  std::sort(model.begin(), model.end(), [&](const auto& a, const auto& b) {
    int c = compare_keys(a.first, b.first, descending);
    return c != 0 ? c < 0 : a.second < b.second;
  });
  const uint32_t ps = f.page_size();
  Bytes page(ps);
  uint32_t p = info.root_page;
  read_file_page(f, p, page.data());
  // Descend along first nodes, checking each separator against the child's first entry.
  while (read_btree_header(page.data()).level > 0) {
    BtreePageImage img = decode_page(page.data(), ps);
    for (size_t i = 1; i < img.entries.size(); ++i) {
      Bytes child(ps);
      read_file_page(f, img.entries[i].page_number, child.data());
      BtreePageImage c = decode_page(child.data(), ps);
      ASSERT_FALSE(c.entries.empty());
      EXPECT_EQ(c.entries[0].key, img.entries[i].key);
      EXPECT_EQ(c.entries[0].recno, img.entries[i].recno);
    }
    p = img.entries[0].page_number;
    read_file_page(f, p, page.data());
  }
  size_t at = 0;
  std::optional<PageEntry> pending_end_bucket;
  for (;;) {
    BtreePageImage img = decode_page(page.data(), ps);
    if (pending_end_bucket) {
      ASSERT_FALSE(img.entries.empty());
      EXPECT_EQ(img.entries[0], *pending_end_bucket);
    }
    for (const PageEntry& e : img.entries) {
      ASSERT_LT(at, model.size());
      EXPECT_EQ(e.key, model[at].first) << "entry " << at;
      EXPECT_EQ(e.recno, model[at].second) << "entry " << at;
      ++at;
    }
    pending_end_bucket = img.end_bucket;
    if (img.header.sibling == 0) break;
    read_file_page(f, img.header.sibling, page.data());
  }
  EXPECT_EQ(at, model.size());
}

TEST(BtreeBulkLoad, RandomKeysMatchSortedModel) {
  for (bool descending : {false, true}) {
    const uint64_t seed = 20261130;
    std::printf("seed %llu descending %d\n", (unsigned long long)seed, descending);
    std::mt19937_64 rng(seed);
    TempDir tmp;
    auto f = IndexFile::open_or_create(tmp.file("m.pbt"), 4096);
    EntryBatch batch;
    std::vector<std::pair<Bytes, uint64_t>> model;
    std::uniform_int_distribution<int> len(1, 8), byte(0, 255), small(0, 3);
    for (uint64_t i = 0; i < 30000; ++i) {
      Bytes k(len(rng));
      for (size_t j = 0; j < k.size(); ++j) {
        k[j] = static_cast<uint8_t>(j < 2 ? 0xC0 + small(rng) : byte(rng));
      }
      uint64_t recno = (rng() % 1000) * 30000 + i;  // unique
      batch.add(k, recno, i);
      model.emplace_back(k, recno);
    }
    IndexInfo info = f->bulk_load(integer("I_RND", false, descending), batch);
    IndexStats st = f->analyze("I_RND");
    EXPECT_EQ(st.nodes, 30000u);
    EXPECT_GE(st.depth, 2u);
    check_tree_against_model(*f, info, model, descending);
  }
}

TEST(BtreeBulkLoad, DeepTreeWithLongKeys) {
  // 1000-byte keys (varchar(1000), 4 KiB pages): 3 keys per page, so the tree gets deep.
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("deep.pbt"), 4096);
  IndexDefinition def;
  def.name = "I_LONG";
  def.type.type = ColumnType::Varchar;
  def.type.length = 1000;
  def.format = KeyFormat::Text;
  EntryBatch batch;
  std::vector<std::pair<Bytes, uint64_t>> model;
  for (uint32_t i = 0; i < 200; ++i) {
    Bytes k(1000, 0x20);
    k[0] = static_cast<uint8_t>(i * 7919 % 200);
    k[999] = 0x41;
    batch.add(k, i, i);
    model.emplace_back(k, i);
  }
  IndexInfo info = f->bulk_load(def, batch);
  IndexStats st = f->analyze("I_LONG");
  EXPECT_EQ(st.nodes, 200u);
  EXPECT_GE(st.depth, 4u);
  check_tree_against_model(*f, info, model, false);
}

// Keys longer than the jump interval (1300 bytes, varchar(2000): interval 1216): the first node of
// a page passes the first jump area by itself but gets no jump node (Firebird's fast_load;
// find_in_page rejects one). Ten 1305-byte nodes: leaf 0 holds entries 0..4 and the END_BUCKET
// copy of 5 with jump nodes on nodes 1..5 (the last on the END_BUCKET), leaf 1 entries 5..9
// with jump nodes on 6..9; every jump node points past its page's first node.
TEST(BtreeBulkLoad, NoJumpNodeOnTheFirstNodeOfAPage) {
  FastLoader::Options o;
  o.page_size = 8192;
  o.jump_interval = jump_area_size(2000, false);
  ASSERT_EQ(o.jump_interval, 1216);
  std::vector<std::vector<uint8_t>> pages;
  FastLoader loader(o, [&](uint32_t page_no, uint8_t* page) {
    put_u32(page + 12, page_no);
    pages.resize(std::max<size_t>(pages.size(), page_no + 1));
    pages[page_no].assign(page, page + o.page_size);
  });
  for (int i = 0; i < 10; ++i) {
    Bytes k(1300, 'q');
    k[0] = static_cast<uint8_t>('0' + i);
    loader.add(k, static_cast<uint64_t>(i));
  }
  loader.finish();
  size_t leaves = 0, entries = 0, jumps = 0;
  for (const auto& p : pages) {
    if (p[33] != 0) continue;
    ++leaves;
    const uint32_t first = kBtreeHeaderSize + read_btree_header(p.data()).jump_size;
    for (const JumpEntry& j : decode_jump_table(p.data(), o.page_size)) {
      EXPECT_GT(j.node_offset, first) << "page " << get_u32(p.data() + 12);
      ++jumps;
    }
    entries += decode_page(p.data(), o.page_size).entries.size();
  }
  EXPECT_EQ(leaves, 2u);
  EXPECT_EQ(entries, 10u);
  EXPECT_EQ(jumps, 9u);
}

TEST(BtreeIndexFile, PageSizeMismatchIsUsageError) {
  TempDir tmp;
  std::string path = tmp.file("p.pbt");
  IndexFile::open_or_create(path, 4096);
  EXPECT_THROW(IndexFile::open_or_create(path, 8192), UsageError);
  EXPECT_EQ(IndexFile::open_or_create(path, 0)->page_size(), 4096u);
  EXPECT_THROW(IndexFile::open_or_create(tmp.file("q.pbt"), 1000), UsageError);
}

TEST(BtreeIndexFile, MissingFileIsIoError) {
  EXPECT_THROW(IndexFile::open("/nonexistent/dir/x.pbt"), IoError);
}

TEST(BtreeIndexFile, UnknownIndexIsUsageError) {
  TempDir tmp;
  auto f = IndexFile::open_or_create(tmp.file("u.pbt"), 0);
  EXPECT_EQ(f->page_size(), 8192u);
  EXPECT_THROW(f->analyze("NOPE"), UsageError);
}

}  // namespace
}  // namespace pbtree
