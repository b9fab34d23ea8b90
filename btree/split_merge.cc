// The writer's page repairs around its one split (btree/split.cc; TreeWriter,
// btree/tree_internal.h): the parent lookup, new root, separator and END_BUCKET repair, merge /
// redistribute of under-filled pages, root shrink, and the release of freed pages.
#include <algorithm>
#include <cstring>

#include "btree/tree_internal.h"
#include "btree/walk_bound.h"

namespace pbtree {

// The page at level + 1 holding the pointer to `child`, and the pointer's index in it.
// Starts at path[level + 1] and walks right, then left (splits move pointers right).
uint32_t TreeWriter::find_parent(int level, uint32_t child, size_t& index) {
  uint32_t start = static_cast<size_t>(level + 1) < path.size() ? path[level + 1] : root();
  for (int dir = 0; dir < 2; ++dir) {
    uint32_t p = start;
    WalkBound bound(t.pool_);
    while (p != 0) {
      PageRef ref;
      const uint8_t* d = view(p, ref);
      if (!live_btree_page(d, level + 1)) break;
      bound.step(d, p, "the sibling chain loops while looking for a parent pointer");
      const uint16_t length = BtreePage(d).length();
      size_t i = 0;
      NodeContext ctx;
      for (uint32_t pos = first_node(d);; ++i) {
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
      p = dir == 0 ? BtreePage(d).sibling() : BtreePage(d).left_sibling();
      if (dir == 1 && p == start) break;
    }
  }
  throw CorruptError(fmt::format("{}: no parent pointer to page {} at level {}",
                                 t.pool_.file().path(), child, level + 1));
}

// Left part [0, s) with END_BUCKET = entries[s]; right part [s, n) with the old END.
std::pair<BtreePageImage, BtreePageImage> TreeWriter::halves(const BtreePageImage& img, size_t s) {
  BtreePageImage l, r;
  l.header = img.header;
  r.header = img.header;
  l.entries.assign(img.entries.begin(), img.entries.begin() + s);
  l.end_bucket = img.entries[s];
  r.entries.assign(img.entries.begin() + s, img.entries.end());
  r.end_bucket = img.end_bucket;
  return {std::move(l), std::move(r)};
}

void TreeWriter::new_root(int level, uint32_t old_root, PageEntry sep) {
  BtreePageImage img;
  img.header.index_id = t.index_id_;
  img.header.level = static_cast<uint8_t>(level + 1);
  img.header.jump_interval = t.jump_interval_;
  img.header.layout = t.def_.layout;
  img.entries.push_back(PageEntry{{}, 0, old_root});  // degenerate: every key below sep
  img.entries.push_back(std::move(sep));
  if (encode(img) == 0) throw CorruptError("new root does not fit");
  const uint32_t root = allocate();
  path.resize(level + 2, 0);
  path[level + 1] = root;
  if (dry_op) {
    shadow[root] = buf;
    dry_root = root;
    return;
  }
  {
    WriteLatch w(t.pool_.create(root));
    std::memcpy(w.data(), buf.data(), ps);
  }
  t.root_.store(root, std::memory_order_release);
  if (t.on_root_change_) t.on_root_change_(root);
}

// The first entry of non-leftmost `page_no` is now `first`: fix the left sibling's
// END_BUCKET and the separator in the parent (and up, while it is a parent's first entry).
void TreeWriter::fix_first(int level, uint32_t page_no, uint32_t left, const PageEntry& first) {
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

uint32_t TreeWriter::read_left(uint32_t page_no) {
  PageRef ref;
  return BtreePage(view(page_no, ref)).left_sibling();
}

// Moves every entry of `right` into `left` (adjacent siblings, same level) and drops
// `right`. Without `force`, only if the result fits in page_size - 256 bytes (Firebird's
// garbage-collection limit); returns false otherwise. With `force` (`right` is empty) a
// result that does not fit is spread over both pages instead.
bool TreeWriter::merge_pair(int level, uint32_t left, BtreePageImage& limg, uint32_t right,
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
  if (dry_op) {
    shadow[left] = buf;
    MutableBtreePage(shadow_page(right)).mark_released();
    if (far_right != 0) MutableBtreePage(shadow_page(far_right)).set_left_sibling(left);
  } else {
    WriteLatch wl(t.pool_.pin(left));
    std::memcpy(wl.data(), buf.data(), ps);
    WriteLatch wr(t.pool_.pin(right));
    MutableBtreePage(wr.data()).mark_released();
    if (far_right != 0) {
      WriteLatch wf(t.pool_.pin(far_right));
      MutableBtreePage(wf.data()).set_left_sibling(left);
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
void TreeWriter::redistribute(int level, uint32_t left, uint32_t right, BtreePageImage& m,
                              const BtreePageImage& rimg) {
  size_t s = choose_split(m, level);
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
  if (dry_op) {
    shadow[left] = lbytes;
    shadow[right] = buf;
  } else {
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
void TreeWriter::remove_at(int level, uint32_t page_no, BtreePageImage& img, size_t i) {
  const bool leaf = level == 0;
  if (!leaf && i == 0 && img.header.left_sibling == 0) {
    throw CorruptError(fmt::format("page {}: removing the degenerate first node", page_no));
  }
  img.entries.erase(img.entries.begin() + i);
  const bool is_root = page_no == root();
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
void TreeWriter::shrink_root() {
  for (;;) {
    // Only the header and the first two nodes: a root of one entry then END_LEVEL (every
    // writer operation ends here, so the root is not decoded whole).
    uint32_t r = root();
    uint32_t child = 0;
    {
      PageRef ref;
      const uint8_t* d = view(r, ref);
      if (!live_btree_page(d, -1)) corrupt_page(d, "not a live b-tree page");
      const BtreeHeader h = check_btree_header(d, ps);
      if (h.level == 0 || h.sibling != 0) return;
      const IndexNode first = decode_node(d, h.length, first_node(d), false);
      if (first.is_marker()) return;
      if (!node_after(d, h.length, first.end(), false, first).is_end_level()) return;
      child = first.page_number;
    }
    if (dry_op) {
      dry_root = child;
      MutableBtreePage(shadow_page(r)).mark_released();
      continue;
    }
    t.root_.store(child, std::memory_order_release);
    if (t.on_root_change_) t.on_root_change_(child);
    {
      WriteLatch w(t.pool_.pin(r));
      MutableBtreePage(w.data()).mark_released();
    }
    freed.push_back(r);
  }
}

void TreeWriter::finish() {
  shrink_root();
  if (dry_op) return;
  for (uint32_t p : freed) t.allocator_.release(p);
  freed.clear();
}

}  // namespace pbtree
