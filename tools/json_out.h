// JSON output of the CLI (`stat --json`, `stat --what-if --json`, `stat --firebird --json`,
// `scan --format json`), written with nlohmann/json (Debian's nlohmann-json3-dev): objects keep
// their keys in insertion order, strings are escaped by the library, invalid UTF-8 in a value
// is replaced by U+FFFD, non-finite doubles are written as null. One rule for every writer
// (docs/CLI.md "JSON output"): values of indexed columns are strings (column_value_json); counts,
// sizes, figures and record numbers are numbers.
#pragma once

#include <pbtree/stats.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "btree/level_stats.h"

namespace pbtree::tools {

/// A JSON value whose objects keep their keys in insertion order.
using Json = nlohmann::ordered_json;

/// A value of an indexed column, by the rule of every JSON output: a JSON string holding its
/// text as `pbtree scan` prints it ("9007199254740993", "-2.00", "1.5", "AB"), whatever the
/// column's type, so that readers which parse numbers as doubles (JavaScript, jq) never round
/// a bigint, int128 or numeric past 2^53; null for NULL (nullopt). Counts, sizes, figures
/// and record numbers (below 2^40) are not values: they are assigned as JSON numbers.
Json column_value_json(std::optional<std::string_view> text);

/// `value` on one line, compact (`{"name":"I","id":0}`), invalid UTF-8 replaced by U+FFFD.
std::string json_dump(const Json& value);

/// Already dumped JSON values as an array, one element per line:
/// "[\n  A,\n  B\n]\n", or "[]\n" for none.
std::string json_array_lines(const std::vector<std::string>& elements);

/// gstat's figures of one index, in gstat's order: root_page, depth, leaf_buckets, nodes,
/// avg_node_length, total_dup, max_dup, avg_key_length, compression_ratio, avg_prefix_length,
/// avg_data_length, clustering_factor, clustering_ratio, fill_distribution (5 counts: leaves
/// per 20% band), index_pages; added to `object`.
void add_gstat_figures(Json& object, const IndexStats& stats);

/// `--levels` in JSON (the figures of format_tree_shape): "levels", an array root level first
/// of {level, pages, nodes, avg_fill (0..1), avg_node_length, unused_bytes}, then
/// "leaves_out_of_order" and "null_entries"; added to `object`.
void add_tree_shape(Json& object, const TreeShape& shape);

}  // namespace pbtree::tools
