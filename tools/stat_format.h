// Printing index statistics: Firebird 3's gstat index block (exact layout of
// src/utilities/gstat/dba.epp, Firebird v3.0.11 .. v5.0.4),
// pbtree's own lines after it, JSON, and the demo's comparison table.
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <string>
#include <vector>

#include "btree/level_stats.h"
#include "btree/what_if.h"

namespace pbtree::tools {

/// gstat's index block: "    Index NAME (id)\n", six TAB-indented lines of figures, five fill
/// distribution lines ("\t     0 - 19% = n" ...), then an empty line. Doubles are %.2f.
std::string format_gstat_block(const IndexInfo& info, const IndexStats& stats);

/// pbtree's lines printed after the block:
/// "\tType: bigint, key format: rescaled-double, unique, page size 8192\n"
/// "\tIndex pages: N, bytes per entry: x.xx, average leaf fill: x.xx\n" and an empty line.
std::string format_extra_lines(const IndexInfo& info, const IndexStats& stats, uint32_t page_size);

/// The line `pbtree stat` prints after the gstat block of an index whose key format was
/// chosen by --key-format auto: "\tLayout: firebird, key format: decimal128 (auto: 6.05 vs
/// 12.10 bytes/entry on a 25% sample, 2.00x)\n" (describe_choice()).
std::string format_choice_line(const IndexInfo& info, const KeyFormatChoice& choice);

/// One JSON object on one line (tools/json_out.h) with keys name, id, type, key_format, unique,
/// descending, page_size, root_page, depth, leaf_buckets, nodes, avg_node_length, total_dup,
/// max_dup, avg_key_length, compression_ratio, avg_prefix_length, avg_data_length,
/// clustering_factor, clustering_ratio, fill_distribution (array of 5 counts), index_pages,
/// bytes_per_entry, avg_leaf_fill; with `choice` (an auto index) also "key_format_auto":
/// {"layout", "default", "default_bytes_per_entry", "best", "best_bytes_per_entry", "ratio",
/// "sample_entries", "reason"}; with `shape` (--levels) also add_tree_shape's keys
/// (tools/json_out.h). Non-finite doubles are written as null.
std::string format_json_object(const IndexInfo& info, const IndexStats& stats, uint32_t page_size,
                               const KeyFormatChoice* choice = nullptr,
                               const TreeShape* shape = nullptr);

/// One row of the comparison table.
struct TableRow {
  IndexInfo info;
  IndexStats stats;
};

/// Aligned table: index, type, key format, depth, leaf buckets, avg node length, avg key
/// length, compression ratio, bytes per entry; a header line, a rule, one line per row.
std::string format_comparison_table(const std::vector<TableRow>& rows);

/// The CLI's text for what --key-format auto chose and why:
/// "decimal128 (auto: 6.05 vs 12.10 bytes/entry on a 25% sample, 2.00x)" or, default kept,
/// "rescaled-double (auto: kept the default; decimal128 8.10 vs 8.50 bytes/entry on a 25%
/// sample, 1.05x < 1.20x)"; one allowed format: "bcd (auto: the only format of int128)".
std::string describe_choice(const TypeSpec& type, const KeyFormatChoice& choice);

}  // namespace pbtree::tools
