// The per-frame page directory (node/page_directory.h): building it from a page, searching
// with it, and attaching it to a buffer-pool frame.
#include "node/page_directory.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "node/btree_page.h"
#include "node/node.h"
#include "node/node_quick.h"
#include "node/page_search_internal.h"

namespace pbtree {

namespace {

// Up to 8 bytes at p, big-endian, zero-padded.
inline uint64_t load_head(const uint8_t* p, size_t n) {
  uint8_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (n != 0) std::memcpy(b, p, std::min<size_t>(n, 8));  // p may be null when n is 0
  uint64_t v;
  std::memcpy(&v, b, 8);
  return __builtin_bswap64(v);
}

inline void store_head(uint64_t head, uint8_t* out) {
  const uint64_t v = __builtin_bswap64(head);
  std::memcpy(out, &v, 8);
}

[[gnu::always_inline]] inline IndexNode node_at(const uint8_t* page, uint32_t limit, uint32_t off,
                                                bool leaf, const NodeContext* c) {
  return decode_node_quick(page, limit, off, leaf, c);
}

}  // namespace

size_t PageDirectory::bytes() const {
  return sizeof(*this) + block_words_ * sizeof(uint64_t);
}

void PageDirectory::clear_block() {
  block_.reset();
  block_words_ = 0;
  heads_ = {};
  prev_recno_ = {};
  groups_ = {};
  prefix_ = {};
  keys_ = {};
}

void PageDirectory::pack(const std::vector<uint64_t>& heads, const std::vector<Group>& groups,
                         const std::vector<uint64_t>& prev_recno,
                         const std::vector<uint8_t>& prefix, const std::vector<uint8_t>& keys) {
  static_assert(sizeof(Group) == 8 && alignof(Group) <= 8);
  const size_t ng = groups.size();
  const size_t bytes =
      (heads.size() + prev_recno.size()) * 8 + ng * sizeof(Group) + prefix.size() + keys.size();
  const size_t words = (bytes + 7) / 8;
  if (words != block_words_) {
    // A rebuild of the same size reuses the block (an insert-built page rebuilt in place).
    block_ = words == 0 ? nullptr : std::make_unique_for_overwrite<uint64_t[]>(words);
    block_words_ = words;
  }
  uint64_t* w = block_.get();
  heads_ = std::span<uint64_t>(w, heads.size());
  if (!heads.empty()) std::memcpy(w, heads.data(), heads.size() * 8);
  w += heads.size();
  prev_recno_ = std::span<uint64_t>(w, prev_recno.size());
  if (!prev_recno.empty()) std::memcpy(w, prev_recno.data(), prev_recno.size() * 8);
  w += prev_recno.size();
  groups_ = std::span<Group>(reinterpret_cast<Group*>(w), ng);
  if (ng != 0) std::memcpy(static_cast<void*>(groups_.data()), groups.data(), ng * sizeof(Group));
  uint8_t* b = reinterpret_cast<uint8_t*>(w + ng);
  prefix_ = std::span<uint8_t>(b, prefix.size());
  if (!prefix.empty()) std::memcpy(b, prefix.data(), prefix.size());
  b += prefix.size();
  keys_ = std::span<uint8_t>(b, keys.size());
  if (!keys.empty()) std::memcpy(b, keys.data(), keys.size());
}

bool PageDirectory::same_as(const PageDirectory& o) const {
  auto groups_equal = [&] {
    for (size_t i = 0; i < groups_.size(); ++i) {
      const Group &a = groups_[i], &b = o.groups_[i];
      if (a.offset != b.offset || a.key_len != b.key_len || a.key_off != b.key_off ||
          a.prev_len != b.prev_len) {
        return false;
      }
    }
    return true;
  };
  return usable_ == o.usable_ && leaf_ == o.leaf_ && compact_ == o.compact_ &&
         degenerate_first_ == o.degenerate_first_ && group_size_ == o.group_size_ &&
         std::ranges::equal(prefix_, o.prefix_) && std::ranges::equal(heads_, o.heads_) &&
         groups_.size() == o.groups_.size() && groups_equal() &&
         std::ranges::equal(prev_recno_, o.prev_recno_) && std::ranges::equal(keys_, o.keys_);
}

void PageDirectory::build(const uint8_t* page, uint32_t page_size, uint64_t version) {
  version_.store(kNoVersion, std::memory_order_relaxed);
  const BtreeHeader h = check_btree_header(page, page_size);
  leaf_ = h.level == 0;
  compact_ = h.layout == NodeLayout::Compact;
  degenerate_first_ = !leaf_ && h.left_sibling == 0;
  usable_ = false;
  const uint32_t first = kBtreeHeaderSize + h.jump_size;
  const uint32_t limit = h.length;
  first_ = static_cast<uint16_t>(first);
  limit_ = static_cast<uint16_t>(limit);
  // A quarter of the page for everything but the object itself.
  const size_t budget = page_size / 4 > sizeof(*this) ? page_size / 4 - sizeof(*this) : 0;
  try {
    usable_ = fill_all(page, first, limit, budget);
  } catch (const CorruptError&) {
    usable_ = false;
  }
  if (!usable_) {
    group_size_ = kMinGroup;
    clear_block();
  }
  version_.store(version, std::memory_order_release);
}

bool PageDirectory::fill_all(const uint8_t* page, uint32_t first, uint32_t limit, size_t budget) {
  // Pass 1: entries and the common prefix (the least node prefix after the first node).
  uint32_t n = 0;
  uint32_t common = UINT32_MAX;
  uint32_t first_len = 0;
  NodeContext ctx;
  uint32_t pos = first;
  for (uint32_t steps = 0;; ++steps) {
    if (steps > limit) return false;
    IndexNode nd = node_at(page, limit, pos, leaf_, n == 0 ? nullptr : &ctx);
    if (nd.is_marker()) break;
    if (n == 0 && nd.prefix != 0) return false;
    if (n == 0) first_len = nd.length;
    if (n > 0) common = std::min(common, nd.prefix);
    ++n;
    ctx = context_after(nd);
    pos = nd.end();
  }
  if (n <= 1) common = 0;
  entries_ = built_entries_ = n;
  const size_t per_group = sizeof(uint64_t) + sizeof(Group) + (compact_ ? sizeof(uint64_t) : 0);
  // The smallest group size whose fixed part and common prefix fit the budget (not only
  // powers of two: on a compact leaf of ~3,000 entries, doubling would give 64 where 38
  // fits), then larger ones by a quarter while the inexact groups' key bytes do not fit.
  uint32_t k = leaf_ ? kMinGroup : kMinInnerGroup;
  const size_t prefix_bytes = std::min(common, first_len);
  if (prefix_bytes >= budget) return false;
  const size_t max_groups = (budget - prefix_bytes) / per_group;
  if (max_groups == 0) return false;
  if (size_t{(n + k - 1) / k} > max_groups) {
    k = static_cast<uint32_t>(std::min<size_t>(n, (n + max_groups - 1) / max_groups));
  }
  for (;;) {
    if (fill(page, first, limit, common, k, (n + k - 1) / k, budget)) break;
    if (k >= n) return false;  // even one group does not fit
    k = std::min(n, k + std::max(1u, k / 4));
  }
  group_size_ = k;
  return true;
}

bool PageDirectory::fill(const uint8_t* page, uint32_t first, uint32_t limit, uint32_t common,
                         uint32_t k, size_t n_groups, size_t budget) {
  // Scratch of this thread's builds, packed into the block at the end.
  thread_local std::vector<uint8_t> key, prefix, keys;
  thread_local std::vector<uint64_t> heads, prev_recno;
  thread_local std::vector<Group> groups;
  key.clear();
  prefix.clear();
  keys.clear();
  heads.clear();
  prev_recno.clear();
  groups.clear();
  heads.reserve(n_groups);
  groups.reserve(n_groups);
  if (compact_) prev_recno.reserve(n_groups);
  NodeContext ctx;
  uint32_t pos = first;
  for (uint32_t i = 0;; ++i) {
    IndexNode nd = node_at(page, limit, pos, leaf_, i == 0 ? nullptr : &ctx);
    if (nd.is_marker()) break;
    if (nd.prefix > key.size()) {
      corrupt_page(page, fmt::format("node at offset {}: prefix {} beyond the previous key ({})",
                                     pos, nd.prefix, key.size()));
    }
    key.resize(nd.prefix);
    key.insert(key.end(), nd.data, nd.data + nd.length);
    if (i == 0) prefix.assign(key.begin(), key.begin() + std::min<size_t>(common, key.size()));
    if (i % k == 0) {
      const size_t p = prefix.size();
      const size_t s = key.size() - p;
      Group g;
      g.offset = static_cast<uint16_t>(pos);
      g.key_len = static_cast<uint16_t>(key.size());
      g.prev_len = static_cast<uint16_t>(i == 0 ? 0 : ctx.key_length);
      g.key_off = kExact;
      if (s > 8) {
        if (keys.size() + (s - 8) >= kExact) return false;
        g.key_off = static_cast<uint16_t>(keys.size());
        keys.insert(keys.end(), key.begin() + p + 8, key.end());
      }
      heads.push_back(load_head(key.data() + p, s));
      groups.push_back(g);
      if (compact_) prev_recno.push_back(i == 0 ? 0 : ctx.recno);
    }
    ctx = context_after(nd);
    pos = nd.end();
  }
  const size_t per_group = sizeof(uint64_t) + sizeof(Group) + (compact_ ? sizeof(uint64_t) : 0);
  if (groups.size() * per_group + keys.size() + prefix.size() > budget) return false;
  pack(heads, groups, prev_recno, prefix, keys);
  return true;
}

PageFind PageDirectory::find(const uint8_t* page, std::span<const uint8_t> key, bool descending,
                             std::optional<uint64_t> recno, FindMode mode) const {
  const uint32_t limit = limit_;
  const uint32_t first = first_;
  const size_t ng = groups_.size();
  const uint32_t p = static_cast<uint32_t>(prefix_.size());
  const size_t ks = key.size();
  uint32_t kp = 0;
  {
    const size_t m = std::min<size_t>(p, ks);
    while (kp < m && key[kp] == prefix_[kp]) ++kp;
  }
  const bool shares = kp == p;
  const uint32_t ksuf = shares ? static_cast<uint32_t>(ks - p) : 0;
  const uint64_t khead = shares ? load_head(key.data() + p, ksuf) : 0;
  const std::span<const uint8_t> sub = shares ? key.subspan(p) : key;

  // Compares group g's first key with `key`; `common` gets the bytes they share.
  auto compare_group = [&](size_t g, uint32_t& common) -> int {
    if (!shares) {
      return node_detail::compare_two_part(prefix_.data(), p, nullptr, 0, key, descending, common);
    }
    const Group& gr = groups_[g];
    const uint32_t s = gr.key_len - p;
    const uint64_t diff = heads_[g] ^ khead;
    if (diff != 0) {
      const uint32_t i = static_cast<uint32_t>(__builtin_clzll(diff)) >> 3;
      if (i < s && i < ksuf) {
        common = p + i;
        return heads_[g] < khead ? -1 : 1;
      }
    }
    uint8_t hb[8];
    store_head(heads_[g], hb);
    const uint32_t nh = std::min<uint32_t>(s, 8);
    const uint8_t* rest = gr.key_off == kExact ? nullptr : keys_.data() + gr.key_off;
    const int c = node_detail::compare_two_part(hb, nh, rest, s - nh, sub, descending, common);
    common += p;
    return c;
  };
  auto group_node = [&](size_t g) {
    const Group& gr = groups_[g];
    NodeContext pc{gr.prev_len, compact_ ? prev_recno_[g] : 0};
    return node_at(page, limit, gr.offset, leaf_, g == 0 ? nullptr : &pc);
  };
  auto below = [&](size_t g, uint32_t& common) {
    if (g == 0 && degenerate_first_) {
      common = 0;
      return true;
    }
    const int c = compare_group(g, common);
    if (c != 0) return c < 0;
    const uint64_t node_recno = group_node(g).recno;
    if (mode == FindMode::LowerBound) return recno.has_value() && node_recno < *recno;
    return !recno.has_value() || node_recno <= *recno;
  };

  // The last group whose first node lies below the target.
  size_t lo = 0, hi = ng;
  uint32_t common = 0, best_common = 0;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (below(mid, common)) {
      lo = mid + 1;
      best_common = common;
    } else {
      hi = mid;
    }
  }
  node_detail::ScanStart st;
  st.pos = first;
  if (lo > 0) {
    const size_t g = lo - 1;
    // best_common is from the last probe that went right, which was group g.
    IndexNode n = group_node(g);
    st.prev = n.offset;
    st.have_prev = true;
    st.ctx = context_after(n);
    st.ctx_before_prev = NodeContext{groups_[g].prev_len, compact_ ? prev_recno_[g] : 0};
    st.have_ctx_before_prev = g != 0;
    st.matched = best_common;
    st.prev_exact = shares && !(g == 0 && degenerate_first_);
    st.pos = n.end();
  }
  return node_detail::scan_nodes(page, limit, leaf_, key, descending, recno, mode, st);
}

PageFind find_in_frame(const PageRef& ref, std::span<const uint8_t> key, bool descending,
                       std::optional<uint64_t> recno, FindMode mode) {
  Frame& f = ref.frame();
  BufferPool& pool = ref.pool();
  const uint64_t v = f.version.load(std::memory_order_acquire);
  auto* dir = static_cast<PageDirectory*>(f.aux.load(std::memory_order_acquire));
  if (dir == nullptr || dir->version() != v) {
    std::unique_lock<std::mutex> lock(f.aux_mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
      return find_in_page(ref.data(), pool.page_size(), key, descending, recno, mode);
    }
    dir = static_cast<PageDirectory*>(f.aux.load(std::memory_order_acquire));
    int64_t before = 0;
    if (dir == nullptr) {
      dir = new PageDirectory;
      f.aux.store(dir, std::memory_order_release);
    } else {
      before = static_cast<int64_t>(dir->bytes());
    }
    if (dir->version() != v) {
      dir->build(ref.data(), pool.page_size(), v);
      pool.aux_builds.fetch_add(1, std::memory_order_relaxed);
    }
    pool.aux_bytes.fetch_add(static_cast<int64_t>(dir->bytes()) - before,
                             std::memory_order_relaxed);
  }
  if (!dir->usable()) {
    return find_in_page(ref.data(), pool.page_size(), key, descending, recno, mode);
  }
  return dir->find(ref.data(), key, descending, recno, mode);
}

const PageDirectory* current_directory(const PageRef& ref) {
  Frame& f = ref.frame();
  const uint64_t v = f.version.load(std::memory_order_acquire);
  auto* dir = static_cast<const PageDirectory*>(f.aux.load(std::memory_order_acquire));
  return dir != nullptr && dir->version() == v ? dir : nullptr;
}

}  // namespace pbtree
