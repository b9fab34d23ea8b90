// The writer's maintenance of the per-frame page directory (node/page_directory.h): group
// starts moved across an in-place insert instead of a rebuild, the group keys handed to the
// jump-table regeneration (node/leaf_edit.cc), and the check against a rebuild from scratch.
#include <pbtree/errors.h>

#include <algorithm>
#include <cstring>

#include "node/btree_page.h"
#include "node/node.h"
#include "node/page_directory.h"

namespace pbtree {

size_t PageDirectory::first_group_at(uint32_t pos) const {
  return static_cast<size_t>(
      std::lower_bound(groups_.begin(), groups_.end(), pos,
                       [](const Group& g, uint32_t p) { return g.offset < p; }) -
      groups_.begin());
}

bool PageDirectory::note_insert(const uint8_t* page, uint32_t pos, uint32_t n_size, int64_t delta,
                                int64_t shift, std::span<const uint8_t> key, uint64_t recno,
                                uint64_t version) {
  if (!usable_ || !leaf_ || groups_.empty() || groups_[0].offset == pos) return false;
  // One entry before: a rebuild would take the page prefix from the two nodes (n <= 1 gives 0).
  if (entries_ <= 1 || entries_ >= 2 * built_entries_) return false;
  // The new node lies between two keys that start with the prefix, unless it is the last.
  if (key.size() < prefix_.size() ||
      (!prefix_.empty() && std::memcmp(key.data(), prefix_.data(), prefix_.size()) != 0)) {
    return false;
  }
  const size_t ng = groups_.size();
  // Groups before `pos` move only with the node area (an append at the end moves none).
  for (size_t g = shift == 0 ? first_group_at(pos) : 0; g < ng; ++g) {
    Group& gr = groups_[g];
    int64_t off = gr.offset;
    if (off < pos) {
      off += shift;
    } else if (off == pos) {  // x starts a group: it stays the start, after the new node
      off = int64_t{pos} + shift + n_size;
      gr.prev_len = static_cast<uint16_t>(key.size());
      if (compact_) prev_recno_[g] = recno;
    } else {
      off += shift + delta;
    }
    if (off <= 0 || off > 0xFFFF) return false;
    gr.offset = static_cast<uint16_t>(off);
  }
  ++entries_;
  first_ = static_cast<uint16_t>(BtreePage(page).first_node());
  limit_ = BtreePage(page).length();
  version_.store(version, std::memory_order_release);
  return true;
}

bool PageDirectory::note_remove(const uint8_t* page, uint32_t pos, uint32_t next, int64_t delta,
                                int64_t shift, NodeContext prev, uint64_t version) {
  if (!usable_ || !leaf_ || groups_.empty() || groups_[0].offset == pos || entries_ <= 2 ||
      next == 0) {
    return false;
  }
  const size_t ng = groups_.size();
  for (size_t g = shift == 0 ? first_group_at(pos) : 0; g < ng; ++g) {
    Group& gr = groups_[g];
    int64_t off = gr.offset;
    if (off == pos) return false;  // x starts a group
    if (off < pos) {
      off += shift;
    } else if (off == next) {  // y starts a group: now where x was, after x's previous node
      off = int64_t{pos} + shift;
      gr.prev_len = static_cast<uint16_t>(prev.key_length);
      if (compact_) prev_recno_[g] = prev.recno;
    } else {
      off += shift + delta;
    }
    if (off <= 0 || off > 0xFFFF) return false;
    gr.offset = static_cast<uint16_t>(off);
  }
  --entries_;
  first_ = static_cast<uint16_t>(BtreePage(page).first_node());
  limit_ = BtreePage(page).length();
  version_.store(version, std::memory_order_release);
  return true;
}

uint32_t PageDirectory::group_key(size_t g, uint8_t* out) const {
  const Group& gr = groups_[g];
  const uint32_t p = static_cast<uint32_t>(prefix_.size());
  const uint32_t s = gr.key_len - p;
  if (p != 0) std::memcpy(out, prefix_.data(), p);
  const uint64_t v = __builtin_bswap64(heads_[g]);
  uint8_t hb[8];
  std::memcpy(hb, &v, 8);
  std::memcpy(out + p, hb, std::min<uint32_t>(s, 8));
  if (s > 8) std::memcpy(out + p + 8, keys_.data() + gr.key_off, s - 8);
  return gr.key_len;
}

bool PageDirectory::rebuilt_equal(const uint8_t* page, uint32_t page_size) const {
  try {
    const BtreeHeader h = check_btree_header(page, page_size);
    if (!usable_) return true;  // nothing kept: searches take find_in_page
    if (leaf_ != (h.level == 0) || compact_ != (h.layout == NodeLayout::Compact)) return false;
    const uint32_t first = kBtreeHeaderSize + h.jump_size;
    if (first_ != first || limit_ != h.length) return false;
    // Pass 1 as PageDirectory::build: entries and the page prefix.
    std::vector<uint8_t> key;
    NodeContext ctx;
    uint32_t n = 0, common = UINT32_MAX, pos = first;
    std::vector<uint8_t> first_key;
    for (;;) {
      IndexNode nd = decode_node(page, h.length, pos, leaf_, n == 0 ? nullptr : &ctx);
      if (nd.is_marker()) break;
      if (nd.prefix > key.size()) return false;
      key.resize(nd.prefix);
      key.insert(key.end(), nd.data, nd.data + nd.length);
      if (n == 0) first_key = key;
      if (n > 0) common = std::min(common, nd.prefix);
      ++n;
      ctx = context_after(nd);
      pos = nd.end();
    }
    if (n <= 1) common = 0;
    const size_t p = std::min<size_t>(common, first_key.size());
    if (prefix_.size() != p || !std::equal(prefix_.begin(), prefix_.end(), first_key.begin())) {
      return false;
    }
    if (n != entries_) return false;
    // Pass 2: each group as a build starting a group at that node would fill it.
    size_t g = 0;
    key.clear();
    pos = first;
    std::vector<uint8_t> gk(page_size);
    for (uint32_t i = 0; i < n; ++i) {
      IndexNode nd = decode_node(page, h.length, pos, leaf_, i == 0 ? nullptr : &ctx);
      key.resize(nd.prefix);
      key.insert(key.end(), nd.data, nd.data + nd.length);
      if (g < groups_.size() && groups_[g].offset == pos) {
        const Group& gr = groups_[g];
        const size_t s = key.size() - p;
        uint8_t hb[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (s != 0) std::memcpy(hb, key.data() + p, std::min<size_t>(s, 8));
        uint64_t v;
        std::memcpy(&v, hb, 8);
        if (heads_[g] != __builtin_bswap64(v) || gr.key_len != key.size() ||
            gr.prev_len != (i == 0 ? 0 : ctx.key_length) || (gr.key_off == kExact) != (s <= 8) ||
            (compact_ && prev_recno_[g] != (i == 0 ? 0 : ctx.recno))) {
          return false;
        }
        if (group_key(g, gk.data()) != key.size() ||
            !std::equal(key.begin(), key.end(), gk.begin())) {
          return false;
        }
        ++g;
      } else if (i == 0) {
        return false;  // group 0 starts at the first node
      }
      ctx = context_after(nd);
      pos = nd.end();
    }
    return g == groups_.size();
  } catch (const CorruptError&) {
    return false;
  }
}

PageDirectory* writer_directory(const PageRef& ref) {
  return const_cast<PageDirectory*>(current_directory(ref));
}

}  // namespace pbtree
