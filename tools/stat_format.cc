// Text, JSON and table renderings of IndexStats. The gstat block is byte-exact Firebird 3.
#include "tools/stat_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/json_out.h"

namespace pbtree::tools {

std::string format_gstat_block(const IndexInfo& info, const IndexStats& s) {
  std::string name = info.def.name;
  while (!name.empty() && name.back() == ' ') name.pop_back();
  std::string out = fmt::format("    Index {} ({})\n", name, info.id);
  out += fmt::format("\tRoot page: {}, depth: {}, leaf buckets: {}, nodes: {}\n", s.root_page,
                     s.depth, s.leaf_buckets, s.nodes);
  out += fmt::format("\tAverage node length: {:.2f}, total dup: {}, max dup: {}\n",
                     s.avg_node_length, s.total_dup, s.max_dup);
  out += fmt::format("\tAverage key length: {:.2f}, compression ratio: {:.2f}\n", s.avg_key_length,
                     s.compression_ratio);
  out += fmt::format("\tAverage prefix length: {:.2f}, average data length: {:.2f}\n",
                     s.avg_prefix_length, s.avg_data_length);
  out += fmt::format("\tClustering factor: {}, ratio: {:.2f}\n", s.clustering_factor,
                     s.clustering_ratio);
  out += "\tFill distribution:\n";
  for (int band = 0; band < 5; ++band) {
    out += fmt::format("\t    {:2d} - {:2d}% = {}\n", band * 20, band * 20 + 19,
                       s.fill_distribution[band]);
  }
  out += "\n";
  return out;
}

// "(varchar(2) text, bigint rescaled-double)": a compound index's segments with formats.
std::string segment_list(const IndexDefinition& def) {
  std::string s = "(";
  for (size_t i = 0; i < def.segments.size(); ++i) {
    s += fmt::format("{}{} {}", i ? ", " : "", def.segments[i].type.name(),
                     key_format_name(def.segments[i].format));
  }
  return s + ")";
}

std::string format_extra_lines(const IndexInfo& info, const IndexStats& s, uint32_t page_size) {
  std::string out =
      info.def.compound()
          ? fmt::format("\tSegments: {} {}{}{}, page size {}{}\n", info.def.segments.size(),
                        segment_list(info.def), info.def.unique ? ", unique" : "",
                        info.def.descending ? ", descending" : "", page_size,
                        info.def.layout == NodeLayout::Compact ? ", compact layout" : "")
          : fmt::format("\tType: {}, key format: {}{}{}, page size {}{}\n", info.def.type.name(),
                        key_format_name(info.def.format), info.def.unique ? ", unique" : "",
                        info.def.descending ? ", descending" : "", page_size,
                        info.def.layout == NodeLayout::Compact ? ", compact layout" : "");
  out += fmt::format("\tIndex pages: {}, bytes per entry: {:.2f}, average leaf fill: {:.2f}\n",
                     s.index_pages, s.bytes_per_entry, s.avg_leaf_fill);
  out += "\n";
  return out;
}

std::string format_choice_line(const IndexInfo& info, const KeyFormatChoice& choice) {
  return fmt::format("\tLayout: {}, key format: {}\n", layout_name(info.def.layout),
                     describe_choice(info.def.type, choice));
}

std::string format_json_object(const IndexInfo& info, const IndexStats& s, uint32_t page_size,
                               const KeyFormatChoice* choice, const TreeShape* shape) {
  Json o;
  o["name"] = info.def.name;
  o["id"] = info.id;
  o["type"] = info.def.type.name();
  o["key_format"] = std::string(key_format_name(info.def.format));
  if (info.def.compound()) {  // every segment's type and key format
    Json segments = Json::array();
    for (const auto& g : info.def.segments) {
      segments.push_back(
          Json{{"type", g.type.name()}, {"key_format", std::string(key_format_name(g.format))}});
    }
    o["segments"] = std::move(segments);
  }
  o["unique"] = info.def.unique;
  o["descending"] = info.def.descending;
  o["page_size"] = page_size;
  o["layout"] = info.def.layout == NodeLayout::Compact ? "compact" : "firebird";
  add_gstat_figures(o, s);
  o["bytes_per_entry"] = s.bytes_per_entry;
  o["avg_leaf_fill"] = s.avg_leaf_fill;
  if (choice) {
    Json c;
    c["layout"] = std::string(layout_name(info.def.layout));
    c["default"] = std::string(key_format_name(choice->default_format));
    c["default_bytes_per_entry"] = choice->default_bytes;
    c["best"] = std::string(key_format_name(choice->best));
    c["best_bytes_per_entry"] = choice->best_bytes;
    c["ratio"] = choice->ratio;
    c["sample_entries"] = choice->sample_entries;
    c["reason"] = describe_choice(info.def.type, *choice);
    o["key_format_auto"] = std::move(c);
  }
  if (shape) add_tree_shape(o, *shape);
  return json_dump(o);
}

std::string format_comparison_table(const std::vector<TableRow>& rows) {
  const std::vector<std::string> head = {"index",       "type",         "key format",
                                         "depth",       "leaves",       "avg node len",
                                         "avg key len", "compr. ratio", "bytes/entry"};
  std::vector<std::vector<std::string>> cells;
  for (const TableRow& r : rows) {
    cells.push_back({r.info.def.name, r.info.def.type.name(),
                     std::string(key_format_name(r.info.def.format)),
                     fmt::format("{}", r.stats.depth), fmt::format("{}", r.stats.leaf_buckets),
                     fmt::format("{:.2f}", r.stats.avg_node_length),
                     fmt::format("{:.2f}", r.stats.avg_key_length),
                     fmt::format("{:.2f}", r.stats.compression_ratio),
                     fmt::format("{:.2f}", r.stats.bytes_per_entry)});
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) out += "  ";
      // Text columns (first three) left-aligned, figures right-aligned.
      out +=
          c < 3 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(head);
  size_t total = 0;
  for (size_t w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& row : cells) out += line(row);
  return out;
}

std::string describe_choice(const TypeSpec& type, const KeyFormatChoice& c) {
  const std::string_view chosen = key_format_name(c.format);
  if (allowed_key_formats(type).size() == 1) {
    return fmt::format("{} (auto: the only format of {})", chosen, type.name());
  }
  const uint64_t percent = 100 / kAutoSampleEvery;
  if (c.format != c.default_format) {
    return fmt::format("{} (auto: {:.2f} vs {:.2f} bytes/entry on a {}% sample, {:.2f}x)", chosen,
                       c.best_bytes, c.default_bytes, percent, c.ratio);
  }
  if (c.best == c.default_format) {
    return fmt::format("{} (auto: the smallest, {:.2f} bytes/entry on a {}% sample)", chosen,
                       c.default_bytes, percent);
  }
  return fmt::format(
      "{} (auto: kept the default; {} {:.2f} vs {:.2f} bytes/entry on a {}% sample, {:.2f}x < "
      "{:.2f}x)",
      chosen, key_format_name(c.best), c.best_bytes, c.default_bytes, percent, c.ratio,
      kAutoMinGain);
}

}  // namespace pbtree::tools
