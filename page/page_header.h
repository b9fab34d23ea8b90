// The generic 16-byte page header every page of a pbtree file carries, Firebird's `struct pag`
// (src/jrd/ods.h, ODS 12), with the page types and the page checksum:
//
//   off size field
//     0    1 page type (PageType below)
//     1    1 flags (0)
//     2    2 reserved (0)
//     4    4 checksum: CRC-32C (Castagnoli, reflected, init/xorout FFFFFFFF) of the whole
//            page computed with these four bytes read as zero. Firebird keeps pag_generation
//            here; pbtree uses the slot so the 39-byte B-tree header stays Firebird's.
//     8    4 scn (checkpoint number that last wrote the page; 0 in this version)
//    12    4 page number of the page itself (checked on read)
//
// Integer fields of pages are little-endian (native on x86-64, as Firebird's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/coding.h"

namespace pbtree {

/// Page types (byte 0). 1, 6 and 7 are Firebird's codes for header, index root and B-tree.
enum class PageType : uint8_t {
  Header = 1,
  IndexRoot = 6,
  Btree = 7,
  Free = 9,
};

/// "header", "index root", "b-tree", "free" or "unknown (N)" for messages.
std::string page_type_name(uint8_t type);

inline constexpr size_t kPageHeaderSize = 16;

/// Byte 0 of any page: its page type (PageType; a raw code on a damaged page).
inline uint8_t page_type_of(const uint8_t* page) {
  return page[0];
}
/// Sets byte 0 of a page: its page type.
inline void set_page_type(uint8_t* page, PageType type) {
  page[0] = static_cast<uint8_t>(type);
}
/// Bytes 12..15 of any page: the page number it carries (checked on read).
inline uint32_t page_number_of(const uint8_t* page) {
  return get_u32(page + 12);
}

/// "PBTREE\r\n": bytes 16..23 of a pbtree file's header page (page/file_header.h).
inline constexpr uint8_t kFileMagic[8] = {0x50, 0x42, 0x54, 0x52, 0x45, 0x45, 0x0D, 0x0A};
/// The file id, 8 bytes at this offset of the header page (page/file_header.h): random and
/// nonzero, set when the file is created; 0 in files created before it existed. The log
/// carries it (page/wal.h) so a log is only ever replayed into its own file.
inline constexpr size_t kFileIdOffset = 80;

/// CRC-32C of `page` (page_size bytes) with bytes 4..7 taken as zero (util/crc32c.h, ISA-L).
uint32_t page_checksum(const uint8_t* page, uint32_t page_size);

}  // namespace pbtree
