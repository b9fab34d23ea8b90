// CursorBackward (btree/cursor_backward.h): backward scans of Cursor through a cache of one
// jump area at a time, moving left with the latch released first (never right to left while
// holding a latch).
#include "btree/cursor_backward.h"

#include <thread>

#include "btree/tree_internal.h"
#include "btree/walk_bound.h"
#include "node/page_directory.h"

namespace pbtree {

void CursorBackward::count_hop(Cursor& c, const uint8_t* d, uint32_t page_no, bool left) {
  WalkBound::check(++c.hops_, c.tree_->pool(), page_no, d,
                   left ? "the left sibling chain loops back or does not link back"
                        : "the right sibling chain loops back",
                   false);
}

// Backward: loads the jump area of `cur` that ends before `boundary` (kToEnd: the END
// marker) and takes its last entry; moves left when nothing is before `boundary`.
// Returns false if the left sibling changed under us (caller re-seeks).
bool CursorBackward::fill_backward(Cursor& c, ReadLatch& cur, uint32_t boundary) {
  const BTree& t = *c.tree_;
  const uint32_t ps = t.pool().page_size();
  for (;;) {
    const uint8_t* d = cur.data();
    const uint32_t first = first_node(d);
    if (boundary == first) {
      uint32_t left = BtreePage(d).left_sibling();
      if (left == 0) {
        c.valid_ = false;
        c.page_.reset();
        return true;
      }
      count_hop(c, d, cur.ref().page_no(), true);
      uint32_t here = cur.ref().page_no();
      cur.reset();  // never latch right to left while holding a latch
      if (left == here) {
        throw CorruptError(fmt::format("page {} (b-tree): left sibling is the page itself", here));
      }
      ReadLatch l(t.pool().pin(left));
      if (!live_btree_page(l.data(), 0) || BtreePage(l.data()).sibling() != here) {
        // A split in progress (transient) or a broken link (lasting): the caller re-seeks;
        // after kMaxReaderRestarts in a row it is corruption.
        if (++c.left_link_restarts_ > kMaxReaderRestarts) {
          throw CorruptError(fmt::format(
              "page {} (b-tree): left sibling {} does not link back to it ({} re-seeks)", here,
              left, kMaxReaderRestarts));
        }
        return false;
      }
      cur = std::move(l);
      boundary = kToEnd;
      continue;
    }
    uint32_t start = first;
    std::vector<uint8_t> key;
    if (BtreePage(d).jump_count() != 0) {
      for (JumpEntry& j : decode_jump_table(d, ps)) {
        if (j.node_offset >= boundary) break;
        start = j.node_offset;
        key = std::move(j.key);
      }
    }
    c.cache_.clear();
    c.cache_keys_.clear();
    const uint16_t length = BtreePage(d).length();
    NodeContext ctx;
    bool have_ctx = false;
    for (uint32_t pos = start; pos < boundary;) {
      IndexNode n = decode_node(d, length, pos, true, have_ctx ? &ctx : nullptr);
      ctx = context_after(n);
      have_ctx = true;
      if (n.is_marker()) break;
      if (n.prefix > key.size()) corrupt_page(d, fmt::format("node at offset {}: bad prefix", pos));
      append_suffix(key, n.prefix, n.data, n.length);
      c.cache_.push_back(Cursor::Cached{pos, n.recno, static_cast<uint32_t>(c.cache_keys_.size()),
                                        static_cast<uint32_t>(key.size())});
      c.cache_keys_.insert(c.cache_keys_.end(), key.begin(), key.end());
      pos = n.end();
    }
    if (c.cache_.empty()) {
      // Nothing between the area start and `boundary`: the area start is a marker (fast_load
      // may give the END_BUCKET a jump node, docs/FORMAT.md §2.4) or `boundary` itself. The
      // entries before it lie in the previous jump area, not necessarily on the left page.
      boundary = start;
      continue;
    }
    c.left_link_restarts_ = 0;
    c.area_start_ = start;
    c.cache_pos_ = c.cache_.size();
    c.version_ = cur.ref().version();
    take_cached(c);
    c.page_ = cur.release_pin();
    return true;
  }
}

void CursorBackward::take_cached(Cursor& c) {
  c.in_view_ = false;
  const Cursor::Cached& e = c.cache_[--c.cache_pos_];
  c.key_.assign(c.cache_keys_.begin() + e.key_offset,
                c.cache_keys_.begin() + e.key_offset + e.key_length);
  c.recno_ = e.recno;
  c.offset_ = e.offset;
  c.valid_ = true;
}

// Backward: last entry < (key, recno).
void CursorBackward::seek_backward(Cursor& c, std::span<const uint8_t> key, uint64_t recno) {
  const BTree& t = *c.tree_;
  c.page_.reset();
  c.in_view_ = false;
  for (;;) {
    PageFind f;
    ReadLatch cur(t.descend(key, recno, f), std::adopt_lock);
    WalkBound bound(t.pool());
    while (f.beyond_end_bucket) {
      bound.step(cur.data(), cur.ref().page_no(), "the right sibling chain loops back");
      pbtree::move_right(t.pool(), cur);
      f = find_in_frame(cur.ref(), key, t.definition().descending, recno, FindMode::LowerBound);
    }
    if (fill_backward(c, cur, f.offset)) return;
    std::this_thread::yield();  // fill_backward released `cur` and counts the re-seeks
  }
}

void CursorBackward::seek_last(Cursor& c) {
  c.page_.reset();
  c.in_view_ = false;
  for (;;) {
    ReadLatch cur(c.tree_->descend_edge(true), std::adopt_lock);
    if (fill_backward(c, cur, kToEnd)) return;
    std::this_thread::yield();  // fill_backward released `cur` and counts the re-seeks
  }
}

}  // namespace pbtree
