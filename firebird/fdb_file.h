// Read-only access to a Firebird database file (ODS 11.0-11.2, 12.0, 13.0-13.1; RedDatabase
// files read as the Firebird ODS they extend) without the engine: the header page checks and
// a page reader that checks each page's type and self number. What differs per ODS is in
// firebird/fdb_ods.h (byte tables of every ODS there); the table below is ODS 12.
//
// Page header (struct pag, src/jrd/ods.h; every page; integers little-endian):
//   off size field
//     0    1 pag_type        1 header, 2 page inventory, 3 transaction inventory, 4 pointer,
//                            5 data, 6 index root, 7 b-tree, 8 blob, 9 generators, 10 SCN
//     1    1 pag_flags       0x80: the page is encrypted on disk (refused)
//     2    2 reserved
//     4    4 pag_generation
//     8    4 pag_scn
//    12    4 pag_pageno      the page's own number
//
// Header page (page 0, struct header_page, src/jrd/ods.h), the fields pbtree reads:
//    16    2 hdr_page_size       4096, 8192 or 16384 in Firebird 3
//    18    2 hdr_ods_version     ODS major version | 0x8000 (ODS_FIREBIRD_FLAG): 0x800C = 12
//    20    4 hdr_PAGES           first pointer page of RDB$PAGES (relation 0)
//    24    4 hdr_next_page       next header page of a multi-file database (0: one file)
//    36    4 hdr_next_transaction
//    42    2 hdr_flags           0x40 hdr_encrypted (refused), 0x10 SQL dialect 3, 0x20 read-only
//    64    2 hdr_ods_minor       0 for ODS 12.0 (ODS 11: at 62)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "firebird/fdb_ods.h"

namespace pbtree::firebird {

/// Firebird page types (pag_type, src/jrd/ods.h).
enum class FdbPage : uint8_t {
  Header = 1,
  PageInventory = 2,
  Transactions = 3,
  Pointer = 4,
  Data = 5,
  IndexRoot = 6,
  Btree = 7,
  Blob = 8,
  Generators = 9,
  Scns = 10,
};

/// "header", "pointer", "data", "index root", "b-tree", ... ("type N" for unknown codes).
std::string fdb_page_type_name(uint8_t type);

/// What the header page says.
struct FdbHeader {
  uint32_t page_size = 0;            ///< bytes
  uint16_t ods_word = 0;             ///< hdr_ods_version as stored (0x800C, RedDatabase 0xE00C)
  uint16_t ods_major = 0;            ///< 11, 12, 13
  uint16_t ods_minor = 0;            ///< as stored (RedDatabase: 3)
  const FdbOds* ods = nullptr;       ///< the layout read (RedDatabase 12.x: ODS 12.0's)
  std::string product = "Firebird";  ///< "Firebird" or "RedDatabase"
  uint32_t pages_pointer_page = 0;   ///< hdr_PAGES
  uint32_t generation = 0;           ///< pag_generation of page 0 when opened
  uint32_t oldest_transaction = 0, oldest_active = 0, oldest_snapshot = 0;
  uint32_t next_transaction = 0;
  uint16_t sequence = 0;  ///< hdr_sequence
  uint16_t flags = 0;
  uint32_t next_page = 0;  ///< hdr_next_page
  uint32_t attachment_id = 0, shadow_count = 0, page_buffers = 0;
  uint32_t scn = 0;                          ///< pag_scn of page 0
  uint32_t creation_date[2] = {0, 0};        ///< ISC date (days since 1858-11-17), time (1/10 ms)
  uint8_t implementation[4] = {0, 0, 0, 0};  ///< ODS 12+: cpu, os, cc, compatibility
  int16_t implementation_id = 0;             ///< ODS 11: hdr_implementation
};

/// One database file, opened read-only. Thread-compatible (const methods only read).
class FdbFile {
 public:
  /// Opens `path` and checks the header page. Throws IoError (open/read failures),
  /// CorruptError "FILE: not a Firebird database (...)" on a bad header page or file size,
  /// UsageError naming what the file is for an ODS pbtree does not read ("FILE: an
  /// InterBase 6 / Firebird 1.x database (ODS 10.0); pbtree reads ..."), for an encrypted
  /// database, a multi-file database or a secondary file of one.
  static std::unique_ptr<FdbFile> open(const std::string& path);
  /// The same checks over a database image held in memory (fuzzing, tests); `name` stands
  /// for the path in messages.
  static std::unique_ptr<FdbFile> from_bytes(const std::string& name, std::vector<uint8_t> bytes);
  ~FdbFile();
  FdbFile(const FdbFile&) = delete;
  FdbFile& operator=(const FdbFile&) = delete;

  const std::string& path() const { return path_; }
  const FdbHeader& header() const { return header_; }
  uint32_t page_size() const { return header_.page_size; }
  /// Whole pages in the file.
  uint32_t page_count() const { return page_count_; }

  /// Reads page `page_no` into `out` (page_size bytes) and checks that it lies in the file,
  /// that its pag_type is `type`, that pag_pageno is `page_no` (ODS 12+) and that it is not
  /// encrypted. ODS 11 b-tree pages are handed back in the ODS 12 layout (jump information
  /// in btr_jump_*, pag_pageno set, pag_flags cleared), so one node reader serves all.
  /// Throws CorruptError "FILE: page N (data): ..." (the type read from the page) or IoError;
  /// IoError "FILE: page N changed while it was read ..." when a mismatch comes from a page
  /// or header page that another process rewrote meanwhile (a live database).
  void read_page(uint32_t page_no, FdbPage type, uint8_t* out) const;
  /// The checks of read_page on a page already read (e.g. by read_raw).
  void check_page(uint32_t page_no, FdbPage type, const uint8_t* page) const;
  /// Reads `n` bytes at byte `offset` with no page checks (large sequential requests).
  /// Throws CorruptError "FILE: truncated ..." past the end of the file, IoError.
  void read_raw(uint64_t offset, uint8_t* out, size_t n) const { read_bytes(offset, out, n); }
  /// The layout of the ODS read.
  const FdbOds& ods() const { return *header_.ods; }
  /// Throws CorruptError "FILE: page N (<type>): what".
  [[noreturn]] void fail(uint32_t page_no, FdbPage type, const std::string& what) const;

 private:
  FdbFile() = default;
  void read_bytes(uint64_t offset, uint8_t* out, size_t n) const;
  void check_header();
  void normalize_ods11_btree(uint32_t page_no, uint8_t* page) const;
  [[noreturn]] void mismatch(uint32_t page_no, FdbPage type, const uint8_t* page,
                             const std::string& what) const;

  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> memory_;  // from_bytes() images
  bool in_memory_ = false;
  uint64_t file_size_ = 0;
  uint32_t page_count_ = 0;
  FdbHeader header_;
};

/// Little-endian field access on Firebird page bytes.
uint16_t fdb_u16(const uint8_t* p);
uint32_t fdb_u32(const uint8_t* p);

}  // namespace pbtree::firebird
