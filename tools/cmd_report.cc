// render_report_html / run_report: the HTML report of `pbtree report`.
#include "tools/cmd_report.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "file/index_file_access.h"
#include "firebird/fdb_catalog.h"
#include "firebird/fdb_stat.h"
#include "firebird/fdb_what_if.h"
#include "tools/cmd_compare.h"

namespace pbtree::tools {

namespace {

std::string esc(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// One bar of the size chart: "format / layout" (a compound index: "f1 + f2 / layout").
struct SizeBar {
  std::string label;
  uint64_t pages = 0;
  bool current = false;
};

std::vector<SizeBar> size_bars(const WhatIfReport& w) {
  std::vector<SizeBar> bars;
  for (const WhatIfRow& r : w.rows) {
    if (!r.available) continue;
    bars.push_back({fmt::format("{} / {}", key_format_name(r.format), layout_name(r.layout)),
                    r.index_pages, r.current});
  }
  return bars;
}

std::vector<SizeBar> size_bars(const CompoundWhatIfReport& w) {
  std::vector<SizeBar> bars;
  for (const CompoundWhatIfVariant& v : w.variants) {
    std::string formats;
    for (KeyFormat f : v.formats) {
      formats += (formats.empty() ? "" : " + ") + std::string(key_format_name(f));
    }
    for (const WhatIfRow& r : v.rows) {
      if (!r.available) continue;
      bars.push_back(
          {fmt::format("{} / {}", formats, layout_name(r.layout)), r.index_pages, r.current});
    }
  }
  return bars;
}

std::string size_chart(const std::vector<SizeBar>& bars) {
  std::vector<const SizeBar*> rows;
  uint64_t max_pages = 1;
  for (const SizeBar& r : bars) {
    rows.push_back(&r);
    max_pages = std::max(max_pages, r.pages);
  }
  const int bar_h = 22, label_w = 210, width = 640;
  std::string s = fmt::format(
      "<svg class=\"sizes\" width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"index pages per key format and layout\">\n",
      width, bar_h * static_cast<int>(rows.size()) + 10);
  int y = 5;
  for (const SizeBar* r : rows) {
    const int len = static_cast<int>((width - label_w - 120) * static_cast<double>(r->pages) /
                                     static_cast<double>(max_pages));
    s += fmt::format(
        "<text x=\"0\" y=\"{}\" font-size=\"13\">{}{}</text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"13\">{} pages</text>\n",
        y + 15, r->current ? "* " : "", esc(r->label), label_w, y + 2, std::max(len, 1), bar_h - 6,
        r->current ? "#c0504d" : "#4f81bd", label_w + std::max(len, 1) + 6, y + 15, r->pages);
    y += bar_h;
  }
  return s + "</svg>\n";
}

std::string fill_chart(const IndexStats& st) {
  uint64_t max_n = 1;
  for (uint64_t n : st.fill_distribution) max_n = std::max(max_n, n);
  std::string s =
      "<svg class=\"fill\" width=\"360\" height=\"170\" "
      "role=\"img\" aria-label=\"leaf fill distribution\">\n";
  for (int b = 0; b < 5; ++b) {
    const int h = static_cast<int>(120.0 * static_cast<double>(st.fill_distribution[b]) / max_n);
    const int x = 10 + b * 70;
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"50\" height=\"{}\" fill=\"#9bbb59\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>"
        "<text x=\"{}\" y=\"165\" font-size=\"12\">{}-{}%</text>\n",
        x, 140 - h, std::max(h, 1), x, 135 - h, st.fill_distribution[b], x, b * 20, b * 20 + 19);
  }
  return s + "</svg>\n";
}

}  // namespace

std::string render_report_html(const std::string& file, uint32_t page_size,
                               const std::vector<ReportIndex>& indexes) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += fmt::format("<title>pbtree report: {}</title>\n", esc(file));
  h += "<style>body{font-family:sans-serif;margin:2em;max-width:60em}"
       "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:2px 8px;"
       "text-align:right}th{background:#eee}td:first-child,th:first-child{text-align:left}"
       "section{border-top:2px solid #888;margin-top:2em}</style>\n</head>\n<body>\n";
  h += fmt::format("<h1>pbtree report: {}</h1>\n<p>Page size {} bytes, {} indexes.</p>\n",
                   esc(file), page_size, indexes.size());
  for (const ReportIndex& ix : indexes) {
    const IndexStats& s = ix.stats;
    h += "<section class=\"index\">\n";
    h += fmt::format("<h2>Index {}{}</h2>\n", esc(ix.name),
                     ix.table.empty() ? "" : " of " + esc(ix.table));
    if (!ix.type.empty()) h += fmt::format("<p>Type: {}</p>\n", esc(ix.type));
    h += "<table class=\"gstat\">\n<tr><th>figure</th><th>value</th></tr>\n";
    auto row = [&](const char* n, const std::string& v) {
      h += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", n, v);
    };
    row("depth", fmt::format("{}", s.depth));
    row("leaf buckets", fmt::format("{}", s.leaf_buckets));
    row("nodes", fmt::format("{}", s.nodes));
    row("average node length", fmt::format("{:.2f}", s.avg_node_length));
    row("average key length", fmt::format("{:.2f}", s.avg_key_length));
    row("compression ratio", fmt::format("{:.2f}", s.compression_ratio));
    row("total dup", fmt::format("{}", s.total_dup));
    row("max dup", fmt::format("{}", s.max_dup));
    row("clustering factor", fmt::format("{}", s.clustering_factor));
    h += "</table>\n<h3>Size in each key format and layout (bulk-built)</h3>\n";
    if (ix.compound_what_if) {
      h += "<p>One segment's key format changed at a time.</p>\n";
      h += size_chart(size_bars(*ix.compound_what_if));
    } else if (ix.what_if) {
      h += size_chart(size_bars(*ix.what_if));
    } else {
      h += fmt::format("<p>Not predicted: {}</p>\n", esc(ix.not_predicted));
    }
    h += "<h3>Leaf fill distribution</h3>\n" + fill_chart(s);
    h += "<h3>Levels</h3>\n<table class=\"levels\">\n<tr><th>level</th><th>pages</th>"
         "<th>nodes</th><th>average fill</th><th>average node length</th><th>unused "
         "bytes</th></tr>\n";
    for (const LevelStats& l : ix.shape.levels) {
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}%</td><td>{:.2f}</td><td>{}</td></tr>\n",
          l.level, l.pages, l.nodes, l.avg_fill * 100, l.avg_node_length, l.unused_bytes);
    }
    h += fmt::format(
        "</table>\n<p>Leaves out of file order: {}, NULL entries: {}.</p>\n</section>\n",
        ix.shape.leaves_out_of_order, ix.shape.null_entries);
  }
  return h + "</body>\n</html>\n";
}

// Refuses an `output` that would overwrite anything but an earlier report: the file being
// reported on (under any name: same device and inode) or a file that is not an HTML page
// (a database, say). Throws UsageError; nothing is written.
void check_report_output(const std::string& path, const std::string& output) {
  struct stat in, out;
  if (::stat(output.c_str(), &out) != 0) return;  // a new file
  if (::stat(path.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
    throw UsageError(fmt::format("{}: is {} itself: refused, nothing written", output, path));
  }
  std::ifstream existing(output, std::ios::binary);
  char head[14] = {};
  existing.read(head, sizeof head);
  if (!S_ISREG(out.st_mode) || std::string(head, size_t(existing.gcount())) != "<!DOCTYPE html") {
    throw UsageError(fmt::format(
        "{}: exists and is not a report (an HTML page): refused, nothing written", output));
  }
}

void run_report(const std::string& path, const std::string& output) {
  check_report_output(path, output);
  std::vector<ReportIndex> list;
  uint32_t page_size = 0;
  if (is_firebird_file(path)) {
    auto file = firebird::FdbFile::open(path);
    page_size = file->page_size();
    const auto catalog = firebird::read_catalog(*file);
    for (const firebird::FdbTable* t : firebird::select_tables(path, catalog, {})) {
      for (const firebird::FdbIndex& ix : t->indexes) {
        if (ix.inactive || ix.root_page == 0) continue;
        ReportIndex r;
        r.table = t->name;
        r.name = ix.name;
        if (ix.segments.size() == 1) r.type = firebird::fdb_type_name(ix.segments[0]);
        r.stats = firebird::analyze_fdb_index(*file, *t, ix);
        r.shape = analyze_tree_shape(firebird::fdb_btree_reader(*file, *t, ix), ix.root_page,
                                     page_size, file->page_count(), ix.descending);
        firebird::FdbWhatIf w = firebird::fdb_what_if(*file, ix);
        if (w.predicted) r.what_if = std::move(w.report);
        r.not_predicted = w.why;
        list.push_back(std::move(r));
      }
    }
  } else {
    auto file = IndexFile::open(path);
    page_size = file->page_size();
    for (const IndexInfo& info : file->indexes()) {
      ReportIndex r;
      r.name = info.def.name;
      for (size_t i = 0; i < info.def.segment_count(); ++i) {
        r.type += (i == 0 ? "" : ", ") + info.def.segment(i).type.name();
      }
      r.stats = file->analyze(info.def.name);
      r.shape =
          analyze_tree_shape([&](uint32_t p, uint8_t* b) { read_file_page(*file, p, b); },
                             info.root_page, page_size, file->page_count(), info.def.descending);
      // The prediction is a part of the page: one that cannot be made says why, the rest of
      // the report stands.
      try {
        if (info.def.compound()) {
          r.compound_what_if = compound_what_if(*file, info.def.name);
        } else {
          r.what_if = what_if(*file, info.def.name);
        }
      } catch (const UsageError& e) {
        r.not_predicted = e.what();
      }
      list.push_back(std::move(r));
    }
  }
  const std::string html = render_report_html(path, page_size, list);
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (!out) throw UsageError(fmt::format("{}: cannot write", output));
  out << html;
  out.close();
  if (!out) throw IoError(fmt::format("{}: write failed", output));
}

}  // namespace pbtree::tools
