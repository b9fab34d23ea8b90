// The index root page (page 1 of a pbtree file): Firebird's index root page, page type 6,
// reshaped for one table of indexes with names; its codec. A slot is an IndexInfo
// (<pbtree/types.h>): the definition, the slot number (id) and the root page (0: free slot).
//
// Page 1, index root page (page type 6):
//
//   off size field
//     0   16 generic page header, type 6
//    16    2 relation id: 0
//    18    2 slot count: slots in use, free ones (root 0) included
//    20   48 × slot count: slots; the slot number is the index id
//   ...      zero to the end of the page
//
//   slot (48 bytes):
//     0    4 root page: B-tree root page number, 0 = free slot
//     4    4 index id: the slot number (0-based)
//     8    1 column type (ColumnType: 1 smallint 2 integer 3 bigint 4 int128 5 double
//            6 numeric 7 varchar)
//     9    1 precision (numeric), else 0
//    10    1 scale (numeric), else 0
//    11    1 key format: Firebird idx_itype (0 double, 1 text, 8 rescaled double,
//            10 decimal128, 13 bcd)
//    12    2 length in bytes (varchar), else 0
//    14    1 flags: 1 unique, 2 descending, 4 compact node layout (docs/FORMAT.md §2.9),
//            8 compound index (below), 0x80 key format chosen by `--key-format auto` (the
//            reason is recomputed from the index, btree/what_if.h)
//    15    1 name length, 1..31
//    16   32 name bytes [A-Za-z0-9_$], zero-padded
//
//   compound slot (flag 8; single-segment slots never have it and keep the bytes above):
//     8    1 0 (no single column type)
//     9    1 segment count N, 2..16
//    10    2 descriptor offset D: byte offset in the page of the N segment descriptors
//    12    2 0
//   segment descriptor (6 bytes, N of them at D, segment order), same fields as slot bytes
//   8..13 of a single-segment slot:
//     0    1 column type   1 precision   2 scale   3 key format   4 2 length (varchar)
//   Descriptors are packed from the end of the page downward, in slot order (the first
//   compound slot's descriptors end at page_size); they never overlap the slot table.
#pragma once

#include <pbtree/errors.h>
#include <pbtree/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pbtree {

inline constexpr size_t kIndexSlotSize = 48;
/// Index root slot flag (byte 14): the tree uses the compact node layout (docs/FORMAT.md §2.9).
inline constexpr uint8_t kSlotFlagCompact = 0x04;
/// Slot flags bit (byte 14): the key format was chosen by `pbtree load --key-format auto`.
inline constexpr uint8_t kSlotFlagAutoFormat = 0x80;
/// Index root slot flag (byte 14): a compound index; its segments are in descriptors.
inline constexpr uint8_t kSlotFlagCompound = 0x08;
inline constexpr size_t kSegmentDescriptorSize = 6;
inline constexpr size_t kIndexSlotsOffset = 20;
inline constexpr size_t kMaxIndexNameLength = 31;

/// True if `slots` fit an index root page of `page_size` bytes (slot table plus the
/// compound segment descriptors).
bool index_root_fits(const std::vector<IndexInfo>& slots, uint32_t page_size);

/// Slots an index root page of `page_size` bytes holds: (page_size - 20) / 48.
uint32_t max_index_slots(uint32_t page_size);
/// True if `name` is 1..31 bytes of [A-Za-z0-9_$].
bool valid_index_name(const std::string& name);

/// Fills `page` (page_size bytes) with type 6 and `slots` (slot i at position i; free slots
/// have root_page 0). Throws std::length_error beyond max_index_slots().
void encode_index_root_page(const std::vector<IndexInfo>& slots, uint8_t* page, uint32_t page_size);
/// Parses an index root page; each used slot is checked (name, type, format, flags, id, root
/// page in [2, page_count)). Throws CorruptError "<path>: page 1 (index root): slot 3: ...".
std::vector<IndexInfo> decode_index_root_page(const uint8_t* page, uint32_t page_size,
                                              uint32_t page_count, const std::string& path);

}  // namespace pbtree
