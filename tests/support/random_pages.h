// Test support for the in-page search tests (page directory, route table): random sorted
// entries with long shared prefixes and duplicates, and a page image of as many as fit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace pbtree::testing {

/// Random sorted entries: keys over a few byte values (long shared prefixes, keys that are
/// prefixes of others), each key repeated up to `dups` times with rising record numbers;
/// child pages count up from 100.
inline std::vector<PageEntry> random_entries(std::mt19937_64& rng, size_t n, size_t max_len,
                                             size_t dups, bool descending) {
  using Bytes = std::vector<uint8_t>;
  std::vector<Bytes> keys;
  for (size_t i = 0; i < n; ++i) {
    Bytes k(1 + rng() % max_len);
    for (auto& b : k) b = static_cast<uint8_t>("\x00\x01\x41\x42\xFE"[rng() % 5]);
    keys.push_back(std::move(k));
  }
  std::sort(keys.begin(), keys.end(),
            [&](const Bytes& a, const Bytes& b) { return compare_keys(a, b, descending) < 0; });
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<PageEntry> out;
  uint32_t child = 100;
  for (const Bytes& k : keys) {
    const size_t copies = 1 + rng() % dups;
    uint64_t r = rng() % 50;
    for (size_t c = 0; c < copies; ++c) {
      out.push_back(PageEntry{k, r, child++});
      r += 1 + rng() % 3;
    }
  }
  return out;
}

/// Encodes as many of `entries` as fit a page of `ps` bytes (jump interval 256); returns the
/// page. The first node of a leftmost non-leaf page is made degenerate (empty key, record
/// number 0). With `end_bucket`, the page ends with END_BUCKET (a copy of that entry) and
/// has right sibling `sibling`.
inline std::vector<uint8_t> make_page(std::vector<PageEntry> entries, NodeLayout layout,
                                      uint8_t level, uint32_t left_sibling, uint32_t ps,
                                      std::optional<PageEntry> end_bucket = std::nullopt,
                                      uint32_t sibling = 0) {
  BtreePageImage img;
  img.header.layout = layout;
  img.header.level = level;
  img.header.left_sibling = left_sibling;
  img.header.sibling = sibling;
  img.header.jump_interval = 256;
  img.entries = std::move(entries);
  img.end_bucket = std::move(end_bucket);
  if (level > 0 && left_sibling == 0) img.entries.front() = PageEntry{{}, 0, 99};
  std::vector<uint8_t> page(ps);
  while (encode_page(img, page.data(), ps) == 0) img.entries.resize(img.entries.size() * 9 / 10);
  return page;
}

}  // namespace pbtree::testing
