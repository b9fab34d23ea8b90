// sort_entry_batch (btree/radix_sort.h): LSD radix sort of 16-byte records over the varying
// bytes of each 8-byte key word, with an MSD step into runs of equal words.
#include "btree/radix_sort.h"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace pbtree {

namespace {

struct Rec {
  uint64_t word;   // key bytes [offset, offset + 8), big-endian, padded
  uint64_t index;  // into items
};
static_assert(sizeof(Rec) == 16);

constexpr size_t kSmallRun = 48;
constexpr size_t kParallelPart = 65536;  // fewest records per slice of the parallel sort

class Sorter {
 public:
  Sorter(EntryBatch& entries, bool descending)
      : entries_(entries),
        items_(entries.items()),
        desc_(descending),
        pad_(descending ? 0xFF : 0x00) {}

  void run() {
    const size_t n = items_.size();
    std::vector<Rec> recs(n);
    tmp_.resize(n);
    base_ = recs.data();
    for (size_t i = 0; i < n; ++i) recs[i].index = i;
    const size_t threads = std::min<size_t>(
        static_cast<size_t>(std::max(1, tbb::this_task_arena::max_concurrency())),
        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
    const size_t parts = std::min<size_t>(threads, n / kParallelPart);
    if (parts <= 1) {
      sort_range(recs.data(), n, 0);
    } else {
      // Parallel: `parts` contiguous slices sorted on their own threads, then merged pairwise
      // by the full order (a total order on (key, record number, tag), so the result does not
      // depend on the number of parts).
      std::vector<size_t> cut(parts + 1);
      for (size_t p = 0; p <= parts; ++p) cut[p] = n * p / parts;
      tbb::parallel_for(size_t{0}, parts, [&](size_t p) {
        sort_range(recs.data() + cut[p], cut[p + 1] - cut[p], 0);
      });
      // Each record's word set to its key's first 8 bytes again (the MSD steps left deeper
      // words), so most comparisons of the merges end on the words; equal words (keys that
      // agree on 8 padded bytes) take the full order.
      tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 16384),
                        [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end(); ++i) {
                            recs[i].word = word_at(items_[recs[i].index], 0);
                          }
                        });
      auto by_order = [&](const Rec& a, const Rec& b) {
        if (a.word != b.word) return a.word < b.word;
        return less(a.index, b.index);
      };
      for (size_t width = 1; width < parts; width *= 2) {
        tbb::parallel_for(size_t{0}, (parts + 2 * width - 1) / (2 * width), [&](size_t k) {
          const size_t lo = cut[2 * width * k];
          const size_t mid = cut[std::min(parts, 2 * width * k + width)];
          const size_t hi = cut[std::min(parts, 2 * width * k + 2 * width)];
          std::merge(recs.data() + lo, recs.data() + mid, recs.data() + mid, recs.data() + hi,
                     tmp_.data() + lo, by_order);
          std::copy(tmp_.data() + lo, tmp_.data() + hi, recs.data() + lo);
        });
      }
    }
    std::vector<uint64_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = recs[i].index;
    std::vector<Rec>().swap(recs);
    std::vector<Rec>().swap(tmp_);  // permute's new items and keys take their room
    entries_.permute(order);  // keys laid out in index order: the build reads them in sequence
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
    Rec* dst = tmp_.data() + (r - base_);  // this range's own part of the buffer
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
  Rec* base_ = nullptr;  // the records tmp_ mirrors
};

}  // namespace

void sort_entry_batch(EntryBatch& entries, bool descending) {
  if (entries.items().size() < 2) return;
  Sorter(entries, descending).run();
}

}  // namespace pbtree
