// What differs between the Firebird on-disk structures pbtree reads (ODS 11.0-11.2, 12.0,
// 13.0, 13.1): one small table per ODS, the only place that knows these differences. The
// rest of firebird/ reads pages through it. Taken from src/jrd/ods.h, btn.h/btn.cpp,
// relations.h, fields.h and sqz.cpp of Firebird B2_1_Release, B2_5_Release, v3.0.x, v4.0.x
// and v5.0.x (docs/FORMAT.md §4.8).
//
// Generic page header (struct pag), 16 bytes:
//   off size  ODS 11 (Firebird 2.x)            ODS 12, 13 (Firebird 3, 4, 5)
//     0    1  pag_type                         pag_type
//     1    1  pag_flags                        pag_flags (0x80 encrypted page; b-tree: 0x20
//                                              released)
//     2    2  pag_checksum (12345 or 0)        reserved
//     4    4  pag_generation                   pag_generation
//     8    4  pag_scn                          pag_scn
//    12    4  reserved                         pag_pageno (the page's own number)
//
// Header page (page 0):
//   off size  ODS 11                           ODS 12                  ODS 13
//    16    2  hdr_page_size                    same                    same
//    18    2  hdr_ods_version: major | 0x8000  same                    same
//    20    4  hdr_PAGES                        same                    same
//    24    4  hdr_next_page (next file's hdr)  same                    same
//    28    4  hdr_oldest_transaction           same                    same
//    32    4  hdr_oldest_active                same                    same
//    36    4  hdr_next_transaction             same                    same
//    40    2  hdr_sequence (file in the set)   same                    same
//    42    2  hdr_flags (see kHdr* below)      same                    same
//    44    8  hdr_creation_date (ISC date,time) same                   same
//    52    4  hdr_attachment_id                same                    same
//    56    4  hdr_shadow_count                 same                    same
//    60    2  hdr_implementation (SSHORT)      60..63 hdr_cpu, hdr_os, hdr_cc, hdr_compatibility
//    62    2  hdr_ods_minor                    —
//    64    2  hdr_ods_minor_original           hdr_ods_minor           hdr_ods_minor
//    66    2  hdr_end                          hdr_end                 hdr_end
//    68    4  hdr_page_buffers                 hdr_page_buffers        hdr_page_buffers
//    72    4  hdr_bumped_transaction           hdr_oldest_snapshot     hdr_oldest_snapshot
//    76    4  hdr_oldest_snapshot              hdr_backup_pages        hdr_backup_pages
//    80    4  hdr_backup_pages                 hdr_crypt_page          hdr_crypt_page
//    84   12  hdr_misc                         hdr_top_crypt (4)       hdr_crypt_plugin (32)
//    88                                        hdr_crypt_plugin (32)
//   116                                                                hdr_att_high (4)
//   120                                        hdr_att_high (4)        hdr_tra_high (8)
//   124                                        hdr_tra_high (8)
//   variable header data (clumplets) from:  96                  132                     128
//
// Pointer page (type 4), every ODS:
//    16    4 ppg_sequence    20 4 ppg_next    24 2 ppg_count    26 2 ppg_relation
//    28    2 ppg_min_space   30 2 ppg_max_space (ODS 11; padding later)
//    32  4*n ppg_page[]      n = dp_per_pp (dp_per_pp() below)
//    then per slot control bits: ODS 11 2 bits per slot (bit 0 of the pair: data page full,
//    bit 1: large object on it; byte slot/4, shift 2*(slot%4)); ODS 12+ one byte per slot
//    (0x01 full, 0x02 large object, 0x04 swept, 0x08 secondary, 0x10 empty).
//
// Data page (type 5), every ODS:
//    16    4 dpg_sequence    20 2 dpg_relation    22 2 dpg_count
//    24  4*n dpg_rpt[]       offset (2), length (2) per line
//    pag_flags: 0x01 orphan, 0x02 full, 0x04 large object; ODS 12+ also 0x08 swept,
//    0x10 secondary.
//
// Record header (rhd, at a line's offset), every ODS:
//     0 4 transaction  4 4 back page  8 2 back line  10 2 flags  12 1 format  13 data
//   fragmented (flag 8, rhdf): ODS 11: f_page at 16, f_line at 20, data at 22; ODS 12+:
//   14 2 tra_high, then the same 16 / 20 / 22. ODS 12+: flag 1024 (rhde): 14 2 tra_high,
//   data at 16. ODS 13.1: flag 2048 (rhd_not_packed): the data is the record as it is.
//   flags: 1 deleted, 2 chain (back version), 4 fragment, 8 incomplete, 16 blob,
//   32 stream blob / delta, 64 large, 128 damaged, 256 gc active.
//
// Blob page (type 8), every ODS:
//    16 4 blp_lead_page   20 4 blp_sequence   24 2 blp_length   26 2 pad   28 data or
//    page numbers (4 each) of a level-2 blob.
// Blob header (blh, a record with flag 16 on a data page):
//     0 4 lead page  4 4 max sequence  8 2 max segment  10 2 flags  12 1 level (0, 1, 2)
//    16 4 count  20 4 length  24 2 sub type  26 1 charset  27 1 unused  28 data or pages.
//
// Record compression (sqz.cpp): control byte c (signed): c >= 0: c literal bytes; c in
// -3..-128: the next byte -c times. ODS 13.1 only: c = -1: a 2-byte count, then the byte;
// c = -2: a 4-byte count, then the byte.
//
// Index root page (type 6), every ODS: 16 2 irt_relation, 18 2 irt_count, 20 slots of 12
// bytes (root 4, transaction 4, desc offset 2, keys 1, flags 1: 1 unique, 2 descending,
// 4 in progress, 8 foreign, 16 primary, 32 expression, 64 condition (ODS 13.1) / complete
// segments (ODS 11)); descriptors of 8 bytes (field 2, itype 2, selectivity float 4).
//
// B-tree page (type 7): bytes 16..33 as in node/btree_page.h in every ODS. Then
//   ODS 12, 13: 34 2 btr_jump_interval, 36 2 btr_jump_size, 38 1 btr_jump_count, jump
//               nodes from 39, first node at 39 + btr_jump_size.
//   ODS 11:     when pag_flags has btr_jump_info (0x40): 34 2 firstNodeOffset,
//               36 2 jumpAreaSize, 38 1 jumpers, jump nodes from 39, first node at
//               firstNodeOffset. pag_flags: 0x01 don't gc, 0x08 descending, 0x10 all record
//               numbers, 0x20 large keys, 0x40 jump info, 0x80 released.
//   Nodes: the ODS 12 node format (node/node.h) in ODS 11 when pag_flags has large keys;
//   ODS 11 pages without large keys and jump info (Firebird 1.x layout) are not read.
#pragma once

#include <cstdint>
#include <string>

namespace pbtree::firebird {

/// The layout facts of one ODS.
struct FdbOds {
  uint16_t major = 0;                ///< 11, 12, 13
  uint16_t minor = 0;                ///< as read from the header page
  const char* release = "";          ///< "Firebird 2.5", "Firebird 5.0", ...
  bool page_number_field = true;     ///< pag_pageno at 12 (ODS 12+)
  bool btree_jump_in_header = true;  ///< btr_jump_* at 34..38 (ODS 12+); ODS 11: IndexJumpInfo
  uint32_t identifier_bytes = 31;    ///< RDB$ names: CHAR(31), ODS 13: CHAR(252) (63 x UTF8)
  bool long_runs = false;            ///< sqz control bytes -1/-2 and rhd_not_packed (ODS 13.1)
  bool rhdf_tra_high = true;         ///< ODS 12+: rhdf has tra_high at 14 (f_page still at 16)
  bool rhd_long_tranum = true;       ///< ODS 12+: flag 1024 means a 16-byte header (rhde)
  // Header page fields that move.
  uint32_t hdr_minor_offset = 64;            ///< ODS 11: 62
  uint32_t hdr_oldest_snapshot_offset = 72;  ///< ODS 11: 76
  uint32_t hdr_clumplets_offset = 132;       ///< ODS 11: 96, 13: 128
  uint16_t hdr_dialect3 = 0x10;              ///< ODS 11: 0x100
  uint16_t hdr_read_only = 0x20;             ///< ODS 11: 0x200
  uint16_t hdr_encrypted = 0x40;             ///< ODS 11: none (0)
  uint16_t hdr_no_reserve = 0x08;            ///< ODS 11: 0x20
  // System relation fields that exist (relations.h: fields added by ODS).
  bool relation_type = true;     ///< RDB$RELATIONS.RDB$RELATION_TYPE (ODS 11.1+)
  bool sql_security = false;     ///< RDB$RELATIONS.RDB$SQL_SECURITY (ODS 13+)
  bool fields_owner = true;      ///< RDB$FIELDS.RDB$SECURITY_CLASS, RDB$OWNER_NAME (ODS 12+)
  bool rfr_identity = true;      ///< RDB$RELATION_FIELDS.RDB$GENERATOR_NAME, ... (ODS 12+)
  bool index_condition = false;  ///< RDB$INDICES.RDB$CONDITION_BLR/_SOURCE (ODS 13.1+)
  /// Data pages listed by one pointer page (dataPagesPerPP / dbb_dp_per_pp).
  uint32_t dp_per_pp(uint32_t page_size) const;
  /// Record slots of a data page (maxRecsPerDP / dbb_max_records): record number =
  /// (pointer page sequence * dp_per_pp + slot) * max_records + line.
  uint32_t max_records(uint32_t page_size) const;
  /// "ODS 13.1 (Firebird 5.0)".
  std::string describe() const;
};

/// The layout of ODS major.minor, or nullptr if pbtree does not read it (anything but
/// 11.0-11.2, 12.0-12.2 and 13.0-13.1).
const FdbOds* fdb_ods(uint16_t major, uint16_t minor);

/// The release that wrote ODS major.minor, for messages ("InterBase 6 / Firebird 1.x",
/// "Firebird 2.5", "InterBase XE7+", "an unknown release").
std::string fdb_ods_release(uint16_t major, uint16_t minor);

/// "pbtree reads ODS 11.0-11.2 (Firebird 2.0-2.5), 12.0 (Firebird 3.0) and 13.0-13.1
/// (Firebird 4.0 and 5.0)": the end of every refusal.
const char* fdb_ods_read_list();

}  // namespace pbtree::firebird
