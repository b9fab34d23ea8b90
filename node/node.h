// B-tree nodes in both layouts: Firebird's ODS 12 nodes (src/jrd/btn.cpp
// IndexNode::writeNode/readNode; docs/FORMAT.md §2.4), coded in node/firebird_node.cc, and
// pbtree's compact nodes (docs/FORMAT.md §2.9), coded in node/compact_node.cc. One public
// decoder, decode_node (bounds-checked, CorruptError on any malformed byte); its inline hot
// path for scans and searches is decode_node_quick (node/node_quick.h).
//
// Node (varints: 7-bit groups, least-significant first, 0x80 = another byte follows):
//
//   byte 0        bits 7..5 flag (0 NORMAL, 1 END_LEVEL, 2 END_BUCKET, 3 ZERO_PREFIX_ZERO_LENGTH,
//                 4 ZERO_LENGTH, 5 ONE_LENGTH), bits 4..0 record number bits 0..4
//   recno >> 5    varint, 1..5 bytes (not for END_LEVEL, which is the single byte 0x20)
//   page number   varint, 1..5 bytes, non-leaf pages only
//   prefix        varint, 1..2 bytes, unless flag is 3
//   length        varint, 1..2 bytes, only for flags 0 and 2
//   data          `length` bytes: the key after the `prefix` bytes shared with the previous node
//
//
// Compact layout (pbtree's own, docs/FORMAT.md §2.9; byte 1 of the page has kPageCompact):
// same header, jump table and prefix compression; each node is
//
//   byte 0   h: bits 7..6 shape S, bits 5..4 N, bits 3..0 V
//            S 0  duplicate: prefix = previous key length, no data; record number =
//                 previous + D
//            S 1  prefix = previous key length - 1, 1 data byte; record number = previous +
//                 zigzag(D) (zigzag: 0, -1, 1, -2 ... coded as 0, 1, 2, 3 ...)
//            S 2  prefix = previous key length - 2, 2 data bytes; as S 1
//            S 3  explicit: prefix, length and the absolute record number D are all coded;
//                 the first node of a page, every jump target and END_BUCKET are explicit.
//                 N 3 is special: V 0 entry, V 2 END_BUCKET (both with a 5-byte record
//                 number), V 1 END_LEVEL (the single byte 0xF1); other V reserved.
//            D = V + 16 * (N bytes little-endian): N 0..3 (N 3 only for S 0..2)
//   S 3 only: 1 byte: bits 7..4 prefix, bits 3..0 length; a nibble 15 means the value
//            follows as a varint (prefix first)
//   N bytes  record number bytes (5 bytes for 0xF0 / 0xF2)
//   page     varint, non-leaf pages only
//   data     the key bytes after the prefix
#pragma once

#include <cstdint>
#include <span>

#include "node/btree_page.h"
#include "util/coding.h"

namespace pbtree {

/// Largest prefix or length a node can carry (two 7-bit groups).
inline constexpr uint32_t kMaxNodeKeyField = (1u << 14) - 1;

/// The compact layout's END_LEVEL node (a single byte).
inline constexpr uint8_t kCompactEndLevel = 0xF1;

/// Node flags (bits 7..5 of the first node byte), Firebird's BTN_* codes.
enum class NodeFlag : uint8_t {
  Normal = 0,
  EndLevel = 1,
  EndBucket = 2,
  ZeroPrefixZeroLength = 3,
  ZeroLength = 4,
  OneLength = 5,
};

/// What a node is, as far as the writer is concerned; the flag follows from it and the sizes.
enum class NodeKind : uint8_t { Entry, EndBucket, EndLevel };

/// One node as decoded: a view into the page.
struct IndexNode {
  NodeFlag flag = NodeFlag::EndLevel;
  uint64_t recno = 0;        ///< 40-bit record number (0 for END_LEVEL)
  uint32_t page_number = 0;  ///< child page (non-leaf, not END_LEVEL)
  uint32_t prefix = 0;       ///< bytes shared with the previous node's key
  uint32_t length = 0;       ///< bytes of data
  const uint8_t* data = nullptr;
  uint32_t offset = 0;  ///< start of the node from the page start
  uint32_t size = 0;    ///< encoded bytes
  /// Decodable without the previous node (every Firebird node; compact explicit nodes).
  bool absolute = true;

  bool is_end_level() const { return flag == NodeFlag::EndLevel; }
  bool is_end_bucket() const { return flag == NodeFlag::EndBucket; }
  bool is_marker() const { return is_end_level() || is_end_bucket(); }
  uint32_t end() const { return offset + size; }
  std::span<const uint8_t> bytes() const { return {data, length}; }
};

/// A node to write: its kind, record number (<= 2^40 - 1), child page (non-leaf), prefix and
/// the data after the prefix.
struct NodeFields {
  NodeKind kind = NodeKind::Entry;
  uint64_t recno = 0;
  uint32_t page_number = 0;
  uint32_t prefix = 0;
  std::span<const uint8_t> data;
};

/// The flag writeNode picks for these fields.
NodeFlag node_flag(const NodeFields& node);
/// Encoded size in bytes of `node` on a leaf (leaf = true) or non-leaf page.
uint32_t node_size(const NodeFields& node, bool leaf);
/// Writes `node` at `out` (room for node_size() bytes); returns the bytes written.
/// prefix and data length must be <= kMaxNodeKeyField (std::invalid_argument otherwise).
uint32_t encode_node(const NodeFields& node, bool leaf, uint8_t* out);

/// What a compact node is coded against: the previous node's full key length (bytes) and
/// record number.
struct NodeContext {
  uint32_t key_length = 0;
  uint64_t recno = 0;
};
/// The context the node after `node` is decoded with.
inline NodeContext context_after(const IndexNode& node) {
  return NodeContext{node.prefix + node.length, node.recno};
}

/// Encoded size of `node` in the compact layout (docs/FORMAT.md §2.9): relative to `prev`, or
/// in explicit form (first node of a page, jump target, END marker) if `prev` is null.
uint32_t compact_node_size(const NodeFields& node, bool leaf, const NodeContext* prev);
/// Writes `node` in the compact layout at `out` (room for compact_node_size() bytes); returns
/// the bytes written. Throws std::invalid_argument on a record number beyond 40 bits.
uint32_t encode_compact_node(const NodeFields& node, bool leaf, const NodeContext* prev,
                             uint8_t* out);
/// Encoded size of `node` in `layout`: node_size() on Firebird pages (`prev` unused),
/// compact_node_size() on compact pages (`prev` null: explicit form).
inline uint32_t node_size(NodeLayout layout, const NodeFields& node, bool leaf,
                          const NodeContext* prev) {
  return layout == NodeLayout::Compact ? compact_node_size(node, leaf, prev)
                                       : node_size(node, leaf);
}
/// Writes `node` in `layout` at `out` (see node_size above); returns the bytes written.
inline uint32_t encode_node(NodeLayout layout, const NodeFields& node, bool leaf,
                            const NodeContext* prev, uint8_t* out) {
  return layout == NodeLayout::Compact ? encode_compact_node(node, leaf, prev, out)
                                       : encode_node(node, leaf, out);
}

/// The one checked node decoder, for either layout (as byte 1 of the page says): decodes the
/// node at `offset` of `page`, reading no byte at or beyond `limit` (btr_length or page size).
/// `prev` is the previous node's context and is used on compact pages only; with `prev` null a
/// compact page is walked from the last jump target (or the first node) at or before `offset`,
/// so it costs up to one jump area (no walk when `offset` is itself that start). Firebird nodes
/// need no context. Inline fast paths for read loops: decode_node_quick (node/node_quick.h).
/// Throws CorruptError ("page 12 (b-tree): node at offset 57: ...") on a reserved flag or code,
/// an overlong varint, a record number beyond 40 bits, a prefix beyond the previous key, a
/// relative compact node at the walk's start, an `offset` that is not a node start (compact,
/// `prev` null) or a node crossing `limit`.
IndexNode decode_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                      const NodeContext* prev = nullptr);

}  // namespace pbtree
