// In-page search (node/page_search.h): jump table first, then the prefix trick within one
// jump area (Firebird btr.cpp find_area_start_point / find_node_start_point).
#include "node/page_search.h"

#include <fmt/format.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "node/jump_table.h"
#include "node/node_internal.h"
#include "node/node_quick.h"
#include "node/page_search_internal.h"

namespace pbtree {

namespace node_detail {

int compare_two_part(const uint8_t* a, uint32_t na, const uint8_t* b, uint32_t nb,
                     std::span<const uint8_t> key, bool descending, uint32_t& common) {
  const size_t ks = key.size();
  const size_t m = std::min<size_t>(na, ks);
  size_t i = 0;
  while (i < m && a[i] == key[i]) ++i;
  if (i < m) {
    common = static_cast<uint32_t>(i);
    return a[i] < key[i] ? -1 : 1;
  }
  if (i < na) {  // the search key ends inside the first part: the entry is longer
    common = static_cast<uint32_t>(ks);
    return prefix_order(na, ks, descending);
  }
  const size_t m2 = std::min<size_t>(nb, ks - na);
  size_t t = 0;
  while (t < m2 && b[t] == key[na + t]) ++t;
  common = static_cast<uint32_t>(na + t);
  if (t < m2) return b[t] < key[na + t] ? -1 : 1;
  return prefix_order(size_t{na} + nb, ks, descending);
}

}  // namespace node_detail

using node_detail::compare_two_part;

PageFind find_in_page(const uint8_t* page, uint32_t page_size, std::span<const uint8_t> key,
                      bool descending, std::optional<uint64_t> recno, FindMode mode) {
  const BtreeHeader h = check_btree_header(page, page_size);
  const bool leaf = h.level == 0;
  const uint32_t first = kBtreeHeaderSize + h.jump_size;
  const uint32_t limit = h.length;
  // True if a node comparing `c` to the key (and carrying `node_recno`) lies below the target.
  auto below = [&](int c, uint64_t node_recno) {
    if (c != 0) return c < 0;
    if (mode == FindMode::LowerBound) return recno.has_value() && node_recno < *recno;
    return !recno.has_value() || node_recno <= *recno;
  };

  uint32_t pos = first;
  uint32_t matched = 0;
  uint32_t prev = 0;
  bool have_prev = false;
  NodeContext ctx;              // of the node at `prev` (compact pages)
  NodeContext ctx_before_prev;  // the one `prev` itself is decoded with, if any
  bool have_ctx_before_prev = false;

  // Nodes are decoded by the unchecked fast path when they lie well inside btr_length.
  // Compact pages (try_decode_node declines them) decode with the previous node's context.
  auto node_at = [&](uint32_t off, const NodeContext* c) {
    IndexNode n;
    if (!try_decode_node(page, limit, off, leaf, n)) n = decode_node(page, limit, off, leaf, c);
    return n;
  };

  // find_area_start_point: the last jump target below the target. The jump key is rebuilt in
  // a stack buffer (a key is shorter than page_size / 4 <= 8192 bytes): no heap per visit.
  // Most jump nodes are decided by their jump key alone (a prefix of the target's key): only a
  // jump key that is a prefix of the search key needs the target node, so the search touches
  // the jump table's cache lines and not one line per jump target. The last target found
  // below is decoded after the loop (cand; prev_cand in case it is the END_BUCKET, which
  // fast_load may give a jump node and which the linear scan must reach by itself).
  struct Candidate {
    uint32_t offset = 0;
    uint32_t matched = 0;
    uint32_t jump_len = 0;
    uint32_t index = 0;
  };
  std::optional<Candidate> cand, prev_cand;
  uint8_t jump_key[8192];
  uint32_t jump_len = 0;
  const size_t ks = key.size();
  for (JumpWalk w(page); w.next();) {
    const JumpNode& j = w.node();
    const uint32_t i = w.index();
    if (j.prefix > jump_len) {
      corrupt_page(page, fmt::format("jump node {} has prefix {} beyond the previous jump key ({})",
                                     i, j.prefix, jump_len));
    }
    if (j.prefix + j.length > sizeof jump_key) {
      corrupt_page(page, fmt::format("jump node {} key of {} bytes exceeds {}", i,
                                     j.prefix + j.length, sizeof jump_key));
    }
    if (j.length != 0) std::memcpy(jump_key + j.prefix, j.data, j.length);
    jump_len = j.prefix + j.length;
    node_detail::check_jump_target(page, i, j.node_offset, first, limit);
    const size_t m = std::min<size_t>(jump_len, ks);
    size_t d = 0;
    while (d < m && jump_key[d] == key[d]) ++d;
    bool is_below;
    uint32_t common;
    if (d < m) {  // the jump key alone orders the target
      is_below = jump_key[d] < key[d];
      common = static_cast<uint32_t>(d);
    } else if (jump_len > ks) {  // the search key is a proper prefix of the target's key
      is_below = prefix_order(jump_len, ks, descending) < 0;
      common = static_cast<uint32_t>(ks);
    } else {
      IndexNode target = node_at(j.node_offset, nullptr);
      if (target.is_marker()) break;
      if (target.prefix != jump_len) {
        corrupt_page(page, fmt::format("jump node {} key length {} differs from node prefix {}", i,
                                       jump_len, target.prefix));
      }
      const int c =
          compare_two_part(jump_key, jump_len, target.data, target.length, key, descending, common);
      is_below = below(c, target.recno);
    }
    if (!is_below) break;
    prev_cand = cand;
    cand = Candidate{j.node_offset, common, jump_len, i};
  }
  for (const std::optional<Candidate>* c : {&cand, &prev_cand}) {
    if (!c->has_value()) continue;
    IndexNode target = node_at((*c)->offset, nullptr);
    if (target.is_marker()) continue;
    if (target.prefix != (*c)->jump_len) {
      corrupt_page(page, fmt::format("jump node {} key length {} differs from node prefix {}",
                                     (*c)->index, (*c)->jump_len, target.prefix));
    }
    prev = target.offset;
    have_prev = true;
    ctx = context_after(target);
    matched = (*c)->matched;
    pos = target.end();
    break;
  }

  if (!have_prev && !leaf && h.left_sibling == 0) {
    // Degenerate first node of the leftmost page of a non-leaf level: below everything.
    IndexNode n = node_at(pos, nullptr);
    if (!n.is_marker()) {
      prev = n.offset;
      have_prev = true;
      ctx = context_after(n);
      matched = 0;
      pos = n.end();
    }
  }

  node_detail::ScanStart st;
  st.pos = pos;
  st.prev = prev;
  st.have_prev = have_prev;
  st.ctx = ctx;
  st.ctx_before_prev = ctx_before_prev;
  st.have_ctx_before_prev = have_ctx_before_prev;
  st.matched = matched;
  return node_detail::scan_nodes(page, limit, leaf, key, descending, recno, mode, st);
}

namespace node_detail {

namespace {

// scan_nodes for one node layout (kCompact: the page's layout), so each loop holds one inline
// decoder.
template <bool kCompact>
PageFind scan_nodes_in(const uint8_t* page, uint32_t limit, bool leaf, std::span<const uint8_t> key,
                       bool descending, std::optional<uint64_t> recno, FindMode mode,
                       const ScanStart& st) {
  auto below = [&](int c, uint64_t node_recno) {
    if (c != 0) return c < 0;
    if (mode == FindMode::LowerBound) return recno.has_value() && node_recno < *recno;
    return !recno.has_value() || node_recno <= *recno;
  };
  auto node_at = [&](uint32_t off, const NodeContext* c) {
    IndexNode n;
    if constexpr (kCompact) {
      if (c != nullptr && try_decode_compact(page, limit, off, leaf, *c, n)) return n;
    } else {
      if (try_decode_node(page, limit, off, leaf, n)) return n;
    }
    return decode_node(page, limit, off, leaf, c);
  };
  uint32_t pos = st.pos;
  uint32_t prev = st.prev;
  bool have_prev = st.have_prev;
  NodeContext ctx = st.ctx;
  NodeContext ctx_before_prev = st.ctx_before_prev;
  bool have_ctx_before_prev = st.have_ctx_before_prev;
  uint32_t matched = st.matched;
  bool passed = st.prev_exact;  // a node was passed: `matched` and `ctx` describe it exactly
  // The answer at node n: the loop keeps its state in locals and writes the result once.
  auto answer = [&](const IndexNode& n, uint32_t found_matched, bool at_marker,
                    bool beyond_end_bucket) {
    PageFind result;
    result.prev_known = passed;
    result.prev_matched = matched;
    result.offset = n.offset;
    result.prev_offset = have_prev ? prev : 0;
    result.has_offset_ctx = have_prev;
    result.offset_ctx = ctx;
    result.has_prev_ctx = have_prev && have_ctx_before_prev;
    result.prev_ctx = ctx_before_prev;
    result.at_marker = at_marker;
    result.beyond_end_bucket = beyond_end_bucket;
    result.matched = found_matched;
    return result;
  };
  // find_node_start_point: linear scan with the prefix trick.
  for (;;) {
    IndexNode n = node_at(pos, have_prev ? &ctx : nullptr);
    if (n.is_end_level()) return answer(n, matched, true, false);
    bool is_below;
    uint32_t new_matched = matched;
    if (have_prev && n.prefix < matched) {
      is_below = false;
      new_matched = n.prefix;
    } else if (have_prev && n.prefix > matched) {
      is_below = true;
    } else {
      if (!have_prev && n.prefix != 0) {
        corrupt_page(page,
                     fmt::format("first node at offset {} has prefix {}", n.offset, n.prefix));
      }
      size_t rest = key.size() - matched;
      size_t m = std::min<size_t>(rest, n.length);
      size_t i = 0;
      while (i < m && n.data[i] == key[matched + i]) ++i;
      new_matched = matched + static_cast<uint32_t>(i);
      int c;
      if (i < m) {
        c = n.data[i] < key[matched + i] ? -1 : 1;
      } else {
        c = prefix_order(n.length, rest, descending);
      }
      is_below = below(c, n.recno);
    }
    if (!is_below) return answer(n, new_matched, n.is_end_bucket(), false);
    if (n.is_end_bucket()) return answer(n, new_matched, true, true);
    matched = new_matched;
    passed = true;
    ctx_before_prev = ctx;
    have_ctx_before_prev = have_prev;
    prev = n.offset;
    have_prev = true;
    ctx = context_after(n);
    pos = n.end();
  }
}

}  // namespace

PageFind scan_nodes(const uint8_t* page, uint32_t limit, bool leaf, std::span<const uint8_t> key,
                    bool descending, std::optional<uint64_t> recno, FindMode mode,
                    const ScanStart& st) {
  if (page_layout(page) == NodeLayout::Compact) {
    return scan_nodes_in<true>(page, limit, leaf, key, descending, recno, mode, st);
  }
  return scan_nodes_in<false>(page, limit, leaf, key, descending, recno, mode, st);
}

}  // namespace node_detail

}  // namespace pbtree
