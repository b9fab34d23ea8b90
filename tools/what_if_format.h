// Printing what-if statistics (btree/what_if.h) for `pbtree stat --what-if` and the demo:
// an aligned text table per index and a JSON object per index.
#pragma once

#include <string>
#include <vector>

#include "btree/what_if.h"
#include "tools/json_out.h"

namespace pbtree::tools {

/// One index's table, e.g.
///   "What-if for index I_B (0): bigint, 1000 entries, page size 8192\n"
///   "  key format       layout    leaves  pages  depth  avg key len  compr. ratio  leaf B/entry"
///   "  bytes/entry\n", a rule, one line per (format, layout) with "*" in the first column on
/// the current one and "n/a" plus the reason for rows not available in this build, then
/// "  (* current; predicted for a bulk build into a new file)\n" and an empty line. Figures
/// as gstat prints them (%.2f); leaves = leaf buckets, pages = all levels.
std::string format_what_if_table(const WhatIfReport& report);

/// The aligned what-if table body shared by plain and compound indexes: the `head` line, a
/// rule, then each row of `cells` followed by its `tails` entry; columns as wide as their
/// widest cell, the first three left-aligned, the rest right-aligned, two spaces between,
/// trailing spaces cut.
std::string aligned_table(const std::vector<std::string>& head,
                          const std::vector<std::vector<std::string>>& cells,
                          const std::vector<std::string>& tails);

/// One JSON object: name, id, type, key_format, layout, page_size, entries, and
/// "predictions": an array of {key_format, layout, current, available, then either reason or
/// nodes, depth, leaf_pages, index_pages, total_dup, avg_key_length, compression_ratio,
/// avg_prefix_length, avg_data_length, bytes_per_entry, leaf_bytes_per_entry,
/// used_bytes_per_entry}. Non-finite doubles are null.
Json what_if_json(const WhatIfReport& report);
/// Adds one available prediction's figures to `prediction`: nodes, depth, leaf_pages,
/// index_pages, total_dup, avg_key_length, compression_ratio, avg_prefix_length,
/// avg_data_length, bytes_per_entry, leaf_bytes_per_entry, used_bytes_per_entry.
void add_prediction_figures(Json& prediction, const WhatIfRow& row);
/// what_if_json() dumped on one line (tools/json_out.h).
std::string format_what_if_json(const WhatIfReport& report);

}  // namespace pbtree::tools

#include "file/what_if_compound.h"

namespace pbtree::tools {

/// A compound index's what-if table (file/what_if_compound.h), e.g.
///   "What-if for index I_CC (14): (varchar(2), bigint), 1000 entries, page size 8192\n"
/// then the columns of format_what_if_table with "segment formats" ("text, decimal128 (2)":
/// the formats in segment order, the changed segment in parentheses) in place of "key
/// format", "*" on the index's own formats and layout, the same closing line.
std::string format_compound_what_if_table(const CompoundWhatIfReport& report);

/// The JSON object of format_what_if_json for a compound index: "segments" (types) and each
/// prediction's "segment_formats" array in place of the single type and key format.
std::string format_compound_what_if_json(const CompoundWhatIfReport& report);

}  // namespace pbtree::tools
