// Jump nodes (Firebird src/jrd/btr.cpp, docs/FORMAT.md §2.5): the table in front of a
// B-tree page's nodes that lets a search skip to one jump area.
//
// Jump node (table entry): prefix varint (bytes shared with the previous jump key), length
// varint, 2-byte offset of the target node from the page start, `length` data bytes. The jump
// key is the first target.prefix bytes of the target node's full key.
//
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "node/btree_page.h"
#include "util/coding.h"

namespace pbtree {

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

/// The one walk of a page's jump table: its jump nodes in order, each decoded with no byte read
/// at or beyond the first node (decode_jump_node's checks; one-byte varints, every jump key
/// under 128 bytes, take an inline path). Used by every reader and editor of the table.
///   for (JumpWalk w(page); w.next();) use(w.node());
class JumpWalk {
 public:
  explicit JumpWalk(const uint8_t* page)
      : page_(page), first_(BtreePage(page).first_node()), count_(BtreePage(page).jump_count()) {}
  /// Decodes the next jump node; false after the last. Throws CorruptError.
  bool next() {
    if (index_ >= count_) return false;
    const uint32_t pos = pos_;
    const uint8_t p = pos + 4 <= first_ ? page_[pos] : 0x80;
    const uint8_t l = pos + 4 <= first_ ? page_[pos + 1] : 0x80;
    if (((p | l) & 0x80) == 0 && uint64_t{pos} + 4 + l <= first_) {
      node_ = JumpNode{p, l, get_u16(page_ + pos + 2), page_ + pos + 4, pos, 4u + l};
      field_ = pos + 2;
    } else {
      node_ = decode_jump_node(page_, first_, pos);
      field_ = pos + varint_size(node_.prefix) + varint_size(node_.length);
    }
    pos_ += node_.size;
    ++index_;
    return true;
  }
  /// The jump node next() decoded.
  const JumpNode& node() const { return node_; }
  /// Its position in the table, from 0.
  uint32_t index() const { return index_ - 1; }
  /// Offset (from the page start) of its 2-byte target field.
  uint32_t field() const { return field_; }
  /// Offset of the page's first node (where the table ends).
  uint32_t first_node() const { return first_; }
  /// Appends the jump node's data to `key`, which holds the previous jump key: `key` becomes
  /// its full jump key. Throws CorruptError if its prefix is longer than the previous key.
  void extend_key(std::vector<uint8_t>& key) const;

 private:
  const uint8_t* page_;
  uint32_t first_;
  uint32_t count_;
  uint32_t pos_ = kBtreeHeaderSize;
  uint32_t index_ = 0;
  uint32_t field_ = 0;
  JumpNode node_;
};

/// A jump node with its full jump key.
struct JumpEntry {
  std::vector<uint8_t> key;  ///< first target.prefix bytes of the target's key
  uint16_t node_offset = 0;
};
/// Decodes the whole jump table of `page` and checks Firebird's invariants (validation.cpp):
/// offsets within (39 + jump_size, btr_length): never the first node, first prefix 0, each prefix
/// <= the previous jump key length, entries within jump_size. Throws CorruptError.
std::vector<JumpEntry> decode_jump_table(const uint8_t* page, uint32_t page_size);

/// The jump-node placement rule of whole-page encoding (encode_page) and of the in-place page
/// edits that regenerate a jump table (node/leaf_edit.h), Firebird's rule for a page written
/// whole: walking the page's nodes in order, an entry node (not an END marker) that starts
/// more than the next multiple of the jump interval into the node area becomes a jump target,
/// at most 255 per page; each target moves the threshold one interval on. (The bulk loader
/// follows fast_load's own rule, btree/bulk_build.cc.)
class JumpPlan {
 public:
  explicit JumpPlan(uint32_t interval) : interval_(interval), threshold_(interval) {}
  /// True if the node `rel` bytes into the node area is a jump target, `count` jump nodes
  /// having been placed before it. After a target, call next().
  bool target(uint32_t rel, bool entry, uint32_t count) const {
    return entry && interval_ != 0 && rel > threshold_ && count < 255;
  }
  /// The next jump area.
  void next() { threshold_ += interval_; }
  /// Bytes into the node area the next target must start beyond.
  uint32_t threshold() const { return threshold_; }

 private:
  uint32_t interval_;
  uint32_t threshold_;
};

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

}  // namespace pbtree
