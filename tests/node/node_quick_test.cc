// The inline compact decoder of node/node_quick.h: exact fields of hand-made nodes, the cases
// it declines (left to the checked decoder), and agreement with decode_compact_node on every
// node of random leaf and non-leaf sequences.
#include "node/node_quick.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "node/node.h"
#include "node/node_internal.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

// A fake compact page: the node bytes at offset 64, then 32 bytes of padding before `limit`.
struct Buf {
  Bytes page = Bytes(64, 0);
  uint32_t put(const NodeFields& f, bool leaf, const NodeContext* prev) {
    const uint32_t off = static_cast<uint32_t>(page.size());
    page.resize(off + 64);
    page.resize(off + encode_compact_node(f, leaf, prev, page.data() + off));
    return off;
  }
  uint32_t limit() {
    page.resize(page.size() + 32, 0);
    return static_cast<uint32_t>(page.size());
  }
};

TEST(NodeQuickCompact, DuplicateAfterPrevious) {
  Buf b;
  NodeContext prev{3, 100};
  const uint32_t off = b.put({NodeKind::Entry, 101, 0, 3, {}}, true, &prev);
  const uint32_t limit = b.limit();
  IndexNode n;
  ASSERT_TRUE(try_decode_compact(b.page.data(), limit, off, true, prev, n));
  EXPECT_EQ(n.recno, 101u);
  EXPECT_EQ(n.prefix, 3u);
  EXPECT_EQ(n.length, 0u);
  EXPECT_EQ(n.size, 1u);
  EXPECT_FALSE(n.absolute);
}

TEST(NodeQuickCompact, TwoByteChangeWithNegativeDelta) {
  Buf b;
  NodeContext prev{5, 1000};
  Bytes d{0x12, 0x34};
  const uint32_t off = b.put({NodeKind::Entry, 990, 0, 3, d}, true, &prev);
  const uint32_t limit = b.limit();
  IndexNode n;
  ASSERT_TRUE(try_decode_compact(b.page.data(), limit, off, true, prev, n));
  EXPECT_EQ(n.recno, 990u);
  EXPECT_EQ(n.prefix, 3u);
  EXPECT_EQ(n.length, 2u);
  EXPECT_EQ(Bytes(n.data, n.data + n.length), d);
  EXPECT_EQ(n.end(), static_cast<uint32_t>(limit - 32));
}

TEST(NodeQuickCompact, ExplicitNonLeafWithPageNumber) {
  Buf b;
  NodeContext prev{4, 7};
  Bytes d{0x41, 0x42, 0x43};
  const uint32_t off = b.put({NodeKind::Entry, 300, 123456, 1, d}, false, nullptr);
  const uint32_t limit = b.limit();
  IndexNode n;
  ASSERT_TRUE(try_decode_compact(b.page.data(), limit, off, false, prev, n));
  EXPECT_EQ(n.recno, 300u);
  EXPECT_EQ(n.page_number, 123456u);
  EXPECT_EQ(n.prefix, 1u);
  EXPECT_EQ(Bytes(n.data, n.data + n.length), d);
  EXPECT_TRUE(n.absolute);
}

TEST(NodeQuickCompact, DeclinesLongFieldsMarkersAndBigRecords) {
  Buf b;
  NodeContext prev{40, 7};
  const uint32_t o1 = b.put({NodeKind::Entry, 5, 0, 20, Bytes(2, 1)}, true, nullptr);
  const uint32_t o2 = b.put({NodeKind::EndBucket, 5, 0, 0, Bytes(1, 1)}, true, nullptr);
  const uint32_t o3 = b.put({NodeKind::Entry, uint64_t{1} << 21, 0, 0, Bytes(1, 1)}, true, nullptr);
  const uint32_t o4 = b.put({NodeKind::EndLevel, 0, 0, 0, {}}, true, nullptr);
  const uint32_t limit = b.limit();
  IndexNode n;
  for (uint32_t off : {o1, o2, o3, o4}) {
    EXPECT_FALSE(try_decode_compact(b.page.data(), limit, off, true, prev, n)) << off;
  }
}

TEST(NodeQuickCompact, DeclinesDropBeyondPreviousKeyAndNodeNearLimit) {
  Bytes page(64, 0);
  page.push_back(0x80);  // S 2: drops 2 bytes
  page.resize(page.size() + 32, 0);
  IndexNode n;
  EXPECT_FALSE(try_decode_compact(page.data(), static_cast<uint32_t>(page.size()), 64, true,
                                  NodeContext{1, 0}, n));
  EXPECT_FALSE(try_decode_compact(page.data(), 64 + 15, 64, true, NodeContext{4, 0}, n));
  EXPECT_TRUE(try_decode_compact(page.data(), 64 + 16, 64, true, NodeContext{4, 0}, n));
}

TEST(NodeQuickCompact, AgreesWithCheckedDecoderOnRandomSequences) {
  std::mt19937_64 rng(15);
  size_t quick = 0, total = 0, expected_quick = 0;
  for (bool leaf : {true, false}) {
    Buf b;
    std::vector<std::pair<uint32_t, NodeContext>> at;
    NodeContext prev{0, 0};
    uint64_t recno = 1000;
    for (int i = 0; i < 4000; ++i) {
      const uint32_t prefix = i == 0 ? 0 : static_cast<uint32_t>(rng() % (prev.key_length + 1));
      Bytes d(rng() % 4 == 0 ? rng() % 20 : rng() % 3);
      for (auto& x : d) x = static_cast<uint8_t>(rng());
      if (rng() % 3 == 0) {
        recno += rng() % 40;
      } else {
        recno = rng() % (uint64_t{1} << (rng() % 40 + 1));
      }
      const NodeFields f{NodeKind::Entry, recno, static_cast<uint32_t>(rng()), prefix, d};
      const uint32_t off = b.put(f, leaf, i == 0 ? nullptr : &prev);
      at.push_back({off, prev});
      prev = NodeContext{prefix + static_cast<uint32_t>(d.size()), recno};
    }
    const uint32_t limit = b.limit();
    for (size_t i = 0; i < at.size(); ++i) {
      const auto& [off, ctx] = at[i];
      const IndexNode want =
          decode_compact_node(b.page.data(), limit, off, leaf, i == 0 ? nullptr : &ctx);
      IndexNode got;
      ++total;
      // Inline: S 0..2, or S 3 with N < 3 and both nibbles below 15.
      const uint8_t h = b.page[off], pl = b.page[off + 1];
      if ((h >> 6) < 3 || (((h >> 4) & 3) != 3 && (pl >> 4) != 15 && (pl & 15) != 15)) {
        ++expected_quick;
      }
      if (!try_decode_compact(b.page.data(), limit, off, leaf, ctx, got)) continue;
      ++quick;
      ASSERT_EQ(got.recno, want.recno) << i;
      ASSERT_EQ(got.page_number, leaf ? 0u : want.page_number) << i;
      ASSERT_EQ(got.prefix, want.prefix) << i;
      ASSERT_EQ(got.length, want.length) << i;
      ASSERT_EQ(got.data, want.data) << i;
      ASSERT_EQ(got.size, want.size) << i;
      ASSERT_EQ(got.absolute, want.absolute) << i;
      ASSERT_EQ(got.flag, want.flag) << i;
    }
  }
  EXPECT_EQ(total, 8000u);
  EXPECT_EQ(quick, expected_quick);
}

}  // namespace
}  // namespace pbtree
