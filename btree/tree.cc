// BTree's construction and readers: the empty root, latch-coupled descent to a leaf or an edge
// leaf (moving right past a split not yet posted) and the point lookup find(). Design at the
// top of btree/btree.h.
#include <cstring>
#include <thread>

#include "btree/tree_internal.h"
#include "btree/walk_bound.h"
#include "node/node_quick.h"
#include "node/page_directory.h"
#include "node/route_table.h"

namespace pbtree {

void count_restart(int& restarts, const uint8_t* page) {
  if (++restarts > kMaxReaderRestarts) {
    corrupt_page(page, fmt::format("reached through a pointer, but not a live b-tree page of the "
                                   "expected level (level {}, {} restarts)",
                                   BtreePage(page).level(), kMaxReaderRestarts));
  }
  // Give a writer in the middle of a split the CPU now and then; a yield on every restart made
  // a corrupt file's 10^4 restarts take seconds on a busy machine.
  if (restarts % 16 == 0) std::this_thread::yield();
}

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
  return key_exempt_from_unique(def_, key);  // compound: any NULL segment (keys/compound.cc)
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

// The descent reads non-leaf pages optimistically (LeanStore's optimistic latches): a page
// reached with its latch's write count W even is searched through its route table
// (node/route_table.h) without taking the latch; the child is pinned and, for a non-leaf
// child, its own write count read; then W is checked again. Unchanged, no writer held the
// page in between, so the child pointer was current while the child's count was read (or,
// for a leaf, while its latch was taken). A changed W discards the step and the descent
// starts again; after kMaxOptimisticFailures of those it latches every page (latch
// coupling, the way it did before). A page without a current route table is latched (its
// write count must still be W), searched in its bytes, and its table built for the next
// descent. Leaves are always latched: the caller reads them.
namespace {
constexpr int kMaxOptimisticFailures = 4;
thread_local uint64_t t_optimistic_steps = 0;
}  // namespace

uint64_t optimistic_descent_steps() {
  return t_optimistic_steps;
}

PageRef BTree::descend(std::span<const uint8_t> key, uint64_t recno, PageFind& found) const {
  int restarts = 0;
  int failures = 0;
  for (;;) {
    WalkBound bound(pool_);
    bool restart = false;
    bool failed = false;
    const bool optimistic = failures < kMaxOptimisticFailures;
    ReadLatch cur;
    PageRef opt;         // a page reached optimistically: pinned, not latched
    uint64_t opt_w = 0;  // its latch's write count when it was reached (even)
    int opt_level = -1;  // the level it must have (-1 for the root: any)
    if (optimistic) {
      const uint32_t r = root();
      PageRef ref = pool_.pin(r);
      opt_w = ref.latch().writes();
      if ((opt_w & 1) == 0 && root() == r) opt = std::move(ref);
    }
    if (!opt) cur = ReadLatch(latch_root(), std::adopt_lock);
    for (;;) {
      if (opt) {
        RouteStep st;
        const RouteTable* t = frame_route_table(opt.frame());
        const uint64_t fv = opt.frame().version.load(std::memory_order_acquire);
        if (t != nullptr && bound.hops() < WalkBound::kFreeHops &&
            t->route(fv, key, def_.descending, recno, st) &&
            (opt_level < 0 || st.level == opt_level)) {
          bound.count_free();
          const int next_level = st.sibling ? st.level : st.level - 1;
          PageRef child = pool_.pin(st.next);
          if (next_level > 0) {
            const uint64_t cw = child.latch().writes();
            if (opt.latch().writes() != opt_w) {
              failed = true;
              break;
            }
            ++t_optimistic_steps;
            if ((cw & 1) == 0) {
              opt = std::move(child);
              opt_w = cw;
              opt_level = next_level;
              continue;
            }
          }
          // A leaf (or a non-leaf page a writer holds now): latch it, then check that its
          // parent did not change while the pointer was followed.
          ReadLatch c(std::move(child));
          if (opt.latch().writes() != opt_w) {
            failed = true;
            break;
          }
          if (next_level == 0) ++t_optimistic_steps;
          opt.reset();
          cur = std::move(c);
          if (!live_btree_page(cur.data(), next_level)) {
            restart = true;
            break;
          }
        } else {
          // No current route table: search the page's bytes under its latch.
          ReadLatch c(std::move(opt));
          if (c.ref().latch().writes() != opt_w) {
            failed = true;
            break;
          }
          cur = std::move(c);
          if (!live_btree_page(cur.data(), opt_level)) {
            restart = true;
            break;
          }
        }
      }
      const uint8_t* d = cur.data();
      const int level = BtreePage(d).level();
      bound.step(d, cur.ref().page_no(),
                 "the descent loops (right sibling chain or child pointers)");
      if (level == 0) {
        found = find_in_frame(cur.ref(), key, def_.descending, recno, FindMode::LowerBound);
        return cur.release_pin_latched();
      }
      uint32_t next;
      int next_level = level - 1;
      RouteStep st;
      const RouteTable* t = nullptr;
      if (optimistic) {
        // The page is latched: its table, once current, routes without a seqlock retry.
        refresh_route_table(cur.ref());
        t = frame_route_table(cur.ref().frame());
      }
      if (t != nullptr && t->route(cur.ref().version(), key, def_.descending, recno, st) &&
          st.level == level) {
        next = st.next;
        if (st.sibling) next_level = level;
      } else {
        const PageFind f =
            find_in_frame(cur.ref(), key, def_.descending, recno, FindMode::UpperBound);
        if (f.beyond_end_bucket) {
          next = BtreePage(d).sibling();
          next_level = level;
        } else {
          const bool at_prev = f.prev_offset != 0;
          IndexNode n =
              decode_node_quick(d, BtreePage(d).length(), at_prev ? f.prev_offset : f.offset, false,
                                at_prev ? f.prev_context() : f.offset_context());
          if (n.is_marker()) {
            if (n.is_end_level()) corrupt_page(d, "non-leaf page without entries");
            next = BtreePage(d).sibling();
            next_level = level;
          } else {
            next = n.page_number;
          }
        }
      }
      PageRef child = pool_.pin(next);
      if (optimistic && next_level > 0) {
        // The parent's latch is held: the child's write count is read while it is the child.
        const uint64_t cw = child.latch().writes();
        if ((cw & 1) == 0) {
          cur.reset();
          opt = std::move(child);
          opt_w = cw;
          opt_level = next_level;
          continue;
        }
      }
      ReadLatch c(std::move(child));
      cur = std::move(c);  // crab: child latched before the parent is released
      if (!live_btree_page(cur.data(), next_level)) {
        restart = true;
        break;
      }
    }
    if (failed) {
      ++failures;
      continue;
    }
    if (restart) count_restart(restarts, cur.data());
  }
}

PageRef BTree::descend_edge(bool rightmost) const {
  int restarts = 0;
  for (;;) {
    ReadLatch cur(latch_root(), std::adopt_lock);
    WalkBound bound(pool_);
    bool restart = false;
    for (;;) {
      const uint8_t* d = cur.data();
      const int level = BtreePage(d).level();
      bound.step(d, cur.ref().page_no(),
                 "the descent loops (right sibling chain or child pointers)");
      if (rightmost && BtreePage(d).sibling() != 0) {
        ReadLatch next(pool_.pin(BtreePage(d).sibling()));
        cur = std::move(next);
        if (!live_btree_page(cur.data(), level)) {
          restart = true;
          break;
        }
        continue;
      }
      if (level == 0) return cur.release_pin_latched();
      const uint16_t length = BtreePage(d).length();
      uint32_t pos = first_node(d);
      uint32_t child = 0;
      for (;;) {
        IndexNode n = decode_node(d, length, pos, false);
        if (n.is_marker()) break;
        child = n.page_number;
        if (!rightmost) break;
        pos = n.end();
      }
      if (child == 0) corrupt_page(d, "non-leaf page without entries");
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

IndexNode node_with_key(const uint8_t* page, uint32_t page_size, uint32_t offset,
                        std::vector<uint8_t>& key) {
  const bool leaf = BtreePage(page).leaf();
  const uint16_t length = BtreePage(page).length();
  uint32_t pos = first_node(page);
  key.clear();
  // Walk the jump table (keys prefix-compressed among themselves) to the last target at or
  // before `offset`; `key` ends as that target's jump key.
  for (JumpWalk w(page); w.next();) {
    const JumpNode& j = w.node();
    if (j.node_offset > offset) break;
    // fast_load may leave a jump node on the END_BUCKET: its jump key is a prefix of the right
    // sibling's first key, not this page's last key, so start from the previous target.
    if (j.node_offset == offset && decode_node(page, length, offset, leaf, nullptr).is_marker())
      break;
    w.extend_key(key);
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
    if (n.prefix > key.size())
      corrupt_page(page, fmt::format("node at offset {}: bad prefix", pos));
    append_suffix(key, n.prefix, n.data, n.length);
    if (pos >= offset) return n;
    pos = n.end();
  }
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
  const size_t ks = key.size();
  PageFind f;
  ReadLatch cur(descend(key, 0, f), std::adopt_lock);
  WalkBound bound(pool_);
  while (f.beyond_end_bucket) {
    bound.step(cur.data(), cur.ref().page_no(), "the right sibling chain loops back");
    move_right(pool_, cur);
    f = find_in_frame(cur.ref(), key, def_.descending, uint64_t{0}, FindMode::LowerBound);
  }
  const uint8_t* d = cur.data();
  IndexNode n = decode_node_quick(d, BtreePage(d).length(), f.offset, true, f.offset_context());
  bool landed = true;  // n is the node find_in_page stopped at
  WalkBound hops(pool_);
  for (;;) {
    if (n.is_end_level()) return;
    if (n.is_end_bucket()) {
      hops.step(d, cur.ref().page_no(), "the right sibling chain loops back");
      move_right(pool_, cur);
      d = cur.data();
      n = decode_node_quick(d, BtreePage(d).length(), first_node(d), true);
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
    n = node_after(d, BtreePage(d).length(), n.end(), true, n);
  }
}

}  // namespace pbtree
