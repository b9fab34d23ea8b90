// gstat's table figures (`gstat -r`, src/utilities/gstat/dba.epp analyze_data,
// analyze_data_page, analyze_fragments, analyze_versions, analyze_blob of Firebird 3.0 and
// 5.0; Firebird 2.5 prints a subset computed by the same rules): records, back versions,
// fragments, formats, pointer and data pages, fill distribution and blobs of each table.
// The data pages of all tables asked for are read in one pass in file order, in requests of
// up to kFdbChunkBytes, so that a large database streams from disk in bounded memory; only
// back versions, fragments and level-2 blob pointer pages are read page by page. The text and
// JSON renderings live in tools/fdb_table_format.*.
//
// Byte layouts read here (src/jrd/ods.h, the same offsets in ODS 11.x, 12.0 and 13.x):
// data page header and line array, and record headers: see firebird/fdb_records.h.
// Data page pag_flags (byte 1): 0x01 dpg_orphan, 0x02 dpg_full, 0x04 dpg_large, 0x08
// dpg_swept (ODS 12+), 0x10 dpg_secondary (ODS 12+).
// Blob header record (struct blh, a data-page line whose rhd_flags has 16 = rhd_blob):
//   off size field
//     0    4 blh_lead_page
//     4    4 blh_max_sequence
//     8    2 blh_max_segment
//    10    2 blh_flags        32 rhd_stream_blob (no 2-byte segment lengths)
//    12    1 blh_level        0: data follows, 1: blob page numbers follow, 2: numbers of
//                             pages of blob page numbers follow
//    16    4 blh_count        segments
//    20    4 blh_length       bytes of blob data
//    24    2 blh_sub_type
//    26    1 blh_charset
//    28  ... blh_page[] (level 1, 2) or the data (level 0) (BLH_SIZE = 28)
// Blob page (struct blob_page, type 8):
//    16    4 blp_lead_page
//    20    4 blp_sequence
//    24    2 blp_length       bytes used after the header (data, or 4-byte page numbers)
//    28  ... blp_page[] (BLP_SIZE = 28)
// Blob id in a record (struct bid, 8 bytes): 0..1 relation id, 3 record number bits 32..39,
// 4..7 record number bits 0..31; record number = dpg_sequence * max records per data page +
// line, max records = (page size - 28) / 17 (Ods::maxRecsPerDP).
// RDB$FORMATS.RDB$DESCRIPTOR (a blob): 2-byte count, then count descriptors of 12 bytes
// (struct Ods::Descriptor: dtype 1, scale 1, length 2, sub_type 2, flags 2, offset 4); a
// format's record length is the last descriptor's offset + length (dba.epp get_format_length).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"

namespace pbtree::firebird {

/// Largest read request of the data-page pass (bytes).
inline constexpr size_t kFdbChunkBytes = size_t{1} << 20;

/// Blobs of one level (blh_level 0, 1 or 2) of a table.
struct FdbBlobLevel {
  uint64_t count = 0;  ///< blobs
  uint64_t space = 0;  ///< bytes of blob data (sum of blh_length)
  uint64_t pages = 0;  ///< blob pages (level 1: data pages; level 2: pointer + data pages)
};

/// dba.epp's struct dba_rel figures of one table. Lengths are bytes.
struct FdbTableStats {
  uint32_t pointer_page = 0, index_root = 0;  ///< first pointer page, index root page
  uint32_t total_formats = 0;                 ///< rows of RDB$FORMATS for the table
  uint32_t used_formats = 0;                  ///< of those, formats some primary record has
  uint64_t records = 0;                       ///< primary record versions (incl. deleted stubs)
  uint64_t record_space = 0;  ///< their packed bytes without record headers, with fragments
  uint64_t versions = 0, version_space = 0, max_versions = 0;  ///< back versions
  uint64_t fragments = 0, fragment_space = 0, max_fragments = 0;
  uint64_t format_space = 0;  ///< sum over records of their format's unpacked length
  uint64_t pointer_pages = 0, slots = 0, data_pages = 0;
  uint64_t primary_pages = 0, swept_pages = 0, empty_pages = 0, full_pages = 0;
  uint64_t bigrec_pages = 0;            ///< fragment pages holding one line of a big record
  uint64_t total_space = 0;             ///< bytes in use on the data pages (line array + lines)
  std::array<uint64_t, 5> fill{};       ///< data pages by fill: 0-19%, ..., 80-99%
  std::array<FdbBlobLevel, 3> blobs{};  ///< by blh_level

  uint64_t blob_count() const { return blobs[0].count + blobs[1].count + blobs[2].count; }
  uint64_t blob_space() const { return blobs[0].space + blobs[1].space + blobs[2].space; }
  uint64_t blob_pages() const { return blobs[0].pages + blobs[1].pages + blobs[2].pages; }
  /// Firebird 5's "Table size": page size * (pointer + data + blob pages), bytes.
  uint64_t table_size(uint32_t page_size) const {
    return uint64_t{page_size} * (pointer_pages + data_pages + blob_pages());
  }
  double average_record_length() const;           ///< record_space / records (0 without records)
  double average_version_length() const;          ///< version_space / versions
  double average_fragment_length() const;         ///< fragment_space / fragments
  double average_unpacked_length() const;         ///< format_space / records
  double compression_ratio() const;               ///< format_space / record_space
  double average_fill(uint32_t page_size) const;  ///< percent of (page size - 24) per page
};

/// Unpacked record length of each format of each relation: relation id -> RDB$FORMAT ->
/// length (bytes, as Firebird's 16-bit USHORT).
using FdbFormatLengths = std::map<uint16_t, std::map<int16_t, uint16_t>>;

/// Reads RDB$FORMATS (relation 8) and its descriptor blobs (fdb_blob_data of
/// firebird/fdb_records.h). Throws CorruptError naming the file and page on a malformed
/// record or blob.
FdbFormatLengths read_format_lengths(const FdbFile& file, const std::vector<FdbTable>& catalog);

/// The figures of each table in `tables` (in that order). `on_pages(done, total)`, if set, is
/// called after each read request with the data pages analysed so far. Throws CorruptError
/// "FILE: page N (data): ..." on a page of the wrong type or relation, a line outside its page,
/// a pointer chain that loops or a data page listed twice.
std::vector<FdbTableStats> analyze_fdb_tables(
    const FdbFile& file, const std::vector<const FdbTable*>& tables,
    const FdbFormatLengths& formats, const std::function<void(uint64_t, uint64_t)>& on_pages = {});

}  // namespace pbtree::firebird
