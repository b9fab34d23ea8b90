// The B-tree page header in Firebird's ODS 12 layout (src/jrd/ods.h `struct btree_page`;
// Firebird 3.0 .. 5.0; docs/FORMAT.md §2.3): the header fields, a read-only and a writable
// view with one named accessor per field (the only code that knows these offsets), and the
// header check. node/ is the only folder that knows B-tree page bytes: nodes in node/node.h,
// jump nodes in node/jump_table.h, whole pages in node/page_image.h, search in
// node/page_search.h.
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
#pragma once

#include <pbtree/errors.h>
#include <pbtree/types.h>

#include <cstdint>
#include <string>

#include "page/page_header.h"
#include "util/coding.h"

namespace pbtree {

/// Bytes of the B-tree page header (Firebird BTR_SIZE).
inline constexpr uint32_t kBtreeHeaderSize = 39;
/// Most levels a tree may have (Firebird MAX_LEVELS).
inline constexpr uint32_t kMaxLevels = 16;

/// Flag in byte 1 of a B-tree page whose nodes use the compact layout (docs/FORMAT.md §2.9).
inline constexpr uint8_t kPageCompact = 0x80;

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

/// Checks bytes 0 and 16..38 of a page that claims to be a B-tree page: type 7, btr_length in
/// [39 + jump_size + 1, page_size], level < 16. Throws CorruptError.
BtreeHeader check_btree_header(const uint8_t* page, uint32_t page_size);

/// BufferPool::PageCheck of B-tree files: check_btree_header on pages of type 7, nothing on
/// others. Throws CorruptError.
void check_btree_frame(const uint8_t* page, uint32_t page_size);

/// The layout a B-tree page is coded in (byte 1 bit kPageCompact).
inline NodeLayout page_layout(const uint8_t* page) {
  return (page[1] & kPageCompact) != 0 ? NodeLayout::Compact : NodeLayout::Firebird;
}

/// Flag in byte 1 of a page that left its tree (Firebird's btr_released).
inline constexpr uint8_t kPageReleased = 0x20;

/// Read-only view of a B-tree page's header: one accessor per field, with its offset.
class BtreePage {
 public:
  explicit BtreePage(const uint8_t* data) : d_(data) {}
  const uint8_t* data() const { return d_; }
  /// Byte 0: the page type (7 for a B-tree page).
  uint8_t type() const { return d_[0]; }
  /// Byte 1 bit kPageReleased: the page left its tree.
  bool released() const { return (d_[1] & kPageReleased) != 0; }
  /// Byte 1 bit kPageCompact: the node layout.
  NodeLayout layout() const {
    return (d_[1] & kPageCompact) != 0 ? NodeLayout::Compact : NodeLayout::Firebird;
  }
  /// Bytes 16..19: btr_sibling, the right sibling (0 if none).
  uint32_t sibling() const { return get_u32(d_ + 16); }
  /// Bytes 20..23: btr_left_sibling (0 if none).
  uint32_t left_sibling() const { return get_u32(d_ + 20); }
  /// Bytes 24..27: btr_prefix_total.
  uint32_t prefix_total() const { return get_u32(d_ + 24); }
  /// Bytes 30..31: btr_length, bytes in use.
  uint16_t length() const { return get_u16(d_ + 30); }
  /// Byte 33: btr_level, 0 = leaf.
  uint8_t level() const { return d_[33]; }
  bool leaf() const { return d_[33] == 0; }
  /// Bytes 34..35: btr_jump_interval.
  uint16_t jump_interval() const { return get_u16(d_ + 34); }
  /// Bytes 36..37: btr_jump_size.
  uint16_t jump_size() const { return get_u16(d_ + 36); }
  /// Byte 38: btr_jump_count.
  uint8_t jump_count() const { return d_[38]; }
  /// Offset of the first node: after the header and the jump table.
  uint32_t first_node() const { return kBtreeHeaderSize + jump_size(); }
  /// A live (not released) B-tree page of `level` (any level if negative).
  bool live(int level) const {
    return type() == static_cast<uint8_t>(PageType::Btree) && !released() &&
           (level < 0 || this->level() == level);
  }

 private:
  const uint8_t* d_;
};

/// Writable view of a B-tree page's header.
class MutableBtreePage : public BtreePage {
 public:
  explicit MutableBtreePage(uint8_t* data) : BtreePage(data), w_(data) {}
  uint8_t* data() const { return w_; }
  void set_sibling(uint32_t page) { put_u32(w_ + 16, page); }
  void set_left_sibling(uint32_t page) { put_u32(w_ + 20, page); }
  void set_prefix_total(uint32_t total) { put_u32(w_ + 24, total); }
  void set_length(uint16_t length) { put_u16(w_ + 30, length); }
  void set_jump_size(uint16_t size) { put_u16(w_ + 36, size); }
  void set_jump_count(uint8_t count) { w_[38] = count; }
  void mark_released() { w_[1] |= kPageReleased; }

 private:
  uint8_t* w_;
};

/// "page 12 (b-tree): <what>", for CorruptError messages of page decoding.
std::string page_error(const uint8_t* page, const std::string& what);

/// Throws CorruptError(page_error(page, what)).
[[noreturn]] void corrupt_page(const uint8_t* page, const std::string& what);

/// Throws CorruptError("page N (b-tree): <what>"), for a B-tree page known by its number.
[[noreturn]] void corrupt_btree_page(uint32_t page_no, const std::string& what);

}  // namespace pbtree
