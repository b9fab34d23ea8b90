// Text and JSON renderings of WhatIfReport.
#include "tools/what_if_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tools/json_out.h"
#include "tools/stat_format.h"

namespace pbtree::tools {

std::string aligned_table(const std::vector<std::string>& head,
                          const std::vector<std::vector<std::string>>& cells,
                          const std::vector<std::string>& tails) {
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
  std::string out = line(head, "");
  size_t total = 0;
  for (size_t w : width) total += w;
  out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
  for (size_t i = 0; i < cells.size(); ++i) out += line(cells[i], tails[i]);
  return out;
}

std::string format_what_if_table(const WhatIfReport& r) {
  std::string out = fmt::format(
      "What-if for index {} ({}): {}, {} entries, page size {}\n", r.info.def.name, r.info.id,
      r.type_name.empty() ? r.info.def.type.name() : r.type_name, r.entries, r.page_size);
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
  std::vector<std::string> tails;
  for (const WhatIfRow& w : r.rows) {
    tails.push_back(w.available ? "" : fmt::format("  ({})", w.unavailable));
  }
  out += aligned_table(head, cells, tails);
  out += "(* current; predicted for a bulk build into a new file)\n\n";
  return out;
}

void add_prediction_figures(Json& p, const WhatIfRow& w) {
  p["nodes"] = w.nodes;
  p["depth"] = w.depth;
  p["leaf_pages"] = w.leaf_pages;
  p["index_pages"] = w.index_pages;
  p["total_dup"] = w.total_dup;
  p["avg_key_length"] = w.avg_key_length;
  p["compression_ratio"] = w.compression_ratio;
  p["avg_prefix_length"] = w.avg_prefix_length;
  p["avg_data_length"] = w.avg_data_length;
  p["bytes_per_entry"] = w.bytes_per_entry;
  p["leaf_bytes_per_entry"] = w.leaf_bytes_per_entry;
  p["used_bytes_per_entry"] = w.used_bytes_per_entry;
}

Json what_if_json(const WhatIfReport& r) {
  Json o;
  o["name"] = r.info.def.name;
  o["id"] = r.info.id;
  o["type"] = r.type_name.empty() ? r.info.def.type.name() : r.type_name;
  o["key_format"] = std::string(key_format_name(r.info.def.format));
  o["layout"] = std::string(layout_name(r.info.def.layout));
  o["page_size"] = r.page_size;
  o["entries"] = r.entries;
  Json predictions = Json::array();
  for (const WhatIfRow& w : r.rows) {
    Json p;
    p["key_format"] = std::string(key_format_name(w.format));
    p["layout"] = std::string(layout_name(w.layout));
    p["current"] = w.current;
    p["available"] = w.available;
    if (!w.available) {
      p["reason"] = w.unavailable;
      predictions.push_back(std::move(p));
      continue;
    }
    add_prediction_figures(p, w);
    predictions.push_back(std::move(p));
  }
  o["predictions"] = std::move(predictions);
  return o;
}

std::string format_what_if_json(const WhatIfReport& r) {
  return json_dump(what_if_json(r));
}

}  // namespace pbtree::tools
