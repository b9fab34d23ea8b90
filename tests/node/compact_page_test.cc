// The compact node layout (node/btree_page.h, docs/FORMAT.md §2.9): byte-exact node vectors,
// whole-page round trips with jump nodes, find_in_page agreeing with the Firebird layout, and
// CorruptError on malformed compact pages.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/node_internal.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes enc(const NodeFields& f, bool leaf, const NodeContext* prev) {
  Bytes out(64, 0xEE);
  uint32_t n = encode_compact_node(f, leaf, prev, out.data());
  EXPECT_EQ(n, compact_node_size(f, leaf, prev));
  out.resize(n);
  return out;
}

TEST(NodeCompactNode, ExplicitSmallRecno) {
  Bytes d{0x41, 0x42};
  EXPECT_EQ(enc({NodeKind::Entry, 5, 0, 0, d}, true, nullptr), (Bytes{0xC5, 0x02, 0x41, 0x42}));
}

TEST(NodeCompactNode, ExplicitOneRecnoByte) {
  Bytes d{0x58};
  EXPECT_EQ(enc({NodeKind::Entry, 300, 0, 3, d}, true, nullptr), (Bytes{0xDC, 0x31, 0x12, 0x58}));
}

TEST(NodeCompactNode, ExplicitFiveByteRecno) {
  Bytes d{0x41};
  EXPECT_EQ(enc({NodeKind::Entry, uint64_t{1} << 20, 0, 0, d}, true, nullptr),
            (Bytes{0xF0, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x41}));
}

TEST(NodeCompactNode, ExplicitLongPrefixAndLength) {
  Bytes d(16, 0x33);
  Bytes want(4 + d.size(), 0x33);  // header bytes, then the 16 data bytes
  want[0] = 0xC0;
  want[1] = 0xFF;
  want[2] = 20;
  want[3] = 16;
  EXPECT_EQ(enc({NodeKind::Entry, 0, 0, 20, d}, true, nullptr), want);
}

TEST(NodeCompactNode, DuplicateIsOneByte) {
  NodeContext prev{3, 100};
  EXPECT_EQ(enc({NodeKind::Entry, 101, 0, 3, {}}, true, &prev), (Bytes{0x01}));
}

TEST(NodeCompactNode, DuplicateWithTwoDeltaBytes) {
  NodeContext prev{3, 100};
  // D = 70000 = 0x11170: V 0, bytes 0x1117 little-endian.
  EXPECT_EQ(enc({NodeKind::Entry, 70100, 0, 3, {}}, true, &prev), (Bytes{0x20, 0x17, 0x11}));
}

TEST(NodeCompactNode, LastByteChangesAndRecnoPlusOne) {
  NodeContext prev{4, 100};
  Bytes d{0x7F};
  EXPECT_EQ(enc({NodeKind::Entry, 101, 0, 3, d}, true, &prev), (Bytes{0x42, 0x7F}));
}

TEST(NodeCompactNode, TwoBytesChangeAndRecnoGoesDown) {
  NodeContext prev{5, 1000};
  Bytes d{0x01, 0x02};
  // delta -10 -> zigzag 19 = 0x13: V 3, one byte 0x01.
  EXPECT_EQ(enc({NodeKind::Entry, 990, 0, 3, d}, true, &prev), (Bytes{0x93, 0x01, 0x01, 0x02}));
}

TEST(NodeCompactNode, OtherShapesAreExplicit) {
  NodeContext prev{5, 7};
  Bytes d{0x09};
  // prefix 3 and one data byte: the key got shorter, so explicit with the absolute recno 8.
  EXPECT_EQ(enc({NodeKind::Entry, 8, 0, 3, d}, true, &prev), (Bytes{0xC8, 0x31, 0x09}));
}

TEST(NodeCompactNode, NonLeafCarriesPageNumber) {
  NodeContext prev{2, 0};
  Bytes d{0x10};
  EXPECT_EQ(enc({NodeKind::Entry, 0, 300, 1, d}, false, &prev), (Bytes{0x40, 0xAC, 0x02, 0x10}));
}

TEST(NodeCompactNode, EndBucketAndEndLevel) {
  Bytes d{0x61};
  EXPECT_EQ(enc({NodeKind::EndBucket, 2, 0, 1, d}, true, nullptr),
            (Bytes{0xF2, 0x11, 0x02, 0x00, 0x00, 0x00, 0x00, 0x61}));
  EXPECT_EQ(enc({NodeKind::EndLevel, 0, 0, 0, {}}, true, nullptr), (Bytes{0xF1}));
}

TEST(NodeCompactNode, RecnoBeyond40BitsIsRejected) {
  EXPECT_THROW(enc({NodeKind::Entry, uint64_t{1} << 40, 0, 0, {}}, true, nullptr),
               std::invalid_argument);
}

// A page buffer holding `node` at offset 39 (header only as far as page_error needs it).
Bytes page_with(const Bytes& node) {
  Bytes page(256, 0);
  page[0] = 7;
  page[1] = kPageCompact;
  std::copy(node.begin(), node.end(), page.begin() + 39);
  return page;
}

TEST(NodeCompactNode, DecodeRelativeRoundTrip) {
  Bytes page = page_with({0x93, 0x01, 0x01, 0x02});
  NodeContext prev{5, 1000};
  IndexNode n = decode_compact_node(page.data(), 43, 39, true, &prev);
  EXPECT_EQ(n.recno, 990u);
  EXPECT_EQ(n.prefix, 3u);
  EXPECT_EQ(n.length, 2u);
  EXPECT_EQ(n.size, 4u);
  EXPECT_FALSE(n.absolute);
  EXPECT_EQ(n.data[1], 0x02);
}

TEST(NodeCompactNode, DecodeExplicitRoundTrip) {
  Bytes page = page_with({0xF0, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x41});
  IndexNode n = decode_compact_node(page.data(), 47, 39, true, nullptr);
  EXPECT_EQ(n.recno, uint64_t{1} << 20);
  EXPECT_EQ(n.prefix, 0u);
  EXPECT_EQ(n.length, 1u);
  EXPECT_EQ(n.size, 8u);
  EXPECT_TRUE(n.absolute);
}

TEST(NodeCompactNodeCorrupt, RelativeNodeWithoutPredecessor) {
  Bytes page = page_with({0x01});
  EXPECT_THROW(decode_compact_node(page.data(), 40, 39, true, nullptr), CorruptError);
}

TEST(NodeCompactNodeCorrupt, ReservedCode) {
  Bytes page = page_with({0xF3, 0x00});
  EXPECT_THROW(decode_compact_node(page.data(), 41, 39, true, nullptr), CorruptError);
}

TEST(NodeCompactNodeCorrupt, DropBeyondPreviousKey) {
  Bytes page = page_with({0x80, 0x01, 0x02});
  NodeContext prev{1, 0};
  EXPECT_THROW(decode_compact_node(page.data(), 42, 39, true, &prev), CorruptError);
}

TEST(NodeCompactNodeCorrupt, RecnoBelowZero) {
  Bytes page = page_with({0x43, 0x05});  // zigzag 3 = -2
  NodeContext prev{2, 1};
  EXPECT_THROW(decode_compact_node(page.data(), 41, 39, true, &prev), CorruptError);
}

TEST(NodeCompactNodeCorrupt, RecnoPast40Bits) {
  Bytes page = page_with({0x01});
  NodeContext prev{2, (uint64_t{1} << 40) - 1};
  EXPECT_THROW(decode_compact_node(page.data(), 40, 39, true, &prev), CorruptError);
}

TEST(NodeCompactNodeCorrupt, NodeRunsPastLimit) {
  Bytes page = page_with({0xF0, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x41});
  EXPECT_THROW(decode_compact_node(page.data(), 45, 39, true, nullptr), CorruptError);
  EXPECT_THROW(decode_compact_node(page.data(), 46, 39, true, nullptr), CorruptError);
}

// A leaf image of `n` entries: keys of 3..5 bytes with runs of duplicates.
BtreePageImage sample_image(NodeLayout layout, uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  BtreePageImage img;
  img.header.layout = layout;
  img.header.jump_interval = 64;
  uint32_t v = 1000;
  uint64_t r = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (rng() % 3 != 0) {
      v += 1 + rng() % 300;
      r = rng() % 5000000;
    } else {
      r += 1 + rng() % 100000;
    }
    Bytes key{0x48, static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8)};
    if ((v & 0xFF) != 0) key.push_back(static_cast<uint8_t>(v));
    if (v % 7 == 0) key.push_back(0x80);
    img.entries.push_back(PageEntry{key, r, 0});
  }
  return img;
}

TEST(NodeCompactPage, RoundTripWithJumpNodes) {
  std::printf("seed 6\n");
  BtreePageImage img = sample_image(NodeLayout::Compact, 400, 6);
  img.end_bucket = PageEntry{{0x49}, 7, 0};
  img.header.sibling = 12;
  Bytes page(8192);
  uint32_t length = encode_page(img, page.data(), 8192);
  ASSERT_NE(length, 0u);
  EXPECT_EQ(page[1], kPageCompact);
  EXPECT_GT(page[38], 5);  // jump nodes
  BtreePageImage back = decode_page(page.data(), 8192);
  EXPECT_EQ(back.entries, img.entries);
  EXPECT_EQ(back.end_bucket, img.end_bucket);
  EXPECT_EQ(back.header.layout, NodeLayout::Compact);
  EXPECT_EQ(back.header.length, length);
}

TEST(NodeCompactPage, SmallerThanFirebird) {
  Bytes a(8192), b(8192);
  uint32_t fb = encode_page(sample_image(NodeLayout::Firebird, 400, 6), a.data(), 8192);
  uint32_t cp = encode_page(sample_image(NodeLayout::Compact, 400, 6), b.data(), 8192);
  EXPECT_EQ(fb, 2853u);
  EXPECT_EQ(cp, 2294u);
}

TEST(NodeCompactPage, FindAgreesWithFirebirdLayout) {
  std::printf("seed 9\n");
  BtreePageImage fimg = sample_image(NodeLayout::Firebird, 300, 9);
  BtreePageImage cimg = fimg;
  cimg.header.layout = NodeLayout::Compact;
  Bytes fp(8192), cp(8192);
  ASSERT_NE(encode_page(fimg, fp.data(), 8192), 0u);
  ASSERT_NE(encode_page(cimg, cp.data(), 8192), 0u);
  // Map offsets to entry indexes on both pages.
  auto index_of = [](const Bytes& page, uint32_t offset) {
    uint32_t pos = 39 + get_u16(page.data() + 36);
    uint32_t limit = get_u16(page.data() + 30);
    size_t i = 0;
    NodeContext ctx;
    bool have = false;
    for (;;) {
      IndexNode n = decode_node(page.data(), limit, pos, true, have ? &ctx : nullptr);
      if (n.offset == offset) return i;
      if (n.is_marker()) return size_t{99999};
      ctx = context_after(n);
      have = true;
      pos = n.end();
      ++i;
    }
  };
  std::mt19937 rng(9);
  for (int t = 0; t < 400; ++t) {
    const PageEntry& e = fimg.entries[rng() % fimg.entries.size()];
    Bytes key = e.key;
    if (t % 3 == 1) key.back() ^= 1;
    std::optional<uint64_t> recno;
    if (t % 2 == 0) recno = e.recno + (t % 4 == 0 ? 0 : 1);
    for (FindMode mode : {FindMode::LowerBound, FindMode::UpperBound}) {
      PageFind f = find_in_page(fp.data(), 8192, key, false, recno, mode);
      PageFind c = find_in_page(cp.data(), 8192, key, false, recno, mode);
      ASSERT_EQ(index_of(fp, f.offset), index_of(cp, c.offset)) << t;
      ASSERT_EQ(f.matched, c.matched) << t;
      ASSERT_EQ(f.at_marker, c.at_marker) << t;
      IndexNode fn = decode_node(fp.data(), get_u16(fp.data() + 30), f.offset, true);
      IndexNode cn = decode_node(cp.data(), get_u16(cp.data() + 30), c.offset, true);
      ASSERT_EQ(fn.recno, cn.recno) << t;
    }
  }
}

TEST(NodeCompactPageCorrupt, JumpNodeAtRelativeNode) {
  BtreePageImage img;
  img.header.layout = NodeLayout::Compact;
  img.header.jump_interval = 16;
  for (uint64_t r = 0; r < 100; ++r) img.entries.push_back(PageEntry{{0x41, 0x42}, r, 0});
  Bytes page(8192);
  ASSERT_NE(encode_page(img, page.data(), 8192), 0u);
  ASSERT_GT(page[38], 0);
  // The first jump node: prefix 0, length 2, offset, "AB"; point it one node further (a
  // duplicate, coded relative).
  ASSERT_EQ(page[39], 0);
  ASSERT_EQ(page[40], 2);
  put_u16(page.data() + 41, static_cast<uint16_t>(get_u16(page.data() + 41) + 1));
  EXPECT_THROW(decode_page(page.data(), 8192), CorruptError);
}

TEST(NodeCompactPageCorrupt, FindFromRelativeJumpTarget) {
  BtreePageImage img;
  img.header.layout = NodeLayout::Compact;
  img.header.jump_interval = 16;
  for (uint64_t r = 0; r < 100; ++r) img.entries.push_back(PageEntry{{0x41, 0x42}, r, 0});
  Bytes page(8192);
  ASSERT_NE(encode_page(img, page.data(), 8192), 0u);
  put_u16(page.data() + 41, static_cast<uint16_t>(get_u16(page.data() + 41) + 1));
  Bytes key{0x41, 0x42};
  EXPECT_THROW(find_in_page(page.data(), 8192, key, false, 90, FindMode::LowerBound), CorruptError);
}

}  // namespace
}  // namespace pbtree
