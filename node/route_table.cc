// The route table of a non-leaf page (node/route_table.h): building it from the page bytes
// under the shared latch, and the latch-free search of the descent.
#include "node/route_table.h"

#include <pbtree/errors.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <mutex>

#include "node/btree_page.h"
#include "node/node_quick.h"

namespace pbtree {

namespace {

constexpr uint64_t kUsable = uint64_t{1} << 18;
constexpr uint64_t kEndBucket = uint64_t{1} << 16;
constexpr uint64_t kDegenerate = uint64_t{1} << 17;
constexpr uint64_t kRecnoMask = (uint64_t{1} << 40) - 1;
constexpr size_t kFixedWords = 3;

// Up to 8 bytes at p, big-endian, zero-padded.
inline uint64_t head_of(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | (i < n ? p[i] : 0);
  return v;
}

}  // namespace

RouteTable::Word* RouteTable::reserve(size_t words) {
  Word* b = block_.load(std::memory_order_relaxed);
  if (b != nullptr && b[0].load(std::memory_order_relaxed) >= words) return b;
  const size_t cap =
      std::max(words, b == nullptr ? size_t{64} : 2 * b[0].load(std::memory_order_relaxed));
  auto fresh = std::make_unique<Word[]>(cap);
  fresh[0].store(cap, std::memory_order_relaxed);
  for (size_t i = 1; i < kFixedWords; ++i) fresh[i].store(0, std::memory_order_relaxed);
  b = fresh.get();
  blocks_.push_back(std::move(fresh));  // the smaller blocks stay: a reader may still read one
  held_words_ += cap;
  block_.store(b, std::memory_order_release);
  return b;
}

int64_t RouteTable::build(const uint8_t* page, uint32_t page_size, uint64_t version) {
  const size_t held_before = held_words_;
  const uint64_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_release);
  version_.store(kNoVersion, std::memory_order_release);

  thread_local std::vector<uint64_t> heads, links, recnos;
  thread_local std::vector<uint8_t> key, area;
  heads.clear();
  links.clear();
  recnos.clear();
  key.clear();
  area.clear();
  uint64_t meta = 0;
  uint32_t sibling = 0;
  try {
    const BtreeHeader h = check_btree_header(page, page_size);
    if (h.level == 0 || !BtreePage(page).live(-1)) throw CorruptError("not routable");
    sibling = h.sibling;
    const uint32_t limit = h.length;
    // Pass 1: the page prefix (the least node prefix after the first node, END_BUCKET's
    // included, capped by the first key) and the nodes' fields.
    struct Node {
      uint64_t recno;
      uint32_t child, len, off;
    };
    thread_local std::vector<Node> nodes;
    thread_local std::vector<uint8_t> keys;  // every node's full key, back to back
    nodes.clear();
    keys.clear();
    uint32_t common = UINT32_MAX;
    bool end_bucket = false;
    NodeContext ctx;
    uint32_t pos = kBtreeHeaderSize + h.jump_size;
    for (uint32_t i = 0;; ++i) {
      if (i > limit) throw CorruptError("node chain does not end");
      IndexNode nd = decode_node_quick(page, limit, pos, false, i == 0 ? nullptr : &ctx);
      if (nd.is_end_level()) break;
      if (nd.prefix > key.size()) throw CorruptError("prefix beyond the previous key");
      key.resize(nd.prefix);
      key.insert(key.end(), nd.data, nd.data + nd.length);
      if (i > 0) common = std::min(common, nd.prefix);
      nodes.push_back(Node{nd.recno, nd.page_number, static_cast<uint32_t>(key.size()),
                           static_cast<uint32_t>(keys.size())});
      keys.insert(keys.end(), key.begin(), key.end());
      if (nd.is_end_bucket()) {
        end_bucket = true;
        break;
      }
      ctx = context_after(nd);
      pos = nd.end();
    }
    const size_t m = nodes.size();
    const size_t n = m - (end_bucket ? 1 : 0);
    if (n > 0xFFFF) throw CorruptError("too many entries");
    const uint32_t p = m == 0 ? 0 : std::min(common, nodes[0].len);
    area.assign(keys.begin(), keys.begin() + p);
    for (const Node& nd : nodes) {
      const uint8_t* k = keys.data() + nd.off;
      const uint32_t suf = nd.len - p;
      heads.push_back(head_of(k + p, suf));
      uint64_t off = 0;
      if (suf > 8) {
        off = area.size();
        area.insert(area.end(), k + p + 8, k + nd.len);
      }
      if (area.size() > (uint64_t{1} << 31) || nd.len >= (1u << 24)) {
        throw CorruptError("keys too long");
      }
      links.push_back(uint64_t{nd.child} | (off << 32));
      recnos.push_back((nd.recno & kRecnoMask) | (uint64_t{nd.len} << 40));
    }
    meta = uint64_t{n} | (end_bucket ? kEndBucket : 0) | (h.left_sibling == 0 ? kDegenerate : 0) |
           kUsable | (uint64_t{h.level & 0xFFu} << 24) | (uint64_t{p} << 32);
  } catch (const CorruptError&) {
    meta = 0;  // unusable: the latched search reports the damage
  }

  if (meta != 0) {
    try {
      reserve(kFixedWords + 3 * heads.size() + (area.size() + 7) / 8);
    } catch (...) {  // std::bad_alloc: left unusable, seq even again
      meta = 0;
      if (Word* b = block_.load(std::memory_order_relaxed))
        b[1].store(0, std::memory_order_release);
      seq_.store(s + 2, std::memory_order_release);
      throw;
    }
  }
  if (meta == 0) {
    if (Word* b = block_.load(std::memory_order_relaxed)) b[1].store(0, std::memory_order_release);
  } else {
    const size_t m = heads.size();
    const size_t area_words = (area.size() + 7) / 8;
    Word* b = reserve(kFixedWords + 3 * m + area_words);
    b[1].store(meta, std::memory_order_release);
    b[2].store(uint64_t{sibling} | (uint64_t{area.size()} << 32), std::memory_order_release);
    Word* w = b + kFixedWords;
    for (size_t i = 0; i < m; ++i) w[i].store(heads[i], std::memory_order_release);
    w += m;
    for (size_t i = 0; i < m; ++i) w[i].store(links[i], std::memory_order_release);
    w += m;
    for (size_t i = 0; i < m; ++i) w[i].store(recnos[i], std::memory_order_release);
    w += m;
    for (size_t i = 0; i < area_words; ++i) {
      uint64_t v = 0;
      for (size_t j = 0; j < 8 && 8 * i + j < area.size(); ++j) {
        v |= uint64_t{area[8 * i + j]} << (8 * j);
      }
      w[i].store(v, std::memory_order_release);
    }
  }
  version_.store(version, std::memory_order_release);
  seq_.store(s + 2, std::memory_order_release);
  return static_cast<int64_t>((held_words_ - held_before) * sizeof(uint64_t));
}

bool RouteTable::route(uint64_t version, std::span<const uint8_t> key, bool descending,
                       uint64_t recno, RouteStep& out) const {
  const uint64_t s = seq_.load(std::memory_order_acquire);
  // Acquire: the stamp and the block words read after it come from the same build (or the
  // seq check below fails).
  if ((s & 1) != 0 || version_.load(std::memory_order_acquire) != version) return false;
  const Word* b = block_.load(std::memory_order_acquire);
  if (b == nullptr) return false;
  // Acquire loads (plain loads on x86): a value a rebuild stored (with release, after making
  // seq odd) makes the seq load at the end see the rebuild. No fences: ThreadSanitizer does
  // not model them.
  auto ld = [b](size_t i) { return b[i].load(std::memory_order_acquire); };
  const uint64_t cap = ld(0);
  const uint64_t meta = ld(1);
  if ((meta & kUsable) == 0) return false;
  const size_t n = meta & 0xFFFF;
  const bool eb = (meta & kEndBucket) != 0;
  const size_t m = n + (eb ? 1 : 0);
  const uint32_t p = static_cast<uint32_t>(meta >> 32);
  const uint64_t w2 = ld(2);
  const uint64_t area_bytes = w2 >> 32;
  const size_t heads = kFixedWords, links = heads + m, recnos = links + m, area = recnos + m;
  if (area + (area_bytes + 7) / 8 > cap || p > area_bytes) return false;
  auto byte_at = [&](uint64_t j) {
    return static_cast<uint8_t>(ld(area + j / 8) >> (8 * (j % 8)));
  };

  const size_t ks = key.size();
  uint32_t kp = 0;
  {
    const size_t lim = std::min<size_t>(p, ks);
    while (kp < lim && key[kp] == byte_at(kp)) ++kp;
  }
  const bool degenerate = (meta & kDegenerate) != 0;
  size_t lo = 0;
  if (kp < p) {
    // The key leaves the page prefix: every key of the page compares alike with it.
    int c;
    if (kp < ks) {
      c = byte_at(kp) < key[kp] ? -1 : 1;
    } else {
      c = prefix_order(p, ks, descending);  // the key ends inside the prefix: entries are longer
    }
    lo = c < 0 ? m : (degenerate && m > 0 ? 1 : 0);
  } else {
    const uint32_t ksuf = static_cast<uint32_t>(ks - p);
    const uint8_t* sub = key.data() + p;
    const uint64_t khead = head_of(sub, ksuf);
    bool torn = false;
    // Node i against the key: <0, 0, >0 (node order against the target).
    auto compare = [&](size_t i) -> int {
      const uint64_t head = ld(heads + i);
      const uint64_t len = ld(recnos + i) >> 40;
      if (len < p) {
        torn = true;
        return 1;
      }
      const uint64_t suf = len - p;
      const uint64_t diff = head ^ khead;
      if (diff != 0) {
        const uint32_t at = static_cast<uint32_t>(__builtin_clzll(diff)) >> 3;
        if (at < suf && at < ksuf) return head < khead ? -1 : 1;
      }
      const uint64_t off = ld(links + i) >> 32;
      if (suf > 8 && off + (suf - 8) > area_bytes) {
        torn = true;
        return 1;
      }
      const uint64_t lim = std::min<uint64_t>(suf, ksuf);
      uint64_t j = 0;
      uint8_t nb = 0;
      for (; j < lim; ++j) {
        nb = j < 8 ? static_cast<uint8_t>(head >> (56 - 8 * j)) : byte_at(off + j - 8);
        if (nb != sub[j]) break;
      }
      if (j < lim) return nb < sub[j] ? -1 : 1;
      return prefix_order(suf, ksuf, descending);
    };
    auto below = [&](size_t i) {
      if (i == 0 && degenerate) return true;
      const int c = compare(i);
      if (c != 0) return c < 0;
      return (ld(recnos + i) & kRecnoMask) <= recno;
    };
    size_t hi = m;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (below(mid)) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (torn) return false;
  }
  RouteStep r;
  r.level = static_cast<int>((meta >> 24) & 0xFF);
  if ((eb && lo == m) || n == 0) {
    if (!eb) return false;  // a non-leaf page without entries: corrupt
    r.sibling = true;
    r.next = static_cast<uint32_t>(w2);
  } else {
    r.next = static_cast<uint32_t>(ld(links + (lo > 0 ? lo - 1 : 0)));
  }
  if (r.next == 0) return false;
  if (seq_.load(std::memory_order_relaxed) != s) return false;
  out = r;
  return true;
}

void refresh_route_table(const PageRef& ref) {
  Frame& f = ref.frame();
  const uint64_t v = f.version.load(std::memory_order_acquire);
  auto* t = static_cast<RouteTable*>(f.route.load(std::memory_order_acquire));
  if (t != nullptr && t->version() == v) return;
  std::unique_lock<std::mutex> lock(f.aux_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  t = static_cast<RouteTable*>(f.route.load(std::memory_order_acquire));
  int64_t bytes = 0;
  if (t == nullptr) {
    t = new RouteTable;
    bytes = static_cast<int64_t>(sizeof(RouteTable));
    f.route.store(t, std::memory_order_release);
  }
  if (t->version() == v) return;
  bytes += t->build(ref.data(), ref.pool().page_size(), v);
  ref.pool().note_directory(bytes, true);
}

}  // namespace pbtree
