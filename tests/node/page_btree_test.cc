// Tests of the B-tree page codec (node/btree_page.h): the node encodings of docs/FORMAT.md
// §2.4 byte for byte (IndexNode::writeNode/readNode, Firebird v5.0.4 src/jrd/btn.cpp), an
// example leaf page, jump tables, in-page search and corrupt input.
#include <gtest/gtest.h>
#include <pbtree/keys.h>

#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes encode(NodeKind kind, uint64_t recno, uint32_t prefix, Bytes data, bool leaf = true,
             uint32_t page = 0) {
  NodeFields f{kind, recno, page, prefix, data};
  Bytes out(node_size(f, leaf));
  uint32_t n = encode_node(f, leaf, out.data());
  EXPECT_EQ(n, out.size());
  return out;
}

// Decodes `bytes` as a single node placed at offset 39 of an otherwise zero page.
IndexNode decode_alone(const Bytes& bytes, bool leaf, std::vector<uint8_t>& page) {
  page.assign(4096, 0);
  std::copy(bytes.begin(), bytes.end(), page.begin() + 39);
  return decode_node(page.data(), 39 + static_cast<uint32_t>(bytes.size()), 39, leaf);
}

TEST(NodePageBtreeNode, NormalFirstNode) {
  EXPECT_EQ(encode(NodeKind::Entry, 0, 0, {0xC1, 0x2E, 0x84, 0x80}),
            (Bytes{0x00, 0x00, 0x00, 0x04, 0xC1, 0x2E, 0x84, 0x80}));
}

TEST(NodePageBtreeNode, NormalWithPrefix) {
  EXPECT_EQ(encode(NodeKind::Entry, 1000, 2, {0x84, 0x80}),
            (Bytes{0x08, 0x1F, 0x02, 0x02, 0x84, 0x80}));
}

TEST(NodePageBtreeNode, OneLength) {
  EXPECT_EQ(encode(NodeKind::Entry, 12345, 3, {0x81}), (Bytes{0xB9, 0x81, 0x03, 0x03, 0x81}));
}

TEST(NodePageBtreeNode, ZeroLengthDuplicate) {
  EXPECT_EQ(encode(NodeKind::Entry, 70000, 4, {}), (Bytes{0x90, 0x8B, 0x11, 0x04}));
}

TEST(NodePageBtreeNode, ZeroPrefixZeroLength) {
  EXPECT_EQ(encode(NodeKind::Entry, 5, 0, {}), (Bytes{0x65, 0x00}));
}

TEST(NodePageBtreeNode, MaxRecordNumber) {
  EXPECT_EQ(encode(NodeKind::Entry, (uint64_t{1} << 40) - 1, 1, {0x01, 0x02}),
            (Bytes{0x1F, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x01, 0x02, 0x01, 0x02}));
}

TEST(NodePageBtreeNode, EndLevel) {
  EXPECT_EQ(encode(NodeKind::EndLevel, 0, 0, {}), (Bytes{0x20}));
}

TEST(NodePageBtreeNode, EndBucket) {
  EXPECT_EQ(encode(NodeKind::EndBucket, 99, 2, {0x84, 0x80}),
            (Bytes{0x43, 0x03, 0x02, 0x02, 0x84, 0x80}));
}

TEST(NodePageBtreeNode, NonLeafDegenerate) {
  EXPECT_EQ(encode(NodeKind::Entry, 0, 0, {}, false, 1234), (Bytes{0x60, 0x00, 0xD2, 0x09}));
}

TEST(NodePageBtreeNode, NonLeafNormal) {
  EXPECT_EQ(encode(NodeKind::Entry, 480, 1, {0x2E, 0x84, 0x80}, false, 300),
            (Bytes{0x00, 0x0F, 0xAC, 0x02, 0x01, 0x03, 0x2E, 0x84, 0x80}));
}

TEST(NodePageBtreeNode, DecodeRoundTripsEveryFlag) {
  struct Case {
    NodeKind kind;
    uint64_t recno;
    uint32_t prefix;
    Bytes data;
    bool leaf;
    uint32_t page;
    NodeFlag flag;
  };
  std::vector<Case> cases = {
      {NodeKind::Entry, 0, 0, {0xC1, 0x2E}, true, 0, NodeFlag::Normal},
      {NodeKind::Entry, 12345, 3, {0x81}, true, 0, NodeFlag::OneLength},
      {NodeKind::Entry, 70000, 4, {}, true, 0, NodeFlag::ZeroLength},
      {NodeKind::Entry, 5, 0, {}, true, 0, NodeFlag::ZeroPrefixZeroLength},
      {NodeKind::EndBucket, 99, 2, {0x84, 0x80}, false, 0xFFFFFFFF, NodeFlag::EndBucket},
      {NodeKind::Entry, (uint64_t{1} << 40) - 1, 200, Bytes(300, 7), false, 77, NodeFlag::Normal},
  };
  for (const Case& c : cases) {
    Bytes bytes = encode(c.kind, c.recno, c.prefix, c.data, c.leaf, c.page);
    std::vector<uint8_t> page;
    IndexNode n = decode_alone(bytes, c.leaf, page);
    EXPECT_EQ(n.flag, c.flag);
    EXPECT_EQ(n.recno, c.recno);
    EXPECT_EQ(n.prefix, c.prefix);
    EXPECT_EQ(n.length, c.data.size());
    EXPECT_EQ(Bytes(n.data, n.data + n.length), c.data);
    EXPECT_EQ(n.page_number, c.page);
    EXPECT_EQ(n.size, bytes.size());
    EXPECT_EQ(n.offset, 39u);
  }
}

TEST(NodePageBtreeNode, DecodeEndLevelIsOneByte) {
  std::vector<uint8_t> page;
  IndexNode n = decode_alone({0x20}, false, page);
  EXPECT_TRUE(n.is_end_level());
  EXPECT_EQ(n.size, 1u);
}

TEST(NodePageBtreeNode, ReservedFlagIsCorrupt) {
  std::vector<uint8_t> page;
  EXPECT_THROW(decode_alone({0xC0, 0x00, 0x00}, true, page), CorruptError);
  EXPECT_THROW(decode_alone({0xE0, 0x00, 0x00}, true, page), CorruptError);
}

TEST(NodePageBtreeNode, TruncatedDataIsCorrupt) {
  std::vector<uint8_t> page;
  // NORMAL node claiming 4 data bytes with only 2 present before the limit.
  EXPECT_THROW(decode_alone({0x00, 0x00, 0x00, 0x04, 0xC1, 0x2E}, true, page), CorruptError);
}

TEST(NodePageBtreeNode, OverlongRecnoVarintIsCorrupt) {
  std::vector<uint8_t> page;
  EXPECT_THROW(decode_alone({0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x00}, true, page),
               CorruptError);
}

TEST(NodePageBtreeNode, OverlongPrefixVarintIsCorrupt) {
  std::vector<uint8_t> page;
  EXPECT_THROW(decode_alone({0x00, 0x00, 0x80, 0x80, 0x01, 0x00}, true, page), CorruptError);
}

TEST(NodePageBtreeNode, PageNumberBeyond32BitsIsCorrupt) {
  std::vector<uint8_t> page;
  EXPECT_THROW(decode_alone({0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00}, false, page),
               CorruptError);
}

TEST(NodePageBtreeNode, VarintRunningPastLimitIsCorrupt) {
  std::vector<uint8_t> page;
  EXPECT_THROW(decode_alone({0x00, 0x80}, true, page), CorruptError);
}

TEST(NodePageBtreeNode, CorruptMessageNamesPageAndOffset) {
  std::vector<uint8_t> page(4096, 0);
  page[0] = 7;
  page[12] = 12;
  page[39] = 0xE0;
  try {
    decode_node(page.data(), 100, 39, true);
    FAIL() << "no exception";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "page 12 (b-tree): node at offset 39: reserved flag 7");
  }
}

// The example leaf page: INTEGER values 1, 2, 3, 3, 10 with recnos 0, 1, 2, 7, 3.
BtreePageImage example_leaf() {
  BtreePageImage image;
  image.header.jump_interval = 576;
  image.entries = {
      {{0xBF, 0xF0}, 0, 0}, {{0xC0}, 1, 0},       {{0xC0, 0x08}, 2, 0},
      {{0xC0, 0x08}, 7, 0}, {{0xC0, 0x24}, 3, 0},
  };
  return image;
}

TEST(NodePageBtreePage, ExampleLeafBytes) {
  std::vector<uint8_t> page(8192, 0xEE);
  ASSERT_EQ(encode_page(example_leaf(), page.data(), 8192), 61u);
  Bytes nodes(page.begin() + 39, page.begin() + 61);
  EXPECT_EQ(nodes, (Bytes{0x00, 0x00, 0x00, 0x02, 0xBF, 0xF0, 0xA1, 0x00, 0x00, 0xC0, 0xA2,
                          0x00, 0x01, 0x08, 0x87, 0x00, 0x02, 0xA3, 0x00, 0x01, 0x24, 0x20}));
  Bytes header(page.begin(), page.begin() + 39);
  EXPECT_EQ(header, (Bytes{7,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // generic header
                           0,    0,    0, 0,                                      // sibling
                           0,    0,    0, 0,                                      // left sibling
                           4,    0,    0, 0,                                      // prefix total
                           0,    0,                                               // relation
                           61,   0,                                               // btr_length
                           0,    0,                                               // id, level
                           0x40, 0x02,        // jump interval 576
                           0,    0,    0}));  // jump size, jump count
  EXPECT_EQ(page[61], 0);
  EXPECT_EQ(page[8191], 0);
}

TEST(NodePageBtreePage, ExampleLeafDecodes) {
  std::vector<uint8_t> page(8192);
  ASSERT_EQ(encode_page(example_leaf(), page.data(), 8192), 61u);
  BtreePageImage back = decode_page(page.data(), 8192);
  EXPECT_EQ(back.entries, example_leaf().entries);
  EXPECT_FALSE(back.end_bucket.has_value());
  EXPECT_EQ(back.header.length, 61);
  EXPECT_EQ(back.header.prefix_total, 4u);
}

TEST(NodePageBtreePage, EndBucketCopyIsPrefixCompressed) {
  BtreePageImage image;
  image.header.level = 1;
  image.header.sibling = 9;
  image.entries = {{{}, 0, 5}, {{0xC0, 0x08}, 480, 6}};
  image.end_bucket = PageEntry{{0xC0, 0x24}, 960, 7};
  std::vector<uint8_t> page(4096);
  uint32_t len = encode_page(image, page.data(), 4096);
  // Degenerate node, a normal node, then END_BUCKET with prefix 1 (shares C0).
  Bytes nodes(page.begin() + 39, page.begin() + len);
  EXPECT_EQ(nodes, (Bytes{0x60, 0x00, 0x05, 0x00, 0x0F, 0x06, 0x00, 0x02, 0xC0, 0x08, 0x40, 0x1E,
                          0x07, 0x01, 0x01, 0x24}));
  BtreePageImage back = decode_page(page.data(), 4096);
  EXPECT_EQ(back.entries, image.entries);
  ASSERT_TRUE(back.end_bucket.has_value());
  EXPECT_EQ(*back.end_bucket, *image.end_bucket);
}

TEST(NodePageBtreePage, DoesNotFitReturnsZero) {
  BtreePageImage image;
  for (uint32_t i = 0; i < 400; ++i) {
    image.entries.push_back(
        {{static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i), 1, 2, 3, 4, 5, 6, 7, 8}, i, 0});
  }
  std::vector<uint8_t> page(4096);
  EXPECT_EQ(encode_page(image, page.data(), 4096), 0u);
}

// Sorted random leaf entries with many duplicates and shared prefixes.
std::vector<PageEntry> random_entries(std::mt19937_64& rng, size_t count) {
  std::multimap<Bytes, uint64_t> model;
  std::uniform_int_distribution<int> len(0, 6), byte(0, 3);
  for (size_t i = 0; i < count; ++i) {
    Bytes k(len(rng));
    for (auto& b : k) b = static_cast<uint8_t>(0x40 + byte(rng));
    model.emplace(k, i * 3);
  }
  std::vector<PageEntry> out;
  for (auto& [k, r] : model) out.push_back({k, r, 0});
  return out;
}

TEST(NodePageBtreePage, JumpNodesRoundTrip) {
  std::mt19937_64 rng(20261130);
  std::printf("seed 20261130\n");
  BtreePageImage image;
  image.header.jump_interval = 64;
  image.entries = random_entries(rng, 600);
  std::vector<uint8_t> page(16384);
  uint32_t len = encode_page(image, page.data(), 16384);
  ASSERT_GT(len, 0u);
  BtreeHeader h = read_btree_header(page.data());
  EXPECT_GT(h.jump_count, 10);
  std::vector<JumpEntry> jumps = decode_jump_table(page.data(), 16384);
  ASSERT_EQ(jumps.size(), h.jump_count);
  // Each jump key is the first `prefix` bytes of its target node's key.
  for (const JumpEntry& j : jumps) {
    IndexNode n = decode_node(page.data(), len, j.node_offset, true);
    EXPECT_EQ(n.prefix, j.key.size());
  }
  BtreePageImage back = decode_page(page.data(), 16384);
  EXPECT_EQ(back.entries, image.entries);
}

TEST(NodePageBtreePage, JumpNodeRule) {
  // 100 nodes of 6 bytes each (2-byte keys, distinct first byte => prefix 0, flag NORMAL):
  // node i starts at 6i in the node area; interval 100 -> jumps at nodes 17 (102), 34 (204),
  // 51 (306), 67 (402), 84 (504).
  BtreePageImage image;
  image.header.jump_interval = 100;
  for (uint32_t i = 0; i < 100; ++i) image.entries.push_back({{uint8_t(i + 1), 0x55}, 0, 0});
  std::vector<uint8_t> page(8192);
  ASSERT_GT(encode_page(image, page.data(), 8192), 0u);
  std::vector<JumpEntry> jumps = decode_jump_table(page.data(), 8192);
  uint32_t first = 39 + read_btree_header(page.data()).jump_size;
  std::vector<uint32_t> targets;
  for (auto& j : jumps) targets.push_back((j.node_offset - first) / 6);
  EXPECT_EQ(targets, (std::vector<uint32_t>{17, 34, 51, 67, 84}));
  EXPECT_EQ(read_btree_header(page.data()).jump_size, 5 * 4);
}

// A page of JumpNodeRule with jump node 0 moved onto the first node, as the bulk loader used to
// write it for a first key longer than the jump interval.
std::vector<uint8_t> page_with_jump_at_first_node() {
  BtreePageImage image;
  image.header.jump_interval = 100;
  for (uint32_t i = 0; i < 100; ++i) image.entries.push_back({{uint8_t(i + 1), 0x55}, 0, 0});
  std::vector<uint8_t> page(8192);
  EXPECT_GT(encode_page(image, page.data(), 8192), 0u);
  put_u32(page.data() + 12, 7);  // page number, for the message
  // Jump node 0: prefix 0, length 0 (jump key empty), then its 2-byte target offset.
  EXPECT_EQ(page[39], 0);
  EXPECT_EQ(page[40], 0);
  put_u16(page.data() + 41, static_cast<uint16_t>(39 + read_btree_header(page.data()).jump_size));
  return page;
}

TEST(NodePageBtreePage, JumpNodeAtFirstNodeRejectedByDecode) {
  std::vector<uint8_t> page = page_with_jump_at_first_node();
  try {
    decode_jump_table(page.data(), 8192);
    FAIL() << "no CorruptError";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "page 7 (b-tree): jump node 0 points at the first node (offset 59)");
  }
}

TEST(NodePageBtreePage, JumpNodeAtFirstNodeRejectedBySearchWithTheSameMessage) {
  std::vector<uint8_t> page = page_with_jump_at_first_node();
  const Bytes key{50, 0x55};
  try {
    find_in_page(page.data(), 8192, key, false, std::nullopt, FindMode::LowerBound);
    FAIL() << "no CorruptError";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "page 7 (b-tree): jump node 0 points at the first node (offset 59)");
  }
}

TEST(NodePageBtreePage, JumpAreaSize) {
  EXPECT_EQ(jump_area_size(8, false), 576);   // K = 16
  EXPECT_EQ(jump_area_size(10, false), 576);  // K = 16
  EXPECT_EQ(jump_area_size(17, false), 576);  // K = 24
  EXPECT_EQ(jump_area_size(31, false), 592);  // K = 32
  EXPECT_EQ(jump_area_size(40, true), 608);   // K = 40
  EXPECT_EQ(jump_area_size(2039, false), 1232);
}

TEST(NodePageBtreePage, BadLengthIsCorrupt) {
  std::vector<uint8_t> page(4096);
  ASSERT_GT(encode_page(example_leaf(), page.data(), 4096), 0u);
  put_u16(page.data() + 30, 5000);
  EXPECT_THROW(decode_page(page.data(), 4096), CorruptError);
}

TEST(NodePageBtreePage, PrefixBeyondPreviousKeyIsCorrupt) {
  std::vector<uint8_t> page(4096);
  ASSERT_GT(encode_page(example_leaf(), page.data(), 4096), 0u);
  page[39 + 6 + 2] = 5;  // second node: prefix 0 -> 5, previous key has 2 bytes
  EXPECT_THROW(decode_page(page.data(), 4096), CorruptError);
}

TEST(NodePageBtreePage, MissingEndMarkerIsCorrupt) {
  std::vector<uint8_t> page(4096);
  ASSERT_GT(encode_page(example_leaf(), page.data(), 4096), 0u);
  put_u16(page.data() + 30, 60);  // END_LEVEL cut off
  EXPECT_THROW(decode_page(page.data(), 4096), CorruptError);
}

TEST(NodePageBtreePage, RandomGarbageNeverCrashes) {
  std::mt19937_64 rng(7);
  std::printf("seed 7\n");
  std::vector<uint8_t> good(4096);
  BtreePageImage image;
  image.header.jump_interval = 64;
  image.entries = random_entries(rng, 300);
  ASSERT_GT(encode_page(image, good.data(), 4096), 0u);
  int thrown = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> page = good;
    size_t pos = std::uniform_int_distribution<size_t>(16, 1500)(rng);
    page[pos] = static_cast<uint8_t>(rng());
    try {
      decode_page(page.data(), 4096);
      find_in_page(page.data(), 4096, Bytes{0x41, 0x42}, false, std::nullopt, FindMode::LowerBound);
    } catch (const CorruptError&) {
      ++thrown;
    }
  }
  EXPECT_GT(thrown, 0);
}

// find_in_page against a sorted-vector model.
TEST(NodePageBtreeFind, MatchesModelWithJumpNodes) {
  for (bool descending : {false, true}) {
    std::mt19937_64 rng(42);
    std::printf("seed 42\n");
    std::vector<PageEntry> entries = random_entries(rng, 700);
    std::stable_sort(entries.begin(), entries.end(), [&](const PageEntry& a, const PageEntry& b) {
      int c = compare_keys(a.key, b.key, descending);
      return c != 0 ? c < 0 : a.recno < b.recno;
    });
    BtreePageImage image;
    image.header.jump_interval = 80;
    image.entries = entries;
    std::vector<uint8_t> page(16384);
    uint32_t len = encode_page(image, page.data(), 16384);
    ASSERT_GT(len, 0u);
    ASSERT_GT(read_btree_header(page.data()).jump_count, 5);
    // Node offsets in order.
    std::vector<uint32_t> offsets;
    for (uint32_t pos = 39 + read_btree_header(page.data()).jump_size;;) {
      IndexNode n = decode_node(page.data(), len, pos, true);
      offsets.push_back(pos);
      if (n.is_marker()) break;
      pos = n.end();
    }
    std::uniform_int_distribution<int> len_d(0, 7), byte(0, 4), rec(0, 2200);
    for (int q = 0; q < 3000; ++q) {
      Bytes key(len_d(rng));
      for (auto& b : key) b = static_cast<uint8_t>(0x3F + byte(rng));
      std::optional<uint64_t> recno;
      if (q % 2) recno = rec(rng);
      for (FindMode mode : {FindMode::LowerBound, FindMode::UpperBound}) {
        size_t expect = 0;
        while (expect < entries.size()) {
          int c = compare_keys(entries[expect].key, key, descending);
          bool below = c < 0 || (c == 0 && (mode == FindMode::LowerBound
                                                ? recno && entries[expect].recno < *recno
                                                : !recno || entries[expect].recno <= *recno));
          if (!below) break;
          ++expect;
        }
        PageFind f = find_in_page(page.data(), 16384, key, descending, recno, mode);
        ASSERT_EQ(f.offset, offsets[expect]) << "query " << q;
        ASSERT_EQ(f.prev_offset, expect == 0 ? 0 : offsets[expect - 1]);
        ASSERT_EQ(f.at_marker, expect == entries.size());
      }
    }
  }
}

TEST(NodePageBtreeFind, BeyondEndBucket) {
  BtreePageImage image;
  image.header.sibling = 3;
  image.entries = example_leaf().entries;
  image.end_bucket = PageEntry{{0xC1}, 0, 0};
  std::vector<uint8_t> page(4096);
  ASSERT_GT(encode_page(image, page.data(), 4096), 0u);
  PageFind f =
      find_in_page(page.data(), 4096, Bytes{0xC2}, false, std::nullopt, FindMode::LowerBound);
  EXPECT_TRUE(f.at_marker);
  EXPECT_TRUE(f.beyond_end_bucket);
  PageFind g =
      find_in_page(page.data(), 4096, Bytes{0xC0, 0x30}, false, std::nullopt, FindMode::LowerBound);
  EXPECT_TRUE(g.at_marker);
  EXPECT_FALSE(g.beyond_end_bucket);
}

TEST(NodePageBtreeFind, DegenerateFirstNodeOnLeftmostNonLeaf) {
  BtreePageImage image;
  image.header.level = 1;
  image.entries = {{{}, 0, 10}, {{0xC0}, 5, 11}, {{0xC0, 0x08}, 9, 12}};
  std::vector<uint8_t> page(4096);
  ASSERT_GT(encode_page(image, page.data(), 4096), 0u);
  // A key below every separator goes to the degenerate node's child (descending index: the
  // empty key would otherwise sort last).
  PageFind f =
      find_in_page(page.data(), 4096, Bytes{0x10}, true, std::nullopt, FindMode::UpperBound);
  IndexNode prev = decode_node(page.data(), 4096, f.prev_offset, false);
  EXPECT_EQ(prev.page_number, 10u);
  PageFind g =
      find_in_page(page.data(), 4096, Bytes{0xC0, 0x01}, false, std::nullopt, FindMode::UpperBound);
  EXPECT_EQ(decode_node(page.data(), 4096, g.prev_offset, false).page_number, 11u);
}

}  // namespace
}  // namespace pbtree
