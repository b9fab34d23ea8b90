// The tree writer's descent and leaf paths: remove in place (node/leaf_edit.h) or through the
// page image, and BTree::insert / BTree::remove (inserts try btree/leaf_writer.cc's in-place
// path first). The one split is btree/split.cc; merges and repairs are in btree/split_merge.cc.
#include <algorithm>
#include <cstring>

#include "btree/leaf_writer.h"
#include "btree/tree_internal.h"
#include "node/node_quick.h"
#include "node/page_directory.h"

namespace pbtree {

const uint8_t* TreeWriter::view(uint32_t page_no, PageRef& ref) {
  if (dry_op) {
    auto it = shadow.find(page_no);
    if (it != shadow.end()) return it->second.data();
  }
  ref = t.pool_.pin(page_no);
  return ref.data();
}

uint8_t* TreeWriter::shadow_page(uint32_t page_no) {
  auto [it, added] = shadow.try_emplace(page_no);
  if (added) {
    PageRef ref = t.pool_.pin(page_no);
    it->second.assign(ref.data(), ref.data() + ps);
  }
  return it->second.data();
}

BtreePageImage TreeWriter::read(uint32_t page_no) {
  PageRef ref;
  const uint8_t* d = view(page_no, ref);
  if (!live_btree_page(d, -1)) corrupt_page(d, "not a live b-tree page");
  return decode_page(d, ps);
}

void TreeWriter::write_buf(uint32_t page_no) {
  if (dry_op) {
    shadow[page_no] = buf;
    return;
  }
  WriteLatch w(t.pool_.pin(page_no));
  std::memcpy(w.data(), buf.data(), ps);
}

// In-place paths: finds the node at or after (key, recno) on leaf page `d`, leaving the
// previous node's full key in scratch_key_ and the found node's in scratch_key2_. Returns
// false when the position is the page's first node or past its END_BUCKET (the caller then
// takes the page image path).
bool TreeWriter::locate_in_leaf(const uint8_t* d, const BtreeHeader& h,
                                std::span<const uint8_t> key, uint64_t recno, IndexNode& x) {
  PageFind f = find_in_page(d, ps, key, t.def_.descending, recno, FindMode::LowerBound);
  if (f.beyond_end_bucket || f.prev_offset == 0) return false;
  std::vector<uint8_t>& prev = scratch_key_;
  const IndexNode p = node_with_key(d, ps, f.prev_offset, prev);
  x = decode_node(d, h.length, f.offset, true, f.offset_context());
  x_prev_ctx_ = NodeContext{static_cast<uint32_t>(prev.size()), p.recno};
  if (x.prefix > prev.size()) corrupt_page(d, "bad prefix");
  std::vector<uint8_t>& xkey = scratch_key2_;
  xkey.assign(prev.begin(), prev.begin() + x.prefix);
  xkey.insert(xkey.end(), x.data, x.data + x.length);
  return true;
}

// Removes (key, recno) from `leaf` in place (node/leaf_edit.h: the node after it re-encoded,
// the tail moved inside the frame under its exclusive latch) when it is not the first node,
// the page stays at least a quarter full and the jump table can be kept. Returns false to fall
// back. Throws NotFoundError if the pair is absent.
bool TreeWriter::remove_in_place(uint32_t leaf, std::span<const uint8_t> key, uint64_t recno) {
  PageRef ref = t.pool_.pin(leaf);
  const uint8_t* d = ref.data();
  const BtreeHeader h = read_btree_header(d);
  IndexNode x;
  if (!locate_in_leaf(d, h, key, recno, x)) return false;
  std::vector<uint8_t>& prev = scratch_key_;
  std::vector<uint8_t>& xkey = scratch_key2_;
  if (x.is_marker() || compare_entry(xkey, x.recno, key, recno, t.def_.descending) != 0) {
    throw NotFoundError(fmt::format("index \"{}\" holds no key {} with record number {}",
                                    t.def_.name, key_hex(key), recno));
  }
  const NodeContext xctx = context_after(x);
  IndexNode y = decode_node(d, h.length, x.end(), true, &xctx);
  uint8_t node_buf[kMaxNodeKeyField + 16];
  uint32_t y_size = 1;
  uint32_t py = y.prefix;
  std::vector<uint8_t>& ykey = scratch_key3_;
  ykey.clear();
  if (y.is_end_level()) {
    node_buf[0] = d[y.offset];
  } else {
    if (y.prefix > xkey.size()) corrupt_page(d, "bad prefix");
    ykey.assign(xkey.begin(), xkey.begin() + y.prefix);
    ykey.insert(ykey.end(), y.data, y.data + y.length);
    py = common_prefix(prev, ykey);
    NodeFields yf{y.is_end_bucket() ? NodeKind::EndBucket : NodeKind::Entry, y.recno, 0, py,
                  std::span<const uint8_t>(ykey).subspan(py)};
    const bool explicit_form =
        h.layout == NodeLayout::Compact && (y.is_end_bucket() || is_jump_target(d, y.offset));
    y_size = encode_node(h.layout, yf, true, explicit_form ? nullptr : &x_prev_ctx_, node_buf);
  }
  const int64_t delta = int64_t{y_size} - x.size - y.size;
  const int64_t new_length = int64_t{h.length} + delta;
  if (new_length < ps / 4 && leaf != t.root()) return false;  // may merge: image path
  const EditNode en[1] = {{y_size, py, ykey, !y.is_marker()}};
  const LeafEdit e{x.offset,
                   x.size + y.size,
                   std::span<const uint8_t>(node_buf, y_size),
                   en,
                   x.offset,
                   py != y.prefix ? y.offset : 0u,
                   int64_t{py} - x.prefix - int64_t{y.prefix},
                   false,
                   writer_directory(ref)};
  WriterCache& c = LeafWriter::cache(t, ps);
  LeafEditPlan plan;
  const RemovedNode removed{y.is_marker() ? 0u : y.offset, x_prev_ctx_};
  return edit_page(ref, ps, e, plan, c.edit_scratch(), ps, &removed) != PageEdit::None;
}

// The writer descends without moving right (it excludes other writers, so no split is pending):
// a leaf whose END_BUCKET copy is not above (key, recno) was reached through a wrong pointer.
static void check_writer_leaf(const BtreePageImage& img, uint32_t leaf,
                              std::span<const uint8_t> key, uint64_t recno, bool descending) {
  if (img.end_bucket &&
      compare_entry(key, recno, img.end_bucket->key, img.end_bucket->recno, descending) >= 0) {
    throw CorruptError(
        fmt::format("page {} (b-tree): key beyond the END_BUCKET copy on the writer's path", leaf));
  }
}

// Leaf descent for (key, recno): fills path.
uint32_t TreeWriter::descend(std::span<const uint8_t> key, uint64_t recno) {
  return descend_for_write(t, path, [&](const uint8_t* d) {
    PageFind f = find_in_page(d, ps, key, t.def_.descending, recno, FindMode::UpperBound);
    if (f.beyond_end_bucket) corrupt_page(d, "key beyond the END_BUCKET copy on the writer's path");
    const bool at_prev = f.prev_offset != 0;
    IndexNode n = decode_node_quick(d, BtreePage(d).length(), at_prev ? f.prev_offset : f.offset,
                                    false, at_prev ? f.prev_context() : f.offset_context());
    if (n.is_marker()) corrupt_page(d, "non-leaf page without entries");
    return n.page_number;
  });
}

// A tree at level_limit() levels (kMaxLevels unless lowered) takes no change that would split
// its root: while the root is at the top level, the change's page-image path first runs dry
// (TreeWriter::start_dry_run), splits, a new first entry's separator changes (compact layout)
// and a remove's repairs included, and a change that would add a level is refused before any
// page changes (issue 30: the leaf and the levels below the root were split, the key was in,
// and only then did the new root fail).
bool BTree::root_at_top() const {
  PageRef ref = pool_.pin(root());
  return BtreePage(ref.data()).level() + 1u >= level_limit_;
}

void BTree::check_level_limit(std::span<const uint8_t> key, uint64_t recno) {
  if (!root_at_top()) return;
  TreeWriter w(*this);
  w.start_dry_run("insert");
  insert_image(w, key, recno);
}

// The general insert path: the leaf's image with the entry, stored (split up as needed), and a
// new first entry of a non-leftmost leaf posted to its left sibling and parent.
void BTree::insert_image(TreeWriter& w, std::span<const uint8_t> key, uint64_t recno) {
  uint32_t leaf = w.descend(key, recno);
  BtreePageImage img = w.read(leaf);
  check_writer_leaf(img, leaf, key, recno, def_.descending);
  auto it =
      std::lower_bound(img.entries.begin(), img.entries.end(), 0, [&](const PageEntry& e, int) {
        return compare_entry(e.key, e.recno, key, recno, def_.descending) < 0;
      });
  if (it != img.entries.end() &&
      compare_entry(it->key, it->recno, key, recno, def_.descending) == 0) {
    const std::string value = key_value_text(def_, key);
    throw DuplicateKeyError(
        fmt::format("index {}: entry ({}, {}) already exists", def_.name, value, recno), def_.name,
        value, recno);
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
  check_level_limit(key, recno);
  if (LeafWriter::insert(*this, key, recno)) return;  // one descent, in place
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
  insert_image(w, key, recno);
}

void BTree::remove(std::span<const uint8_t> key, uint64_t recno) {
  if (read_only_) {
    throw ReadOnlyError(fmt::format("{}: opened read-only", pool_.file().path()));
  }
  std::lock_guard lock(write_mutex_);
  TreeWriter w(*this);
  uint32_t leaf = w.descend(key, recno);
  if (w.remove_in_place(leaf, key, recno)) return;
  if (root_at_top()) {
    TreeWriter dry(*this);
    dry.start_dry_run("remove");
    remove_image(dry, dry.descend(key, recno), key, recno);
  }
  remove_image(w, leaf, key, recno);
}

// The general remove path: the entry out of the leaf's image, then the repairs (remove_at).
void BTree::remove_image(TreeWriter& w, uint32_t leaf, std::span<const uint8_t> key,
                         uint64_t recno) {
  BtreePageImage img = w.read(leaf);
  check_writer_leaf(img, leaf, key, recno, def_.descending);
  auto it =
      std::lower_bound(img.entries.begin(), img.entries.end(), 0, [&](const PageEntry& e, int) {
        return compare_entry(e.key, e.recno, key, recno, def_.descending) < 0;
      });
  if (it == img.entries.end() ||
      compare_entry(it->key, it->recno, key, recno, def_.descending) != 0) {
    throw NotFoundError(fmt::format("index \"{}\" holds no key {} with record number {}", def_.name,
                                    key_hex(key), recno));
  }
  w.remove_at(0, leaf, img, static_cast<size_t>(it - img.entries.begin()));
  w.finish();
}

}  // namespace pbtree
