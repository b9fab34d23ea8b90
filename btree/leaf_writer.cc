// The writer's fast leaf paths (btree/leaf_writer.h): the rightmost-leaf append, the
// allocation-free descent and the in-place insert of both node layouts. Falls back (returns
// false, nothing changed) to the general path of btree/writer.cc for splits, a new first
// node of a non-leftmost leaf, a compact page whose jump table needs other targets, and any
// page that does not look right (the general path then reports it).
#include "btree/leaf_writer.h"

#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "btree/tree_internal.h"
#include "node/node_quick.h"
#include "node/page_directory.h"
#include "node/route_table.h"

namespace pbtree {

WriterCache::WriterCache(uint32_t ps)
    : scratch(leaf_edit_scratch_size(ps)),
      nodes(size_t{ps} * 2),
      page_size(ps),
      split_page(size_t{ps} * 2) {
  split.keys.reserve(size_t{ps} * 4);
  split.at.reserve(ps / 2);
  split.entries.reserve(ps / 2);
  prev_key.reserve(ps);
  x_key.reserve(ps);
  rm_key.reserve(ps);
}

namespace {

uint8_t end_level_byte(NodeLayout layout) {
  return layout == NodeLayout::Compact ? kCompactEndLevel
                                       : static_cast<uint8_t>(NodeFlag::EndLevel) << 5;
}

[[noreturn]] void throw_unique(const IndexDefinition& def, std::span<const uint8_t> key,
                               uint64_t existing) {
  const std::string value = key_value_text(def, key);
  throw DuplicateKeyError(fmt::format("unique index {}: value {} already exists (record {})",
                                      def.name, value, existing),
                          def.name, value, existing);
}

[[noreturn]] void throw_pair(const IndexDefinition& def, std::span<const uint8_t> key,
                             uint64_t recno) {
  const std::string value = key_value_text(def, key);
  throw DuplicateKeyError(
      fmt::format("index {}: entry ({}, {}) already exists", def.name, value, recno), def.name,
      value, recno);
}

// Applies `e` (planned) to the pinned page under its exclusive latch; the frame version is
// bumped (mark_dirty), which is what readers, cursors and page directories check.
void apply_latched(PageRef& ref, const LeafEdit& e, const LeafEditPlan& plan,
                   const LeafEditScratch& s, const InsertedNode* ins, const RemovedNode* rem) {
  std::unique_lock lock(ref.latch());
  // The directory if current before the change (mark_dirty bumps the version).
  PageDirectory* dir = ins != nullptr || rem != nullptr ? writer_directory(ref) : nullptr;
  const int64_t shift =
      plan.rebuild ? int64_t{plan.new_jump_size} - BtreePage(ref.data()).jump_size() : 0;
  apply_leaf_edit(ref.data(), e, plan, s);
  ref.mark_dirty();
  const int64_t delta = int64_t(e.bytes.size()) - e.old_len;
  if (dir != nullptr && ins != nullptr) {
    dir->note_insert(ref.data(), e.pos, ins->size, delta, shift, ins->key, ins->recno,
                     ref.version());
  } else if (dir != nullptr) {
    dir->note_remove(ref.data(), e.pos, rem->next_offset, delta, shift, rem->prev, ref.version());
  }
}

PageEdit edit_with(PageRef& ref, uint32_t ps, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit, const InsertedNode* ins,
                   const RemovedNode* rem);

}  // namespace

PageEdit edit_page(PageRef& ref, uint32_t ps, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit) {
  return edit_with(ref, ps, e, plan, s, limit, nullptr, nullptr);
}

PageEdit edit_page(PageRef& ref, uint32_t ps, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit, const InsertedNode* ins) {
  return edit_with(ref, ps, e, plan, s, limit, ins, nullptr);
}

PageEdit edit_page(PageRef& ref, uint32_t ps, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit, const RemovedNode* rem) {
  return edit_with(ref, ps, e, plan, s, limit, nullptr, rem);
}

namespace {

PageEdit edit_with(PageRef& ref, uint32_t ps, const LeafEdit& e, LeafEditPlan& plan,
                   const LeafEditScratch& s, uint32_t limit, const InsertedNode* ins,
                   const RemovedNode* rem) {
  const uint8_t* d = ref.data();
  if (plan_leaf_edit(d, ps, e, s, plan)) {
    if (plan.new_length > limit) return PageEdit::None;
    apply_latched(ref, e, plan, s, ins, rem);
    return PageEdit::InPlace;
  }
  if (!plan.rejump) return PageEdit::None;
  // Compact page due other jump targets: the edit on a copy (jump offsets shifted, out of
  // rule), then the copy re-laid with encode_page's jump rule and written back whole.
  const uint32_t relaid = relay_compact_edit(d, ps, e, s);
  if (relaid == 0 || relaid > limit) return PageEdit::None;
  {
    std::unique_lock lock(ref.latch());
    std::memcpy(ref.data(), s.page, ps);
    ref.mark_dirty();
  }
  plan.new_length = BtreePage(s.page).length();
  return PageEdit::Relaid;
}

}  // namespace

WriterCache& LeafWriter::cache(BTree& t, uint32_t ps) {
  if (!t.writer_cache_ || t.writer_cache_->page_size != ps) {
    t.writer_cache_ = std::make_shared<WriterCache>(ps);
  }
  return *t.writer_cache_;
}

uint64_t LeafWriter::appends(const BTree& t) {
  return t.writer_cache_ ? t.writer_cache_->appends : 0;
}

uint64_t LeafWriter::splits(const BTree& t) {
  return t.writer_cache_ ? t.writer_cache_->splits : 0;
}

// The leaf for (key, recno) without a path (no allocation); 0 if a page does not look right.
static uint32_t descend_leaf(BTree& t, std::span<const uint8_t> key, uint64_t recno,
                             bool descending) {
  uint32_t p = t.root();
  int expect = -1;
  for (;;) {
    PageRef ref = t.pool().pin(p);
    const uint8_t* d = ref.data();
    if (!live_btree_page(d, expect)) return 0;
    const int level = BtreePage(d).level();
    if (level == 0) return p;
    // Inner pages change rarely: route through the frame's route table (built once per page
    // version, node/route_table.h; only this writer changes pages, so it reads without the
    // latch), else search the page under its latch and build the table. The leaf is searched
    // below, through a directory the writer keeps current across its in-place changes.
    const RouteTable* rt = frame_route_table(ref.frame());
    if (rt == nullptr || rt->version() != ref.version()) {
      std::shared_lock lock(ref.latch());
      refresh_route_table(ref);
      rt = frame_route_table(ref.frame());
    }
    RouteStep st;
    if (rt != nullptr && rt->route(ref.version(), key, descending, recno, st) &&
        st.level == level) {
      if (st.sibling) return 0;
      p = st.next;
      expect = level - 1;
      continue;
    }
    PageFind f;
    {
      std::shared_lock lock(ref.latch());
      f = find_in_frame(ref, key, descending, recno, FindMode::UpperBound);
    }
    if (f.beyond_end_bucket) return 0;
    const bool at_prev = f.prev_offset != 0;
    IndexNode n = decode_node_quick(d, BtreePage(d).length(), at_prev ? f.prev_offset : f.offset,
                                    false, at_prev ? f.prev_context() : f.offset_context());
    if (n.is_marker()) return 0;
    p = n.page_number;
    expect = level - 1;
  }
}

bool LeafWriter::insert(BTree& t, std::span<const uint8_t> key, uint64_t recno) {
  const uint32_t ps = t.pool_.page_size();
  WriterCache& c = cache(t, ps);
  const bool desc = t.def_.descending;
  const bool uniq = t.def_.unique && !t.is_null_key(key);
  const NodeLayout layout = t.def_.layout;
  const LeafEditScratch s = c.edit_scratch();
  uint8_t* nb = c.nodes.data();

  // Rightmost-leaf append: the key goes past the last entry of the cached rightmost leaf.
  if (c.rm_leaf != 0) {
    PageRef ref = t.pool_.pin(c.rm_leaf);
    const uint8_t* d = ref.data();
    const BtreePage bp(d);
    bool valid = ref.version() == c.rm_version && bp.live(0) && bp.sibling() == 0 &&
                 bp.length() == c.rm_length && bp.layout() == layout &&
                 c.rm_last_offset + 1 < c.rm_length && d[c.rm_length - 1] == end_level_byte(layout);
    if (valid && layout == NodeLayout::Firebird) {
      IndexNode last = decode_node_quick(d, c.rm_length, c.rm_last_offset, true);
      valid = !last.is_marker() && last.end() == c.rm_length - 1u &&
              last.prefix + last.length == c.rm_key.size() && last.recno == c.rm_recno;
    }
    if (!valid) {
      c.rm_leaf = 0;
    } else {
      const int ck = compare_keys(c.rm_key, key, desc);
      if (ck < 0 || (ck == 0 && !uniq && c.rm_recno < recno)) {
        const uint32_t end_pos = c.rm_length - 1;
        const uint32_t pn = static_cast<uint32_t>(common_prefix(c.rm_key, key));
        const NodeFields nf{NodeKind::Entry, recno, 0, pn, key.subspan(pn)};
        const NodeContext ctx{static_cast<uint32_t>(c.rm_key.size()), c.rm_recno};
        const uint32_t n_size = encode_node(layout, nf, true, &ctx, nb);
        nb[n_size] = d[end_pos];
        const EditNode en[2] = {{n_size, pn, key, true}, {1, 0, {}, false}};
        const LeafEdit e{end_pos,
                         1,
                         std::span<const uint8_t>(nb, n_size + 1),
                         en,
                         0,
                         0,
                         pn,
                         c.rm_in_rule,
                         writer_directory(ref)};
        // End-of-page reserve (insert_node, Firebird v5.0.4 src/jrd/btr.cpp): else the rightmost
        // split runs.
        const int64_t limit = int64_t{ps} - 6 - int64_t(key.size());
        RightmostAppend append{&ref, &c, key, recno, pn, ctx, &e, c.rm_key};
        if (int64_t{c.rm_length} + n_size > limit) {
          return store_split(t, c, ref, c.rm_leaf, e, key, recno, &append);
        }
        LeafEditPlan plan;
        const uint32_t old_jump = bp.jump_size();
        const InsertedNode ins{n_size, key, recno};
        const PageEdit done = edit_page(ref, ps, e, plan, s, static_cast<uint32_t>(limit), &ins);
        if (done == PageEdit::None)
          return store_split(t, c, ref, c.rm_leaf, e, key, recno, &append);
        ++c.appends;
        if (done == PageEdit::Relaid) {  // node offsets moved: the next append descends
          c.rm_leaf = 0;
          return true;
        }
        c.rm_version = ref.version();
        c.rm_length = plan.new_length;
        c.rm_last_offset = end_pos + plan.new_jump_size - old_jump;
        c.rm_key.assign(key.begin(), key.end());
        c.rm_recno = recno;
        if (plan.rebuild) c.rm_in_rule = true;
        return true;
      }
    }
  }

  // One descent: a unique index lands on (key, 0), so the node found tells whether the key
  // exists and, if not, is also where (key, recno) goes.
  const uint64_t probe = uniq ? 0 : recno;
  const uint32_t leaf = descend_leaf(t, key, probe, desc);
  if (leaf == 0) return false;
  PageRef ref = t.pool_.pin(leaf);
  const uint8_t* d = ref.data();
  const BtreeHeader h = read_btree_header(d);
  if (h.layout != layout) return false;
  // Through the frame's directory, which the writer keeps current across its in-place
  // inserts (built once per page read or split, node/page_directory.h). A compact page is
  // re-laid whenever it is due another jump target (edit_page's PageEdit::Relaid), which
  // leaves its directory stale: there the writer uses one only if it is current.
  PageFind f;
  {
    std::shared_lock lock(ref.latch());
    if (layout == NodeLayout::Firebird) {
      f = find_in_frame(ref, key, desc, probe, FindMode::LowerBound);
    } else if (const PageDirectory* dir = current_directory(ref); dir && dir->usable()) {
      f = dir->find(d, key, desc, probe, FindMode::LowerBound);
    } else {
      f = find_in_page(d, ps, key, desc, probe, FindMode::LowerBound);
    }
  }
  if (f.beyond_end_bucket) return false;
  if (f.prev_offset == 0 && h.left_sibling != 0) return false;  // new first node: separator
  // The previous node: when the search passed it, what the new node needs of it (the bytes
  // it shares with `key`, its key length and record number) is in `f`; else its key is
  // decoded from the nearest jump node.
  uint32_t pn = 0;
  NodeContext pctx;
  if (f.prev_offset != 0 && f.prev_known) {
    pn = f.prev_matched;
    pctx = f.offset_ctx;
  } else if (f.prev_offset != 0) {
    const IndexNode prev = node_with_key(d, ps, f.prev_offset, c.prev_key);
    pn = static_cast<uint32_t>(common_prefix(c.prev_key, key));
    pctx = NodeContext{static_cast<uint32_t>(c.prev_key.size()), prev.recno};
  }
  const IndexNode x = decode_node_quick(d, h.length, f.offset, true, f.offset_context());
  if (!x.is_end_level()) {
    // x shares f.matched >= x.prefix bytes with `key` (the prefix trick), so its full key is
    // those bytes of `key` and then the rest of its own suffix.
    if (f.matched < x.prefix || f.matched - x.prefix > x.length || f.matched > key.size()) {
      return false;
    }
    c.x_key.assign(key.begin(), key.begin() + f.matched);
    c.x_key.insert(c.x_key.end(), x.data + (f.matched - x.prefix), x.data + x.length);
    if (uniq && compare_keys(c.x_key, key, desc) == 0) throw_unique(t.def_, key, x.recno);
    if (!uniq && compare_entry(c.x_key, x.recno, key, recno, desc) == 0) {
      throw_pair(t.def_, key, recno);
    }
  } else {
    c.x_key.clear();
  }
  const NodeFields nf{NodeKind::Entry, recno, 0, pn, key.subspan(pn)};
  const uint32_t n_size = encode_node(layout, nf, true, f.prev_offset != 0 ? &pctx : nullptr, nb);
  uint32_t x_size = 1;
  uint32_t px = 0;
  if (x.is_end_level()) {
    nb[n_size] = d[x.offset];
  } else {
    px = static_cast<uint32_t>(common_prefix(key, c.x_key));
    const bool explicit_form =
        layout == NodeLayout::Compact && (x.is_end_bucket() || is_jump_target(d, x.offset));
    const NodeContext nctx{static_cast<uint32_t>(key.size()), recno};
    const NodeFields xf{x.is_end_bucket() ? NodeKind::EndBucket : NodeKind::Entry, x.recno, 0, px,
                        std::span<const uint8_t>(c.x_key).subspan(px)};
    x_size = encode_node(layout, xf, true, explicit_form ? nullptr : &nctx, nb + n_size);
  }
  const EditNode en[2] = {{n_size, pn, key, true}, {x_size, px, c.x_key, !x.is_marker()}};
  const LeafEdit e{x.offset,
                   x.size,
                   std::span<const uint8_t>(nb, n_size + x_size),
                   en,
                   px != x.prefix ? x.offset : 0u,
                   0,
                   int64_t{pn} + px - int64_t{x.prefix},
                   false,
                   writer_directory(ref)};
  // A node that becomes the last one leaves the end-of-page reserve (insert_node) free.
  const int64_t limit = x.is_marker() ? int64_t{ps} - 6 - int64_t(key.size()) : int64_t{ps};
  if (int64_t{h.length} + n_size + x_size - x.size > limit) {
    return store_split(t, c, ref, leaf, e, key, recno, nullptr);
  }
  LeafEditPlan plan;
  const InsertedNode ins{n_size, key, recno};
  const PageEdit done = edit_page(ref, ps, e, plan, s, static_cast<uint32_t>(limit), &ins);
  if (done == PageEdit::None) return store_split(t, c, ref, leaf, e, key, recno, nullptr);
  if (done == PageEdit::InPlace && h.sibling == 0 &&
      x.is_end_level()) {  // appended to the rightmost leaf: cache it
    c.rm_leaf = leaf;
    c.rm_version = ref.version();
    c.rm_length = plan.new_length;
    c.rm_last_offset = x.offset + plan.new_jump_size - h.jump_size;
    c.rm_key.assign(key.begin(), key.end());
    c.rm_recno = recno;
    c.rm_in_rule = plan.rebuild || plan.new_jump_count == 0;
  }
  return true;
}

bool LeafWriter::store_split(BTree& t, WriterCache& c, PageRef& ref, uint32_t leaf,
                             const LeafEdit& e, std::span<const uint8_t> key, uint64_t recno,
                             RightmostAppend* append) {
  if (!c.leaf_splits) return false;
  const uint32_t ps = t.pool_.page_size();
  const uint8_t* d = ref.data();
  const BtreeHeader h = check_btree_header(d, ps);
  const uint32_t first = kBtreeHeaderSize + h.jump_size;
  const int64_t grown = int64_t{h.length} + int64_t(e.bytes.size()) - e.old_len;
  if (grown > int64_t{ps} * 2 || e.pos < first || e.pos + e.old_len > h.length) return false;
  // The page with the insert applied (it may pass page_size): header, jump table and nodes
  // before the edit, the edit's bytes, then the tail.
  uint8_t* p = c.split_page.data();
  const uint32_t tail = e.pos + e.old_len;
  std::memcpy(p, d, e.pos);
  std::memcpy(p + e.pos, e.bytes.data(), e.bytes.size());
  std::memcpy(p + e.pos + e.bytes.size(), d + tail, h.length - tail);
  SplitInput in;
  in.header = h;
  in.bytes = std::span<const uint8_t>(p, static_cast<size_t>(grown));
  in.inserted_offset = e.pos;
  in.scratch = &c.split;
  in.append = append;
  TreeWriter w(t);
  w.descend(key, recno);
  const SplitResult r = w.store(0, leaf, in);
  w.finish();
  if (r.in_frame) {
    // The new page is the rightmost leaf now, in encode_page's rule.
    const PageRef nr = t.pool_.pin(r.new_page);
    c.rm_leaf = r.new_page;
    c.rm_version = nr.version();
    c.rm_length = r.right_length;
    c.rm_last_offset = BtreePage(nr.data()).first_node();
    c.rm_key.assign(key.begin(), key.end());
    c.rm_recno = recno;
    c.rm_in_rule = true;
    ++c.splits;
  } else {
    c.rm_leaf = 0;
    if (r.split) ++c.byte_splits;
  }
  return true;
}

}  // namespace pbtree
