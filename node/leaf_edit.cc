// In-place page edits (node/leaf_edit.h): plan on the read-only page, then move the tail,
// write the new nodes and keep the jump table (shifted, or regenerated on Firebird pages by
// encode_page's rule: a jump node for the first entry starting beyond each multiple of
// btr_jump_interval into the node area, at most 255).
#include "node/leaf_edit.h"

#include <cstring>

#include "node/jump_table.h"
#include "node/node.h"
#include "node/node_internal.h"
#include "node/node_quick.h"
#include "node/page_directory.h"
#include "util/bytes.h"

namespace pbtree {

bool is_jump_target(const uint8_t* page, uint32_t offset) {
  for (JumpWalk w(page); w.next();) {
    if (w.node().node_offset == offset) return true;
    if (w.node().node_offset > offset) return false;
  }
  return false;
}

namespace {

// The jump table Firebird's rule gives the page after the edit, written into scratch.jump
// (target offsets patched once its size is known). Firebird layout only. Returns false if it
// does not fit.
bool rebuild_jumps(const uint8_t* d, uint32_t page_size, const BtreeHeader& h, const LeafEdit& e,
                   const LeafEditScratch& s, LeafEditPlan& plan) {
  const bool leaf = h.level == 0;
  const uint32_t interval = h.jump_interval;
  const uint32_t old_first = kBtreeHeaderSize + h.jump_size;
  uint8_t* cur = s.key_a;
  uint8_t* prevj = s.key_b;
  uint32_t cur_len = 0, prevj_len = 0;
  uint32_t rel = 0, count = 0, jpos = 0;
  JumpPlan jumps(interval);
  uint32_t rels[255];
  uint32_t fields[255];
  bool fits = true;
  auto visit = [&](uint32_t size, uint32_t prefix, bool entry) {
    if (jumps.target(rel, entry, count)) {
      const std::span<const uint8_t> jk(cur, prefix);
      const uint32_t jp =
          static_cast<uint32_t>(common_prefix(std::span<const uint8_t>(prevj, prevj_len), jk));
      if (jpos + jump_node_size(jp, prefix - jp) > page_size) {
        fits = false;
      } else {
        fields[count] = jpos + varint_size(jp) + varint_size(prefix - jp);
        rels[count] = rel;
        jpos += encode_jump_node(jp, jk.subspan(jp), 0, s.jump + jpos);
        ++count;
        std::memcpy(prevj, cur, prefix);
        prevj_len = prefix;
      }
      jumps.next();
    }
    rel += size;
  };
  uint32_t off = old_first;
  if (e.rule_prefix && h.jump_count != 0) {
    // The old targets are the rule's first jump_count targets and the nodes before `pos` do
    // not change: keep their jump nodes (offsets patched below) and walk on from the last one,
    // whose full key is its jump key and then its own data.
    uint32_t last = 0;
    for (JumpWalk w(d); w.next();) {
      const JumpNode& j = w.node();
      if (j.prefix > prevj_len || j.node_offset < old_first || j.node_offset >= e.pos ||
          j.node_offset <= last) {
        corrupt_page(d, "jump table out of order");
      }
      std::memcpy(s.jump + jpos, d + j.offset, j.size);
      fields[count] = jpos + (w.field() - j.offset);
      rels[count] = j.node_offset - old_first;
      if (j.length != 0) std::memcpy(prevj + j.prefix, j.data, j.length);
      prevj_len = j.prefix + j.length;
      jpos += j.size;
      ++count;
      jumps.next();
      last = j.node_offset;
    }
    IndexNode n = decode_node_quick(d, h.length, last, leaf);
    if (n.is_marker() || n.prefix != prevj_len) corrupt_page(d, "jump target's prefix");
    std::memcpy(cur, prevj, prevj_len);
    if (n.length != 0) std::memcpy(cur + n.prefix, n.data, n.length);
    cur_len = n.prefix + n.length;
    rel = n.end() - old_first;
    off = n.end();
  }
  // The node area after the edit; once the next threshold lies beyond it (or 255 targets are
  // placed), no node can be a target and the walk stops.
  const int64_t area = int64_t{h.length} - old_first + int64_t(e.bytes.size()) - e.old_len;
  // Directory groups: skip to the last group start at or below the next threshold (every
  // node before it starts at or below the threshold: none is a target). Old-page offsets; a
  // group inside the replaced nodes is not used.
  const PageDirectory* dir = e.dir != nullptr && e.dir->usable() ? e.dir : nullptr;
  const size_t ng = dir != nullptr ? dir->groups() : 0;
  size_t gi = 0;
  const uint32_t edit_end = e.pos + e.old_len;
  while (off < h.length && fits) {
    if (interval == 0 || count >= 255 || int64_t{jumps.threshold()} >= area) break;
    if (gi < ng) {
      const uint32_t t = jumps.threshold();
      size_t best = ng;
      int64_t best_rel = 0;
      while (gi < ng) {
        const uint32_t o = dir->group_offset(gi);
        if (o <= off || (o >= e.pos && o < edit_end)) {
          ++gi;
          continue;
        }
        const int64_t r =
            int64_t{o} - old_first + (o >= edit_end ? int64_t(e.bytes.size()) - e.old_len : 0);
        if (r > t) break;
        best = gi;
        best_rel = r;
        ++gi;
      }
      if (best != ng) {
        off = dir->group_offset(best);
        rel = static_cast<uint32_t>(best_rel);
        cur_len = dir->group_key(best, cur);
      }
    }
    if (off == e.pos) {
      for (const EditNode& n : e.nodes) {
        if (!n.key.empty()) std::memcpy(cur, n.key.data(), n.key.size());
        cur_len = static_cast<uint32_t>(n.key.size());
        visit(n.size, n.prefix, n.entry);
      }
      off = e.pos + e.old_len;
      continue;
    }
    IndexNode n = decode_node_quick(d, h.length, off, leaf);
    if (!n.is_end_level()) {
      if (n.prefix > cur_len) corrupt_page(d, "bad prefix");
      if (n.length != 0) std::memcpy(cur + n.prefix, n.data, n.length);
      cur_len = n.prefix + n.length;
    }
    visit(n.size, n.prefix, !n.is_marker());
    off = n.end();
    if (n.is_marker()) break;
  }
  if (!fits) return false;
  const int64_t delta = int64_t(e.bytes.size()) - e.old_len;
  const int64_t nodes = int64_t{h.length} - old_first + delta;
  const int64_t new_length = int64_t{kBtreeHeaderSize} + jpos + nodes;
  if (new_length > page_size || new_length > 0xFFFF) return false;
  const uint32_t new_first = kBtreeHeaderSize + jpos;
  for (uint32_t i = 0; i < count; ++i) {
    put_u16(s.jump + fields[i], static_cast<uint16_t>(new_first + rels[i]));
  }
  plan.rebuild = true;
  plan.new_length = static_cast<uint32_t>(new_length);
  plan.new_jump_size = jpos;
  plan.new_jump_count = count;
  return true;
}

}  // namespace

bool plan_leaf_edit(const uint8_t* d, uint32_t page_size, const LeafEdit& e,
                    const LeafEditScratch& s, LeafEditPlan& plan) {
  plan.rejump = false;
  plan.shift_known = false;
  const BtreeHeader h = read_btree_header(d);
  const uint32_t first = kBtreeHeaderSize + h.jump_size;
  const int64_t delta = int64_t(e.bytes.size()) - e.old_len;
  const int64_t new_length = int64_t{h.length} + delta;
  const int64_t interval = h.jump_interval;
  bool rebuild = e.force_rebuild;
  uint32_t shifts = 0;
  for (JumpWalk w(d); !rebuild && w.next();) {
    int64_t target = w.node().node_offset;
    if (target == e.stale_a || target == e.stale_b) rebuild = true;
    if (target >= e.pos) {
      target += delta;
      plan.shift_fields[shifts++] = static_cast<uint16_t>(w.field());
    }
    const int64_t ideal = int64_t{first} + int64_t{w.index() + 1} * interval;
    if (target - ideal > interval / 5 || ideal - target > interval / 5) rebuild = true;
  }
  if (interval != 0 && h.jump_count < 255 &&
      new_length - first > int64_t{h.jump_count + 1} * interval + interval / 5) {
    rebuild = true;
  }
  if (!rebuild) {
    if (new_length > page_size) return false;
    plan.rebuild = false;
    plan.new_length = static_cast<uint32_t>(new_length);
    plan.new_jump_size = h.jump_size;
    plan.new_jump_count = h.jump_count;
    plan.shift_known = true;
    plan.shift_count = shifts;
    return true;
  }
  if (h.layout == NodeLayout::Compact) {  // targets must be explicit nodes
    plan.rejump = new_length <= page_size;
    return false;
  }
  return rebuild_jumps(d, page_size, h, e, s, plan);
}

void apply_leaf_edit(uint8_t* d, const LeafEdit& e, const LeafEditPlan& plan,
                     const LeafEditScratch& s) {
  const BtreeHeader h = read_btree_header(d);
  const uint32_t old_first = kBtreeHeaderSize + h.jump_size;
  const int64_t delta = int64_t(e.bytes.size()) - e.old_len;
  const uint32_t tail = e.pos + e.old_len;
  const uint32_t tail_len = h.length - tail;
  MutableBtreePage page(d);
  if (!plan.rebuild) {
    if (delta != 0) std::memmove(d + tail + delta, d + tail, tail_len);
    if (!e.bytes.empty()) std::memcpy(d + e.pos, e.bytes.data(), e.bytes.size());
    if (plan.shift_known) {  // the fields plan_leaf_edit found: no second walk
      for (uint32_t i = 0; i < plan.shift_count; ++i) {
        uint8_t* f = d + plan.shift_fields[i];
        put_u16(f, static_cast<uint16_t>(get_u16(f) + delta));
      }
    } else {
      for (JumpWalk w(d); w.next();) {
        if (w.node().node_offset >= e.pos) {
          put_u16(d + w.field(), static_cast<uint16_t>(w.node().node_offset + delta));
        }
      }
    }
  } else {
    // The nodes before the edit (A) move by `shift`, the tail (T) by shift + delta. Moving
    // right, T goes first (its destination lies beyond A's old bytes); moving left, A first.
    const int64_t shift = int64_t{kBtreeHeaderSize} + plan.new_jump_size - old_first;
    const uint32_t a_len = e.pos - old_first;
    // A regenerated table of the old size (shift 0) leaves A where it is: no move.
    if (shift > 0) {
      std::memmove(d + tail + shift + delta, d + tail, tail_len);
      std::memmove(d + old_first + shift, d + old_first, a_len);
    } else {
      if (shift != 0) std::memmove(d + old_first + shift, d + old_first, a_len);
      if (shift + delta != 0) std::memmove(d + tail + shift + delta, d + tail, tail_len);
    }
    if (!e.bytes.empty()) std::memcpy(d + e.pos + shift, e.bytes.data(), e.bytes.size());
    if (plan.new_jump_size != 0) std::memcpy(d + kBtreeHeaderSize, s.jump, plan.new_jump_size);
    page.set_jump_size(static_cast<uint16_t>(plan.new_jump_size));
    page.set_jump_count(static_cast<uint8_t>(plan.new_jump_count));
  }
  if (plan.new_length < h.length) std::memset(d + plan.new_length, 0, h.length - plan.new_length);
  page.set_length(static_cast<uint16_t>(plan.new_length));
  page.set_prefix_total(static_cast<uint32_t>(int64_t{h.prefix_total} + e.prefix_delta));
}

bool rejump_compact_page(const uint8_t* d, uint32_t page_size, const LeafEditScratch& s) {
  const BtreeHeader h = read_btree_header(d);
  const bool leaf = h.level == 0;
  const uint32_t interval = h.jump_interval;
  uint8_t* cur = s.key_a;
  uint8_t* prevj = s.key_b;
  uint32_t cur_len = 0, prevj_len = 0;
  uint32_t rel = 0, count = 0, jpos = 0;
  JumpPlan jumps(interval);
  uint32_t rels[255];
  uint32_t fields[255];
  NodeContext ctx;
  bool have_ctx = false;
  uint32_t off = kBtreeHeaderSize + h.jump_size;
  for (;;) {
    IndexNode n = decode_compact_node(d, h.length, off, leaf, have_ctx ? &ctx : nullptr);
    const bool entry = !n.is_marker();
    if (!n.is_end_level()) {
      if (n.prefix > cur_len) corrupt_page(d, "bad prefix");
      if (n.length != 0) std::memcpy(cur + n.prefix, n.data, n.length);
      cur_len = n.prefix + n.length;
    }
    const bool target = jumps.target(rel, entry, count);
    const bool explicit_form = !have_ctx || target || n.is_end_bucket();
    uint32_t size = n.size;
    if (n.is_end_level() || explicit_form == n.absolute) {
      if (rel + n.size > page_size) return false;
      std::memcpy(s.nodes + rel, d + off, n.size);
    } else {
      const NodeFields f{n.is_end_bucket() ? NodeKind::EndBucket : NodeKind::Entry, n.recno,
                         n.page_number, n.prefix,
                         std::span<const uint8_t>(cur + n.prefix, n.length)};
      size = compact_node_size(f, leaf, explicit_form ? nullptr : &ctx);
      if (rel + size > page_size) return false;
      encode_compact_node(f, leaf, explicit_form ? nullptr : &ctx, s.nodes + rel);
    }
    if (target) {
      const std::span<const uint8_t> jk(cur, n.prefix);
      const uint32_t jp =
          static_cast<uint32_t>(common_prefix(std::span<const uint8_t>(prevj, prevj_len), jk));
      if (jpos + jump_node_size(jp, n.prefix - jp) > page_size) return false;
      fields[count] = jpos + varint_size(jp) + varint_size(n.prefix - jp);
      rels[count] = rel;
      jpos += encode_jump_node(jp, jk.subspan(jp), 0, s.jump + jpos);
      ++count;
      std::memcpy(prevj, cur, n.prefix);
      prevj_len = n.prefix;
      jumps.next();
    }
    rel += size;
    ctx = context_after(n);
    have_ctx = true;
    off = n.end();
    if (n.is_marker()) break;
  }
  const uint64_t length = uint64_t{kBtreeHeaderSize} + jpos + rel;
  if (length > page_size || length > 0xFFFF) return false;
  const uint32_t first = kBtreeHeaderSize + jpos;
  for (uint32_t i = 0; i < count; ++i)
    put_u16(s.jump + fields[i], static_cast<uint16_t>(first + rels[i]));
  std::memcpy(s.page, d, kBtreeHeaderSize);
  if (jpos != 0) std::memcpy(s.page + kBtreeHeaderSize, s.jump, jpos);
  std::memcpy(s.page + first, s.nodes, rel);
  std::memset(s.page + length, 0, page_size - length);
  MutableBtreePage p(s.page);
  p.set_length(static_cast<uint16_t>(length));
  p.set_jump_size(static_cast<uint16_t>(jpos));
  p.set_jump_count(static_cast<uint8_t>(count));
  return true;
}

uint32_t relay_compact_edit(const uint8_t* d, uint32_t page_size, const LeafEdit& e,
                            const LeafEditScratch& s) {
  const BtreeHeader h = read_btree_header(d);
  const int64_t length = int64_t{h.length} + int64_t(e.bytes.size()) - e.old_len;
  if (length > page_size) return 0;
  std::memcpy(s.copy, d, page_size);
  LeafEditPlan shift;  // the edit alone, jump offsets shifted (out of rule)
  shift.new_length = static_cast<uint32_t>(length);
  shift.new_jump_size = h.jump_size;
  shift.new_jump_count = h.jump_count;
  apply_leaf_edit(s.copy, e, shift, s);
  if (!rejump_compact_page(s.copy, page_size, s)) return 0;
  return BtreePage(s.page).length();
}

}  // namespace pbtree
