// find_in_page's report on the node before the one found (node/page_search.h prev_known,
// prev_matched): when it says it passed that node, prev_matched is exactly the bytes that
// node's key shares with the search key and offset_ctx is that node's key length and record
// number, on random leaf pages of both layouts (the writer builds inserted nodes from them).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "node/page_image.h"
#include "node/page_search.h"
#include "util/bytes.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

// A leaf page of sorted random keys over a few byte values (long shared prefixes, keys that
// are prefixes of others), as many as fit; `image` gets the entries the page holds.
Bytes random_leaf(std::mt19937_64& rng, NodeLayout layout, bool descending, BtreePageImage& image) {
  std::vector<Bytes> keys;
  for (int i = 0; i < 900; ++i) {
    Bytes k(1 + rng() % 12);
    for (auto& b : k) b = static_cast<uint8_t>("\x00\x01\x41\x42\xFE"[rng() % 5]);
    keys.push_back(std::move(k));
  }
  std::sort(keys.begin(), keys.end(),
            [&](const Bytes& a, const Bytes& b) { return compare_keys(a, b, descending) < 0; });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  image = BtreePageImage{};
  image.header.layout = layout;
  image.header.jump_interval = 256;
  uint64_t recno = 1;
  for (const Bytes& k : keys) image.entries.push_back(PageEntry{k, recno += 1 + rng() % 3, 0});
  Bytes page(8192);
  while (encode_page(image, page.data(), 8192) == 0) {
    image.entries.resize(image.entries.size() * 9 / 10);
  }
  return page;
}

struct PrevCase {
  NodeLayout layout;
  bool descending;
  size_t known;  ///< probes (of 4000) whose search passed the previous node
};

class NodePageSearchPrev : public ::testing::TestWithParam<PrevCase> {};

TEST_P(NodePageSearchPrev, PassedPreviousNodeIsDescribedExactly) {
  const PrevCase pc = GetParam();
  std::mt19937_64 rng(7);
  BtreePageImage image;
  const Bytes page = random_leaf(rng, pc.layout, pc.descending, image);
  // Offset of each entry's node, in order, from a decode of the page.
  const BtreePageImage again = decode_page(page.data(), 8192);
  ASSERT_EQ(again.entries.size(), image.entries.size());
  size_t known = 0;
  for (int probe = 0; probe < 4000; ++probe) {
    Bytes key(1 + rng() % 12);
    for (auto& b : key) b = static_cast<uint8_t>("\x00\x01\x41\x42\xFE"[rng() % 5]);
    const uint64_t recno = rng() % 2000;
    const PageFind f =
        find_in_page(page.data(), 8192, key, pc.descending, recno, FindMode::LowerBound);
    if (!f.prev_known) continue;
    ASSERT_NE(f.prev_offset, 0u);
    // The entry before the one found, in the model: the last entry below (key, recno).
    const auto it = std::lower_bound(
        image.entries.begin(), image.entries.end(), 0, [&](const PageEntry& e, int) {
          return compare_entry(e.key, e.recno, key, recno, pc.descending) < 0;
        });
    ASSERT_NE(it, image.entries.begin());
    const PageEntry& prev = *(it - 1);
    EXPECT_EQ(f.prev_matched, common_prefix(prev.key, key));
    EXPECT_EQ(f.offset_ctx.key_length, prev.key.size());
    EXPECT_EQ(f.offset_ctx.recno, prev.recno);
    ++known;
  }
  // Most probes land inside a jump area, past at least one node of it.
  EXPECT_EQ(known, pc.known);
}

INSTANTIATE_TEST_SUITE_P(Layouts, NodePageSearchPrev,
                         ::testing::Values(PrevCase{NodeLayout::Firebird, false, 3897},
                                           PrevCase{NodeLayout::Firebird, true, 3914},
                                           PrevCase{NodeLayout::Compact, false, 3901},
                                           PrevCase{NodeLayout::Compact, true, 3904}),
                         // Named by position: the default name prints the struct's bytes,
                         // padding included, which differ from run to run.
                         [](const auto& info) { return "Case" + std::to_string(info.index); });

}  // namespace
}  // namespace pbtree
