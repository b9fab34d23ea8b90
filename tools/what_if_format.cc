// Text and JSON renderings of WhatIfReport.
#include "tools/what_if_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tools/stat_format.h"

namespace pbtree::tools {

std::string format_what_if_table(const WhatIfReport& r) {
  std::string out =
      fmt::format("What-if for index {} ({}): {}, {} entries, page size {}\n", r.info.def.name,
                  r.info.id, r.info.def.type.name(), r.entries, r.page_size);
  const std::vector<std::string> head = {
      "",      "key format",  "layout",       "leaves",       "pages",
      "depth", "avg key len", "compr. ratio", "leaf B/entry", "bytes/entry"};
  std::vector<std::vector<std::string>> cells;
  for (const WhatIfRow& w : r.rows) {
    std::vector<std::string> row = {w.current ? "*" : "", std::string(key_format_name(w.format)),
                                    std::string(layout_name(w.layout))};
    if (w.available) {
      row.push_back(fmt::format("{}", w.leaf_pages));
      row.push_back(fmt::format("{}", w.index_pages));
      row.push_back(fmt::format("{}", w.depth));
      row.push_back(fmt::format("{:.2f}", w.avg_key_length));
      row.push_back(fmt::format("{:.2f}", w.compression_ratio));
      row.push_back(fmt::format("{:.2f}", w.leaf_bytes_per_entry));
      row.push_back(fmt::format("{:.2f}", w.bytes_per_entry));
    } else {
      row.push_back("n/a");
    }
    cells.push_back(std::move(row));
  }
  std::vector<size_t> width(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : cells) {
      if (c < row.size()) width[c] = std::max(width[c], row[c].size());
    }
  }
  auto line = [&](const std::vector<std::string>& row, const std::string& tail) {
    std::string s;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) s += "  ";
      s +=
          c < 3 ? fmt::format("{:<{}}", row[c], width[c]) : fmt::format("{:>{}}", row[c], width[c]);
    }
    s += tail;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  out += line(head, "");
  size_t total = 0;
  for (size_t w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (size_t i = 0; i < cells.size(); ++i) {
    const WhatIfRow& w = r.rows[i];
    out += line(cells[i], w.available ? "" : fmt::format("  ({})", w.unavailable));
  }
  out += "(* current; predicted for a bulk build into a new file)\n\n";
  return out;
}

std::string format_what_if_json(const WhatIfReport& r) {
  std::string out = "{";
  out += fmt::format(
      "\"name\": {}, \"id\": {}, \"type\": {}, \"key_format\": {}, \"layout\": {}, "
      "\"page_size\": {}, \"entries\": {}, \"predictions\": [",
      json_string(r.info.def.name), r.info.id, json_string(r.info.def.type.name()),
      json_string(key_format_name(r.info.def.format)), json_string(layout_name(r.info.def.layout)),
      r.page_size, r.entries);
  bool first = true;
  for (const WhatIfRow& w : r.rows) {
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += fmt::format("\"key_format\": {}, \"layout\": {}, \"current\": {}, \"available\": {}, ",
                       json_string(key_format_name(w.format)), json_string(layout_name(w.layout)),
                       w.current ? "true" : "false", w.available ? "true" : "false");
    if (!w.available) {
      out += fmt::format("\"reason\": {}}}", json_string(w.unavailable));
      continue;
    }
    out += fmt::format(
        "\"nodes\": {}, \"depth\": {}, \"leaf_pages\": {}, \"index_pages\": {}, "
        "\"total_dup\": {}, ",
        w.nodes, w.depth, w.leaf_pages, w.index_pages, w.total_dup);
    out += fmt::format(
        "\"avg_key_length\": {}, \"compression_ratio\": {}, \"avg_prefix_length\": {}, "
        "\"avg_data_length\": {}, ",
        json_number(w.avg_key_length), json_number(w.compression_ratio),
        json_number(w.avg_prefix_length), json_number(w.avg_data_length));
    out += fmt::format(
        "\"bytes_per_entry\": {}, \"leaf_bytes_per_entry\": {}, \"used_bytes_per_entry\": {}}}",
        json_number(w.bytes_per_entry), json_number(w.leaf_bytes_per_entry),
        json_number(w.used_bytes_per_entry));
  }
  out += "\n  ]}";
  return out;
}

}  // namespace pbtree::tools
