// JSON output helpers (tools/json_out.h) over nlohmann/json.
#include "tools/json_out.h"

namespace pbtree::tools {

Json column_value_json(std::optional<std::string_view> text) {
  if (!text) return Json(nullptr);
  return Json(std::string(*text));
}

std::string json_dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string json_array_lines(const std::vector<std::string>& elements) {
  if (elements.empty()) return "[]\n";
  std::string out = "[";
  for (size_t i = 0; i < elements.size(); ++i) {
    out += i == 0 ? "\n  " : ",\n  ";
    out += elements[i];
  }
  return out + "\n]\n";
}

void add_gstat_figures(Json& o, const IndexStats& s) {
  o["root_page"] = s.root_page;
  o["depth"] = s.depth;
  o["leaf_buckets"] = s.leaf_buckets;
  o["nodes"] = s.nodes;
  o["avg_node_length"] = s.avg_node_length;
  o["total_dup"] = s.total_dup;
  o["max_dup"] = s.max_dup;
  o["avg_key_length"] = s.avg_key_length;
  o["compression_ratio"] = s.compression_ratio;
  o["avg_prefix_length"] = s.avg_prefix_length;
  o["avg_data_length"] = s.avg_data_length;
  o["clustering_factor"] = s.clustering_factor;
  o["clustering_ratio"] = s.clustering_ratio;
  o["fill_distribution"] =
      Json::array({s.fill_distribution[0], s.fill_distribution[1], s.fill_distribution[2],
                   s.fill_distribution[3], s.fill_distribution[4]});
  o["index_pages"] = s.index_pages;
}

void add_tree_shape(Json& o, const TreeShape& shape) {
  Json levels = Json::array();
  for (const LevelStats& l : shape.levels) {
    Json level;
    level["level"] = l.level;
    level["pages"] = l.pages;
    level["nodes"] = l.nodes;
    level["avg_fill"] = l.avg_fill;
    level["avg_node_length"] = l.avg_node_length;
    level["unused_bytes"] = l.unused_bytes;
    levels.push_back(std::move(level));
  }
  o["levels"] = std::move(levels);
  o["leaves_out_of_order"] = shape.leaves_out_of_order;
  o["null_entries"] = shape.null_entries;
}

}  // namespace pbtree::tools
