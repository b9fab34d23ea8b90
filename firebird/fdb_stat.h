// gstat's figures for the indexes of a Firebird 3 database (src/utilities/gstat/dba.epp,
// analyze_index and the index selection of its report loop), computed by pbtree's own
// B-tree walk (btree/stats.h analyze_btree) over the database's b-tree pages. The text and
// JSON renderings live in tools/cmd_firebird.cc.
#pragma once

#include <pbtree/errors.h>
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
/// out; system tables only with filter.system), in name order. Throws UsageError "PATH: no
/// table named T" if filter.table names nothing, fdb_no_index_error if filter.index names no
/// index of filter.table or, without it, of the tables listed. `path`: the database, for
/// messages.
std::vector<const FdbTable*> select_tables(const std::string& path,
                                           const std::vector<FdbTable>& catalog,
                                           const FdbStatFilter& filter);

/// The tables of `catalog` other than system tables (all of them with `system`).
std::vector<const FdbTable*> user_tables(const std::vector<FdbTable>& catalog, bool system = false);

/// NotFoundError "PATH: no index named NAME (indexes: A, B, C)": the names of the indexes of
/// `tables` in name order, at most kFdbIndexNamesListed of them ("..., and 12 more"); with
/// none, "(NONE)", e.g. "PATH: no index named X (no index on a user table)".
NotFoundError fdb_no_index_error(const std::string& path,
                                 const std::vector<const FdbTable*>& tables,
                                 const std::string& name, const std::string& none);

/// Index names fdb_no_index_error lists at most.
inline constexpr size_t kFdbIndexNamesListed = 30;

/// A short SQL-ish name of a segment's column type: "integer", "bigint", "numeric(18,2)",
/// "double", "varchar(20)", ... ("type N" if unknown).
std::string fdb_type_name(const FdbSegment& segment);

}  // namespace pbtree::firebird
