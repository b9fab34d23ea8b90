// The file header (page 0) and the free pages of a pbtree file. Page 1, the index root page,
// is file/index_root.h; every other page is a B-tree page (node/btree_page.h) or a free page.
// Integers little-endian; every page starts with the 16-byte generic header of
// page/page_header.h (checksum, page number).
//
// Page 0, header (page type 1):
//
//   off size field
//     0   16 generic page header, type 1
//    16    8 magic "PBTREE\r\n" (50 42 54 52 45 45 0D 0A)
//    24    4 format version: 1
//    28    4 page size in bytes: 4096, 8192, 16384 or 32768
//    32    4 page count: pages in use, header and index root page included
//    36    4 index root page number: 1
//    40    4 free-list head: page number of the first free page (type 9), 0 = none
//    44    4 free-page count: pages on the free list (0 when the head is 0)
//    48    8 checkpoint counter: incremented by every committed change
//    56    4 last checkpoint: pages written in place into the file, header included
//    60    4 reserved, 0
//    64    8 last checkpoint: bytes written in place (pages × page size)
//    72    8 last checkpoint: bytes of its batch made durable in the log (page/wal.h)
//    80    8 file id: random, nonzero, set when the file is created and never changed; the
//            write-ahead log carries it (page/wal.h) and is replayed only into the file
//            with the same id (0 in files created by builds before it; kFileIdOffset)
//    88  ... reserved, 0, to the end of the page
// (56..79 are 0 in files whose last change predates the write-ahead log.)
//
// Free page (page type 9; a page no index uses, on the free list, written by the page
// allocator of file/index_file.cc at a checkpoint):
//
//   off size field
//     0   16 generic page header, type 9
//    16    4 next free page: page number of the next page on the list, 0 = last
//    20  ... zero to the end of the page
//
// The free list is a chain from the header's free-list head through the next fields; it
// holds exactly the header's free-page count pages, each in [2, page count), no page twice.
// Pages freed by deletes and merges join it at the head at the next checkpoint; allocation
// takes the head first (LIFO), then grows the file.
//
#pragma once

#include <pbtree/errors.h>

#include <cstdint>
#include <string>
#include <vector>

#include "page/page_header.h"

namespace pbtree {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kHeaderPage = 0;
inline constexpr uint32_t kIndexRootPage = 1;
/// Bytes of the header page that must be read before the page size is known.
inline constexpr size_t kHeaderPrefixSize = 56;
/// Bytes of the header page up to the end of the last-checkpoint counters.
inline constexpr size_t kHeaderStatsEnd = 80;
/// Bytes of the header page up to the end of the file id.
inline constexpr size_t kHeaderFileIdEnd = 88;

/// True for 4096, 8192, 16384 and 32768.
bool valid_page_size(uint32_t page_size);

/// Fields of the header page.
struct FileHeader {
  uint32_t format_version = kFormatVersion;
  uint32_t page_size = 0;   ///< bytes
  uint32_t page_count = 0;  ///< pages
  uint32_t index_root_page = kIndexRootPage;
  uint32_t free_list_head = 0;   ///< first free page, 0 = none
  uint32_t free_page_count = 0;  ///< pages on the free list
  uint64_t checkpoint = 0;
  uint32_t last_pages_written = 0;  ///< pages written in place by the last checkpoint
  uint64_t last_bytes_written = 0;  ///< bytes written in place by the last checkpoint
  uint64_t last_bytes_synced = 0;   ///< bytes of the last checkpoint's batch synced in the log
  uint64_t file_id = 0;             ///< identity of the file (bytes 80..87), 0 = none
};

/// A new random nonzero file id.
uint64_t new_file_id();

/// Fills `page` (page_size bytes): type 1, magic and fields, zeros elsewhere.
void encode_header_page(const FileHeader& header, uint8_t* page);
/// Fills `page` (page_size bytes) as a free page (type 9) whose next free page is `next`.
void encode_free_page(uint32_t next, uint8_t* page, uint32_t page_size);
/// The next free page of free page `page_no` (page_size bytes, checksum already verified):
/// checks type 9, next 0 or in [2, page_count) and not page_no itself, zero bytes after
/// offset 20. Throws CorruptError "<path>: page 12 (free): ..." or "<path>: page 12: expected
/// a free page, found a b-tree page".
uint32_t decode_free_page(const uint8_t* page, uint32_t page_no, uint32_t page_size,
                          uint32_t page_count, const std::string& path);

/// Parses the first kHeaderPrefixSize bytes of a file (`available` of them present; with at
/// least kHeaderStatsEnd, the last-checkpoint counters too, else they stay 0). Throws
/// CorruptError "<path>: not a pbtree file (wrong magic)", "...: unknown format version 7
/// (this build reads 1)", "...: bad page size 1000", "...: truncated file (N bytes)",
/// "...: index root page 5 (expected 1)", "...: free-list head 9 outside [2, 8)" or
/// "...: free-list head 0 with 3 free pages".
FileHeader decode_header_prefix(const uint8_t* bytes, size_t available, const std::string& path);

}  // namespace pbtree
