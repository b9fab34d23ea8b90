// EntryBatch and sort_entries (file/entry_sort.h, include/pbtree/index_file.h).
#include "file/entry_sort.h"

#include <fmt/format.h>
#include <pbtree/keys.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cstring>

namespace pbtree {

// Sorts entries by (key in index order, record number, tag). Each entry gets an 8-byte
// big-endian prefix of its key, padded with 00 (ascending) or FF (descending, where a
// shorter key sorts after its extensions), so most comparisons are one integer compare;
// equal prefixes fall back to compare_keys.
// The common case of sort_entries: every key fits 24 bytes (numeric keys are at most 20), so
// each entry becomes one fixed-size record holding its whole key as three big-endian words
// (padded as above) and the sort never leaves the records: no memcmp, no pointer chasing.
// Padded words equal means one key extends the other by pad bytes: the shorter sorts first
// ascending, last descending (compare_keys).
namespace {

bool sort_entries_fixed(EntryBatch& entries, bool descending) {
  struct Rec {
    uint64_t k[3];
    uint64_t recno;
    uint64_t tag;
    uint32_t length;
    uint32_t index;
  };
  auto& items = entries.items();
  if (items.size() >= UINT32_MAX) return false;
  for (const auto& it : items) {
    if (it.length > 24) return false;
  }
  std::vector<Rec> recs(items.size());
  const uint8_t pad = descending ? 0xFF : 0x00;
  tbb::parallel_for(size_t{0}, items.size(), [&](size_t i) {
    std::span<const uint8_t> k = entries.key(items[i]);
    uint8_t buf[24];
    std::memset(buf, pad, sizeof buf);
    if (!k.empty()) std::memcpy(buf, k.data(), k.size());
    Rec& r = recs[i];
    for (int w = 0; w < 3; ++w) {
      uint64_t v;
      std::memcpy(&v, buf + 8 * w, 8);
      r.k[w] = __builtin_bswap64(v);
    }
    r.recno = items[i].recno;
    r.tag = items[i].tag;
    r.length = items[i].length;
    r.index = static_cast<uint32_t>(i);
  });
  tbb::parallel_sort(recs.begin(), recs.end(), [descending](const Rec& a, const Rec& b) {
    if (a.k[0] != b.k[0]) return a.k[0] < b.k[0];
    if (a.k[1] != b.k[1]) return a.k[1] < b.k[1];
    if (a.k[2] != b.k[2]) return a.k[2] < b.k[2];
    if (a.length != b.length) return descending ? a.length > b.length : a.length < b.length;
    if (a.recno != b.recno) return a.recno < b.recno;
    return a.tag < b.tag;
  });
  std::vector<EntryBatch::Item> sorted(items.size());
  tbb::parallel_for(size_t{0}, items.size(), [&](size_t i) { sorted[i] = items[recs[i].index]; });
  items.swap(sorted);
  return true;
}

}  // namespace

void sort_entries(EntryBatch& entries, bool descending) {
  if (sort_entries_fixed(entries, descending)) return;
  struct Rec {
    uint64_t prefix;
    uint64_t recno;
    uint64_t tag;
    uint64_t index;
  };
  auto& items = entries.items();
  std::vector<Rec> recs(items.size());
  const uint8_t pad = descending ? 0xFF : 0x00;
  tbb::parallel_for(size_t{0}, items.size(), [&](size_t i) {
    std::span<const uint8_t> k = entries.key(items[i]);
    uint64_t p = 0;
    for (size_t j = 0; j < 8; ++j) p = (p << 8) | (j < k.size() ? k[j] : pad);
    recs[i] = Rec{p, items[i].recno, items[i].tag, i};
  });
  tbb::parallel_sort(recs.begin(), recs.end(), [&](const Rec& a, const Rec& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    int c = compare_keys(entries.key(items[a.index]), entries.key(items[b.index]), descending);
    if (c != 0) return c < 0;
    if (a.recno != b.recno) return a.recno < b.recno;
    return a.tag < b.tag;
  });
  std::vector<EntryBatch::Item> sorted(items.size());
  tbb::parallel_for(size_t{0}, items.size(), [&](size_t i) { sorted[i] = items[recs[i].index]; });
  items.swap(sorted);
}

void EntryBatch::add(std::span<const uint8_t> key, uint64_t recno, uint64_t tag) {
  if (recno > kMaxRecordNumber) {
    throw UsageError(
        fmt::format("record number {} exceeds the 40-bit maximum {}", recno, kMaxRecordNumber));
  }
  if (key.size() > UINT32_MAX) throw UsageError("key longer than 4 GiB");
  items_.push_back(Item{arena_.size(), recno, tag, static_cast<uint32_t>(key.size())});
  arena_.insert(arena_.end(), key.begin(), key.end());
}

void EntryBatch::append(EntryBatch&& other) {
  if (items_.empty() && items_.capacity() < other.items_.size() &&
      arena_.capacity() < other.arena_.size()) {  // no room reserved: take other's storage
    arena_ = std::move(other.arena_);
    items_ = std::move(other.items_);
  } else {
    const uint64_t base = arena_.size();
    arena_.insert(arena_.end(), other.arena_.begin(), other.arena_.end());
    const size_t first = items_.size();
    items_.insert(items_.end(), other.items_.begin(), other.items_.end());
    for (size_t i = first; i < items_.size(); ++i) items_[i].offset += base;
  }
  other.arena_.clear();
  other.items_.clear();
}

void EntryBatch::permute(const std::vector<uint64_t>& order) {
  const size_t n = items_.size();
  std::vector<Item> items(n);
  uint64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    items[i] = items_[order[i]];
    items[i].offset = at;
    at += items[i].length;
  }
  std::vector<uint8_t> arena(at);
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, n, 8192), [&](const tbb::blocked_range<size_t>& r) {
        for (size_t i = r.begin(); i < r.end(); ++i) {
          const Item& old = items_[order[i]];
          if (old.length != 0) {
            std::memcpy(arena.data() + items[i].offset, arena_.data() + old.offset, old.length);
          }
        }
      });
  arena_.swap(arena);
  items_.swap(items);
}

void EntryBatch::reserve(size_t entries, size_t key_bytes) {
  items_.reserve(entries);
  arena_.reserve(key_bytes);
}

}  // namespace pbtree
