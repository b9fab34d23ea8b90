// Firebird ODS 12 B-tree page codec: header, nodes, jump nodes, whole pages and the in-page
// search. Byte layout at the top of page/btree_page.h.
#include "page/btree_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace pbtree {

namespace {

[[noreturn]] void corrupt(const uint8_t* page, const std::string& what) {
  throw CorruptError(page_error(page, what));
}

// Reads a varint of at most `max_bytes` bytes at `pos`, never at or beyond `limit`.
uint64_t get_varint(const uint8_t* page, uint32_t limit, uint32_t& pos, int max_bytes,
                    const char* field, uint32_t node_offset, const char* what) {
  uint64_t value = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (pos >= limit) {
      corrupt(page, fmt::format("{} at offset {}: {} runs past byte {}", what, node_offset, field,
                                limit));
    }
    uint8_t b = page[pos++];
    value |= uint64_t{b & 0x7Fu} << (7 * i);
    if ((b & 0x80) == 0) return value;
  }
  corrupt(page, fmt::format("{} at offset {}: {} longer than {} bytes", what, node_offset, field,
                            max_bytes));
}

// A jump node's target must lie after the page's first node (at `first`) and before
// btr_length: Firebird's fast_load never makes a jump node for the first node, and a search
// starting there gains nothing. One check, one message, for decode_jump_table (verify) and
// find_in_page (every search).
void check_jump_target(const uint8_t* page, uint32_t index, uint32_t target, uint32_t first,
                       uint32_t limit) {
  if (target == first) {
    corrupt(page, fmt::format("jump node {} points at the first node (offset {})", index, target));
  }
  if (target < first || target >= limit) {
    corrupt(page, fmt::format("jump node {} points at offset {} outside ({}, {})", index, target,
                              first, limit));
  }
}

}  // namespace

std::string page_error(const uint8_t* page, const std::string& what) {
  return fmt::format("page {} ({}): {}", get_u32(page + 12), page_type_name(page[0]), what);
}

BtreeHeader read_btree_header(const uint8_t* page) {
  BtreeHeader h;
  h.sibling = get_u32(page + 16);
  h.left_sibling = get_u32(page + 20);
  h.prefix_total = get_u32(page + 24);
  h.relation = get_u16(page + 28);
  h.length = get_u16(page + 30);
  h.index_id = page[32];
  h.level = page[33];
  h.jump_interval = get_u16(page + 34);
  h.jump_size = get_u16(page + 36);
  h.jump_count = page[38];
  h.layout = page_layout(page);
  return h;
}

void write_btree_header(uint8_t* page, const BtreeHeader& h) {
  page[0] = static_cast<uint8_t>(PageType::Btree);
  page[1] = h.layout == NodeLayout::Compact ? kPageCompact : 0;
  page[2] = 0;
  page[3] = 0;
  put_u32(page + 16, h.sibling);
  put_u32(page + 20, h.left_sibling);
  put_u32(page + 24, h.prefix_total);
  put_u16(page + 28, h.relation);
  put_u16(page + 30, h.length);
  page[32] = h.index_id;
  page[33] = h.level;
  put_u16(page + 34, h.jump_interval);
  put_u16(page + 36, h.jump_size);
  page[38] = h.jump_count;
}

NodeFlag node_flag(const NodeFields& node) {
  if (node.kind == NodeKind::EndLevel) return NodeFlag::EndLevel;
  if (node.kind == NodeKind::EndBucket) return NodeFlag::EndBucket;
  if (node.data.empty() && node.prefix == 0) return NodeFlag::ZeroPrefixZeroLength;
  if (node.data.empty()) return NodeFlag::ZeroLength;
  if (node.data.size() == 1) return NodeFlag::OneLength;
  return NodeFlag::Normal;
}

uint32_t node_size(const NodeFields& node, bool leaf) {
  NodeFlag flag = node_flag(node);
  if (flag == NodeFlag::EndLevel) return 1;
  uint32_t size = 1 + varint_size(node.recno >> 5);
  if (!leaf) size += varint_size(node.page_number);
  if (flag != NodeFlag::ZeroPrefixZeroLength) size += varint_size(node.prefix);
  if (flag == NodeFlag::Normal || flag == NodeFlag::EndBucket) {
    size += varint_size(node.data.size());
  }
  return size + static_cast<uint32_t>(node.data.size());
}

uint32_t encode_node(const NodeFields& node, bool leaf, uint8_t* out) {
  if (node.prefix > kMaxNodeKeyField || node.data.size() > kMaxNodeKeyField) {
    throw std::invalid_argument(fmt::format("node prefix {} / length {} exceeds {}", node.prefix,
                                            node.data.size(), kMaxNodeKeyField));
  }
  if (node.recno > (uint64_t{1} << 40) - 1) {
    throw std::invalid_argument(fmt::format("record number {} exceeds 40 bits", node.recno));
  }
  NodeFlag flag = node_flag(node);
  uint8_t f = static_cast<uint8_t>(flag) << 5;
  if (flag == NodeFlag::EndLevel) {
    out[0] = f;
    return 1;
  }
  uint32_t n = 0;
  out[n++] = f | static_cast<uint8_t>(node.recno & 0x1F);
  n += put_varint(node.recno >> 5, out + n);
  if (!leaf) n += put_varint(node.page_number, out + n);
  if (flag != NodeFlag::ZeroPrefixZeroLength) n += put_varint(node.prefix, out + n);
  if (flag == NodeFlag::Normal || flag == NodeFlag::EndBucket) {
    n += put_varint(node.data.size(), out + n);
  }
  if (!node.data.empty()) std::memcpy(out + n, node.data.data(), node.data.size());
  return n + static_cast<uint32_t>(node.data.size());
}

namespace {

// Compares the key a[0, na) + b[0, nb) with `key` in index order (compare_index_keys);
// `common` gets the bytes they share.
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
    return descending ? -1 : 1;
  }
  const size_t m2 = std::min<size_t>(nb, ks - na);
  size_t t = 0;
  while (t < m2 && b[t] == key[na + t]) ++t;
  common = static_cast<uint32_t>(na + t);
  if (t < m2) return b[t] < key[na + t] ? -1 : 1;
  const size_t total = size_t{na} + nb;
  if (total == ks) return 0;
  if (total < ks) return descending ? 1 : -1;
  return descending ? -1 : 1;
}

IndexNode decode_firebird_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf) {
  static constexpr const char* kWhat = "node";
  {
    IndexNode quick;
    if (try_decode_node(page, limit, offset, leaf, quick)) return quick;
  }
  if (offset >= limit) {
    corrupt(page, fmt::format("node at offset {} lies at or beyond byte {}", offset, limit));
  }
  IndexNode node;
  node.offset = offset;
  uint8_t b = page[offset];
  uint8_t flag = b >> 5;
  if (flag > 5) corrupt(page, fmt::format("node at offset {}: reserved flag {}", offset, flag));
  node.flag = static_cast<NodeFlag>(flag);
  if (node.flag == NodeFlag::EndLevel) {
    node.size = 1;
    node.data = page + offset + 1;
    return node;
  }
  uint32_t pos = offset + 1;
  uint64_t rest = get_varint(page, limit, pos, 5, "record number", offset, kWhat);
  node.recno = (rest << 5) | (b & 0x1F);
  if (!leaf) {
    uint64_t p = get_varint(page, limit, pos, 5, "page number", offset, kWhat);
    if (p > 0xFFFFFFFFu) {
      corrupt(page, fmt::format("node at offset {}: page number {} exceeds 32 bits", offset, p));
    }
    node.page_number = static_cast<uint32_t>(p);
  }
  if (node.flag != NodeFlag::ZeroPrefixZeroLength) {
    node.prefix = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "prefix", offset, kWhat));
  }
  switch (node.flag) {
    case NodeFlag::Normal:
    case NodeFlag::EndBucket:
      node.length = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "length", offset, kWhat));
      break;
    case NodeFlag::OneLength:
      node.length = 1;
      break;
    default:
      node.length = 0;
      break;
  }
  if (uint64_t{pos} + node.length > limit) {
    corrupt(page, fmt::format("node at offset {}: {} data bytes run past byte {}", offset,
                              node.length, limit));
  }
  node.data = page + pos;
  node.size = pos + node.length - offset;
  return node;
}

}  // namespace

IndexNode decode_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf) {
  if (page_layout(page) == NodeLayout::Compact) return decode_node_at(page, limit, offset, leaf);
  return decode_firebird_node(page, limit, offset, leaf);
}

// ---- Compact layout (docs/FORMAT.md §2.9, byte layout at the top of btree_page.h) ----

namespace {

constexpr uint64_t kMaxRecno = (uint64_t{1} << 40) - 1;
constexpr uint64_t kRelativeLimit = uint64_t{1} << 28;  // D of shapes 0..2: V + 3 bytes
constexpr uint8_t kCompactEndLevel = 0xF1;
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
    corrupt(page, fmt::format("node at offset {} lies at or beyond byte {}", offset, limit));
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
        corrupt(page, fmt::format("node at offset {}: reserved code {:#04x}", offset, h));
      }
      big = true;
      nbytes = 5;
    }
    if (pos >= limit) {
      corrupt(page, fmt::format("node at offset {}: prefix/length byte runs past byte {}", offset,
                                limit));
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
      corrupt(page, fmt::format("node at offset {}: relative node (code {:#04x}) without a "
                                "predecessor (first node or jump target)",
                                offset, h));
    }
    uint32_t drop = shape;
    if (drop > prev->key_length) {
      corrupt(page, fmt::format("node at offset {}: drops {} bytes of a {}-byte previous key",
                                offset, drop, prev->key_length));
    }
    node.prefix = prev->key_length - drop;
    node.length = drop;
  }
  if (uint64_t{pos} + nbytes > limit) {
    corrupt(page, fmt::format("node at offset {}: record number runs past byte {}", offset, limit));
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
      corrupt(page, fmt::format("node at offset {}: record number delta below zero", offset));
    }
    node.recno = static_cast<uint64_t>(r);
  }
  if (node.recno > kMaxRecno) {
    corrupt(page,
            fmt::format("node at offset {}: record number {} exceeds 40 bits", offset, node.recno));
  }
  if (!leaf) {
    uint64_t p = get_varint(page, limit, pos, 5, "page number", offset, kWhat);
    if (p > 0xFFFFFFFFu) {
      corrupt(page, fmt::format("node at offset {}: page number {} exceeds 32 bits", offset, p));
    }
    node.page_number = static_cast<uint32_t>(p);
  }
  if (uint64_t{pos} + node.length > limit) {
    corrupt(page, fmt::format("node at offset {}: {} data bytes run past byte {}", offset,
                              node.length, limit));
  }
  node.data = page + pos;
  node.size = pos + node.length - offset;
  return node;
}

IndexNode decode_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                      const NodeContext* prev) {
  if (page_layout(page) == NodeLayout::Compact) {
    return decode_compact_node(page, limit, offset, leaf, prev);
  }
  return decode_firebird_node(page, limit, offset, leaf);
}

IndexNode decode_node_at(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf) {
  if (page_layout(page) != NodeLayout::Compact) {
    return decode_firebird_node(page, limit, offset, leaf);
  }
  const uint32_t first = kBtreeHeaderSize + get_u16(page + 36);
  uint32_t start = first;
  uint32_t jpos = kBtreeHeaderSize;
  for (uint32_t i = 0; i < page[38]; ++i) {
    JumpNode j = decode_jump_node(page, first, jpos);
    jpos += j.size;
    if (j.node_offset > offset) break;
    if (j.node_offset >= first) start = j.node_offset;
  }
  IndexNode n = decode_compact_node(page, limit, start, leaf, nullptr);
  uint32_t steps = 0;
  while (n.offset < offset) {
    if (n.is_marker() || ++steps > limit) {
      corrupt(page, fmt::format("offset {} is not a node start", offset));
    }
    NodeContext ctx = context_after(n);
    n = decode_compact_node(page, limit, n.end(), leaf, &ctx);
  }
  if (n.offset != offset) corrupt(page, fmt::format("offset {} is not a node start", offset));
  return n;
}

uint32_t jump_node_size(uint32_t prefix, uint32_t length) {
  return varint_size(prefix) + varint_size(length) + 2 + length;
}

uint32_t encode_jump_node(uint32_t prefix, std::span<const uint8_t> data, uint16_t node_offset,
                          uint8_t* out) {
  if (prefix > kMaxNodeKeyField || data.size() > kMaxNodeKeyField) {
    throw std::invalid_argument("jump node prefix or length exceeds 14 bits");
  }
  uint32_t n = put_varint(prefix, out);
  n += put_varint(data.size(), out + n);
  put_u16(out + n, node_offset);
  n += 2;
  if (!data.empty()) std::memcpy(out + n, data.data(), data.size());
  return n + static_cast<uint32_t>(data.size());
}

JumpNode decode_jump_node(const uint8_t* page, uint32_t limit, uint32_t offset) {
  static constexpr const char* kWhat = "jump node";
  JumpNode j;
  j.offset = offset;
  uint32_t pos = offset;
  j.prefix = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "prefix", offset, kWhat));
  j.length = static_cast<uint32_t>(get_varint(page, limit, pos, 2, "length", offset, kWhat));
  if (uint64_t{pos} + 2 + j.length > limit) {
    corrupt(page, fmt::format("jump node at offset {} runs past byte {}", offset, limit));
  }
  j.node_offset = get_u16(page + pos);
  pos += 2;
  j.data = page + pos;
  j.size = pos + j.length - offset;
  return j;
}

BtreeHeader check_btree_header(const uint8_t* page, uint32_t page_size) {
  if (page[0] != static_cast<uint8_t>(PageType::Btree)) {
    corrupt(page, "not a b-tree page");
  }
  BtreeHeader h = read_btree_header(page);
  if (h.level >= kMaxLevels)
    corrupt(page, fmt::format("level {} exceeds {}", h.level, kMaxLevels - 1));
  uint32_t first = kBtreeHeaderSize + h.jump_size;
  if (h.length <= first || h.length > page_size) {
    corrupt(page, fmt::format("btr_length {} outside [{}, {}] (jump size {})", h.length, first + 1,
                              page_size, h.jump_size));
  }
  return h;
}

std::vector<JumpEntry> decode_jump_table(const uint8_t* page, uint32_t page_size) {
  BtreeHeader h = check_btree_header(page, page_size);
  uint32_t first = kBtreeHeaderSize + h.jump_size;
  std::vector<JumpEntry> out;
  out.reserve(h.jump_count);
  std::vector<uint8_t> key;
  uint32_t pos = kBtreeHeaderSize;
  for (uint32_t i = 0; i < h.jump_count; ++i) {
    JumpNode j = decode_jump_node(page, first, pos);
    if (i == 0 && j.prefix != 0) corrupt(page, "first jump node has a prefix");
    if (j.prefix > key.size()) {
      corrupt(page, fmt::format("jump node {} has prefix {} beyond the previous jump key ({})", i,
                                j.prefix, key.size()));
    }
    check_jump_target(page, i, j.node_offset, first, h.length);
    key.resize(j.prefix);
    key.insert(key.end(), j.data, j.data + j.length);
    out.push_back(JumpEntry{key, j.node_offset});
    pos += j.size;
  }
  return out;
}

uint16_t jump_area_size(size_t max_key_length, bool descending) {
  size_t k = (max_key_length + (descending ? 0 : 1) + 7) / 8 * 8;
  return static_cast<uint16_t>(512 + 16 * static_cast<size_t>(std::sqrt(static_cast<double>(k))));
}

BtreePageImage decode_page(const uint8_t* page, uint32_t page_size) {
  BtreePageImage image;
  image.header = check_btree_header(page, page_size);
  const BtreeHeader& h = image.header;
  std::vector<JumpEntry> jumps = decode_jump_table(page, page_size);
  bool leaf = h.level == 0;
  uint32_t pos = kBtreeHeaderSize + h.jump_size;
  std::vector<uint8_t> key;
  size_t next_jump = 0;
  NodeContext ctx;
  bool have_ctx = false;
  for (;;) {
    IndexNode n = decode_node(page, h.length, pos, leaf, have_ctx ? &ctx : nullptr);
    ctx = context_after(n);
    have_ctx = true;
    if (next_jump < jumps.size() && jumps[next_jump].node_offset < n.offset) {
      corrupt(page, fmt::format("jump node {} points at offset {}, not at a node start", next_jump,
                                jumps[next_jump].node_offset));
    }
    if (n.is_end_level()) {
      if (n.end() != h.length) {
        corrupt(page, fmt::format("END_LEVEL at offset {} but btr_length {}", n.offset, h.length));
      }
      if (h.sibling != 0) corrupt(page, "END_LEVEL on a page with a right sibling");
      break;
    }
    if (n.prefix > key.size()) {
      corrupt(page, fmt::format("node at offset {}: prefix {} exceeds previous key length {}",
                                n.offset, n.prefix, key.size()));
    }
    key.resize(n.prefix);
    key.insert(key.end(), n.data, n.data + n.length);
    if (next_jump < jumps.size() && jumps[next_jump].node_offset == n.offset) {
      if (jumps[next_jump].key.size() != n.prefix ||
          !std::equal(jumps[next_jump].key.begin(), jumps[next_jump].key.end(), key.begin())) {
        corrupt(page, fmt::format("jump node {} key does not match its node at offset {}",
                                  next_jump, n.offset));
      }
      if (!n.absolute) {
        corrupt(page, fmt::format("jump node {} points at a relative node at offset {}", next_jump,
                                  n.offset));
      }
      ++next_jump;
    }
    PageEntry e{key, n.recno, n.page_number};
    if (n.is_end_bucket()) {
      if (n.end() != h.length) {
        corrupt(page, fmt::format("END_BUCKET at offset {} but btr_length {}", n.offset, h.length));
      }
      if (h.sibling == 0) corrupt(page, "END_BUCKET on a page without a right sibling");
      image.end_bucket = std::move(e);
      break;
    }
    image.entries.push_back(std::move(e));
    pos = n.end();
  }
  if (next_jump != jumps.size()) {
    corrupt(page, fmt::format("jump node {} points at offset {}, not at an entry", next_jump,
                              jumps[next_jump].node_offset));
  }
  return image;
}

uint32_t encode_page(const BtreePageImage& image, uint8_t* page, uint32_t page_size) {
  const bool leaf = image.leaf();
  const uint32_t interval = image.header.jump_interval;
  // Node area first (relative offsets), then the jump table in front of it.
  std::vector<uint8_t> nodes;
  nodes.reserve(page_size);
  struct Jump {
    uint32_t rel;         // node start within the node area
    uint32_t entry;       // index into entries
    uint32_t key_length;  // the node's prefix
  };
  std::vector<Jump> jumps;
  uint32_t threshold = interval;
  uint32_t prefix_total = 0;
  uint8_t buf[kMaxNodeKeyField + 32];
  std::span<const uint8_t> prev;
  const bool compact = image.header.layout == NodeLayout::Compact;
  NodeContext ctx;
  bool have_ctx = false;
  auto add = [&](const PageEntry& e, NodeKind kind, uint32_t index) -> bool {
    uint32_t prefix = static_cast<uint32_t>(common_prefix(prev, e.key));
    NodeFields f{kind, e.recno, e.page_number, prefix,
                 std::span<const uint8_t>(e.key).subspan(prefix)};
    uint32_t rel = static_cast<uint32_t>(nodes.size());
    bool target = kind == NodeKind::Entry && interval != 0 && rel > threshold && jumps.size() < 255;
    uint32_t n = compact ? encode_compact_node(f, leaf, have_ctx && !target ? &ctx : nullptr, buf)
                         : encode_node(f, leaf, buf);
    if (rel + n + kBtreeHeaderSize > page_size) return false;
    nodes.insert(nodes.end(), buf, buf + n);
    prefix_total += prefix;
    if (target) {
      jumps.push_back(Jump{rel, index, prefix});
      threshold += interval;
    }
    prev = e.key;
    ctx = NodeContext{static_cast<uint32_t>(e.key.size()), e.recno};
    have_ctx = true;
    return true;
  };
  for (uint32_t i = 0; i < image.entries.size(); ++i) {
    if (!add(image.entries[i], NodeKind::Entry, i)) return 0;
  }
  if (image.end_bucket) {
    if (!add(*image.end_bucket, NodeKind::EndBucket, 0)) return 0;
  } else {
    nodes.push_back(compact ? kCompactEndLevel : static_cast<uint8_t>(NodeFlag::EndLevel) << 5);
  }
  // Jump table.
  uint32_t jump_size = 0;
  std::span<const uint8_t> prev_jump;
  std::vector<uint32_t> jump_prefix(jumps.size());
  for (size_t j = 0; j < jumps.size(); ++j) {
    std::span<const uint8_t> jk(image.entries[jumps[j].entry].key.data(), jumps[j].key_length);
    jump_prefix[j] = static_cast<uint32_t>(common_prefix(prev_jump, jk));
    jump_size += jump_node_size(jump_prefix[j], jumps[j].key_length - jump_prefix[j]);
    prev_jump = jk;
  }
  uint64_t length = uint64_t{kBtreeHeaderSize} + jump_size + nodes.size();
  if (length > page_size || length > 0xFFFF) return 0;
  std::memset(page, 0, page_size);
  uint32_t first = kBtreeHeaderSize + jump_size;
  uint32_t pos = kBtreeHeaderSize;
  for (size_t j = 0; j < jumps.size(); ++j) {
    std::span<const uint8_t> jk(image.entries[jumps[j].entry].key.data(), jumps[j].key_length);
    pos += encode_jump_node(jump_prefix[j], jk.subspan(jump_prefix[j]),
                            static_cast<uint16_t>(first + jumps[j].rel), page + pos);
  }
  std::memcpy(page + first, nodes.data(), nodes.size());
  BtreeHeader h = image.header;
  h.length = static_cast<uint16_t>(length);
  h.prefix_total = prefix_total;
  h.jump_size = static_cast<uint16_t>(jump_size);
  h.jump_count = static_cast<uint8_t>(jumps.size());
  write_btree_header(page, h);
  return static_cast<uint32_t>(length);
}

int compare_index_keys(std::span<const uint8_t> a, std::span<const uint8_t> b, bool descending) {
  size_t n = std::min(a.size(), b.size());
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c < 0 ? -1 : 1;
  if (a.size() == b.size()) return 0;
  bool a_shorter = a.size() < b.size();
  return (a_shorter != descending) ? -1 : 1;
}

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

  PageFind result;
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
  uint32_t jpos = kBtreeHeaderSize;
  const size_t ks = key.size();
  for (uint32_t i = 0; i < h.jump_count; ++i) {
    JumpNode j = decode_jump_node(page, first, jpos);
    jpos += j.size;
    if (j.prefix > jump_len) {
      corrupt(page, fmt::format("jump node {} has prefix {} beyond the previous jump key ({})", i,
                                j.prefix, jump_len));
    }
    if (j.prefix + j.length > sizeof jump_key) {
      corrupt(page, fmt::format("jump node {} key of {} bytes exceeds {}", i, j.prefix + j.length,
                                sizeof jump_key));
    }
    if (j.length != 0) std::memcpy(jump_key + j.prefix, j.data, j.length);
    jump_len = j.prefix + j.length;
    check_jump_target(page, i, j.node_offset, first, limit);
    const size_t m = std::min<size_t>(jump_len, ks);
    size_t d = 0;
    while (d < m && jump_key[d] == key[d]) ++d;
    bool is_below;
    uint32_t common;
    if (d < m) {  // the jump key alone orders the target
      is_below = jump_key[d] < key[d];
      common = static_cast<uint32_t>(d);
    } else if (jump_len > ks) {  // the search key is a proper prefix of the target's key
      is_below = descending;
      common = static_cast<uint32_t>(ks);
    } else {
      IndexNode target = node_at(j.node_offset, nullptr);
      if (target.is_marker()) break;
      if (target.prefix != jump_len) {
        corrupt(page, fmt::format("jump node {} key length {} differs from node prefix {}", i,
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
      corrupt(page, fmt::format("jump node {} key length {} differs from node prefix {}",
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

  // find_node_start_point: linear scan with the prefix trick.
  for (;;) {
    IndexNode n = node_at(pos, have_prev ? &ctx : nullptr);
    result.offset = n.offset;
    result.prev_offset = have_prev ? prev : 0;
    result.has_offset_ctx = have_prev;
    result.offset_ctx = ctx;
    result.has_prev_ctx = have_prev && have_ctx_before_prev;
    result.prev_ctx = ctx_before_prev;
    if (n.is_end_level()) {
      result.at_marker = true;
      result.matched = matched;
      return result;
    }
    bool is_below;
    uint32_t new_matched = matched;
    if (have_prev && n.prefix < matched) {
      is_below = false;
      new_matched = n.prefix;
    } else if (have_prev && n.prefix > matched) {
      is_below = true;
    } else {
      if (!have_prev && n.prefix != 0) {
        corrupt(page, fmt::format("first node at offset {} has prefix {}", n.offset, n.prefix));
      }
      size_t rest = key.size() - matched;
      size_t m = std::min<size_t>(rest, n.length);
      size_t i = 0;
      while (i < m && n.data[i] == key[matched + i]) ++i;
      new_matched = matched + static_cast<uint32_t>(i);
      int c;
      if (i < m) {
        c = n.data[i] < key[matched + i] ? -1 : 1;
      } else if (n.length == rest) {
        c = 0;
      } else if (n.length < rest) {
        c = descending ? 1 : -1;
      } else {
        c = descending ? -1 : 1;
      }
      is_below = below(c, n.recno);
    }
    if (!is_below) {
      result.at_marker = n.is_end_bucket();
      result.matched = new_matched;
      return result;
    }
    if (n.is_end_bucket()) {
      result.at_marker = true;
      result.beyond_end_bucket = true;
      result.matched = new_matched;
      return result;
    }
    matched = new_matched;
    ctx_before_prev = ctx;
    have_ctx_before_prev = have_prev;
    prev = n.offset;
    have_prev = true;
    ctx = context_after(n);
    pos = n.end();
  }
}

}  // namespace pbtree
