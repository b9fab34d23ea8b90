// Text and JSON renderings of CompoundWhatIfReport (tools/what_if_format.h).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tools/json_out.h"
#include "tools/stat_format.h"
#include "tools/what_if_format.h"

namespace pbtree::tools {

namespace {

std::string type_list(const IndexDefinition& def) {
  std::string s = "(";
  for (size_t i = 0; i < def.segments.size(); ++i) {
    s += (i ? ", " : "") + def.segments[i].type.name();
  }
  return s + ")";
}

std::string format_list(const CompoundWhatIfVariant& v) {
  std::string s;
  for (size_t i = 0; i < v.formats.size(); ++i) {
    s += (i ? ", " : "") + std::string(key_format_name(v.formats[i]));
  }
  if (v.changed != 0) s += fmt::format(" ({})", v.changed);
  return s;
}

}  // namespace

std::string format_compound_what_if_table(const CompoundWhatIfReport& r) {
  std::string out =
      fmt::format("What-if for index {} ({}): {}, {} entries, page size {}\n", r.info.def.name,
                  r.info.id, type_list(r.info.def), r.entries, r.page_size);
  const std::vector<std::string> head = {
      "",      "segment formats", "layout",       "leaves",       "pages",
      "depth", "avg key len",     "compr. ratio", "leaf B/entry", "bytes/entry"};
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> tails;
  for (const CompoundWhatIfVariant& v : r.variants) {
    for (const WhatIfRow& w : v.rows) {
      std::vector<std::string> row = {w.current ? "*" : "", format_list(v),
                                      std::string(layout_name(w.layout))};
      if (w.available) {
        row.push_back(fmt::format("{}", w.leaf_pages));
        row.push_back(fmt::format("{}", w.index_pages));
        row.push_back(fmt::format("{}", w.depth));
        row.push_back(fmt::format("{:.2f}", w.avg_key_length));
        row.push_back(fmt::format("{:.2f}", w.compression_ratio));
        row.push_back(fmt::format("{:.2f}", w.leaf_bytes_per_entry));
        row.push_back(fmt::format("{:.2f}", w.bytes_per_entry));
        tails.push_back("");
      } else {
        row.push_back("n/a");
        tails.push_back(fmt::format("  ({})", w.unavailable));
      }
      cells.push_back(std::move(row));
    }
  }
  out += aligned_table(head, cells, tails);
  out += "(* current; predicted for a bulk build into a new file)\n\n";
  return out;
}

std::string format_compound_what_if_json(const CompoundWhatIfReport& r) {
  Json o;
  o["name"] = r.info.def.name;
  o["id"] = r.info.id;
  Json segs = Json::array();
  for (const auto& g : r.info.def.segments) segs.push_back(g.type.name());
  o["segments"] = std::move(segs);
  o["layout"] = std::string(layout_name(r.info.def.layout));
  o["page_size"] = r.page_size;
  o["entries"] = r.entries;
  Json predictions = Json::array();
  for (const CompoundWhatIfVariant& v : r.variants) {
    Json formats = Json::array();
    for (KeyFormat f : v.formats) formats.push_back(std::string(key_format_name(f)));
    for (const WhatIfRow& w : v.rows) {
      Json p;
      p["segment_formats"] = formats;
      p["layout"] = std::string(layout_name(w.layout));
      p["current"] = w.current;
      p["available"] = w.available;
      if (!w.available) {
        p["reason"] = w.unavailable;
      } else {
        add_prediction_figures(p, w);
      }
      predictions.push_back(std::move(p));
    }
  }
  o["predictions"] = std::move(predictions);
  return json_dump(o);
}

}  // namespace pbtree::tools
