// The middle split of the writer's in-place insert path on Firebird-layout leaves
// (btree/leaf_writer.h): a key that does not fit its leaf splits the page where
// TreeWriter::choose_split would (the middle by key bytes), and both halves are streamed from
// the page's node bytes, instead of decoding the page into entries and encoding it five
// times. Only the first node of the right half (explicit now) and the left half's END_BUCKET
// copy are coded anew; each half gets the jump table encode_page's rule gives it. Anything
// the general path would do differently (the page re-laid whole still fits, a half that
// does not fit, the compact layout) is left to TreeWriter::split.
#include <cstring>
#include <mutex>

#include "btree/leaf_writer.h"
#include "btree/tree_internal.h"

namespace pbtree {

namespace {

// The jump table encode_page's rule gives a run of nodes, built as they are visited.
struct JumpBuilder {
  explicit JumpBuilder(uint32_t interval, uint8_t* out) : plan(interval), out(out) {}
  JumpPlan plan;
  uint8_t* out;       // jump nodes, offsets patched by finish()
  uint32_t size = 0;  // bytes
  uint32_t count = 0;
  uint32_t rels[255];                    // target node, bytes into the node area
  uint32_t fields[255];                  // offset field of each jump node in `out`
  std::vector<uint8_t>* prev = nullptr;  // the previous jump key

  // Node `rel` bytes into the node area, an entry if `entry`, full key `key` (its first
  // `prefix` bytes are the jump key).
  void visit(uint32_t rel, bool entry, std::span<const uint8_t> key, uint32_t prefix) {
    if (!plan.target(rel, entry, count)) return;
    const std::span<const uint8_t> jk = key.first(prefix);
    const uint32_t jp = static_cast<uint32_t>(common_prefix(*prev, jk));
    fields[count] = size + varint_size(jp) + varint_size(prefix - jp);
    rels[count] = rel;
    size += encode_jump_node(jp, jk.subspan(jp), 0, out + size);
    ++count;
    prev->assign(jk.begin(), jk.end());
    plan.next();
  }
  // Patches the target offsets once the node area's start (39 + size) is known.
  void finish() {
    const uint32_t first = kBtreeHeaderSize + size;
    for (uint32_t i = 0; i < count; ++i)
      put_u16(out + fields[i], static_cast<uint16_t>(first + rels[i]));
  }
};

// Writes the header of a half laid out in `page` (jump table `j`, btr_length `length`):
// bytes 0..38 as encode_page leaves them, `h` with the half's siblings and totals.
void close_half(uint8_t* page, BtreeHeader h, const JumpBuilder& j, uint32_t prefix_total,
                uint64_t length, uint32_t page_size) {
  std::memset(page + length, 0, page_size - length);
  h.prefix_total = prefix_total;
  h.length = static_cast<uint16_t>(length);
  h.jump_size = static_cast<uint16_t>(j.size);
  h.jump_count = static_cast<uint8_t>(j.count);
  std::memset(page, 0, kBtreeHeaderSize);
  write_btree_header(page, h);
}

}  // namespace

bool LeafWriter::split_middle(BTree& t, WriterCache& c, PageRef& ref, uint32_t leaf,
                              const LeafEdit& e, std::span<const uint8_t> key, uint64_t recno) {
  const uint32_t ps = t.pool_.page_size();
  const uint8_t* d = ref.data();
  const BtreeHeader h = check_btree_header(d, ps);
  if (h.layout != NodeLayout::Firebird || h.level != 0 || !c.stream_splits) return false;
  const uint32_t first = kBtreeHeaderSize + h.jump_size;
  const int64_t grown = int64_t{h.length} + int64_t(e.bytes.size()) - e.old_len;
  if (grown > int64_t{ps} * 2 || e.pos < first || e.pos + e.old_len > h.length) return false;

  // The page with the insert applied (it may pass page_size), in c.split_page: header, jump
  // table and nodes before the edit, the edit's bytes, then the tail.
  uint8_t* p = c.split_page.data();
  const uint32_t tail = e.pos + e.old_len;
  std::memcpy(p, d, e.pos);
  std::memcpy(p + e.pos, e.bytes.data(), e.bytes.size());
  std::memcpy(p + e.pos + e.bytes.size(), d + tail, h.length - tail);
  const uint32_t limit = static_cast<uint32_t>(grown);

  // Pass 1: each entry's offset and key length; the END marker's offset.
  std::vector<uint32_t>& offs = c.split_offsets;
  std::vector<uint32_t>& klen = c.split_key_lengths;
  offs.clear();
  klen.clear();
  uint32_t off = first;
  uint32_t marker = 0;
  uint64_t total = 0;
  for (;;) {
    const IndexNode n = decode_node(p, limit, off, true);
    if (n.is_marker()) {
      marker = off;
      break;
    }
    offs.push_back(off);
    klen.push_back(n.prefix + n.length);
    total += n.prefix + n.length + 8;
    off = n.end();
  }
  const size_t count = offs.size();
  const IndexNode end_node = decode_node(p, limit, marker, true);
  if (count < 2 || end_node.end() != limit) return false;
  // TreeWriter::choose_split's first choice: the middle by key bytes (+ 8 per entry).
  size_t s = 1;
  uint64_t acc = 0;
  for (size_t i = 0; i < count; ++i) {
    acc += klen[i] + 8;
    if (acc * 2 >= total) {
      s = std::clamp<size_t>(i, 1, count - 1);
      break;
    }
  }

  // Pass 2: full keys along the nodes; the jump tables of the whole page (for its length),
  // of the left half (the whole page's targets before s) and of the right half.
  const LeafEditScratch sc = c.edit_scratch();
  uint8_t* left = sc.copy;  // page images, page_size bytes each
  uint8_t* right = sc.page;
  std::vector<uint8_t>& cur = c.split_cur;
  std::vector<uint8_t>& key_s = c.split_key;
  std::vector<uint8_t>& jk_whole = c.split_jump_keys[0];
  std::vector<uint8_t>& jk_left = c.split_jump_keys[1];
  std::vector<uint8_t>& jk_right = c.split_jump_keys[2];
  jk_whole.clear();
  jk_left.clear();
  jk_right.clear();
  JumpBuilder whole(h.jump_interval, sc.nodes), lj(h.jump_interval, left + kBtreeHeaderSize),
      rj(h.jump_interval, right + kBtreeHeaderSize);
  whole.prev = &jk_whole;
  lj.prev = &jk_left;
  rj.prev = &jk_right;
  cur.clear();
  uint32_t left_prefix = 0, right_prefix = 0;
  uint64_t recno_s = 0;
  uint32_t s_size = 0;     // node s coded explicit (prefix 0), the right half's first node
  int64_t r_shift = 0;     // right-half offset = area offset - offs[s] + r_shift
  bool whole_fits = true;  // the whole page's jump table still within a page
  for (size_t i = 0; i < count; ++i) {
    const IndexNode n = decode_node(p, limit, offs[i], true);
    if (n.prefix > cur.size()) return false;
    cur.resize(n.prefix);
    cur.insert(cur.end(), n.data, n.data + n.length);
    const uint32_t rel = offs[i] - first;
    const uint32_t room = kBtreeHeaderSize + jump_node_size(0, n.prefix);
    if (whole_fits && whole.size + room > ps) whole_fits = false;
    if (whole_fits) whole.visit(rel, true, cur, n.prefix);
    if (i < s) {
      left_prefix += n.prefix;
      if (lj.size + room > ps) return false;
      lj.visit(rel, true, cur, n.prefix);
    } else if (i == s) {
      key_s.assign(cur.begin(), cur.end());
      recno_s = n.recno;
      const NodeFields f{NodeKind::Entry, n.recno, 0, 0, std::span<const uint8_t>(cur)};
      s_size = node_size(NodeLayout::Firebird, f, true, nullptr);
      r_shift = int64_t{s_size} - n.size;
    } else {
      right_prefix += n.prefix;
      if (rj.size + room > ps) return false;
      rj.visit(static_cast<uint32_t>(int64_t{offs[i]} - offs[s] + r_shift), true, cur, n.prefix);
    }
  }
  if (end_node.is_end_bucket()) right_prefix += end_node.prefix;

  // TreeWriter::store encodes the whole page first: if it fits, it is written unsplit.
  if (whole_fits && int64_t{whole.size} + limit - h.jump_size <= int64_t{ps}) return false;
  // The END_BUCKET copy of entry s on the left (its prefix against entry s - 1, as on the
  // page), and both halves' lengths: a half that does not fit is choose_split's business.
  const IndexNode ns = decode_node(p, limit, offs[s], true);
  const NodeFields ef{NodeKind::EndBucket, ns.recno, 0, ns.prefix,
                      std::span<const uint8_t>(key_s).subspan(ns.prefix)};
  const uint32_t eb_size = node_size(NodeLayout::Firebird, ef, true, nullptr);
  const uint64_t left_len = uint64_t{kBtreeHeaderSize} + lj.size + (offs[s] - first) + eb_size;
  const uint64_t right_len =
      uint64_t{kBtreeHeaderSize} + rj.size + s_size + (limit - offs[s] - ns.size);
  if (left_len > ps || right_len > ps || lj.count > 255 || rj.count > 255) return false;
  left_prefix += ns.prefix;

  // Lay both pages out (the jump tables are already in place).
  const uint32_t new_page = t.allocator_.allocate();
  const uint32_t old_right = h.sibling;
  lj.finish();
  rj.finish();
  {
    uint8_t* q = left + kBtreeHeaderSize + lj.size;
    std::memcpy(q, p + first, offs[s] - first);
    encode_node(NodeLayout::Firebird, ef, true, nullptr, q + (offs[s] - first));
    BtreeHeader lh = h;
    lh.sibling = new_page;
    close_half(left, lh, lj, left_prefix, left_len, ps);
  }
  {
    uint8_t* q = right + kBtreeHeaderSize + rj.size;
    const NodeFields f{NodeKind::Entry, recno_s, 0, 0, std::span<const uint8_t>(key_s)};
    encode_node(NodeLayout::Firebird, f, true, nullptr, q);
    std::memcpy(q + s_size, p + offs[s] + ns.size, limit - offs[s] - ns.size);
    BtreeHeader rh = h;
    rh.left_sibling = leaf;
    rh.sibling = old_right;
    close_half(right, rh, rj, right_prefix, right_len, ps);
  }
  // TreeWriter::split's order: the right page, then the left one and the old right
  // sibling's back pointer, then the separator.
  {
    WriteLatch w(t.pool_.create(new_page));
    std::memcpy(w.data(), right, ps);
  }
  {
    std::unique_lock lock(ref.latch());
    std::memcpy(ref.data(), left, ps);
    ref.mark_dirty();
    if (old_right != 0) {
      WriteLatch wr(t.pool_.pin(old_right));
      MutableBtreePage(wr.data()).set_left_sibling(new_page);
    }
  }
  send_separator_up(t, c, leaf, PageEntry{key_s, recno_s, new_page}, key, recno, false);
  ++c.middle_splits;
  return true;
}

}  // namespace pbtree
