// gstat's figures for the indexes of a Firebird 3 database (src/utilities/gstat/dba.epp,
// analyze_index and the index selection of its report loop), computed by pbtree's own
// B-tree walk (btree/stats.h analyze_btree) over the database's b-tree pages. The text and
// JSON renderings live in tools/cmd_firebird.cc.
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <string>
#include <vector>

#include "btree/stats.h"
#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"

namespace pbtree::firebird {

/// Which tables and indexes to report.
struct FdbStatFilter {
  std::string table;    ///< only this table (empty: all)
  std::string index;    ///< only this index (empty: all)
  bool system = false;  ///< include system tables (gstat -system)
};

/// The page reader analyze_fdb_index uses: Firebird page checks (type 7, self number, not
/// encrypted) plus btr_relation = the table's id and btr_id = the index id.
BtreePageReader fdb_btree_reader(const FdbFile& file, const FdbTable& table, const FdbIndex& index);

/// gstat's figures of one index. An index whose slot is empty or being built has all-zero
/// figures, as gstat prints them.
/// `on_page`, if set, is called with each page number read (a progress hook).
IndexStats analyze_fdb_index(const FdbFile& file, const FdbTable& table, const FdbIndex& index,
                             const std::function<void(uint32_t)>& on_page = {});

/// gstat lists the index (active; the filter's index if one is named).
bool fdb_index_wanted(const FdbIndex& index, const FdbStatFilter& filter);

/// The tables gstat -r would list under `filter` (views, external and virtual tables left
/// out; system tables only with filter.system), in name order. Throws UsageError if
/// filter.table or filter.index names nothing.
std::vector<const FdbTable*> select_tables(const std::vector<FdbTable>& catalog,
                                           const FdbStatFilter& filter);

/// A short SQL-ish name of a segment's column type: "integer", "bigint", "numeric(18,2)",
/// "double", "varchar(20)", ... ("type N" if unknown).
std::string fdb_type_name(const FdbSegment& segment);

}  // namespace pbtree::firebird
