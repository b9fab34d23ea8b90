// `pbtree stat --firebird FILE.fdb`: gstat -r's report of a Firebird database (ODS 11-13,
// Firebird 2.x-5) read by pbtree itself (firebird/), as text (byte-exact index blocks) or JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "firebird/fdb_stat.h"
#include "tools/progress.h"

namespace pbtree::tools {

/// Options of `stat --firebird`.
struct FirebirdStatArgs {
  std::string db;
  firebird::FdbStatFilter filter;
  bool json = false;
  bool what_if = false;  ///< --what-if: predicted sizes instead of gstat's blocks
  bool levels = false;   ///< --levels: btree/level_stats.h lines after each block
};

/// Options of `pbtree import FILE.fdb --index NAME DB`.
struct FirebirdImportArgs {
  std::string fdb, index, db;
  std::string name;        ///< name of the new pbtree index (default: the Firebird name)
  std::string key_format;  ///< default: the Firebird index's own key format
  std::string layout = "firebird";
  uint32_t page_size = 0;  ///< new file only; default: the Firebird database's page size
};

/// Opens the database read-only, reads its catalog and prints the report to `out`. Throws
/// UsageError/CorruptError/IoError (the CLI turns them into "pbtree: ..." and exit 1).
/// `progress` (optional): one line per index walked (tools/progress.h).
void run_firebird_stat(const FirebirdStatArgs& args, std::ostream& out,
                       Progress* progress = nullptr);

/// `stat --firebird --what-if`: per index the what-if table (tools/what_if_format.h) or why
/// it is not predicted, the count of rescaled-double keys several values map to, then a
/// summary of the indexes whose best (format, layout) is >= 1.2x smaller in index pages.
/// After the first line of an expression or partial index, its source text:
/// "  expression: (UPPER(C_UTF8))", "  condition: WHERE C_SMALL > 0" (in JSON: the keys
/// "expression" and "condition" of format_fdb_stat_json).
std::string format_fdb_what_if(const firebird::FdbFile& file,
                               const std::vector<firebird::FdbTable>& catalog,
                               const firebird::FdbStatFilter& filter, bool json,
                               Progress* progress = nullptr);

/// `pbtree import`: builds a new pbtree index in DB (created if missing) from the entries of
/// the Firebird index (keys re-encoded if --key-format differs; same record numbers).
/// Prints "imported N entries of NAME into DB (key format F, layout L)". Throws
/// UsageError (no such index, index not decodable), KeyError, CorruptError, IoError.
void run_firebird_import(const FirebirdImportArgs& args, std::ostream& out);

/// run_firebird_import's work once the index is found: copies `index` of `file` into
/// `args.db` (args.fdb/args.index are used only in messages). Same errors.
void import_fdb_index(const firebird::FdbFile& file, const firebird::FdbIndex& index,
                      const FirebirdImportArgs& args, std::ostream& out);

/// The part of gstat -r's report before the tables, as the release that wrote the file
/// prints it (ppg.cpp PPG_print_header: Firebird 2.5's lines for ODS 11, Firebird 3's for
/// ODS 12, Firebird 5's for ODS 13): `Database "NAME"`, the header page's fields, its
/// variable data (clumplets), the file sequence and "Analyzing database pages ...". gstat's
/// "Gstat execution time" line carries the local time. `name`: the path as given.
std::string format_fdb_header(const firebird::FdbFile& file, const std::string& name);

/// `gstat -r`'s report body for the selected tables: per table "NAME (id)\n", its table
/// lines (tools/fdb_table_format.h: Firebird 3's for ODS 11 and 12, Firebird 5's for ODS 13;
/// with filter.index set, only "    Primary pointer page: P, Index root page: R\n") and an
/// empty line, then each index's block (tools/stat_format.h format_gstat_block).
std::string format_fdb_stat(const firebird::FdbFile& file,
                            const std::vector<firebird::FdbTable>& catalog,
                            const firebird::FdbStatFilter& filter, bool levels = false,
                            Progress* progress = nullptr);

/// The same as a JSON array of objects, per table (unless filter.index is set) first
/// {"kind":"table", table, table_id, page_size, the figures of add_fdb_table_figures}, then
/// per index {"kind":"index", table, table_id, name, id, unique, descending, "expression"
/// (an expression index only: RDB$EXPRESSION_SOURCE, a string), "condition" (a partial index
/// only, ODS 13.1: RDB$CONDITION_SOURCE, "WHERE ..."), page_size,
/// segments [{field, type, itype}], and the gstat figures under the
/// keys of format_json_object (root_page, depth, leaf_buckets, nodes, ...)}.
/// `levels` (--levels) adds add_tree_shape's keys (tools/json_out.h) to each index object.
std::string format_fdb_stat_json(const firebird::FdbFile& file,
                                 const std::vector<firebird::FdbTable>& catalog,
                                 const firebird::FdbStatFilter& filter, bool levels = false,
                                 Progress* progress = nullptr);

}  // namespace pbtree::tools
