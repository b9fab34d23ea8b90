// Compact node codec (pbtree's own layout, docs/FORMAT.md §2.9; byte layout at the top of
// node/node.h), the layout dispatch of decode_node, and its walk from the nearest jump target.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "node/jump_table.h"
#include "node/node.h"
#include "node/node_internal.h"

namespace pbtree {

using node_detail::get_varint;

// ---- Compact layout (docs/FORMAT.md §2.9, byte layout at the top of btree_page.h) ----

namespace {

constexpr uint64_t kMaxRecno = (uint64_t{1} << 40) - 1;
constexpr uint64_t kRelativeLimit = uint64_t{1} << 28;  // D of shapes 0..2: V + 3 bytes
constexpr uint8_t kCompactEndBucket = 0xF2;
constexpr uint8_t kCompactBigEntry = 0xF0;

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t u) {
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

// Bytes after V for D: 0..3.
uint32_t d_bytes(uint64_t d) {
  if (d < 16) return 0;
  if (d < (uint64_t{1} << 12)) return 1;
  if (d < (uint64_t{1} << 20)) return 2;
  return 3;
}

// The shape chosen for `node` after `prev` (3 = explicit) and its D.
struct CompactPlan {
  uint8_t shape = 3;
  uint64_t d = 0;
};

CompactPlan plan_compact(const NodeFields& node, const NodeContext* prev) {
  CompactPlan p;
  p.d = node.recno;
  if (prev == nullptr || node.kind != NodeKind::Entry || node.prefix > prev->key_length) return p;
  uint32_t drop = prev->key_length - node.prefix;
  size_t len = node.data.size();
  uint8_t shape;
  if (drop == 0 && len == 0) {
    shape = 0;
  } else if (drop == 1 && len == 1) {
    shape = 1;
  } else if (drop == 2 && len == 2) {
    shape = 2;
  } else {
    return p;
  }
  uint64_t d;
  if (shape == 0) {
    if (node.recno < prev->recno) return p;
    d = node.recno - prev->recno;
  } else {
    d = zigzag(static_cast<int64_t>(node.recno) - static_cast<int64_t>(prev->recno));
  }
  if (d >= kRelativeLimit) return p;
  p.shape = shape;
  p.d = d;
  return p;
}

uint32_t nibble_extra(uint32_t value) {
  return value >= 15 ? varint_size(value) : 0;
}

}  // namespace

uint32_t compact_node_size(const NodeFields& node, bool leaf, const NodeContext* prev) {
  if (node.kind == NodeKind::EndLevel) return 1;
  CompactPlan p = plan_compact(node, prev);
  uint32_t size = 1;
  if (p.shape == 3) {
    size += 1 + nibble_extra(node.prefix) + nibble_extra(static_cast<uint32_t>(node.data.size()));
    size += (node.kind == NodeKind::EndBucket || p.d >= (uint64_t{1} << 20)) ? 5 : d_bytes(p.d);
  } else {
    size += d_bytes(p.d);
  }
  if (!leaf) size += varint_size(node.page_number);
  return size + static_cast<uint32_t>(node.data.size());
}

uint32_t encode_compact_node(const NodeFields& node, bool leaf, const NodeContext* prev,
                             uint8_t* out) {
  if (node.prefix > kMaxNodeKeyField || node.data.size() > kMaxNodeKeyField) {
    throw std::invalid_argument(fmt::format("node prefix {} / length {} exceeds {}", node.prefix,
                                            node.data.size(), kMaxNodeKeyField));
  }
  if (node.recno > kMaxRecno) {
    throw std::invalid_argument(fmt::format("record number {} exceeds 40 bits", node.recno));
  }
  if (node.kind == NodeKind::EndLevel) {
    out[0] = kCompactEndLevel;
    return 1;
  }
  CompactPlan p = plan_compact(node, prev);
  uint32_t n = 1;
  uint32_t nbytes;
  if (p.shape == 3) {
    uint32_t length = static_cast<uint32_t>(node.data.size());
    bool big = node.kind == NodeKind::EndBucket || p.d >= (uint64_t{1} << 20);
    if (big) {
      out[0] = node.kind == NodeKind::EndBucket ? kCompactEndBucket : kCompactBigEntry;
      nbytes = 5;
    } else {
      nbytes = d_bytes(p.d);
      out[0] = static_cast<uint8_t>(0xC0 | (nbytes << 4) | (p.d & 0x0F));
    }
    out[n++] = static_cast<uint8_t>((std::min(node.prefix, 15u) << 4) | std::min(length, 15u));
    if (node.prefix >= 15) n += put_varint(node.prefix, out + n);
    if (length >= 15) n += put_varint(length, out + n);
    uint64_t rest = big ? p.d : p.d >> 4;
    for (uint32_t i = 0; i < nbytes; ++i) out[n++] = static_cast<uint8_t>(rest >> (8 * i));
  } else {
    nbytes = d_bytes(p.d);
    out[0] = static_cast<uint8_t>((p.shape << 6) | (nbytes << 4) | (p.d & 0x0F));
    uint64_t rest = p.d >> 4;
    for (uint32_t i = 0; i < nbytes; ++i) out[n++] = static_cast<uint8_t>(rest >> (8 * i));
  }
  if (!leaf) n += put_varint(node.page_number, out + n);
  if (!node.data.empty()) std::memcpy(out + n, node.data.data(), node.data.size());
  return n + static_cast<uint32_t>(node.data.size());
}

IndexNode decode_compact_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                              const NodeContext* prev) {
  static constexpr const char* kWhat = "node";
  if (offset >= limit) {
    corrupt_page(page, fmt::format("node at offset {} lies at or beyond byte {}", offset, limit));
  }
  IndexNode node;
  node.offset = offset;
  const uint8_t h = page[offset];
  if (h == kCompactEndLevel) {
    node.flag = NodeFlag::EndLevel;
    node.size = 1;
    node.data = page + offset + 1;
    return node;
  }
  const uint8_t shape = h >> 6;
  const uint32_t nfield = (h >> 4) & 3;
  uint32_t pos = offset + 1;
  uint32_t nbytes = nfield;
  bool big = false;
  node.flag = NodeFlag::Normal;
  if (shape == 3) {
    if (nfield == 3) {
      if (h == kCompactEndBucket) {
        node.flag = NodeFlag::EndBucket;
      } else if (h != kCompactBigEntry) {
        corrupt_page(page, fmt::format("node at offset {}: reserved code {:#04x}", offset, h));
      }
      big = true;
      nbytes = 5;
    }
    if (pos >= limit) {
      corrupt_page(page, fmt::format("node at offset {}: prefix/length byte runs past byte {}",
                                     offset, limit));
    }
    uint8_t pl = page[pos++];
    node.prefix = pl >> 4;
    node.length = pl & 0x0F;
    if (node.prefix == 15) {
      node.prefix = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "prefix", offset, kWhat));
    }
    if (node.length == 15) {
      node.length = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "length", offset, kWhat));
    }
  } else {
    node.absolute = false;
    if (prev == nullptr) {
      corrupt_page(page, fmt::format("node at offset {}: relative node (code {:#04x}) without a "
                                     "predecessor (first node or jump target)",
                                     offset, h));
    }
    uint32_t drop = shape;
    if (drop > prev->key_length) {
      corrupt_page(page, fmt::format("node at offset {}: drops {} bytes of a {}-byte previous key",
                                     offset, drop, prev->key_length));
    }
    node.prefix = prev->key_length - drop;
    node.length = drop;
  }
  if (uint64_t{pos} + nbytes > limit) {
    corrupt_page(page,
                 fmt::format("node at offset {}: record number runs past byte {}", offset, limit));
  }
  uint64_t rest = 0;
  for (uint32_t i = 0; i < nbytes; ++i) rest |= uint64_t{page[pos + i]} << (8 * i);
  pos += nbytes;
  uint64_t d = big ? rest : (rest << 4) | (h & 0x0F);
  if (shape == 3) {
    node.recno = d;
  } else if (shape == 0) {
    node.recno = prev->recno + d;
  } else {
    int64_t r = static_cast<int64_t>(prev->recno) + unzigzag(d);
    if (r < 0) {
      corrupt_page(page, fmt::format("node at offset {}: record number delta below zero", offset));
    }
    node.recno = static_cast<uint64_t>(r);
  }
  if (node.recno > kMaxRecno) {
    corrupt_page(page, fmt::format("node at offset {}: record number {} exceeds 40 bits", offset,
                                   node.recno));
  }
  if (!leaf) {
    uint64_t p = get_varint(page, limit, pos, 5, "page number", offset, kWhat);
    if (p > 0xFFFFFFFFu) {
      corrupt_page(page,
                   fmt::format("node at offset {}: page number {} exceeds 32 bits", offset, p));
    }
    node.page_number = static_cast<uint32_t>(p);
  }
  if (uint64_t{pos} + node.length > limit) {
    corrupt_page(page, fmt::format("node at offset {}: {} data bytes run past byte {}", offset,
                                   node.length, limit));
  }
  node.data = page + pos;
  node.size = pos + node.length - offset;
  return node;
}

// Decodes the node at `offset` without its predecessor: on compact pages, walks from the last
// jump target (or the first node) at or before `offset`.
static IndexNode decode_node_at(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf);

IndexNode decode_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                      const NodeContext* prev) {
  if (page_layout(page) == NodeLayout::Compact) {
    if (prev == nullptr) return decode_node_at(page, limit, offset, leaf);
    return decode_compact_node(page, limit, offset, leaf, prev);
  }
  return node_detail::decode_firebird_node(page, limit, offset, leaf);
}

static IndexNode decode_node_at(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf) {
  if (page_layout(page) != NodeLayout::Compact) {
    return node_detail::decode_firebird_node(page, limit, offset, leaf);
  }
  JumpWalk w(page);
  uint32_t start = w.first_node();
  while (w.next()) {
    if (w.node().node_offset > offset) break;
    if (w.node().node_offset >= w.first_node()) start = w.node().node_offset;
  }
  IndexNode n = decode_compact_node(page, limit, start, leaf, nullptr);
  uint32_t steps = 0;
  while (n.offset < offset) {
    if (n.is_marker() || ++steps > limit) {
      corrupt_page(page, fmt::format("offset {} is not a node start", offset));
    }
    NodeContext ctx = context_after(n);
    n = decode_compact_node(page, limit, n.end(), leaf, &ctx);
  }
  if (n.offset != offset) corrupt_page(page, fmt::format("offset {} is not a node start", offset));
  return n;
}

}  // namespace pbtree
