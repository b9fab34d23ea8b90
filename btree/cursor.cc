// Cursor: forward scans decoding ahead under one latch hold per batch, bounds and prefix
// checks, re-seek when a leaf changed (design at the top of btree/btree.h); backward scans are
// in btree/cursor_backward.cc.
#include <cstring>
#include <thread>

#include "btree/cursor_backward.h"
#include "btree/tree_internal.h"
#include "btree/walk_bound.h"
#include "node/node_inline.h"
#include "node/page_directory.h"

namespace pbtree {

struct Cursor::Ops {
  // A cursor over `range` of `t`, not yet positioned (make) or at its first entry (open).
  static Cursor make(const BTree* t, ScanRange range) { return Cursor(t, std::move(range)); }
  static Cursor open(const BTree* t, ScanRange range) {
    Cursor c(t, std::move(range));
    c.start();
    return c;
  }
  // Moves `cur` to its right sibling (coupled: the sibling is latched first).
  static void move_right(const BTree& t, ReadLatch& cur) { pbtree::move_right(t.pool(), cur); }

  // Counts one move of the cursor; more moves than the pages in use (WalkBound: file, log
  // and the pages only the pool holds yet) means the sibling chain loops (a corrupt file).
  // `page_no`: the page the cursor is on (named in the error: a page only the pool holds
  // has no page number stamped yet).
  static void count_hop(Cursor& c, const uint8_t* d, uint32_t page_no) {
    CursorBackward::count_hop(c, d, page_no, false);
  }

  // Positions on the node at `offset` of `cur`; key_ holds the previous node's key if
  // `key_known`. Moves right past END_BUCKET.
  // `ahead`: also decode the entries after it for next() (not for single-entry seeks).
  // Makes key_ the current key (copies a view of ahead_keys_ out of it).
  static void own_key(Cursor& c) {
    if (!c.in_view_) return;
    c.key_.assign(c.view_, c.view_ + c.view_len_);
    c.in_view_ = false;
  }

  static void land_forward(Cursor& c, ReadLatch& cur, uint32_t offset, bool key_known,
                           bool ahead = true) {
    own_key(c);
    c.ahead_n_ = 0;
    c.ahead_pos_ = 0;
    c.ahead_stop_ = false;
    const uint32_t ps = c.tree_->pool().page_size();
    // After a move right, the first key found must not sort below the last key of the page
    // left behind: a sibling chain that loops back (a corrupt file) is caught here, and by the
    // hop bound in move_right_checked when every key is equal.
    std::vector<uint8_t> before;
    bool hopped = false;
    for (;;) {
      const uint8_t* d = cur.data();
      IndexNode n;
      if (key_known) {
        // key_ and recno_ are the previous node's, unless this is the page's first node.
        if (!try_decode_node(d, BtreePage(d).length(), offset, true, n)) {
          const NodeContext ctx{static_cast<uint32_t>(c.key_.size()), c.recno_};
          n = decode_node(d, BtreePage(d).length(), offset, true,
                          offset == first_node(d) ? nullptr : &ctx);
        }
        if (!n.is_marker()) {
          if (n.prefix > c.key_.size())
            corrupt_page(d, fmt::format("node at offset {}: bad prefix", offset));
          append_suffix(c.key_, n.prefix, n.data, n.length);
        }
      } else {
        n = node_with_key(d, ps, offset, c.key_);
      }
      if (hopped && !n.is_marker()) {
        if (compare_keys(c.key_, before, c.tree_->definition().descending) < 0)
          corrupt_page(d, "first key sorts below the last key of the left sibling");
        hopped = false;
      }
      if (n.is_end_level()) {
        c.valid_ = false;
        c.page_.reset();
        return;
      }
      if (n.is_end_bucket()) {
        if (!hopped) before = c.key_;
        hopped = true;
        count_hop(c, cur.data(), cur.ref().page_no());
        move_right(*c.tree_, cur);
        offset = first_node(cur.data());
        c.key_.clear();
        key_known = true;
        continue;
      }
      c.offset_ = offset;
      c.next_offset_ = n.end();
      c.recno_ = n.recno;
      c.version_ = cur.ref().version();
      c.valid_ = true;
      if (ahead) fill_ahead(c, d, n);
      c.page_ = cur.release_pin();
      return;
    }
  }

  // Entries decoded ahead per latch hold (a wide scan latches a leaf once per this many).
  static constexpr int kAhead = 128;

  // Decodes up to kAhead entries of leaf `d` from `pos` (the node after the current entry,
  // whose key is c.key_) into c.ahead_, stopping at the END marker. Called under the latch.
  // One loop per layout, inline decoders (node/node_quick.h); each key is built straight into
  // ahead_keys_ (its size is its capacity: bytes past the keys written are slack for the
  // 16-byte block copies, never zero-filled per entry).
  static void fill_ahead(Cursor& c, const uint8_t* d, IndexNode prev_node) {
    if (BtreePage(d).layout() == NodeLayout::Compact) {
      fill_ahead_layout<true>(c, d, prev_node);
    } else {
      fill_ahead_layout<false>(c, d, prev_node);
    }
    cut_ahead(c);
  }

  // 16 bytes from `src` to `dst` (distinct 16-byte blocks; a load then a store).
  [[gnu::always_inline]] static inline void copy16(uint8_t* dst, const uint8_t* src) {
    uint8_t t[16];
    std::memcpy(t, src, 16);
    std::memcpy(dst, t, 16);
  }

  template <bool kCompact>
  static void fill_ahead_layout(Cursor& c, const uint8_t* d, const IndexNode& first_prev) {
    constexpr size_t kSlack = 16;
    uint32_t pos = first_prev.end();
    c.ahead_n_ = 0;
    c.ahead_pos_ = 0;
    c.ahead_stop_ = false;
    const uint32_t ps = c.tree_->pool().page_size();
    const uint8_t* page_end = d + ps;
    const uint16_t length = BtreePage(d).length();
    if (c.ahead_keys_.size() < 2048) c.ahead_keys_.resize(2048);
    if (!c.ahead_) c.ahead_ = std::make_unique<Cursor::Ahead[]>(kAhead);
    Cursor::Ahead* ahead = c.ahead_.get();
    uint32_t count = 0;
    uint8_t* buf = c.ahead_keys_.data();
    size_t cap = c.ahead_keys_.size();
    size_t used = 0;
    // The previous key: c.key_ (exact size: plain memcpy) for the first entry, then the last
    // key written into buf (slack after it: block copies).
    bool prev_in_buf = false;
    size_t prev_off = 0;
    uint32_t prev_len = static_cast<uint32_t>(c.key_.size());
    NodeContext ctx = context_after(first_prev);
    for (int i = 0; i < kAhead; ++i) {
      IndexNode n;
      bool quick;
      if constexpr (kCompact) {
        quick = try_decode_compact(d, length, pos, true, ctx, n);
      } else {
        quick = try_decode_node(d, length, pos, true, n);
      }
      if (!quick) n = decode_node(d, length, pos, true, &ctx);
      if (n.is_marker()) break;
      if (n.prefix > prev_len) corrupt_page(d, fmt::format("node at offset {}: bad prefix", pos));
      const uint32_t klen = n.prefix + n.length;
      if (used + klen + kSlack > cap) {
        cap = std::max(cap * 2, used + klen + kSlack);
        c.ahead_keys_.resize(cap);
        buf = c.ahead_keys_.data();
      }
      uint8_t* out = buf + used;
      if (!prev_in_buf) {
        if (n.prefix != 0) std::memcpy(out, c.key_.data(), n.prefix);
      } else {
        const uint8_t* prev = buf + prev_off;
        for (uint32_t b = 0; b < n.prefix; b += 16) copy16(out + b, prev + b);
      }
      if (n.length <= 16 && n.data + 16 <= page_end) {
        copy16(out + n.prefix, n.data);
      } else if (n.length != 0) {
        std::memcpy(out + n.prefix, n.data, n.length);
      }
      ahead[count++] = Cursor::Ahead{pos, n.end(), n.recno, static_cast<uint32_t>(used), klen};
      prev_in_buf = true;
      prev_off = used;
      prev_len = klen;
      used += klen;
      pos = n.end();
      ctx = NodeContext{klen, n.recno};
    }
    c.ahead_n_ = count;
  }

  // Cuts c.ahead_ at the scan's upper bound.
  static void cut_ahead(Cursor& c) {
    // Entries beyond the upper bound are cut here, by one comparison per batch (plus a binary
    // search in the last one), instead of a check per next().
    const ScanRange& r = c.range_;
    if (!r.upper || c.ahead_n_ == 0) return;
    const bool desc = c.tree_->definition().descending;
    auto beyond = [&](const Cursor::Ahead& e) {
      std::span<const uint8_t> k(c.ahead_keys_.data() + e.key_offset, e.key_length);
      const int cmp = compare_keys(k, r.upper->key, desc);
      return cmp > 0 || (cmp == 0 && !r.upper->inclusive);
    };
    if (!beyond(c.ahead_[c.ahead_n_ - 1])) return;
    uint32_t lo = 0, hi = c.ahead_n_ - 1;  // ahead_[hi] is beyond
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (beyond(c.ahead_[mid])) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    c.ahead_n_ = lo;
    c.ahead_stop_ = true;
  }

  // Forward next() without the latch: the next entry decoded ahead, if the page is unchanged.
  static bool take_ahead(Cursor& c) {
    if (c.page_.version() != c.version_) return false;
    if (c.ahead_pos_ >= c.ahead_n_) {
      if (!c.ahead_stop_) return false;
      c.valid_ = false;  // the next entry lies beyond the upper bound
      c.page_.reset();
      return true;
    }
    const Cursor::Ahead& e = c.ahead_[c.ahead_pos_++];
    c.view_ = c.ahead_keys_.data() + e.key_offset;
    c.view_len_ = e.key_length;
    c.in_view_ = true;
    c.recno_ = e.recno;
    c.offset_ = e.offset;
    c.next_offset_ = e.end;
    return true;
  }

  // Forward: first entry >= (key, recno).
  static void seek_forward(Cursor& c, std::span<const uint8_t> key, uint64_t recno) {
    const BTree& t = *c.tree_;
    c.page_.reset();
    c.in_view_ = false;
    PageFind f;
    ReadLatch cur(t.descend(key, recno, f), std::adopt_lock);
    WalkBound bound(t.pool());
    while (f.beyond_end_bucket) {
      bound.step(cur.data(), cur.ref().page_no(), "the right sibling chain loops back");
      move_right(t, cur);
      f = find_in_frame(cur.ref(), key, t.definition().descending, recno, FindMode::LowerBound);
    }
    if (!land_found(c, cur, f, key)) land_forward(c, cur, f.offset, false, false);
  }

  // Positions on the entry the search `f` for `key` landed on, its key rebuilt from the search
  // key (the landed node shares its first `prefix` bytes with the node before it, which shares
  // f.matched >= prefix bytes with `key`): no walk from the jump node. False, touching nothing,
  // when the node is a marker or the prefix is not covered (land_forward then walks).
  static bool land_found(Cursor& c, ReadLatch& cur, const PageFind& f,
                         std::span<const uint8_t> key) {
    if (f.at_marker) return false;
    const uint8_t* d = cur.data();
    const IndexNode n =
        decode_node_quick(d, BtreePage(d).length(), f.offset, true, f.offset_context());
    if (n.is_marker() || n.prefix > f.matched || n.prefix > key.size()) return false;
    own_key(c);
    c.ahead_n_ = 0;
    c.ahead_pos_ = 0;
    c.ahead_stop_ = false;
    c.key_.resize(size_t{n.prefix} + n.length);
    if (n.prefix != 0) std::memcpy(c.key_.data(), key.data(), n.prefix);
    if (n.length != 0) std::memcpy(c.key_.data() + n.prefix, n.data, n.length);
    c.offset_ = f.offset;
    c.next_offset_ = n.end();
    c.recno_ = n.recno;
    c.version_ = cur.ref().version();
    c.valid_ = true;
    c.page_ = cur.release_pin();
    return true;
  }

  static void seek_first(Cursor& c) {
    c.page_.reset();
    c.in_view_ = false;
    ReadLatch cur(c.tree_->descend_edge(false), std::adopt_lock);
    c.key_.clear();
    land_forward(c, cur, first_node(cur.data()), true);
  }

  // Ends the scan if the current entry lies outside the range.
  static void check_bounds(Cursor& c) {
    if (!c.valid_) return;
    const bool desc = c.tree_->definition().descending;
    const ScanRange& r = c.range_;
    bool out = false;
    const std::span<const uint8_t> key = c.key();
    if (r.prefix && !starts_with(key, *r.prefix)) out = true;
    if (!r.backward && r.upper) {
      int cmp = compare_keys(key, r.upper->key, desc);
      out = out || cmp > 0 || (cmp == 0 && !r.upper->inclusive);
    }
    if (r.backward && r.lower) {
      int cmp = compare_keys(key, r.lower->key, desc);
      out = out || cmp < 0 || (cmp == 0 && !r.lower->inclusive);
    }
    if (out) {
      c.valid_ = false;
      c.page_.reset();
      c.cache_.clear();
    }
  }

  // The scan's edge target from its range (see Cursor::edge_key_).
  static void compute_edge(Cursor& c) {
    const bool desc = c.tree_->definition().descending;
    const size_t pad = c.tree_->pool().page_size() / 4;
    const ScanRange& r = c.range_;
    c.has_edge_ = false;
    auto consider = [&](std::vector<uint8_t> key, uint64_t recno) {
      if (c.has_edge_) {
        int cmp = compare_entry(key, recno, c.edge_key_, c.edge_recno_, desc);
        if (r.backward ? cmp >= 0 : cmp <= 0) return;
      }
      c.has_edge_ = true;
      c.edge_key_ = std::move(key);
      c.edge_recno_ = recno;
    };
    if (!r.backward) {
      if (r.lower) consider(r.lower->key, r.lower->inclusive ? 0 : kAfterAll);
      if (r.prefix) {
        std::vector<uint8_t> k = *r.prefix;
        if (desc) k.insert(k.end(), pad, 0x00);  // below every key starting with the prefix
        consider(std::move(k), 0);
      }
    } else {
      if (r.upper) consider(r.upper->key, r.upper->inclusive ? kAfterAll : 0);
      if (r.prefix) {
        std::vector<uint8_t> k = *r.prefix;
        if (!desc) k.insert(k.end(), pad, 0xFF);  // above every key starting with the prefix
        consider(std::move(k), desc ? kAfterAll : 0);
      }
    }
  }
};

Cursor::~Cursor() = default;

void Cursor::start() {
  CursorOps::compute_edge(*this);
  if (!range_.backward) {
    if (has_edge_) {
      CursorOps::seek_forward(*this, edge_key_, edge_recno_);
    } else {
      CursorOps::seek_first(*this);
    }
  } else {
    if (has_edge_) {
      CursorBackward::seek_backward(*this, edge_key_, edge_recno_);
    } else {
      CursorBackward::seek_last(*this);
    }
  }
  CursorOps::check_bounds(*this);
}

void Cursor::next_slow() {
  if (!valid_) return;
  if (!range_.backward && CursorOps::take_ahead(*this)) {
    if (range_.prefix) CursorOps::check_bounds(*this);  // upper bound: cut in fill_ahead
    return;
  }
  CursorOps::own_key(*this);
  ReadLatch cur(std::move(page_));
  if (cur.ref().version() != version_) {
    cur.reset();
    std::vector<uint8_t> k = key_;
    if (!range_.backward) {
      CursorOps::seek_forward(*this, k, recno_ + 1);
    } else {
      CursorBackward::seek_backward(*this, k, recno_);
    }
  } else if (!range_.backward) {
    CursorOps::land_forward(*this, cur, next_offset_, true);
  } else if (cache_pos_ > 0) {
    CursorBackward::take_cached(*this);
    page_ = cur.release_pin();
  } else if (!CursorBackward::fill_backward(*this, cur, area_start_)) {
    cur.reset();
    std::vector<uint8_t> k = key_;
    CursorBackward::seek_backward(*this, k, recno_);
  }
  CursorOps::check_bounds(*this);
}

void Cursor::seek(std::span<const uint8_t> key) {
  const bool desc = tree_->definition().descending;
  std::vector<uint8_t> k(key.begin(), key.end());
  uint64_t recno = range_.backward ? kAfterAll : 0;
  if (has_edge_) {
    int cmp = compare_entry(k, recno, edge_key_, edge_recno_, desc);
    if (range_.backward ? cmp > 0 : cmp < 0) {
      k = edge_key_;
      recno = edge_recno_;
    }
  }
  if (!range_.backward) {
    CursorOps::seek_forward(*this, k, recno);
  } else {
    CursorBackward::seek_backward(*this, k, recno);
  }
  CursorOps::check_bounds(*this);
}

Cursor BTree::scan(ScanRange range) const {
  return CursorOps::open(this, std::move(range));
}

bool BTree::contains(std::span<const uint8_t> key, uint64_t recno) const {
  Cursor c = CursorOps::make(this, ScanRange{});
  CursorOps::seek_forward(c, key, recno);
  return c.valid() && c.record_number() == recno &&
         compare_keys(c.key(), key, def_.descending) == 0;
}

}  // namespace pbtree
