// `pbtree stat A --compare B`: two files (pbtree or Firebird ODS 11-13, told apart by their
// header page) or two indexes side by side, gstat's figures and pbtree's page counts with B/A
// ratios.
#pragma once

#include <string>

namespace pbtree::tools {

/// True if `path` starts with a Firebird header page (page type 1, ODS word with the
/// Firebird flag), whatever its ODS version; false for anything else (a pbtree file) and for a
/// file that cannot be opened or read.
bool is_firebird_file(const std::string& path);

/// Options of `stat --compare`.
struct CompareArgs {
  std::string a, b;     ///< files
  std::string index;    ///< index of A (empty: every index name present in both)
  std::string b_index;  ///< index of B (default: `index`)
};

/// The comparison tables, one per index pair:
///   "Compare I_X (a.fdb) with I_Y (b.pbt)\n"
///   "  figure               A          B      B/A\n" and a rule, then one row per figure
/// (depth, leaf buckets, index pages, nodes, average node, key, prefix and data length,
/// compression ratio, total dup, max dup, clustering factor, bytes per entry), B/A as %.2f
/// ("-" if A is 0), and an empty line. Throws UsageError (no common index, no such index),
/// CorruptError, IoError.
std::string compare_stats(const CompareArgs& args);

}  // namespace pbtree::tools
