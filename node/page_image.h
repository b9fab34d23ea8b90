// A whole B-tree page in full form (every entry with its full key) and its codec: decode_page
// checks every node, encode_page lays out nodes, END marker and jump table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "node/btree_page.h"

namespace pbtree {

/// One full entry of a page: full key, record number and, on non-leaf pages, child page.
struct PageEntry {
  std::vector<uint8_t> key;
  uint64_t recno = 0;
  uint32_t page_number = 0;
  bool operator==(const PageEntry&) const = default;
};

/// One full entry viewed in place (key bytes owned elsewhere): what the split reads of an
/// over-full page, from a page image or from the page's own node bytes.
struct EntryRef {
  std::span<const uint8_t> key;
  uint64_t recno = 0;
  uint32_t page_number = 0;
};

/// A whole page in full form.
struct BtreePageImage {
  BtreeHeader header;  ///< length, prefix_total, jump_size, jump_count are outputs of encode
  std::vector<PageEntry> entries;
  /// Copy of the right sibling's first entry (END_BUCKET), or nullopt: END_LEVEL.
  std::optional<PageEntry> end_bucket;
  bool leaf() const { return header.level == 0; }
};

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
/// encode_page of a page given as views: `header`, its `entries` and the END_BUCKET copy
/// `end_bucket` (null: END_LEVEL). The same bytes as encode_page of the equal image; no heap
/// allocation once warm (the splits encode halves of one decoded page with it, no copies).
uint32_t encode_page(const BtreeHeader& header, std::span<const PageEntry> entries,
                     const PageEntry* end_bucket, uint8_t* page, uint32_t page_size);
/// encode_page of entries viewed in place: the same bytes as of equal PageEntry values.
uint32_t encode_page(const BtreeHeader& header, std::span<const EntryRef> entries,
                     const EntryRef* end_bucket, uint8_t* page, uint32_t page_size);

}  // namespace pbtree
