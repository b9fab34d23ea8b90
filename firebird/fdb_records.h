// Records of a Firebird relation read straight from its pages: pointer pages, data pages,
// record headers, fragments, the run-length decompression of src/jrd/sqz.cpp, field access
// through a record format laid out as src/jrd/ini.epp / met.epp MET_align do, and blobs read
// by their ids (src/jrd/blb.cpp).
//
// Pointer page (struct pointer_page, src/jrd/ods.h; type 4):
//   off size field
//    16    4 ppg_sequence   sequence number of this pointer page in the relation
//    20    4 ppg_next       next pointer page of the relation, 0 at the end
//    24    2 ppg_count      slots in use
//    26    2 ppg_relation   relation id
//    28    2 ppg_min_space
//    32  4*n ppg_page[]     data page numbers (0: a released slot)
//
// Data page (struct data_page, type 5):
//    16    4 dpg_sequence   sequence number in the relation
//    20    2 dpg_relation
//    22    2 dpg_count      line slots
//    24  4*n dpg_rpt[]      per line: offset (2 bytes; 0 = empty), length (2 bytes)
//
// Record header at a line's offset (struct rhd / rhde / rhdf):
//     0    4 rhd_transaction  creating transaction (low 32 bits)
//     4    4 rhd_b_page       back version page
//     8    2 rhd_b_line
//    10    2 rhd_flags        1 deleted, 2 chain (back version), 4 fragment, 8 incomplete,
//                             16 blob, 64 large, 128 damaged, 1024 long transaction number
//    12    1 rhd_format       format version
//    13  ... data (rhd, 13-byte header) unless:
//             flag 1024 (rhde): 14..15 high transaction word, data at 16
//             flag 8 (rhdf): 14..15 high word, 16..19 rhdf_f_page, 20..21 rhdf_f_line
//             (the next fragment), data at 22
// The data of the primary version and of its fragments, concatenated, is the record
// compressed by Compressor::pack (src/jrd/sqz.cpp): a control byte c (signed); c >= 0: c
// literal bytes follow; c < 0: the next byte repeated -c times (ODS 13.1: c = -1 / -2 take a
// 2- / 4-byte count first; rhd_flags 2048: stored unpacked). Other ODS: firebird/fdb_ods.h.
//
// Uncompressed record: FLAG_BYTES(n) = ((n + 32) & ~31) / 8 bytes of null flags (bit i of
// byte i/8 set: field i is NULL), then the fields in order, each aligned: CHAR not at all,
// VARCHAR (2-byte length + bytes) to 2, every other type to min(its length, 8); SMALLINT 2,
// INTEGER 4, BIGINT and DOUBLE 8, blob ids 8 bytes.
//
// Blob id in a record (struct bid, src/jrd/RecordNumber.h, little-endian machines):
//     0    2 relation id      0 in a temporary blob (never on disk)
//     2    1 reserved
//     3    1 record number bits 32..39
//     4    4 record number bits 0..31
// The blob's header record (struct blh, byte table in firebird/fdb_table_stat.h) is line
// `number % max_records` of the relation's data page of sequence `number / max_records`
// (FdbOds::max_records), listed in slot `sequence % dp_per_pp` of the relation's pointer
// page `sequence / dp_per_pp`. blh_level 0: the data follows the 28-byte header; 1: blob
// page numbers follow, each page (type 8) holding blp_length bytes of data from byte 28;
// 2: page numbers of blob pages whose blp_length / 4 page numbers are those of the data
// pages. A segmented blob (blh_flags without 32) is a run of 2-byte segment lengths each
// followed by its segment; the run continues across pages.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "firebird/fdb_file.h"

namespace pbtree::firebird {

/// Decompresses `in` (Compressor::unpack of src/jrd/sqz.cpp), appending to `out`. With
/// `long_runs` (ODS 13.1, Firebird 5), control byte -1 is followed by a 2-byte and -2 by a
/// 4-byte repeat count (little-endian), then the byte. Returns false if the output would
/// pass `max_out` bytes or a run lacks its count or byte.
bool rle_unpack(std::span<const uint8_t> in, std::vector<uint8_t>& out, size_t max_out,
                bool long_runs = false);

/// Descriptor types (dsc_dtype, src/include/firebird/impl/dsc_pub.h) used by the system
/// relations pbtree reads.
enum class Dtype : uint8_t {
  Text = 1,
  Varying = 3,
  Short = 8,
  Long = 9,
  Double = 12,
  Blob = 17,
  Boolean = 21,
};

/// A permanent blob id: the relation whose data pages hold the blob's header record and that
/// record's number.
struct FdbBlobId {
  uint16_t relation = 0;
  uint64_t number = 0;
  bool operator==(const FdbBlobId&) const = default;
};

/// One field of a record format: its type, length (bytes; VARCHAR includes its 2-byte
/// length word) and offset from the record start.
struct FieldDesc {
  Dtype dtype;
  uint16_t length;
  uint32_t offset = 0;
};

/// A record layout (ini.epp: null flags, then fields aligned by MET_align).
struct RecordFormat {
  std::vector<FieldDesc> fields;
  uint32_t length = 0;  ///< bytes
  /// Lays out `fields` (dtype, length) as Firebird does.
  static RecordFormat layout(std::vector<FieldDesc> fields);
};

/// An uncompressed record viewed through its format. Fields past the end of a short record
/// read as NULL.
class RecordView {
 public:
  RecordView(const RecordFormat& format, std::span<const uint8_t> data)
      : format_(format), data_(data) {}
  bool is_null(size_t field) const;
  /// SMALLINT / INTEGER value, 0 if NULL.
  int64_t integer(size_t field) const;
  /// CHAR / VARCHAR bytes, trailing blanks removed; "" if NULL.
  std::string text(size_t field) const;
  /// The blob id of a BLOB field; nullopt if NULL.
  std::optional<FdbBlobId> blob_id(size_t field) const;

 private:
  const FieldDesc* present(size_t field) const;
  const RecordFormat& format_;
  std::span<const uint8_t> data_;
};

/// Calls `fn(record bytes)` for every primary record version of relation `relation_id` whose
/// data pages the pointer pages `pointer_pages` (in sequence order) list: deleted records,
/// back versions, fragments and blobs are skipped; a record split into fragments is joined.
/// Throws CorruptError naming the file, page and page type on any inconsistency (wrong page
/// type or relation, a line outside the page, a fragment chain that loops or ends early,
/// decompression overrun beyond `max_record` bytes).
void scan_relation(const FdbFile& file, uint16_t relation_id,
                   const std::vector<uint32_t>& pointer_pages, size_t max_record,
                   const std::function<void(std::span<const uint8_t>)>& fn);

/// The data of the blob whose header record is `blh` (`length` bytes, line `line` of data page
/// `page_no`): level 0, 1 or 2, segment length words removed from a segmented blob. Throws
/// CorruptError "FILE: page N (type): ..." naming the data page or the blob page at fault
/// (a header cut short, a level above 2, a blob page of the wrong type or whose blp_length
/// passes the page end, a segment that passes the blob's end, more than `max_bytes` bytes).
std::vector<uint8_t> fdb_blob_data(const FdbFile& file, uint32_t page_no, uint32_t line,
                                   const uint8_t* blh, uint32_t length, size_t max_bytes);

/// The data of blob `id`, stored in the relation whose pointer pages (in sequence order) are
/// `pointer_pages` (fdb_blob_data). Throws CorruptError naming the file and the page at fault
/// when the record number lies beyond the pointer pages or in an empty slot, the data page
/// belongs to another relation or has another sequence, or the line is empty or not a blob
/// header.
std::vector<uint8_t> read_fdb_blob(const FdbFile& file, const std::vector<uint32_t>& pointer_pages,
                                   FdbBlobId id, size_t max_bytes);

/// The pointer pages of RDB$PAGES itself: from hdr_PAGES along ppg_next.
std::vector<uint32_t> pages_relation_pointer_pages(const FdbFile& file);

}  // namespace pbtree::firebird
