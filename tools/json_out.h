// JSON output of the CLI (`stat --json`, `stat --what-if --json`, `stat --firebird --json`,
// `scan --format json`), written with nlohmann/json (Debian's nlohmann-json3-dev): objects keep
// their keys in insertion order, strings are escaped by the library, invalid UTF-8 in a value
// is replaced by U+FFFD, non-finite doubles are written as null.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include <pbtree/stats.h>

namespace pbtree::tools {

/// A JSON value whose objects keep their keys in insertion order.
using Json = nlohmann::ordered_json;

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

}  // namespace pbtree::tools
