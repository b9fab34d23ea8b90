// BTree: insert/remove with Firebird's split rules and page merging, latch-coupled readers,
// cursors that decode nodes in place, and the structural check (design at the top of
// btree/btree.h). Page bytes are Firebird's B-tree page layout, written by encode_page
// (layout at the top of page/btree_page.h); the only byte this file sets on its own is the
// btr_released flag (0x20 in byte 1, Firebird's pag_flags) of pages leaving the tree.
#include "btree/btree.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "btree/walk_bound.h"

namespace pbtree {

namespace {

// Above every 40-bit record number: (key, kAfterAll) sorts after every duplicate of key.
constexpr uint64_t kAfterAll = uint64_t{1} << 40;

int compare_entry(std::span<const uint8_t> a, uint64_t ra, std::span<const uint8_t> b, uint64_t rb,
                  bool descending) {
  int c = compare_index_keys(a, b, descending);
  if (c != 0) return c;
  return ra < rb ? -1 : (ra > rb ? 1 : 0);
}

// key = key[0, prefix) + data[0, length).
inline void append_suffix(std::vector<uint8_t>& key, uint32_t prefix, const uint8_t* data,
                          uint32_t length) {
  key.resize(size_t{prefix} + length);
  if (length != 0) std::memcpy(key.data() + prefix, data, length);
}

bool starts_with(std::span<const uint8_t> key, std::span<const uint8_t> prefix) {
  return key.size() >= prefix.size() &&
         (prefix.empty() || std::memcmp(key.data(), prefix.data(), prefix.size()) == 0);
}

uint32_t first_node_offset(const uint8_t* page) {
  return kBtreeHeaderSize + get_u16(page + 36);
}

std::string hex_bytes_local(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return "(empty)";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i) out += ' ';
    out += fmt::format("{:02X}", bytes[i]);
  }
  return out;
}

[[noreturn]] void corrupt(const uint8_t* page, const std::string& what) {
  throw CorruptError(page_error(page, what));
}

// Readers restart from the root when a pointer leads to a page that is not (or no longer) a
// live B-tree page of the expected level: normally one a concurrent writer just released. On a
// damaged file that would repeat forever, so after this many restarts in a row it is reported
// as corruption of the page last reached.
constexpr int kMaxReaderRestarts = 10000;
void count_restart(int& restarts, const uint8_t* page) {
  if (++restarts > kMaxReaderRestarts) {
    corrupt(page, fmt::format("reached through a pointer, but not a live b-tree page of the "
                              "expected level (level {}, {} restarts)",
                              page[33], kMaxReaderRestarts));
  }
  // Give a writer in the middle of a split the CPU now and then; a yield on every restart made
  // a corrupt file's 10^4 restarts take seconds on a busy machine.
  if (restarts % 16 == 0) std::this_thread::yield();
}

// A pinned page with its latch held shared. Releases the latch before the pin.
class ReadLatch {
 public:
  ReadLatch() = default;
  explicit ReadLatch(PageRef ref) : ref_(std::move(ref)) {
    ref_.latch().lock_shared();
    locked_ = true;
  }
  // Takes over a pin whose latch the caller already holds shared.
  ReadLatch(PageRef ref, std::adopt_lock_t) : ref_(std::move(ref)), locked_(true) {}
  ReadLatch(ReadLatch&& o) noexcept
      : ref_(std::move(o.ref_)), locked_(std::exchange(o.locked_, false)) {}
  ReadLatch& operator=(ReadLatch&& o) noexcept {
    if (this != &o) {
      reset();
      ref_ = std::move(o.ref_);
      locked_ = std::exchange(o.locked_, false);
    }
    return *this;
  }
  ~ReadLatch() { reset(); }
  void reset() {
    unlock();
    ref_.reset();
  }
  void unlock() {
    if (locked_) {
      ref_.latch().unlock_shared();
      locked_ = false;
    }
  }
  // Unlocks and hands over the pin.
  PageRef release_pin() {
    unlock();
    return std::move(ref_);
  }
  // Hands over the pin with the latch still held (the receiver unlocks it).
  PageRef release_pin_latched() {
    locked_ = false;
    return std::move(ref_);
  }
  const uint8_t* data() const { return ref_.data(); }
  PageRef& ref() { return ref_; }

 private:
  PageRef ref_;
  bool locked_ = false;
};

// A pinned page with its latch held exclusive; bytes changed through it are marked dirty.
class WriteLatch {
 public:
  explicit WriteLatch(PageRef ref) : ref_(std::move(ref)) { ref_.latch().lock(); }
  WriteLatch(const WriteLatch&) = delete;
  ~WriteLatch() {
    ref_.mark_dirty();
    ref_.latch().unlock();
  }
  uint8_t* data() const { return ref_.data(); }

 private:
  PageRef ref_;
};

// The writer descends without moving right (it excludes other writers, so no split is pending):
// a leaf whose END_BUCKET copy is not above (key, recno) was reached through a wrong pointer.
void check_writer_leaf(const BtreePageImage& img, uint32_t leaf, std::span<const uint8_t> key,
                       uint64_t recno, bool descending) {
  if (img.end_bucket && compare_entry(key, recno, img.end_bucket->key, img.end_bucket->recno,
                                      descending) >= 0) {
    throw CorruptError(fmt::format(
        "page {} (b-tree): key beyond the END_BUCKET copy on the writer's path", leaf));
  }
}

// True if a page reached by a pointer is a live B-tree page of `level`.
bool live_btree_page(const uint8_t* page, int level) {
  return page[0] == static_cast<uint8_t>(PageType::Btree) && (page[1] & kPageReleased) == 0 &&
         (level < 0 || page[33] == level);
}

}  // namespace

// ------------------------------------------------------------------------------------------
// Construction

BTree::BTree(BufferPool& pool, PageAllocator& allocator, uint32_t root, IndexDefinition def,
             uint8_t index_id, uint16_t jump_interval, std::function<void(uint32_t)> on_root_change)
    : pool_(pool),
      allocator_(allocator),
      root_(root),
      def_(std::move(def)),
      index_id_(index_id),
      jump_interval_(jump_interval),
      on_root_change_(std::move(on_root_change)) {
  def_.format = resolve_key_format(def_.type, def_.format);
}

uint32_t BTree::create_empty(BufferPool& pool, PageAllocator& allocator, uint8_t index_id,
                             uint16_t jump_interval, NodeLayout layout) {
  BtreePageImage img;
  img.header.layout = layout;
  img.header.index_id = index_id;
  img.header.jump_interval = jump_interval;
  std::vector<uint8_t> buf(pool.page_size());
  encode_page(img, buf.data(), pool.page_size());
  uint32_t page_no = allocator.allocate();
  PageRef ref = pool.create(page_no);
  WriteLatch w(std::move(ref));
  std::memcpy(w.data(), buf.data(), buf.size());
  return page_no;
}

bool BTree::is_null_key(std::span<const uint8_t> key) const {
  if (def_.descending) return key.size() == 1 && key[0] == 0xFF;
  return key.empty();
}

// ------------------------------------------------------------------------------------------
// Readers

PageRef BTree::latch_root() const {
  int restarts = 0;
  for (;;) {
    uint32_t r = root();
    PageRef ref = pool_.pin(r);
    ref.latch().lock_shared();
    if (root() == r && live_btree_page(ref.data(), -1)) return ref;
    ref.latch().unlock_shared();
    count_restart(restarts, ref.data());
  }
}

PageRef BTree::descend(std::span<const uint8_t> key, uint64_t recno, PageFind& found) const {
  const uint32_t ps = pool_.page_size();
  int restarts = 0;
  for (;;) {
    ReadLatch cur(latch_root(), std::adopt_lock);
    WalkBound bound(pool_.file());
    bool restart = false;
    for (;;) {
      const uint8_t* d = cur.data();
      const int level = d[33];
      bound.step(d, "the descent loops (right sibling chain or child pointers)");
      if (level == 0) {
        found = find_in_page(d, ps, key, def_.descending, recno, FindMode::LowerBound);
        return cur.release_pin_latched();
      }
      PageFind f = find_in_page(d, ps, key, def_.descending, recno, FindMode::UpperBound);
      uint32_t next;
      int next_level = level - 1;
      if (f.beyond_end_bucket) {
        next = get_u32(d + 16);
        next_level = level;
      } else {
        const bool at_prev = f.prev_offset != 0;
        IndexNode n = decode_node_fast(d, get_u16(d + 30), at_prev ? f.prev_offset : f.offset,
                                       false, at_prev ? f.prev_context() : f.offset_context());
        if (n.is_marker()) {
          if (n.is_end_level()) corrupt(d, "non-leaf page without entries");
          next = get_u32(d + 16);
          next_level = level;
        } else {
          next = n.page_number;
        }
      }
      ReadLatch child(pool_.pin(next));
      cur = std::move(child);  // crab: child latched before the parent is released
      if (!live_btree_page(cur.data(), next_level)) {
        restart = true;
        break;
      }
    }
    if (restart) count_restart(restarts, cur.data());
  }
}

PageRef BTree::descend_edge(bool rightmost) const {
  int restarts = 0;
  for (;;) {
    ReadLatch cur(latch_root(), std::adopt_lock);
    WalkBound bound(pool_.file());
    bool restart = false;
    for (;;) {
      const uint8_t* d = cur.data();
      const int level = d[33];
      bound.step(d, "the descent loops (right sibling chain or child pointers)");
      if (rightmost && get_u32(d + 16) != 0) {
        ReadLatch next(pool_.pin(get_u32(d + 16)));
        cur = std::move(next);
        if (!live_btree_page(cur.data(), level)) {
          restart = true;
          break;
        }
        continue;
      }
      if (level == 0) return cur.release_pin_latched();
      const uint16_t length = get_u16(d + 30);
      uint32_t pos = first_node_offset(d);
      uint32_t child = 0;
      for (;;) {
        IndexNode n = decode_node(d, length, pos, false);
        if (n.is_marker()) break;
        child = n.page_number;
        if (!rightmost) break;
        pos = n.end();
      }
      if (child == 0) corrupt(d, "non-leaf page without entries");
      ReadLatch next(pool_.pin(child));
      cur = std::move(next);
      if (!live_btree_page(cur.data(), level - 1)) {
        restart = true;
        break;
      }
    }
    if (restart) count_restart(restarts, cur.data());
  }
}

// ------------------------------------------------------------------------------------------
// Cursor

namespace {

constexpr uint32_t kToEnd = UINT32_MAX;

// The node after `prev` (at `pos`) on a page of either layout: inline on Firebird pages, with
// prev's context on compact pages (no walk from the jump target).
inline IndexNode node_after(const uint8_t* page, uint32_t limit, uint32_t pos, bool leaf,
                            const IndexNode& prev) {
  IndexNode n;
  if (try_decode_node(page, limit, pos, leaf, n)) return n;
  const NodeContext ctx = context_after(prev);
  return decode_node(page, limit, pos, leaf, &ctx);
}

// Decodes the leaf or non-leaf node at `offset` of `page` and rebuilds its full key into `key`,
// starting from the last jump node at or before it (so only one jump area is decoded).
IndexNode node_with_key(const uint8_t* page, uint32_t page_size, uint32_t offset,
                        std::vector<uint8_t>& key) {
  const bool leaf = page[33] == 0;
  const uint16_t length = get_u16(page + 30);
  uint32_t pos = first_node_offset(page);
  key.clear();
  // Walk the jump table (keys prefix-compressed among themselves) to the last target at or
  // before `offset`; `key` ends as that target's jump key.
  const uint32_t first = pos;
  uint32_t jpos = kBtreeHeaderSize;
  for (uint32_t i = 0; i < page[38]; ++i) {
    JumpNode j = decode_jump_node(page, first, jpos);
    jpos += j.size;
    if (j.node_offset > offset) break;
    // fast_load may leave a jump node on the END_BUCKET: its jump key is a prefix of the right
    // sibling's first key, not this page's last key, so start from the previous target.
    if (j.node_offset == offset && decode_node(page, length, offset, leaf, nullptr).is_marker())
      break;
    if (j.prefix > key.size()) corrupt(page, fmt::format("jump node {}: bad prefix", i));
    append_suffix(key, j.prefix, j.data, j.length);
    pos = j.node_offset;
  }
  (void)page_size;
  NodeContext ctx;  // compact pages: the previous node (none at the start point)
  bool have_ctx = false;
  for (;;) {
    IndexNode n = decode_node(page, length, pos, leaf, have_ctx ? &ctx : nullptr);
    ctx = context_after(n);
    have_ctx = true;
    if (n.is_marker()) return n;  // `key` stays the last real node's key
    if (n.prefix > key.size()) corrupt(page, fmt::format("node at offset {}: bad prefix", pos));
    append_suffix(key, n.prefix, n.data, n.length);
    if (pos >= offset) return n;
    pos = n.end();
  }
}

}  // namespace

struct CursorOps {
  // Moves `cur` to its right sibling (coupled: the sibling is latched first).
  static void move_right(const BTree& t, ReadLatch& cur) {
    const uint8_t* d = cur.data();
    uint32_t right = get_u32(d + 16);
    if (right == 0) corrupt(d, "END_BUCKET on a page without a right sibling");
    ReadLatch next(t.pool_.pin(right));
    cur = std::move(next);
    if (!live_btree_page(cur.data(), 0)) corrupt(cur.data(), "right sibling is not a live leaf");
  }

  // Counts one move right of the cursor; more moves than the file has pages means the sibling
  // chain loops (a corrupt file).
  // `page_no`: the page the cursor is on (named in the error: a page only the pool holds
  // has no page number stamped yet).
  static void count_hop(Cursor& c, const uint8_t* d, uint32_t page_no, bool left = false) {
    if (++c.hops_ <= 1024) return;
    // Pages in use: the file, its log and the pages only the pool holds yet.
    if (c.hops_ > c.tree_->pool_.pages_in_use() + 1) {
      throw CorruptError(fmt::format("page {} ({}): {}", page_no, page_type_name(d[0]),
                                     left ? "the left sibling chain loops back or does not "
                                            "link back"
                                          : "the right sibling chain loops back"),
                         "", page_no, page_type_name(d[0]));
    }
  }

  // Positions on the node at `offset` of `cur`; key_ holds the previous node's key if
  // `key_known`. Moves right past END_BUCKET.
  // `ahead`: also decode the entries after it for next() (not for single-entry seeks).
  static void land_forward(Cursor& c, ReadLatch& cur, uint32_t offset, bool key_known,
                           bool ahead = true) {
    c.ahead_.clear();
    c.ahead_pos_ = 0;
    c.ahead_stop_ = false;
    const uint32_t ps = c.tree_->pool_.page_size();
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
        if (!try_decode_node(d, get_u16(d + 30), offset, true, n)) {
          const NodeContext ctx{static_cast<uint32_t>(c.key_.size()), c.recno_};
          n = decode_node(d, get_u16(d + 30), offset, true,
                          offset == first_node_offset(d) ? nullptr : &ctx);
        }
        if (!n.is_marker()) {
          if (n.prefix > c.key_.size())
            corrupt(d, fmt::format("node at offset {}: bad prefix", offset));
          append_suffix(c.key_, n.prefix, n.data, n.length);
        }
      } else {
        n = node_with_key(d, ps, offset, c.key_);
      }
      if (hopped && !n.is_marker()) {
        if (compare_index_keys(c.key_, before, c.tree_->def_.descending) < 0)
          corrupt(d, "first key sorts below the last key of the left sibling");
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
        offset = first_node_offset(cur.data());
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
  static void fill_ahead(Cursor& c, const uint8_t* d, IndexNode prev_node) {
    uint32_t pos = prev_node.end();
    c.ahead_.clear();
    c.ahead_keys_.clear();
    c.ahead_pos_ = 0;
    const uint16_t length = get_u16(d + 30);
    size_t prev_off = 0, prev_len = c.key_.size();
    c.ahead_stop_ = false;
    for (int i = 0; i < kAhead; ++i) {
      IndexNode n = node_after(d, length, pos, true, prev_node);
      if (n.is_marker()) break;
      if (n.prefix > prev_len) corrupt(d, fmt::format("node at offset {}: bad prefix", pos));
      const size_t at = c.ahead_keys_.size();
      c.ahead_keys_.resize(at + n.prefix + n.length);
      uint8_t* out = c.ahead_keys_.data() + at;
      const uint8_t* prev = i == 0 ? c.key_.data() : c.ahead_keys_.data() + prev_off;
      if (n.prefix != 0) std::memcpy(out, prev, n.prefix);
      if (n.length != 0) std::memcpy(out + n.prefix, n.data, n.length);
      c.ahead_.push_back(
          Cursor::Ahead{pos, n.end(), n.recno, static_cast<uint32_t>(at), n.prefix + n.length});
      prev_off = at;
      prev_len = size_t{n.prefix} + n.length;
      pos = n.end();
      prev_node = n;
    }
    // Entries beyond the upper bound are cut here, by one comparison per batch (plus a binary
    // search in the last one), instead of a check per next().
    const ScanRange& r = c.range_;
    if (!r.upper || c.ahead_.empty()) return;
    const bool desc = c.tree_->def_.descending;
    auto beyond = [&](const Cursor::Ahead& e) {
      std::span<const uint8_t> k(c.ahead_keys_.data() + e.key_offset, e.key_length);
      const int cmp = compare_index_keys(k, r.upper->key, desc);
      return cmp > 0 || (cmp == 0 && !r.upper->inclusive);
    };
    if (!beyond(c.ahead_.back())) return;
    size_t lo = 0, hi = c.ahead_.size() - 1;  // ahead_[hi] is beyond
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (beyond(c.ahead_[mid])) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    c.ahead_.resize(lo);
    c.ahead_stop_ = true;
  }

  // Forward next() without the latch: the next entry decoded ahead, if the page is unchanged.
  static bool take_ahead(Cursor& c) {
    if (c.page_.version() != c.version_) return false;
    if (c.ahead_pos_ >= c.ahead_.size()) {
      if (!c.ahead_stop_) return false;
      c.valid_ = false;  // the next entry lies beyond the upper bound
      c.page_.reset();
      return true;
    }
    const Cursor::Ahead& e = c.ahead_[c.ahead_pos_++];
    const uint8_t* k = c.ahead_keys_.data() + e.key_offset;
    c.key_.assign(k, k + e.key_length);
    c.recno_ = e.recno;
    c.offset_ = e.offset;
    c.next_offset_ = e.end;
    return true;
  }

  // Forward: first entry >= (key, recno).
  static void seek_forward(Cursor& c, std::span<const uint8_t> key, uint64_t recno) {
    const BTree& t = *c.tree_;
    c.page_.reset();
    PageFind f;
    ReadLatch cur(t.descend(key, recno, f), std::adopt_lock);
    WalkBound bound(t.pool_.file());
    while (f.beyond_end_bucket) {
      bound.step(cur.data(), "the right sibling chain loops back");
      move_right(t, cur);
      f = find_in_page(cur.data(), t.pool_.page_size(), key, t.def_.descending, recno,
                       FindMode::LowerBound);
    }
    land_forward(c, cur, f.offset, false, false);
  }

  // Backward: loads the jump area of `cur` that ends before `boundary` (kToEnd: the END
  // marker) and takes its last entry; moves left when nothing is before `boundary`.
  // Returns false if the left sibling changed under us (caller re-seeks).
  static bool fill_backward(Cursor& c, ReadLatch& cur, uint32_t boundary) {
    const BTree& t = *c.tree_;
    const uint32_t ps = t.pool_.page_size();
    for (;;) {
      const uint8_t* d = cur.data();
      const uint32_t first = first_node_offset(d);
      if (boundary == first) {
        uint32_t left = get_u32(d + 20);
        if (left == 0) {
          c.valid_ = false;
          c.page_.reset();
          return true;
        }
        count_hop(c, d, cur.ref().page_no(), true);
        uint32_t here = cur.ref().page_no();
        cur.reset();  // never latch right to left while holding a latch
        if (left == here) {
          throw CorruptError(
              fmt::format("page {} (b-tree): left sibling is the page itself", here));
        }
        ReadLatch l(t.pool_.pin(left));
        if (!live_btree_page(l.data(), 0) || get_u32(l.data() + 16) != here) {
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
      if (d[38] != 0) {
        for (JumpEntry& j : decode_jump_table(d, ps)) {
          if (j.node_offset >= boundary) break;
          start = j.node_offset;
          key = std::move(j.key);
        }
      }
      c.cache_.clear();
      c.cache_keys_.clear();
      const uint16_t length = get_u16(d + 30);
      NodeContext ctx;
      bool have_ctx = false;
      for (uint32_t pos = start; pos < boundary;) {
        IndexNode n = decode_node(d, length, pos, true, have_ctx ? &ctx : nullptr);
        ctx = context_after(n);
        have_ctx = true;
        if (n.is_marker()) break;
        if (n.prefix > key.size()) corrupt(d, fmt::format("node at offset {}: bad prefix", pos));
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

  static void take_cached(Cursor& c) {
    const Cursor::Cached& e = c.cache_[--c.cache_pos_];
    c.key_.assign(c.cache_keys_.begin() + e.key_offset,
                  c.cache_keys_.begin() + e.key_offset + e.key_length);
    c.recno_ = e.recno;
    c.offset_ = e.offset;
    c.valid_ = true;
  }

  // Backward: last entry < (key, recno).
  static void seek_backward(Cursor& c, std::span<const uint8_t> key, uint64_t recno) {
    const BTree& t = *c.tree_;
    c.page_.reset();
    for (;;) {
      PageFind f;
      ReadLatch cur(t.descend(key, recno, f), std::adopt_lock);
      WalkBound bound(t.pool_.file());
      while (f.beyond_end_bucket) {
        bound.step(cur.data(), "the right sibling chain loops back");
        move_right(t, cur);
        f = find_in_page(cur.data(), t.pool_.page_size(), key, t.def_.descending, recno,
                         FindMode::LowerBound);
      }
      if (fill_backward(c, cur, f.offset)) return;
      std::this_thread::yield();  // fill_backward released `cur` and counts the re-seeks
    }
  }

  static void seek_first(Cursor& c) {
    c.page_.reset();
    ReadLatch cur(c.tree_->descend_edge(false), std::adopt_lock);
    c.key_.clear();
    land_forward(c, cur, first_node_offset(cur.data()), true);
  }

  static void seek_last(Cursor& c) {
    c.page_.reset();
    for (;;) {
      ReadLatch cur(c.tree_->descend_edge(true), std::adopt_lock);
      if (fill_backward(c, cur, kToEnd)) return;
      std::this_thread::yield();  // fill_backward released `cur` and counts the re-seeks
    }
  }

  // Ends the scan if the current entry lies outside the range.
  static void check_bounds(Cursor& c) {
    if (!c.valid_) return;
    const bool desc = c.tree_->def_.descending;
    const ScanRange& r = c.range_;
    bool out = false;
    if (r.prefix && !starts_with(c.key_, *r.prefix)) out = true;
    if (!r.backward && r.upper) {
      int cmp = compare_index_keys(c.key_, r.upper->key, desc);
      out = out || cmp > 0 || (cmp == 0 && !r.upper->inclusive);
    }
    if (r.backward && r.lower) {
      int cmp = compare_index_keys(c.key_, r.lower->key, desc);
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
    const bool desc = c.tree_->def_.descending;
    const size_t pad = c.tree_->pool_.page_size() / 4;
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
      CursorOps::seek_backward(*this, edge_key_, edge_recno_);
    } else {
      CursorOps::seek_last(*this);
    }
  }
  CursorOps::check_bounds(*this);
}

void Cursor::next() {
  if (!valid_) return;
  if (!range_.backward && CursorOps::take_ahead(*this)) {
    if (range_.prefix) CursorOps::check_bounds(*this);  // upper bound: cut in fill_ahead
    return;
  }
  ReadLatch cur(std::move(page_));
  if (cur.ref().version() != version_) {
    cur.reset();
    std::vector<uint8_t> k = key_;
    if (!range_.backward) {
      CursorOps::seek_forward(*this, k, recno_ + 1);
    } else {
      CursorOps::seek_backward(*this, k, recno_);
    }
  } else if (!range_.backward) {
    CursorOps::land_forward(*this, cur, next_offset_, true);
  } else if (cache_pos_ > 0) {
    CursorOps::take_cached(*this);
    page_ = cur.release_pin();
  } else if (!CursorOps::fill_backward(*this, cur, area_start_)) {
    cur.reset();
    std::vector<uint8_t> k = key_;
    CursorOps::seek_backward(*this, k, recno_);
  }
  CursorOps::check_bounds(*this);
}

void Cursor::seek(std::span<const uint8_t> key) {
  const bool desc = tree_->def_.descending;
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
    CursorOps::seek_backward(*this, k, recno);
  }
  CursorOps::check_bounds(*this);
}

Cursor BTree::scan(ScanRange range) const {
  Cursor c(this, std::move(range));
  c.start();
  return c;
}

std::vector<uint64_t> BTree::find(std::span<const uint8_t> key) const {
  std::vector<uint64_t> out;
  find(key, out);
  return out;
}

// A point lookup without a cursor: one descent to the first duplicate, then the equal nodes
// are read in place (the landed node is decoded once; its equality follows from the bytes
// find_in_page matched), moving right past END_BUCKET with latch coupling.
void BTree::find(std::span<const uint8_t> key, std::vector<uint64_t>& out) const {
  out.clear();
  const uint32_t ps = pool_.page_size();
  const size_t ks = key.size();
  PageFind f;
  ReadLatch cur(descend(key, 0, f), std::adopt_lock);
  WalkBound bound(pool_.file());
  while (f.beyond_end_bucket) {
    bound.step(cur.data(), "the right sibling chain loops back");
    CursorOps::move_right(*this, cur);
    f = find_in_page(cur.data(), ps, key, def_.descending, uint64_t{0}, FindMode::LowerBound);
  }
  const uint8_t* d = cur.data();
  IndexNode n = decode_node_fast(d, get_u16(d + 30), f.offset, true, f.offset_context());
  bool landed = true;  // n is the node find_in_page stopped at
  uint64_t hops = 0;
  for (;;) {
    if (n.is_end_level()) return;
    if (n.is_end_bucket()) {
      if (++hops > 1024) {
        if (hops > pool_.pages_in_use() + 1) {
          throw CorruptError(fmt::format("page {} ({}): the right sibling chain loops back",
                                         cur.ref().page_no(), page_type_name(d[0])),
                             "", cur.ref().page_no(), page_type_name(d[0]));
        }
      }
      CursorOps::move_right(*this, cur);
      d = cur.data();
      n = decode_node_fast(d, get_u16(d + 30), first_node_offset(d), true);
      landed = false;
      continue;
    }
    // The previous node's key equals `key` (or n is a page's first node, prefix 0), so n equals
    // it iff its own bytes complete `key` exactly.
    const bool equal =
        landed ? f.matched == ks && size_t{n.prefix} + n.length == ks
               : n.prefix <= ks && size_t{n.prefix} + n.length == ks &&
                     (n.length == 0 || std::memcmp(n.data, key.data() + n.prefix, n.length) == 0);
    if (!equal) return;
    out.push_back(n.recno);
    landed = false;
    n = node_after(d, get_u16(d + 30), n.end(), true, n);
  }
}

bool BTree::contains(std::span<const uint8_t> key, uint64_t recno) const {
  Cursor c(this, ScanRange{});
  CursorOps::seek_forward(c, key, recno);
  return c.valid() && c.record_number() == recno &&
         compare_index_keys(c.key(), key, def_.descending) == 0;
}

// ------------------------------------------------------------------------------------------
// Writer

// One insert or remove: the path taken down (path[level] = page number), pages to give back
// at the end, and the page-level operations. Pages are read without latches (the writer is
// the only thread that changes pages) and written under exclusive latches.
struct TreeWriter {
  BTree& t;
  const uint32_t ps;
  std::vector<uint32_t> path;
  std::vector<uint32_t> freed;
  std::vector<uint8_t> buf;
  std::vector<uint8_t> scratch_key_, scratch_key2_, scratch_key3_, scratch_page_;

  explicit TreeWriter(BTree& tree) : t(tree), ps(tree.pool_.page_size()), buf(ps) {}

  BtreePageImage read(uint32_t page_no) {
    PageRef ref = t.pool_.pin(page_no);
    if (!live_btree_page(ref.data(), -1)) corrupt(ref.data(), "not a live b-tree page");
    return decode_page(ref.data(), ps);
  }

  // Encodes into buf; returns btr_length or 0 if it does not fit.
  uint32_t encode(const BtreePageImage& img) { return encode_page(img, buf.data(), ps); }

  void write_buf(uint32_t page_no) {
    WriteLatch w(t.pool_.pin(page_no));
    std::memcpy(w.data(), buf.data(), ps);
  }

  // Copies the header and jump table of `d` into `out`, moving jump targets beyond `after`
  // by `delta` bytes. Returns false (caller falls back to re-encoding the page) if a jump
  // node targets `stale_a` or `stale_b` (nodes whose prefix changes), if a target drifts more
  // than interval/5 from its place, or if the grown node area is due another jump node.
  bool shift_jumps(const uint8_t* d, uint8_t* out, uint32_t after, int64_t delta, uint32_t stale_a,
                   uint32_t stale_b, uint32_t new_length) {
    const BtreeHeader h = read_btree_header(d);
    const uint32_t first = kBtreeHeaderSize + h.jump_size;
    std::memcpy(out, d, first);
    const int64_t interval = h.jump_interval;
    uint32_t pos = kBtreeHeaderSize;
    for (uint32_t i = 0; i < h.jump_count; ++i) {
      JumpNode j = decode_jump_node(d, first, pos);
      int64_t target = j.node_offset;
      if (target == stale_a || target == stale_b) return false;
      if (target > after) target += delta;
      int64_t ideal = int64_t{first} + int64_t{i + 1} * interval;
      if (target - ideal > interval / 5 || ideal - target > interval / 5) return false;
      put_u16(out + pos + varint_size(j.prefix) + varint_size(j.length),
              static_cast<uint16_t>(target));
      pos += j.size;
    }
    if (interval != 0 && h.jump_count < 255 &&
        int64_t{new_length} - first > int64_t{h.jump_count + 1} * interval + interval / 5) {
      return false;
    }
    return true;
  }

  static uint32_t lcp(std::span<const uint8_t> a, std::span<const uint8_t> b) {
    size_t n = std::min(a.size(), b.size()), i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return static_cast<uint32_t>(i);
  }

  // In-place paths: finds the node at or after (key, recno) on leaf page `d`, leaving the
  // previous node's full key in scratch_key_ and the found node's in scratch_key2_. Returns
  // false when the position is the page's first node or past its END_BUCKET (the caller then
  // takes the page image path).
  bool locate_in_leaf(const uint8_t* d, const BtreeHeader& h, std::span<const uint8_t> key,
                      uint64_t recno, IndexNode& x) {
    PageFind f = find_in_page(d, ps, key, t.def_.descending, recno, FindMode::LowerBound);
    if (f.beyond_end_bucket || f.prev_offset == 0) return false;
    std::vector<uint8_t>& prev = scratch_key_;
    node_with_key(d, ps, f.prev_offset, prev);
    x = decode_node(d, h.length, f.offset, true);
    if (x.prefix > prev.size()) corrupt(d, "bad prefix");
    std::vector<uint8_t>& xkey = scratch_key2_;
    xkey.assign(prev.begin(), prev.begin() + x.prefix);
    xkey.insert(xkey.end(), x.data, x.data + x.length);
    return true;
  }

  // Inserts (key, recno) into `leaf` by shifting bytes, when no split, no new first node and
  // no jump-table rebuild is needed. Returns false to fall back to the page image path.
  // Throws UsageError if the pair exists.
  bool insert_in_place(uint32_t leaf, std::span<const uint8_t> key, uint64_t recno) {
    PageRef ref = t.pool_.pin(leaf);
    const uint8_t* d = ref.data();
    const BtreeHeader h = read_btree_header(d);
    if (h.layout == NodeLayout::Compact) return false;  // compact pages: the page image path
    IndexNode x;
    if (!locate_in_leaf(d, h, key, recno, x)) return false;
    std::vector<uint8_t>& prev = scratch_key_;
    std::vector<uint8_t>& xkey = scratch_key2_;
    if (!x.is_end_level() && compare_entry(xkey, x.recno, key, recno, t.def_.descending) == 0) {
      const std::string value = key_value_text(t.def_, key);
      throw DuplicateKeyError(fmt::format("index {}: entry ({}, {}) already exists", t.def_.name,
                                          value, recno),
                              t.def_.name, value, recno);
    }
    uint8_t node_buf[2 * (kMaxNodeKeyField + 16)];
    const uint32_t pn = lcp(prev, key);
    NodeFields nf{NodeKind::Entry, recno, 0, pn, key.subspan(pn)};
    uint32_t n_size = encode_node(nf, true, node_buf);
    uint32_t x_size = 0;
    uint32_t px = x.prefix;
    if (x.is_end_level()) {
      node_buf[n_size] = d[x.offset];
      x_size = 1;
    } else {
      px = lcp(key, xkey);
      NodeFields xf{x.is_end_bucket() ? NodeKind::EndBucket : NodeKind::Entry, x.recno, 0, px,
                    std::span<const uint8_t>(xkey).subspan(px)};
      x_size = encode_node(xf, true, node_buf + n_size);
    }
    const int64_t delta = int64_t{n_size} + x_size - x.size;
    const int64_t new_length = int64_t{h.length} + delta;
    if (new_length > ps) return false;
    if (x.is_marker() && new_length + 6 + int64_t(key.size()) > ps) return false;  // §2.9 reserve
    std::vector<uint8_t>& out = scratch_page_;
    out.assign(ps, 0);
    if (!shift_jumps(d, out.data(), x.offset - 1, delta, px != x.prefix ? x.offset : 0, 0,
                     static_cast<uint32_t>(new_length))) {
      return false;
    }
    const uint32_t first = kBtreeHeaderSize + h.jump_size;
    std::memcpy(out.data() + first, d + first, x.offset - first);
    std::memcpy(out.data() + x.offset, node_buf, n_size + x_size);
    std::memcpy(out.data() + x.offset + n_size + x_size, d + x.end(), h.length - x.end());
    put_u16(out.data() + 30, static_cast<uint16_t>(new_length));
    put_u32(out.data() + 24, h.prefix_total + pn + px - x.prefix);
    ref.reset();
    WriteLatch w(t.pool_.pin(leaf));
    std::memcpy(w.data(), out.data(), ps);
    return true;
  }

  // Removes (key, recno) from `leaf` by shifting bytes when it is not the first node, the
  // page stays at least a quarter full and the jump table can be kept. Returns false to fall
  // back. Throws UsageError if the pair is absent.
  bool remove_in_place(uint32_t leaf, std::span<const uint8_t> key, uint64_t recno) {
    PageRef ref = t.pool_.pin(leaf);
    const uint8_t* d = ref.data();
    const BtreeHeader h = read_btree_header(d);
    if (h.layout == NodeLayout::Compact) return false;  // compact pages: the page image path
    IndexNode x;
    if (!locate_in_leaf(d, h, key, recno, x)) return false;
    std::vector<uint8_t>& prev = scratch_key_;
    std::vector<uint8_t>& xkey = scratch_key2_;
    if (x.is_marker() || compare_entry(xkey, x.recno, key, recno, t.def_.descending) != 0) {
      throw NotFoundError(fmt::format("index \"{}\" holds no key {} with record number {}",
                                   t.def_.name, hex_bytes_local(key), recno));
    }
    IndexNode y = decode_node(d, h.length, x.end(), true);
    uint8_t node_buf[kMaxNodeKeyField + 16];
    uint32_t y_size = 1;
    uint32_t py = y.prefix;
    if (y.is_end_level()) {
      node_buf[0] = d[y.offset];
    } else {
      if (y.prefix > xkey.size()) corrupt(d, "bad prefix");
      std::vector<uint8_t>& ykey = scratch_key3_;
      ykey.assign(xkey.begin(), xkey.begin() + y.prefix);
      ykey.insert(ykey.end(), y.data, y.data + y.length);
      py = lcp(prev, ykey);
      NodeFields yf{y.is_end_bucket() ? NodeKind::EndBucket : NodeKind::Entry, y.recno, 0, py,
                    std::span<const uint8_t>(ykey).subspan(py)};
      y_size = encode_node(yf, true, node_buf);
    }
    const int64_t delta = int64_t{y_size} - x.size - y.size;
    const int64_t new_length = int64_t{h.length} + delta;
    if (new_length > ps) return false;
    if (new_length < ps / 4 && leaf != t.root()) return false;  // may merge: image path
    std::vector<uint8_t>& out = scratch_page_;
    out.assign(ps, 0);
    if (!shift_jumps(d, out.data(), x.offset, delta, x.offset, py != y.prefix ? y.offset : 0,
                     static_cast<uint32_t>(new_length))) {
      return false;
    }
    const uint32_t first = kBtreeHeaderSize + h.jump_size;
    std::memcpy(out.data() + first, d + first, x.offset - first);
    std::memcpy(out.data() + x.offset, node_buf, y_size);
    std::memcpy(out.data() + x.offset + y_size, d + y.end(), h.length - y.end());
    put_u16(out.data() + 30, static_cast<uint16_t>(new_length));
    put_u32(out.data() + 24, h.prefix_total - x.prefix - y.prefix + py);
    ref.reset();
    WriteLatch w(t.pool_.pin(leaf));
    std::memcpy(w.data(), out.data(), ps);
    return true;
  }

  // Leaf descent for (key, recno): fills path.
  uint32_t descend(std::span<const uint8_t> key, uint64_t recno) {
    uint32_t p = t.root();
    path.clear();
    for (;;) {
      PageRef ref = t.pool_.pin(p);
      const uint8_t* d = ref.data();
      if (!live_btree_page(d, -1)) corrupt(d, "not a live b-tree page");
      const int level = d[33];
      if (path.empty()) path.assign(level + 1, 0);
      if (level >= static_cast<int>(path.size()) || path[level] != 0) {
        corrupt(d, fmt::format("unexpected level {}", level));
      }
      path[level] = p;
      if (level == 0) return p;
      PageFind f = find_in_page(d, ps, key, t.def_.descending, recno, FindMode::UpperBound);
      if (f.beyond_end_bucket) corrupt(d, "key beyond the END_BUCKET copy on the writer's path");
      const bool at_prev = f.prev_offset != 0;
      IndexNode n = decode_node_fast(d, get_u16(d + 30), at_prev ? f.prev_offset : f.offset, false,
                                     at_prev ? f.prev_context() : f.offset_context());
      if (n.is_marker()) corrupt(d, "non-leaf page without entries");
      p = n.page_number;
    }
  }

  // The page at level + 1 holding the pointer to `child`, and the pointer's index in it.
  // Starts at path[level + 1] and walks right, then left (splits move pointers right).
  uint32_t find_parent(int level, uint32_t child, size_t& index) {
    uint32_t start = static_cast<size_t>(level + 1) < path.size() ? path[level + 1] : t.root();
    for (int dir = 0; dir < 2; ++dir) {
      uint32_t p = start;
      WalkBound bound(t.pool_.file());
      while (p != 0) {
        PageRef ref = t.pool_.pin(p);
        const uint8_t* d = ref.data();
        if (!live_btree_page(d, level + 1)) break;
        bound.step(d, "the sibling chain loops while looking for a parent pointer");
        const uint16_t length = get_u16(d + 30);
        size_t i = 0;
        NodeContext ctx;
        for (uint32_t pos = first_node_offset(d);; ++i) {
          IndexNode n = decode_node(d, length, pos, false, i == 0 ? nullptr : &ctx);
          ctx = context_after(n);
          if (n.is_marker()) break;
          if (n.page_number == child) {
            index = i;
            if (path.size() <= static_cast<size_t>(level + 1)) path.resize(level + 2, 0);
            path[level + 1] = p;
            return p;
          }
          pos = n.end();
        }
        p = get_u32(d + (dir == 0 ? 16 : 20));
        if (dir == 1 && p == start) break;
      }
    }
    throw CorruptError(fmt::format("{}: no parent pointer to page {} at level {}",
                                   t.pool_.file().path(), child, level + 1));
  }

  // Index at which to split `entries` (1 .. n-1): the middle by bytes, moved so both halves
  // fit. Returns 0 if no split point makes both fit.
  size_t choose_split(const BtreePageImage& img) {
    const size_t n = img.entries.size();
    if (n < 2) return 0;
    size_t total = 0;
    for (const auto& e : img.entries) total += e.key.size() + 8;
    size_t acc = 0, s = 1;
    for (size_t i = 0; i < n; ++i) {
      acc += img.entries[i].key.size() + 8;
      if (acc * 2 >= total) {
        s = std::clamp<size_t>(i, 1, n - 1);
        break;
      }
    }
    for (int tries = 0; tries < 64; ++tries) {
      auto [l, r] = halves(img, s);
      bool lf = encode(l) != 0, rf = encode(r) != 0;
      if (lf && rf) return s;
      if (!lf && s > 1) {
        --s;
      } else if (!rf && s + 1 < n) {
        ++s;
      } else {
        return 0;
      }
    }
    return 0;
  }

  // Left part [0, s) with END_BUCKET = entries[s]; right part [s, n) with the old END.
  std::pair<BtreePageImage, BtreePageImage> halves(const BtreePageImage& img, size_t s) {
    BtreePageImage l, r;
    l.header = img.header;
    r.header = img.header;
    l.entries.assign(img.entries.begin(), img.entries.begin() + s);
    l.end_bucket = img.entries[s];
    r.entries.assign(img.entries.begin() + s, img.entries.end());
    r.end_bucket = img.end_bucket;
    return {std::move(l), std::move(r)};
  }

  // Writes `img` to `page_no`, splitting if it does not fit. `inserted` is the index of a
  // just-inserted entry (for the rightmost-split rule) or -1. Returns true if it split.
  bool store(int level, uint32_t page_no, BtreePageImage& img, long inserted) {
    uint32_t len = encode(img);
    // End-of-page reserve (firebird-format.md §2.9): a node that becomes the last one on the
    // page must leave 6 + key length bytes free, so the rightmost split can keep the old page
    // full and move only the new node.
    if (len != 0 && inserted >= 0 && static_cast<size_t>(inserted) + 1 == img.entries.size() &&
        len + 6 + img.entries.back().key.size() > ps) {
      len = 0;
    }
    if (len != 0) {
      write_buf(page_no);
      return false;
    }
    split(level, page_no, img, inserted);
    return true;
  }

  void split(int level, uint32_t page_no, BtreePageImage& img, long inserted) {
    const size_t n = img.entries.size();
    size_t s = 0;
    // Rightmost-split rule (firebird-format.md §2.9): an insert at the end of the page moves
    // only the new node to the new page if the rest plus its END_BUCKET copy still fits.
    if (inserted >= 0 && static_cast<size_t>(inserted) + 1 == n && n >= 2) {
      auto [l, r] = halves(img, n - 1);
      if (encode(l) != 0 && encode(r) != 0) s = n - 1;
    }
    if (s == 0) s = choose_split(img);
    if (s == 0) {
      throw CorruptError(
          fmt::format("{}: page {}: cannot split {} entries", t.pool_.file().path(), page_no, n));
    }
    auto [left, right] = halves(img, s);
    const uint32_t new_page = t.allocator_.allocate();
    const uint32_t old_right = img.header.sibling;
    left.header.sibling = new_page;
    right.header.left_sibling = page_no;
    right.header.sibling = old_right;
    if (encode(right) == 0) throw CorruptError("split: right half does not fit");
    {
      WriteLatch w(t.pool_.create(new_page));
      std::memcpy(w.data(), buf.data(), ps);
    }
    if (encode(left) == 0) throw CorruptError("split: left half does not fit");
    {
      WriteLatch wl(t.pool_.pin(page_no));
      std::memcpy(wl.data(), buf.data(), ps);
      if (old_right != 0) {
        WriteLatch wr(t.pool_.pin(old_right));
        put_u32(wr.data() + 20, new_page);
      }
    }
    PageEntry sep{img.entries[s].key, img.entries[s].recno, new_page};
    if (level == 0 && img.header.layout == NodeLayout::Compact && !t.def_.descending) {
      // Suffix truncation (compact layout): the shortest prefix of the right half's first key
      // above the left half's last key; record number 0 then (no entry has that key).
      const uint32_t cut = lcp(img.entries[s - 1].key, sep.key) + 1;
      if (cut < sep.key.size()) {
        sep.key.resize(cut);
        sep.recno = 0;
      }
    }
    img = std::move(left);
    if (page_no == t.root()) {
      new_root(level, page_no, std::move(sep));
      return;
    }
    size_t idx = 0;
    uint32_t parent = find_parent(level, page_no, idx);
    BtreePageImage pimg = read(parent);
    pimg.entries.insert(pimg.entries.begin() + idx + 1, std::move(sep));
    store(level + 1, parent, pimg, static_cast<long>(idx + 1));
  }

  void new_root(int level, uint32_t old_root, PageEntry sep) {
    if (level + 1 >= static_cast<int>(kMaxLevels)) {
      throw UsageError(fmt::format("index would exceed {} levels", kMaxLevels));
    }
    BtreePageImage img;
    img.header.index_id = t.index_id_;
    img.header.level = static_cast<uint8_t>(level + 1);
    img.header.jump_interval = t.jump_interval_;
    img.header.layout = t.def_.layout;
    img.entries.push_back(PageEntry{{}, 0, old_root});  // degenerate: every key below sep
    img.entries.push_back(std::move(sep));
    if (encode(img) == 0) throw CorruptError("new root does not fit");
    const uint32_t root = t.allocator_.allocate();
    {
      WriteLatch w(t.pool_.create(root));
      std::memcpy(w.data(), buf.data(), ps);
    }
    path.resize(level + 2, 0);
    path[level + 1] = root;
    t.root_.store(root, std::memory_order_release);
    if (t.on_root_change_) t.on_root_change_(root);
  }

  // The first entry of non-leftmost `page_no` is now `first`: fix the left sibling's
  // END_BUCKET and the separator in the parent (and up, while it is a parent's first entry).
  void fix_first(int level, uint32_t page_no, uint32_t left, const PageEntry& first) {
    BtreePageImage limg = read(left);
    limg.end_bucket = first;
    store(level, left, limg, -1);
    size_t idx = 0;
    uint32_t parent = find_parent(level, page_no, idx);
    BtreePageImage pimg = read(parent);
    pimg.entries[idx].key = first.key;
    pimg.entries[idx].recno = first.recno;
    PageEntry pfirst = pimg.entries[0];
    uint32_t pleft = pimg.header.left_sibling;
    store(level + 1, parent, pimg, -1);
    if (idx == 0 && pleft != 0) {
      // The parent may have split; its first entry and left sibling are unchanged by that.
      fix_first(level + 1, parent, read_left(parent), pfirst);
    }
  }

  uint32_t read_left(uint32_t page_no) {
    PageRef ref = t.pool_.pin(page_no);
    return get_u32(ref.data() + 20);
  }

  // Moves every entry of `right` into `left` (adjacent siblings, same level) and drops
  // `right`. Without `force`, only if the result fits in page_size - 256 bytes (Firebird's
  // garbage-collection limit); returns false otherwise. With `force` (`right` is empty) a
  // result that does not fit is spread over both pages instead.
  bool merge_pair(int level, uint32_t left, BtreePageImage& limg, uint32_t right,
                  BtreePageImage& rimg, bool force) {
    BtreePageImage m = limg;
    m.entries.insert(m.entries.end(), rimg.entries.begin(), rimg.entries.end());
    m.end_bucket = rimg.end_bucket;
    m.header.sibling = rimg.header.sibling;
    uint32_t len = encode(m);
    if (len == 0 || (!force && len > ps - 256)) {
      if (!force) return false;
      redistribute(level, left, right, m, rimg);
      return true;
    }
    const uint32_t far_right = rimg.header.sibling;
    {
      WriteLatch wl(t.pool_.pin(left));
      std::memcpy(wl.data(), buf.data(), ps);
      WriteLatch wr(t.pool_.pin(right));
      wr.data()[1] |= kPageReleased;
      if (far_right != 0) {
        WriteLatch wf(t.pool_.pin(far_right));
        put_u32(wf.data() + 20, left);
      }
    }
    freed.push_back(right);
    size_t idx = 0;
    uint32_t parent = find_parent(level, right, idx);
    BtreePageImage pimg = read(parent);
    remove_at(level + 1, parent, pimg, idx);
    return true;
  }

  // `m` (left + right contents) does not fit one page: split it over `left` and `right`.
  void redistribute(int level, uint32_t left, uint32_t right, BtreePageImage& m,
                    const BtreePageImage& rimg) {
    size_t s = choose_split(m);
    if (s == 0) throw CorruptError("merge: cannot redistribute entries");
    auto [l, r] = halves(m, s);
    l.header.sibling = right;
    r.header = rimg.header;
    PageEntry first = r.entries[0];
    std::vector<uint8_t> lbytes(ps);
    if (encode_page(l, lbytes.data(), ps) == 0) {
      throw CorruptError("merge: left half does not fit");
    }
    if (encode(r) == 0) throw CorruptError("merge: right half does not fit");
    {
      // Both at once, left to right: readers see the pair before or after, never between.
      WriteLatch wl(t.pool_.pin(left));
      WriteLatch wr(t.pool_.pin(right));
      std::memcpy(wl.data(), lbytes.data(), ps);
      std::memcpy(wr.data(), buf.data(), ps);
    }
    size_t idx = 0;
    uint32_t parent = find_parent(level, right, idx);
    BtreePageImage pimg = read(parent);
    pimg.entries[idx].key = first.key;
    pimg.entries[idx].recno = first.recno;
    PageEntry pfirst = pimg.entries[0];
    uint32_t pleft = pimg.header.left_sibling;
    store(level + 1, parent, pimg, -1);
    if (idx == 0 && pleft != 0) fix_first(level + 1, parent, read_left(parent), pfirst);
  }

  // Removes entry `i` of page `page_no` (image `img`), then repairs: empty pages leave the
  // level, a new first entry is posted to the left sibling and parent, under-filled pages
  // merge with a sibling when both fit.
  void remove_at(int level, uint32_t page_no, BtreePageImage& img, size_t i) {
    const bool leaf = level == 0;
    if (!leaf && i == 0 && img.header.left_sibling == 0) {
      throw CorruptError(fmt::format("page {}: removing the degenerate first node", page_no));
    }
    img.entries.erase(img.entries.begin() + i);
    const bool is_root = page_no == t.root();
    const uint32_t left = img.header.left_sibling;
    const uint32_t right = img.header.sibling;
    if (img.entries.empty() && !is_root) {
      if (left != 0) {
        BtreePageImage limg = read(left);
        merge_pair(level, left, limg, page_no, img, true);
        return;
      }
      if (right != 0) {
        BtreePageImage rimg = read(right);
        merge_pair(level, page_no, img, right, rimg, true);
        return;
      }
      store(level, page_no, img, -1);  // alone on its level: the root shrinks later
      return;
    }
    PageEntry first = img.entries.empty() ? PageEntry{} : img.entries[0];
    bool split = store(level, page_no, img, -1);
    if (i == 0 && left != 0) fix_first(level, page_no, read_left(page_no), first);
    if (split || is_root) return;
    BtreePageImage cur = read(page_no);
    if (cur.header.length >= ps / 4) return;
    if (cur.header.left_sibling != 0) {
      BtreePageImage limg = read(cur.header.left_sibling);
      if (merge_pair(level, cur.header.left_sibling, limg, page_no, cur, false)) return;
    }
    if (cur.header.sibling != 0) {
      BtreePageImage rimg = read(cur.header.sibling);
      merge_pair(level, page_no, cur, cur.header.sibling, rimg, false);
    }
  }

  // Root with a single child: the child becomes the root (repeatedly).
  void shrink_root() {
    for (;;) {
      uint32_t r = t.root();
      BtreePageImage img = read(r);
      if (img.header.level == 0 || img.entries.size() != 1 || img.header.sibling != 0) return;
      uint32_t child = img.entries[0].page_number;
      t.root_.store(child, std::memory_order_release);
      if (t.on_root_change_) t.on_root_change_(child);
      {
        WriteLatch w(t.pool_.pin(r));
        w.data()[1] |= kPageReleased;
      }
      freed.push_back(r);
    }
  }

  void finish() {
    shrink_root();
    for (uint32_t p : freed) t.allocator_.release(p);
    freed.clear();
  }
};

void BTree::insert(std::span<const uint8_t> key, uint64_t recno) {
  const uint32_t ps = pool_.page_size();
  if (read_only_) {
    throw ReadOnlyError(fmt::format("{}: opened read-only", pool_.file().path()));
  }
  if (key.size() >= ps / 4) {
    throw KeyError(
        fmt::format("key size {} exceeds implementation restriction: keys must be shorter than "
                    "page_size/4 = {} bytes (page size {})",
                    key.size(), ps / 4, ps));
  }
  if (recno > kMaxRecordNumber) {
    throw UsageError(fmt::format("record number {} exceeds 40 bits", recno));
  }
  std::lock_guard lock(write_mutex_);
  if (def_.unique && !is_null_key(key)) {
    find(key, unique_probe_);  // no cursor, no allocation once the buffer has grown
    if (!unique_probe_.empty()) {
      const std::string value = key_value_text(def_, key);
      throw DuplicateKeyError(fmt::format("unique index {}: value {} already exists (record {})",
                                          def_.name, value, unique_probe_.front()),
                              def_.name, value, unique_probe_.front());
    }
  }
  TreeWriter w(*this);
  uint32_t leaf = w.descend(key, recno);
  if (w.insert_in_place(leaf, key, recno)) return;
  BtreePageImage img = w.read(leaf);
  check_writer_leaf(img, leaf, key, recno, def_.descending);
  auto it =
      std::lower_bound(img.entries.begin(), img.entries.end(), 0, [&](const PageEntry& e, int) {
        return compare_entry(e.key, e.recno, key, recno, def_.descending) < 0;
      });
  if (it != img.entries.end() &&
      compare_entry(it->key, it->recno, key, recno, def_.descending) == 0) {
    const std::string value = key_value_text(def_, key);
    throw DuplicateKeyError(fmt::format("index {}: entry ({}, {}) already exists", def_.name,
                                        value, recno),
                            def_.name, value, recno);
  }
  long pos = it - img.entries.begin();
  img.entries.insert(it, PageEntry{std::vector<uint8_t>(key.begin(), key.end()), recno, 0});
  const uint32_t left = img.header.left_sibling;
  PageEntry first = img.entries[0];
  w.store(0, leaf, img, pos);
  // A new first entry of a non-leftmost leaf: only below a suffix-truncated separator
  // (compact layout); the left sibling's END_BUCKET and the separator follow it.
  if (pos == 0 && left != 0) w.fix_first(0, leaf, w.read_left(leaf), first);
  w.finish();
}

void BTree::remove(std::span<const uint8_t> key, uint64_t recno) {
  if (read_only_) {
    throw ReadOnlyError(fmt::format("{}: opened read-only", pool_.file().path()));
  }
  std::lock_guard lock(write_mutex_);
  TreeWriter w(*this);
  uint32_t leaf = w.descend(key, recno);
  if (w.remove_in_place(leaf, key, recno)) return;
  BtreePageImage img = w.read(leaf);
  check_writer_leaf(img, leaf, key, recno, def_.descending);
  auto it =
      std::lower_bound(img.entries.begin(), img.entries.end(), 0, [&](const PageEntry& e, int) {
        return compare_entry(e.key, e.recno, key, recno, def_.descending) < 0;
      });
  if (it == img.entries.end() ||
      compare_entry(it->key, it->recno, key, recno, def_.descending) != 0) {
    throw NotFoundError(fmt::format("index \"{}\" holds no key {} with record number {}", def_.name,
                                 hex_bytes_local(key), recno));
  }
  w.remove_at(0, leaf, img, static_cast<size_t>(it - img.entries.begin()));
  w.finish();
}

// ------------------------------------------------------------------------------------------
// Structural check

TreeCheck BTree::verify() const {
  std::lock_guard lock(write_mutex_);
  const uint32_t ps = pool_.page_size();
  const bool desc = def_.descending;
  TreeCheck check;
  auto fail = [&](uint32_t page, const std::string& what) {
    throw CorruptError(
        fmt::format("{}: index \"{}\": page {}: {}", pool_.file().path(), def_.name, page, what));
  };
  auto load = [&](uint32_t page_no) {
    PageRef ref = pool_.pin(page_no);
    std::shared_lock l(ref.latch());
    const uint8_t* d = ref.data();
    if (d[0] != static_cast<uint8_t>(PageType::Btree)) fail(page_no, "not a b-tree page");
    if (d[1] & kPageReleased) fail(page_no, "released page still in the tree");
    BtreePageImage img = decode_page(d, ps);  // checks nodes, jump nodes, END marker, length
    return img;
  };

  const uint32_t root_page = root();
  BtreePageImage root_img = load(root_page);
  if (root_img.header.sibling != 0 || root_img.header.left_sibling != 0) {
    fail(root_page, "root has siblings");
  }
  const int top = root_img.header.level;
  check.depth = top + 1;
  check.level_pages.assign(top + 1, 0);

  // Children expected at the next level down: page and separator (nullopt = degenerate).
  struct Expected {
    uint32_t page;
    std::optional<PageEntry> sep;
  };
  std::vector<Expected> expected{{root_page, std::nullopt}};
  double fill_sum = 0;
  for (int level = top; level >= 0; --level) {
    std::vector<Expected> next;
    uint32_t prev_page = 0;
    std::optional<PageEntry> prev_last;        // last entry of the previous page
    std::optional<PageEntry> prev_end_bucket;  // its END_BUCKET copy
    for (size_t k = 0; k < expected.size(); ++k) {
      const uint32_t page_no = expected[k].page;
      BtreePageImage img = page_no == root_page ? root_img : load(page_no);
      const BtreeHeader& h = img.header;
      if (h.level != level)
        fail(page_no, fmt::format("level {} where {} expected", h.level, level));
      if (h.layout != def_.layout) {
        fail(page_no, fmt::format("{} layout page in a {} layout index",
                                  h.layout == NodeLayout::Compact ? "compact" : "firebird",
                                  def_.layout == NodeLayout::Compact ? "compact" : "firebird"));
      }
      if (h.left_sibling != prev_page) {
        fail(page_no,
             fmt::format("left sibling {} but page {} precedes it", h.left_sibling, prev_page));
      }
      if (k > 0) {
        // The previous page's right link and END_BUCKET copy.
        if (!prev_end_bucket) fail(prev_page, "END_LEVEL before the end of the level");
        if (img.entries.empty()) fail(page_no, "empty non-root page");
        const PageEntry& f = img.entries[0];
        if (!(*prev_end_bucket == f))
          fail(prev_page, "END_BUCKET differs from the right sibling's first node");
      }
      if (k + 1 < expected.size() && h.sibling != expected[k + 1].page) {
        fail(page_no, fmt::format("right sibling {} but page {} follows it", h.sibling,
                                  expected[k + 1].page));
      }
      if (k + 1 == expected.size() && h.sibling != 0) {
        fail(page_no,
             fmt::format("right sibling {} beyond the last child of the level above", h.sibling));
      }
      if (expected[k].sep && h.layout == NodeLayout::Compact) {
        // Compact layout: separators may be suffix-truncated; they must lie above the previous
        // page's last entry and not above this page's first.
        const PageEntry& sep = *expected[k].sep;
        if (img.entries.empty() ||
            compare_entry(sep.key, sep.recno, img.entries[0].key, img.entries[0].recno, desc) > 0) {
          fail(page_no, "separator in the parent above the first entry");
        }
        if (prev_last &&
            compare_entry(prev_last->key, prev_last->recno, sep.key, sep.recno, desc) >= 0) {
          fail(page_no, "separator in the parent not above the left sibling's last entry");
        }
      } else if (expected[k].sep) {
        if (img.entries.empty() || img.entries[0].key != expected[k].sep->key ||
            img.entries[0].recno != expected[k].sep->recno) {
          fail(page_no, "separator in the parent differs from the first entry");
        }
      }
      for (size_t i = 0; i < img.entries.size(); ++i) {
        const PageEntry& e = img.entries[i];
        const bool degenerate = level > 0 && k == 0 && i == 0;
        if (degenerate) {
          if (!e.key.empty() || e.recno != 0)
            fail(page_no, "first node of a leftmost non-leaf page is not degenerate");
        } else {
          const PageEntry* before =
              i > 0 ? &img.entries[i - 1] : (prev_last ? &*prev_last : nullptr);
          bool before_degenerate = level > 0 && k == 0 && i == 1;
          if (before && !before_degenerate &&
              compare_entry(before->key, before->recno, e.key, e.recno, desc) >= 0) {
            fail(page_no, fmt::format("entry {} out of order", i));
          }
        }
        if (level > 0) {
          next.push_back(
              Expected{e.page_number, degenerate ? std::nullopt : std::optional<PageEntry>(e)});
        }
      }
      if (img.end_bucket && !img.entries.empty() &&
          compare_entry(img.entries.back().key, img.entries.back().recno, img.end_bucket->key,
                        img.end_bucket->recno, desc) >= 0 &&
          !(level > 0 && k == 0 && img.entries.size() == 1)) {
        fail(page_no, "END_BUCKET not above the last entry");
      }
      if (level == 0) {
        check.entries += img.entries.size();
        fill_sum += double(h.length - kBtreeHeaderSize) / double(ps - kBtreeHeaderSize);
      }
      ++check.level_pages[level];
      if (!img.entries.empty()) prev_last = img.entries.back();
      prev_end_bucket = img.end_bucket;
      prev_page = page_no;
    }
    expected = std::move(next);
  }
  check.avg_leaf_fill = check.level_pages[0] ? fill_sum / double(check.level_pages[0]) : 0;
  return check;
}

}  // namespace pbtree
