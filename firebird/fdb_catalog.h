// The catalog of a Firebird database as pbtree needs it: tables, their pointer and index
// root pages (RDB$PAGES), their indexes with the source text of their expression or WHERE
// condition and their segments (RDB$INDICES, RDB$INDEX_SEGMENTS), the segment columns' types
// (RDB$RELATION_FIELDS, RDB$FIELDS) and each index's slot in its table's index root page. System
// relation layouts are those of src/jrd/relations.h and src/jrd/fields.h of the ODS read
// (firebird/fdb_ods.h; ODS 11 to 13.1).
//
// Index root page (struct index_root_page, src/jrd/ods.h, ODS 12; type 6):
//   off size field
//    16    2 irt_relation
//    18    2 irt_count         slots
//    20 12*n irt_rpt[]         per slot (index id = RDB$INDEX_ID - 1):
//                                0  4 irt_root   root b-tree page (0: unused, unless flag 4)
//                                4  4 irt_transaction
//                                8  2 irt_desc   offset of the segment descriptors
//                               10  1 irt_keys   segments
//                               11  1 irt_flags  1 unique, 2 descending, 4 in progress,
//                                                8 foreign key, 16 primary key, 32 expression
//   at irt_desc, irt_keys descriptors of 8 bytes (struct irtd):
//                                0  2 irtd_field  field id
//                                2  2 irtd_itype  key type (0 numeric/double, 1 string,
//                                                 3 byte array, 4 metadata, 5 date, 6 time,
//                                                 7 timestamp, 8 int64 (rescaled double),
//                                                 9 boolean, >= 64 collated string)
//                                4  4 irtd_selectivity (float)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "firebird/fdb_file.h"

namespace pbtree::firebird {

/// One segment (column) of an index.
struct FdbSegment {
  std::string field;       ///< column name
  uint16_t field_id = 0;   ///< from the index root page
  uint16_t itype = 0;      ///< idx_itype from the index root page
  int16_t field_type = 0;  ///< RDB$FIELDS.RDB$FIELD_TYPE (7 smallint, 8 integer, 16 int64,
                           ///< 27 double, 10 float, 37 varchar, 14 char, ...)
  int16_t field_sub_type = 0;
  int16_t scale = 0;      ///< RDB$FIELD_SCALE (<= 0)
  int16_t length = 0;     ///< RDB$FIELD_LENGTH, bytes
  int16_t precision = 0;  ///< RDB$FIELD_PRECISION
  int16_t charset = 0;    ///< RDB$CHARACTER_SET_ID
};

/// One index.
struct FdbIndex {
  std::string name;
  uint32_t id = 0;  ///< RDB$INDEX_ID - 1: slot in the index root page
  bool unique = false, descending = false, inactive = false, expression = false;
  bool condition = false;            ///< a partial index (RDB$CONDITION_BLR, ODS 13.1)
  std::string expression_source;     ///< RDB$EXPRESSION_SOURCE: "(UPPER(C_UTF8))", "" if NULL
  std::string condition_source;      ///< RDB$CONDITION_SOURCE: "WHERE C_SMALL > 0", "" if NULL
  uint32_t root_page = 0;            ///< 0 if the slot is empty or being built
  std::vector<FdbSegment> segments;  ///< in position order
};

/// One table with its pages and indexes (indexes sorted by name, as gstat lists them).
struct FdbTable {
  std::string name;
  uint16_t id = 0;
  bool system = false;        ///< RDB$SYSTEM_FLAG != 0
  bool listed = true;         ///< gstat analyses it (not a view, external or virtual table)
  uint32_t pointer_page = 0;  ///< first pointer page (sequence 0), 0 if unknown
  uint32_t index_root = 0;    ///< index root page, 0 if unknown
  std::vector<uint32_t> pointer_pages;  ///< in sequence order
  std::vector<FdbIndex> indexes;
};

/// Reads the catalog. Tables are sorted by name. The source texts of expression and partial
/// indexes are read from their blobs (read_fdb_blob, firebird/fdb_records.h). Throws
/// CorruptError (file, page, page type) on malformed pages or records, e.g. a system relation
/// without pointer pages; "FILE: index NAME: RDB$CONDITION_SOURCE: page N (data): ..." on a
/// malformed source blob.
std::vector<FdbTable> read_catalog(const FdbFile& file);

}  // namespace pbtree::firebird
