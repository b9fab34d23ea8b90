// sort_entry_batch (btree/radix_sort.h): LSD radix sort of 16-byte records over the varying
// bytes of each 8-byte key word, with an MSD step into runs of equal words.
#include "btree/radix_sort.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pbtree {

namespace {

struct Rec {
  uint64_t word;  // key bytes [offset, offset + 8), big-endian, padded
  uint64_t index;  // into items
};
static_assert(sizeof(Rec) == 16);

constexpr size_t kSmallRun = 48;

class Sorter {
 public:
  Sorter(EntryBatch& entries, bool descending)
      : entries_(entries), items_(entries.items()), desc_(descending),
        pad_(descending ? 0xFF : 0x00) {}

  void run() {
    const size_t n = items_.size();
    std::vector<Rec> recs(n);
    tmp_.resize(n);
    for (size_t i = 0; i < n; ++i) recs[i].index = i;
    sort_range(recs.data(), n, 0);
    std::vector<EntryBatch::Item> sorted(n);
    for (size_t i = 0; i < n; ++i) sorted[i] = items_[recs[i].index];
    items_.swap(sorted);
  }

 private:
  uint64_t word_at(const EntryBatch::Item& it, size_t offset) const {
    uint8_t buf[8];
    std::memset(buf, pad_, sizeof buf);
    if (offset < it.length) {
      std::memcpy(buf, entries_.key(it).data() + offset, std::min<size_t>(8, it.length - offset));
    }
    uint64_t v;
    std::memcpy(&v, buf, 8);
    return __builtin_bswap64(v);
  }

  // Full order of two items.
  bool less(uint64_t x, uint64_t y) const {
    const auto& a = items_[x];
    const auto& b = items_[y];
    const int c = compare_keys(entries_.key(a), entries_.key(b), desc_);
    if (c != 0) return c < 0;
    if (a.recno != b.recno) return a.recno < b.recno;
    return a.tag < b.tag;
  }

  // Stable LSD radix sort of r[0..n) by word, over the bytes that vary.
  void lsd(Rec* r, size_t n) {
    uint64_t all_and = ~uint64_t{0}, all_or = 0;
    static thread_local size_t count[8][256];
    std::memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t w = r[i].word;
      all_and &= w;
      all_or |= w;
      for (int b = 0; b < 8; ++b) ++count[b][(w >> (8 * b)) & 0xFF];
    }
    const uint64_t varies = all_and ^ all_or;
    Rec* src = r;
    Rec* dst = tmp_.data();
    for (int b = 0; b < 8; ++b) {
      if (((varies >> (8 * b)) & 0xFF) == 0) continue;
      size_t pos[256];
      size_t sum = 0;
      for (int d = 0; d < 256; ++d) {
        pos[d] = sum;
        sum += count[b][d];
      }
      for (size_t i = 0; i < n; ++i) dst[pos[(src[i].word >> (8 * b)) & 0xFF]++] = src[i];
      std::swap(src, dst);
    }
    if (src != r) std::memcpy(r, src, n * sizeof(Rec));
  }

  // Sorts r[0..n), whose keys agree on bytes [0, offset) (as padded), fully.
  void sort_range(Rec* r, size_t n, size_t offset) {
    if (n <= kSmallRun) {
      std::sort(r, r + n, [&](const Rec& a, const Rec& b) { return less(a.index, b.index); });
      return;
    }
    for (size_t i = 0; i < n; ++i) r[i].word = word_at(items_[r[i].index], offset);
    lsd(r, n);
    for (size_t s = 0; s < n;) {
      size_t e = s + 1;
      bool longer = items_[r[s].index].length > offset + 8;
      while (e < n && r[e].word == r[s].word) {
        longer = longer || items_[r[e].index].length > offset + 8;
        ++e;
      }
      if (e - s > 1) {
        if (longer) {
          sort_range(r + s, e - s, offset + 8);
        } else {
          // Equal up to the padding: the keys differ at most in length.
          std::sort(r + s, r + e, [&](const Rec& x, const Rec& y) {
            const auto& a = items_[x.index];
            const auto& b = items_[y.index];
            if (a.length != b.length) return desc_ ? a.length > b.length : a.length < b.length;
            if (a.recno != b.recno) return a.recno < b.recno;
            return a.tag < b.tag;
          });
        }
      }
      s = e;
    }
  }

  EntryBatch& entries_;
  std::vector<EntryBatch::Item>& items_;
  const bool desc_;
  const uint8_t pad_;
  std::vector<Rec> tmp_;
};

}  // namespace

void sort_entry_batch(EntryBatch& entries, bool descending) {
  if (entries.items().size() < 2) return;
  Sorter(entries, descending).run();
}

}  // namespace pbtree
