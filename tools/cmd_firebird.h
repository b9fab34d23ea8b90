// `pbtree stat --firebird FILE.fdb`: gstat -r's report of a Firebird 3 database read by
// pbtree itself (firebird/), as text (byte-exact index blocks) or JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "firebird/fdb_stat.h"

namespace pbtree::tools {

/// Options of `stat --firebird`.
struct FirebirdStatArgs {
  std::string db;
  firebird::FdbStatFilter filter;
  bool json = false;
};

/// Opens the database read-only, reads its catalog and prints the report to `out`. Throws
/// UsageError/CorruptError/IoError (the CLI turns them into "pbtree: ..." and exit 1).
void run_firebird_stat(const FirebirdStatArgs& args, std::ostream& out);

/// `fbstat -r`'s report body for the selected tables: per table "NAME (id)\n",
/// "    Primary pointer page: P, Index root page: R\n" and an empty line, then each index's
/// block (tools/stat_format.h format_gstat_block, byte-exact Firebird 3).
std::string format_fdb_stat(const firebird::FdbFile& file, const std::vector<firebird::FdbTable>& catalog,
                            const firebird::FdbStatFilter& filter);

/// The same as a JSON array of objects: table, table_id, name, id, unique, descending,
/// segments [{field, itype, field_type, scale, length}], and the gstat figures under the
/// keys of format_json_object (root_page, depth, leaf_buckets, nodes, ...).
std::string format_fdb_stat_json(const firebird::FdbFile& file, const std::vector<firebird::FdbTable>& catalog,
                                 const firebird::FdbStatFilter& filter);

}  // namespace pbtree::tools
