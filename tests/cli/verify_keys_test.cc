// `pbtree verify` decodes every key (issue #10 item 7): a leaf key changed so that it still
// sorts between its neighbours but is no bigint's key, and varchar slots declaring length 0 or
// 60,000, are violations; scan and stat --what-if name file, page and node offset of the key
// they cannot decode. Pages are crafted here through the page codecs (valid checksums).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstring>
#include <string>
#include <vector>

#include "file/index_root.h"
#include "node/btree_page.h"
#include "node/node.h"
#include "node/page_image.h"
#include "page/file_header.h"
#include "page/page_file.h"
#include "tests/support/cli_test_util.h"
#include "util/bytes.h"

namespace pbtree::tools::testing {
namespace {

constexpr uint32_t kPageSize = 4096;

// Offset of leaf entry `index` of `page`, walking the nodes from the first.
uint32_t node_offset(const uint8_t* page, size_t index) {
  const uint16_t length = get_u16(page + 30);
  uint32_t pos = kBtreeHeaderSize + get_u16(page + 36);
  NodeContext ctx;
  for (size_t i = 0;; ++i) {
    IndexNode n = decode_node(page, length, pos, true, i == 0 ? nullptr : &ctx);
    if (i == index) return pos;
    ctx = context_after(n);
    pos = n.end();
  }
}

class CliVerifyKeys : public ::testing::Test {
 protected:
  CliVerifyKeys() : dir_("verify-keys"), db_(dir_.file("k.pbt")) {}

  void load(const std::string& index, const std::string& type, const std::string& csv) {
    const std::string in = dir_.write(index + ".csv", csv);
    auto r =
        run({"load", db_, "--index", index, "--type", type, "--page-size", "4096", "--input", in});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  IndexInfo info(const std::string& index) { return *IndexFile::open(db_)->find_index(index); }

  // Adds 1 to the last key byte of leaf entry `entry` of the (one-page) index `index` (the key
  // still sorts between its neighbours); returns the root page and sets `offset` to that node's
  // offset and `key` to its new bytes.
  uint32_t damage_key(const std::string& index, size_t entry, uint32_t& offset,
                      std::vector<uint8_t>& key) {
    const uint32_t root = info(index).root_page;
    PageFile pf = PageFile::open(db_, true);
    pf.set_page_size(kPageSize);
    std::vector<uint8_t> page(kPageSize);
    pf.read(root, page.data());
    BtreePageImage img = decode_page(page.data(), kPageSize);
    EXPECT_EQ(img.header.level, 0);
    ++img.entries[entry].key.back();
    EXPECT_LT(compare_keys(img.entries[entry].key, img.entries[entry + 1].key, false), 0);
    EXPECT_NE(encode_page(img, page.data(), kPageSize), 0u);
    pf.write(root, page.data());
    offset = node_offset(page.data(), entry);
    key = img.entries[entry].key;
    return root;
  }

  void set_slot_length(const std::string& index, uint16_t length) {
    PageFile pf = PageFile::open(db_, true);
    pf.set_page_size(kPageSize);
    std::vector<uint8_t> page(kPageSize);
    pf.read(kIndexRootPage, page.data());
    std::vector<IndexInfo> slots = decode_index_root_page(page.data(), kPageSize, 1000, db_);
    for (IndexInfo& s : slots) {
      if (s.def.name == index) s.def.type.length = length;
    }
    encode_index_root_page(slots, page.data(), kPageSize);
    pf.write(kIndexRootPage, page.data());
  }

  ScratchDir dir_;
  std::string db_;
};

TEST_F(CliVerifyKeys, KeyThatSortsBetweenItsNeighboursButDecodesToNoBigintIsAViolation) {
  load("A", "bigint", "0\n10\n20\n30\n40\n");
  uint32_t offset = 0;
  std::vector<uint8_t> key;
  const uint32_t page = damage_key("A", 2, offset, key);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, fmt::format("violation: {}: index A: page {}, node at offset {}: corrupt "
                               "rescaled-double key for bigint: {} (decodes to "
                               "20.00000000000000256, more fraction digits than bigint holds)\n",
                               db_, page, offset, hex_bytes(key)));
}

TEST_F(CliVerifyKeys, ScanNamesFilePageAndOffsetOfTheUndecodableKey) {
  load("A", "bigint", "0\n10\n20\n30\n40\n");
  uint32_t offset = 0;
  std::vector<uint8_t> key;
  const uint32_t page = damage_key("A", 2, offset, key);
  auto r = run({"scan", db_, "--index", "A"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "0\t0\n10\t1\n");
  EXPECT_EQ(r.err, fmt::format("pbtree: {}: index A: page {}, node at offset {}: corrupt "
                               "rescaled-double key for bigint: {} (decodes to "
                               "20.00000000000000256, more fraction digits than bigint holds)\n",
                               db_, page, offset, hex_bytes(key)));
}

TEST_F(CliVerifyKeys, StatWhatIfNamesFilePageAndOffsetOfTheUndecodableKey) {
  load("A", "bigint", "0\n10\n20\n30\n40\n");
  uint32_t offset = 0;
  std::vector<uint8_t> key;
  const uint32_t page = damage_key("A", 2, offset, key);
  auto r = run({"stat", db_, "--index", "A", "--what-if"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, fmt::format("pbtree: {}: index A: page {}, node at offset {}: corrupt "
                               "rescaled-double key for bigint: {} (decodes to "
                               "20.00000000000000256, more fraction digits than bigint holds)\n",
                               db_, page, offset, hex_bytes(key)));
}

TEST_F(CliVerifyKeys, VarcharSlotOfLengthZeroIsAViolation) {
  load("V", "varchar(10)", "a\nbc\n");
  set_slot_length("V", 0);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "violation: index V: slot type varchar(0): varchar length 0 out of range 1..32765 in "
            "'varchar(0)'\n");
}

TEST_F(CliVerifyKeys, VarcharSlotOfLength60000IsAViolation) {
  load("V", "varchar(10)", "a\nbc\n");
  set_slot_length("V", 60000);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out,
            "violation: index V: slot type varchar(60000): varchar length 60000 out of range "
            "1..32765 in 'varchar(60000)'\n");
}

// A slot shortened below its keys' length: the keys decode, but to values the type cannot hold.
TEST_F(CliVerifyKeys, KeysLongerThanTheSlotsVarcharLengthAreViolations) {
  load("V", "varchar(10)", "a\nbcdef\n");
  set_slot_length("V", 3);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("violation: " + db_ + ": index V: page "), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST_F(CliVerifyKeys, IntactFileIsOk) {
  load("A", "bigint", "0\n10\n20\n30\n40\n");
  load("V", "varchar(10)", "a\nbc\n\n");
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
}  // namespace pbtree::tools::testing
