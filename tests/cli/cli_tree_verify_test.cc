// `pbtree verify`: the OK summary, free pages left by merges, and violations: a page with a
// bad checksum, an orphan page, a unique index holding an equal key twice, a missing index.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "file/index_root.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "page/file_header.h"
#include "page/page_file.h"
#include "tests/support/cli_tree_test_util.h"
#include "tools/index_session.h"

namespace pbtree::tools {
namespace {

using testing::CliTreeTest;
using testing::read_bytes;
using testing::run;

using CliVerifyTest = CliTreeTest;

TEST_F(CliVerifyTest, FreshFileIsOk) {
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "OK: " + db_ + ": 5 indexes, 7 pages (2 fixed, 5 b-tree, 0 free), 35 entries\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliVerifyTest, OneIndex) {
  auto r = run({"verify", db_, "--index", "D"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "OK: " + db_ + ": index D: 1 pages, 7 entries\n");
}

TEST_F(CliVerifyTest, NoSuchIndex) {
  auto r = run({"verify", db_, "--index", "NOPE"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + db_ + ": no index named NOPE (indexes: I, D, U, V, W)\n");
}

TEST_F(CliVerifyTest, ChecksumMismatchIsAViolation) {
  {
    std::fstream f(db_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2 * 4096 + 200);
    f.put('\x55');
  }
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "violation: index I: " + db_ + ": page 2 (b-tree): checksum mismatch\n");
  EXPECT_EQ(r.err, "pbtree: verify: " + db_ + ": 1 violation\n");
}

TEST_F(CliVerifyTest, OrphanPageIsAViolation) {
  {
    PageFile f = PageFile::open(db_, true);
    f.set_page_size(4096);
    std::vector<uint8_t> page(4096);
    f.read(kHeaderPage, page.data());
    FileHeader h = decode_header_prefix(page.data(), kHeaderPrefixSize, db_);
    std::vector<uint8_t> orphan(4096, 0);
    BtreeHeader bh;
    bh.length = kBtreeHeaderSize + 1;
    write_btree_header(orphan.data(), bh);
    f.write(h.page_count, orphan.data());
    ++h.page_count;
    encode_header_page(h, page.data());
    f.write(kHeaderPage, page.data());
  }
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "violation: page 7 (b-tree): not reachable from any index and not free\n");
}

TEST_F(CliVerifyTest, UniqueIndexWithEqualKeysIsAViolation) {
  // Rewrite U's only leaf with the key of 7 twice (records 5 and 8).
  {
    PageFile f = PageFile::open(db_, true);
    f.set_page_size(4096);
    std::vector<uint8_t> page(4096);
    f.read(4, page.data());
    BtreePageImage img = decode_page(page.data(), 4096);
    PageEntry e = img.entries.back();
    e.recno = 8;
    img.entries.push_back(e);
    ASSERT_NE(encode_page(img, page.data(), 4096), 0u);
    f.write(4, page.data());
  }
  auto r = run({"verify", db_, "--index", "U"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "violation: index U: page 4: entry 7: unique index holds an equal key twice (records "
            "5 and 8)\n");
}

TEST_F(CliVerifyTest, FreePagesAfterMergesAreCounted) {
  std::string csv;
  for (int i = 0; i < 200; ++i) csv += std::to_string(1000 + i) + std::string(150, 'x') + "\n";
  load({"--index", "M", "--type", "varchar(200)", "--input", dir_.write("m.csv", csv)});
  {
    auto s = IndexSession::open(db_, "M", true);
    KeyBuffer k;
    for (int i = 50; i < 150; ++i) {
      const std::string v = std::to_string(1000 + i) + std::string(150, 'x');
      build_key(s->info().def.type, s->info().def.format, Value::of_text(v), false, k);
      s->tree().remove(k.bytes(), static_cast<uint64_t>(i));
    }
    s->commit();
  }
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(" entries\n"), std::string::npos);
  EXPECT_EQ(r.out.find(" 0 free"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 135 entries\n"), std::string::npos) << r.out;  // 35 + 200 - 100
}

TEST_F(CliVerifyTest, FreeListShorterThanTheHeaderSaysIsAViolation) {
  // Pages on the free list after the merges; then the header claims one more.
  std::string csv;
  for (int i = 0; i < 200; ++i) csv += std::to_string(1000 + i) + std::string(150, 'x') + "\n";
  load({"--index", "M", "--type", "varchar(200)", "--input", dir_.write("m.csv", csv)});
  {
    auto s = IndexSession::open(db_, "M", true);
    KeyBuffer k;
    for (int i = 0; i < 200; ++i) {
      const std::string v = std::to_string(1000 + i) + std::string(150, 'x');
      build_key(s->info().def.type, s->info().def.format, Value::of_text(v), false, k);
      s->tree().remove(k.bytes(), static_cast<uint64_t>(i));
    }
    s->commit();
  }
  uint32_t listed = 0;
  {
    PageFile f = PageFile::open(db_, true);
    f.set_page_size(4096);
    std::vector<uint8_t> page(4096);
    f.read(kHeaderPage, page.data());
    FileHeader h = decode_header_prefix(page.data(), kHeaderPrefixSize, db_);
    ASSERT_GT(h.free_page_count, 0u);
    listed = h.free_page_count;
    ++h.free_page_count;
    encode_header_page(h, page.data());
    f.write(kHeaderPage, page.data());
  }
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, fmt::format("violation: {}: the free list ends after {} of the header's {} free "
                               "pages\n",
                               db_, listed, listed + 1));
}

TEST_F(CliVerifyTest, KeyFormatTheTypeCannotUseIsAViolation) {
  // Slot 0 (index I, integer, double keys): key format byte (slot offset 11) set to 8,
  // rescaled double, which load refuses for integer.
  {
    PageFile f = PageFile::open(db_, true);
    f.set_page_size(4096);
    std::vector<uint8_t> page(4096);
    f.read(1, page.data());
    ASSERT_EQ(page[20 + 8], 2);   // integer
    ASSERT_EQ(page[20 + 11], 0);  // double
    page[20 + 11] = 8;
    f.write(1, page.data());
  }
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "violation: index I: key format rescaled-double cannot hold every value of integer; "
            "allowed: double, decimal128, bcd\n");
}

TEST_F(CliVerifyTest, NotAPbtreeFile) {
  const std::string bad = dir_.write("bad.pbt", std::string(8192, 'x'));
  auto r = run({"verify", bad});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "violation: " + bad + ": not a pbtree file (wrong magic)\n");
}

}  // namespace
}  // namespace pbtree::tools
