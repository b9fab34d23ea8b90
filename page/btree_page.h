// B-tree pages in Firebird's ODS 12 layout (src/jrd/ods.h `struct btree_page`, node codec of
// src/jrd/btn.cpp IndexNode::writeNode/readNode, jump nodes of src/jrd/btr.cpp; Firebird
// 3.0 .. 5.0; spec: firebird-format.md §2.3, §2.4, §2.7): header accessors, node and jump-node
// encode/decode (bounds-checked, CorruptError on any malformed byte), a whole-page codec
// (decode_page / encode_page) and a jump-node-aware search within one page (find_in_page).
//
// Page layout (integers little-endian):
//
//   off size field
//     0   16 generic page header (page/page_file.h): type 7, flags, checksum, scn, page number
//    16    4 btr_sibling        right sibling page at the same level, 0 if none
//    20    4 btr_left_sibling   left sibling page, 0 if none
//    24    4 btr_prefix_total   sum of the prefix lengths of the nodes (informational)
//    28    2 btr_relation       relation id (0 in pbtree)
//    30    2 btr_length         bytes in use: header + jump table + nodes incl. the END marker
//    32    1 btr_id             index id mod 256
//    33    1 btr_level          0 = leaf
//    34    2 btr_jump_interval  jumpAreaSize: bytes of node area between jump nodes
//    36    2 btr_jump_size      bytes of the jump table
//    38    1 btr_jump_count     jump nodes (<= 255)
//    39  ... jump table (btr_jump_size bytes), then the nodes, the last one END_BUCKET or
//            END_LEVEL; bytes from btr_length to the page end are zero.
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
// Jump node (table entry): prefix varint (bytes shared with the previous jump key), length
// varint, 2-byte offset of the target node from the page start, `length` data bytes. The jump
// key is the first target.prefix bytes of the target node's full key.
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
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "page/errors.h"
#include "page/page_file.h"
#include "util/bytes.h"
#include "util/coding.h"

namespace pbtree {

/// Bytes of the B-tree page header (Firebird BTR_SIZE).
inline constexpr uint32_t kBtreeHeaderSize = 39;
/// Most levels a tree may have (Firebird MAX_LEVELS).
inline constexpr uint32_t kMaxLevels = 16;
/// Largest prefix or length a node can carry (two 7-bit groups).
inline constexpr uint32_t kMaxNodeKeyField = (1u << 14) - 1;

/// How the nodes of a B-tree are coded. Firebird: ODS 12 nodes as above (byte-exact with
/// Firebird 3.0 .. 5.0). Compact: pbtree's own layout (docs/FORMAT.md §2.9): delta record
/// numbers, no implied length byte, suffix-truncated separators. Chosen per index.
enum class NodeLayout : uint8_t { Firebird = 0, Compact = 1 };

/// Flag in byte 1 of a B-tree page whose nodes use the compact layout (docs/FORMAT.md §2.9).
inline constexpr uint8_t kPageCompact = 0x80;

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

/// The B-tree page header fields (bytes 16..38).
struct BtreeHeader {
  uint32_t sibling = 0;
  uint32_t left_sibling = 0;
  uint32_t prefix_total = 0;
  uint16_t relation = 0;
  uint16_t length = 0;  ///< btr_length, bytes
  uint8_t index_id = 0;
  uint8_t level = 0;
  uint16_t jump_interval = 0;  ///< bytes
  uint16_t jump_size = 0;      ///< bytes
  uint8_t jump_count = 0;
  NodeLayout layout = NodeLayout::Firebird;  ///< byte 1 bit kPageCompact
};

/// Reads bytes 16..38 (no checks).
BtreeHeader read_btree_header(const uint8_t* page);
/// Writes byte 0 (type 7), byte 1 (kPageCompact on compact pages, else 0), bytes 2..3 (0) and
/// bytes 16..38. Leaves checksum/scn/page number.
void write_btree_header(uint8_t* page, const BtreeHeader& header);

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
/// Decodes the node at `offset` of `page`, reading no byte at or beyond `limit` (btr_length or
/// page size). On a compact page this is decode_node_at (walks from the nearest jump target).
/// Throws CorruptError ("page 12 (b-tree): node at offset 57: ...") on a reserved flag, an overlong
/// varint, a record number beyond 40 bits or a node crossing `limit`.
IndexNode decode_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf);

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
/// Decodes the compact node at `offset` (no byte read at or beyond `limit`). `prev` is the
/// previous node's context, or null at the first node of a page or a jump target (the node
/// must then be in explicit form). Throws CorruptError on a reserved code, a relative node
/// without a predecessor, a prefix beyond the previous key, a record number outside 40 bits
/// or a node crossing `limit`.
IndexNode decode_compact_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                              const NodeContext* prev);
/// The layout a B-tree page is coded in (byte 1 bit kPageCompact).
inline NodeLayout page_layout(const uint8_t* page) {
  return (page[1] & kPageCompact) != 0 ? NodeLayout::Compact : NodeLayout::Firebird;
}
/// Decodes a node of either layout (as the page's flag says); `prev` is used on compact pages
/// only (see decode_compact_node). Throws CorruptError.
IndexNode decode_node(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf,
                      const NodeContext* prev);
/// Decodes the node at `offset` of a page of either layout without knowing its predecessor:
/// on compact pages it walks from the last jump target (or the first node) at or before
/// `offset`, so it costs up to one jump area. Throws CorruptError (also if `offset` is not a
/// node start).
IndexNode decode_node_at(const uint8_t* page, uint32_t limit, uint32_t offset, bool leaf);

/// The hot-path decoder behind decode_node, inline for scans and searches: decodes the node at
/// `offset` into `node` when its header lies wholly at least 16 bytes before `limit` (so the
/// varints need no per-byte bounds checks) and every field is well-formed; returns false
/// otherwise, and the caller then calls decode_node, which takes the checked path and throws
/// CorruptError on a malformed node. Firebird-layout pages only (false on compact pages, whose
/// nodes need their predecessor). Never reads at or beyond `limit`.
[[gnu::always_inline]] inline bool try_decode_node(const uint8_t* page, uint32_t limit,
                                                   uint32_t offset, bool leaf, IndexNode& node) {
  if (offset + 16 > limit || page_layout(page) != NodeLayout::Firebird) return false;
  const uint8_t* p = page + offset;
  const uint8_t b = *p++;
  const uint8_t flag = b >> 5;
  node.offset = offset;
  if (flag == static_cast<uint8_t>(NodeFlag::EndLevel)) {
    node.flag = NodeFlag::EndLevel;
    node.recno = 0;
    node.page_number = 0;
    node.prefix = 0;
    node.length = 0;
    node.size = 1;
    node.data = p;
    return true;
  }
  if (flag > 5) return false;
  uint64_t v;
  if (!quick_varint(p, 5, v)) return false;
  node.recno = (v << 5) | (b & 0x1F);
  node.page_number = 0;
  if (!leaf) {
    if (!quick_varint(p, 5, v) || v > 0xFFFFFFFFu) return false;
    node.page_number = static_cast<uint32_t>(v);
  }
  node.prefix = 0;
  if (flag != static_cast<uint8_t>(NodeFlag::ZeroPrefixZeroLength)) {
    if (!quick_varint(p, 2, v)) return false;
    node.prefix = static_cast<uint32_t>(v);
  }
  if (flag == static_cast<uint8_t>(NodeFlag::Normal) ||
      flag == static_cast<uint8_t>(NodeFlag::EndBucket)) {
    if (!quick_varint(p, 2, v)) return false;
    node.length = static_cast<uint32_t>(v);
  } else {
    node.length = flag == static_cast<uint8_t>(NodeFlag::OneLength) ? 1 : 0;
  }
  const uint32_t pos = static_cast<uint32_t>(p - page);
  if (pos + node.length > limit) return false;
  node.flag = static_cast<NodeFlag>(flag);
  node.data = p;
  node.size = pos + node.length - offset;
  return true;
}

/// decode_node through try_decode_node first (same result, same errors).
[[gnu::always_inline]] inline IndexNode decode_node_fast(const uint8_t* page, uint32_t limit,
                                                         uint32_t offset, bool leaf) {
  IndexNode n;
  if (!try_decode_node(page, limit, offset, leaf, n)) n = decode_node(page, limit, offset, leaf);
  return n;
}

/// decode_node_fast with the context of the node before (compact pages; nullptr for a first
/// node or a jump target), e.g. from PageFind: no walk from the jump target.
[[gnu::always_inline]] inline IndexNode decode_node_fast(const uint8_t* page, uint32_t limit,
                                                         uint32_t offset, bool leaf,
                                                         const NodeContext* prev) {
  IndexNode n;
  if (!try_decode_node(page, limit, offset, leaf, n)) {
    n = decode_node(page, limit, offset, leaf, prev);
  }
  return n;
}

/// One jump-table entry as decoded: a view into the page.
struct JumpNode {
  uint32_t prefix = 0;  ///< bytes shared with the previous jump key
  uint32_t length = 0;
  uint16_t node_offset = 0;  ///< target node, from the page start
  const uint8_t* data = nullptr;
  uint32_t offset = 0;  ///< of the entry itself
  uint32_t size = 0;
};
/// Encoded size of a jump node with `length` data bytes.
uint32_t jump_node_size(uint32_t prefix, uint32_t length);
/// Writes one jump-table entry at `out`; returns bytes written.
uint32_t encode_jump_node(uint32_t prefix, std::span<const uint8_t> data, uint16_t node_offset,
                          uint8_t* out);
/// Decodes the jump node at `offset`, reading no byte at or beyond `limit`. Throws CorruptError.
JumpNode decode_jump_node(const uint8_t* page, uint32_t limit, uint32_t offset);

/// A jump node with its full jump key.
struct JumpEntry {
  std::vector<uint8_t> key;  ///< first target.prefix bytes of the target's key
  uint16_t node_offset = 0;
};
/// Decodes the whole jump table of `page` and checks Firebird's invariants (validation.cpp):
/// offsets within (39 + jump_size, btr_length): never the first node, first prefix 0, each prefix
/// <= the previous jump key length, entries within jump_size. Throws CorruptError.
std::vector<JumpEntry> decode_jump_table(const uint8_t* page, uint32_t page_size);

/// Jump interval (jumpAreaSize, bytes) of a single-segment index whose longest key is
/// `max_key_length` bytes (Firebird BTR_key_length, descending escape byte included):
/// 512 + 16 * floor(sqrt(K)), K = ROUNDUP(max_key_length + nullInd, 8), nullInd = 1 for
/// ascending, 0 for descending (btr.cpp fast_load, idx.cpp IDX_create_index; Firebird 3..5).
uint16_t jump_area_size(size_t max_key_length, bool descending);

/// Jump interval (bytes) of a tree built in `layout`: jump_area_size() on Firebird's nodes; a
/// quarter of it on compact nodes, which take ~2.5 instead of ~6 bytes for dense integer keys,
/// so a jump area holds about as many nodes as on a Firebird page and an in-page search
/// decodes about as many (pbtree's rule; the jump nodes cost ~4% of a compact page).
inline uint16_t layout_jump_interval(size_t max_key_length, bool descending, NodeLayout layout) {
  const uint16_t j = jump_area_size(max_key_length, descending);
  return layout == NodeLayout::Compact ? static_cast<uint16_t>(j / 4) : j;
}

/// One full entry of a page: full key, record number and, on non-leaf pages, child page.
struct PageEntry {
  std::vector<uint8_t> key;
  uint64_t recno = 0;
  uint32_t page_number = 0;
  bool operator==(const PageEntry&) const = default;
};

/// A whole page in full form.
struct BtreePageImage {
  BtreeHeader header;  ///< length, prefix_total, jump_size, jump_count are outputs of encode
  std::vector<PageEntry> entries;
  /// Copy of the right sibling's first entry (END_BUCKET), or nullopt: END_LEVEL.
  std::optional<PageEntry> end_bucket;
  bool leaf() const { return header.level == 0; }
};

/// Checks bytes 0 and 16..38 of a page that claims to be a B-tree page: type 7, btr_length in
/// [39 + jump_size + 1, page_size], level < 16. Throws CorruptError.
BtreeHeader check_btree_header(const uint8_t* page, uint32_t page_size);

/// Decodes every node of `page` (header checked, every node bounds-checked, prefixes checked
/// against the previous key, exactly one END marker ending exactly at btr_length, each jump
/// node pointing at a node start, possibly the END_BUCKET as fast_load leaves it).
/// Throws CorruptError.
BtreePageImage decode_page(const uint8_t* page, uint32_t page_size);

/// Encodes `image` into `page` in the layout `image.header.layout` (page_size bytes; bytes 0..3
/// and 16.. written, the rest zeroed): prefix compression against the previous entry, first node
/// prefix 0, END_BUCKET copy or END_LEVEL, jump nodes by generate_jump_nodes' rule (a jump node for
/// the first node starting beyond each multiple of header.jump_interval into the node area; at most
/// 255). On compact pages each jump target, the first node and END_BUCKET are in explicit form.
/// Returns btr_length, or 0 if the page would exceed page_size (page then unspecified).
uint32_t encode_page(const BtreePageImage& image, uint8_t* page, uint32_t page_size);

/// Key order of the index: unsigned bytewise; on a common prefix the shorter key sorts first
/// ascending and last descending (firebird-format.md §1.10). Returns <0, 0, >0.
int compare_index_keys(std::span<const uint8_t> a, std::span<const uint8_t> b, bool descending);

/// Where a search key lands in a page.
struct PageFind {
  uint32_t offset = 0;       ///< start of the first node not below the target (maybe a marker)
  uint32_t prev_offset = 0;  ///< start of the node before it; 0 if it is the first node
  uint32_t matched = 0;      ///< bytes the found node's key shares with the search key
  bool at_marker = false;    ///< the found node is END_BUCKET or END_LEVEL
  /// The target is above the END_BUCKET copy: it belongs to the right sibling.
  bool beyond_end_bucket = false;
  /// Compact pages: the contexts to decode the node at `offset` and at `prev_offset` with
  /// (decode_node's `prev`), so callers need not walk the jump area again. A flag false means
  /// the node is a page's first node or a jump target: decode it with no context (nullptr).
  NodeContext offset_ctx, prev_ctx;
  bool has_offset_ctx = false, has_prev_ctx = false;
  const NodeContext* offset_context() const { return has_offset_ctx ? &offset_ctx : nullptr; }
  const NodeContext* prev_context() const { return has_prev_ctx ? &prev_ctx : nullptr; }
};

/// Search modes: stop at the first node >= target (lower bound: leaf lookups and inserts) or
/// at the first node > target (upper bound: choosing a child on a non-leaf page, which is
/// then the node before it).
enum class FindMode : uint8_t { LowerBound, UpperBound };

/// Finds `key` (with `recno` as tie-break among equal keys if given; without it, LowerBound
/// stops at the first duplicate and UpperBound after the last) in `page`, using the jump table
/// (find_area_start_point) and then the prefix trick (find_node_start_point): decodes only the
/// jump nodes and the nodes of one jump area. The first node of a leftmost non-leaf page
/// (left_sibling 0) is degenerate and sorts below every key. Throws CorruptError.
PageFind find_in_page(const uint8_t* page, uint32_t page_size, std::span<const uint8_t> key,
                      bool descending, std::optional<uint64_t> recno, FindMode mode);

/// "page 12 (b-tree): <what>", for CorruptError messages of page decoding.
std::string page_error(const uint8_t* page, const std::string& what);

}  // namespace pbtree
