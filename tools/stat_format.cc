// Text, JSON and table renderings of IndexStats. The gstat block is byte-exact Firebird 3.
#include "tools/stat_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt::format("{}", v);
}

std::string format_choice_line(const IndexInfo& info, const KeyFormatChoice& choice) {
  return fmt::format("\tLayout: {}, key format: {}\n", layout_name(info.def.layout),
                     describe_choice(info.def.type, choice));
}

std::string format_json_object(const IndexInfo& info, const IndexStats& s, uint32_t page_size,
                               const KeyFormatChoice* choice) {
  std::string out = "{";
  out += fmt::format("\"name\": {}, \"id\": {}, \"type\": {}, \"key_format\": {}, ",
                     json_string(info.def.name), info.id, json_string(info.def.type.name()),
                     json_string(key_format_name(info.def.format)));
  if (info.def.compound()) {  // every segment's type and key format
    out += "\"segments\": [";
    for (size_t i = 0; i < info.def.segments.size(); ++i) {
      out += fmt::format("{}{{\"type\": {}, \"key_format\": {}}}", i ? ", " : "",
                         json_string(info.def.segments[i].type.name()),
                         json_string(key_format_name(info.def.segments[i].format)));
    }
    out += "], ";
  }
  out += fmt::format("\"unique\": {}, \"descending\": {}, \"page_size\": {}, ",
                     info.def.unique ? "true" : "false", info.def.descending ? "true" : "false",
                     page_size);
  out += fmt::format("\"layout\": \"{}\", ",
                     info.def.layout == NodeLayout::Compact ? "compact" : "firebird");
  out += fmt::format("\"root_page\": {}, \"depth\": {}, \"leaf_buckets\": {}, \"nodes\": {}, ",
                     s.root_page, s.depth, s.leaf_buckets, s.nodes);
  out += fmt::format("\"avg_node_length\": {}, \"total_dup\": {}, \"max_dup\": {}, ",
                     json_number(s.avg_node_length), s.total_dup, s.max_dup);
  out += fmt::format("\"avg_key_length\": {}, \"compression_ratio\": {}, ",
                     json_number(s.avg_key_length), json_number(s.compression_ratio));
  out += fmt::format("\"avg_prefix_length\": {}, \"avg_data_length\": {}, ",
                     json_number(s.avg_prefix_length), json_number(s.avg_data_length));
  out += fmt::format("\"clustering_factor\": {}, \"clustering_ratio\": {}, ", s.clustering_factor,
                     json_number(s.clustering_ratio));
  out += fmt::format("\"fill_distribution\": [{}, {}, {}, {}, {}], ", s.fill_distribution[0],
                     s.fill_distribution[1], s.fill_distribution[2], s.fill_distribution[3],
                     s.fill_distribution[4]);
  out += fmt::format("\"index_pages\": {}, \"bytes_per_entry\": {}, \"avg_leaf_fill\": {}",
                     s.index_pages, json_number(s.bytes_per_entry), json_number(s.avg_leaf_fill));
  if (choice) {
    out += fmt::format(
        ", \"key_format_auto\": {{\"layout\": {}, \"default\": {}, \"default_bytes_per_entry\": "
        "{}, \"best\": {}, \"best_bytes_per_entry\": {}, \"ratio\": {}, \"sample_entries\": {}, "
        "\"reason\": {}}}",
        json_string(layout_name(info.def.layout)),
        json_string(key_format_name(choice->default_format)), json_number(choice->default_bytes),
        json_string(key_format_name(choice->best)), json_number(choice->best_bytes),
        json_number(choice->ratio), choice->sample_entries,
        json_string(describe_choice(info.def.type, *choice)));
  }
  out += "}";
  return out;
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

}  // namespace pbtree::tools
