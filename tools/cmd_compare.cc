// compare_stats: IndexStats of two indexes (pbtree files via IndexFile::analyze, Firebird
// databases via firebird/fdb_stat.h) printed side by side.
#include "tools/cmd_compare.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>

#include <map>
#include <vector>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"
#include "firebird/fdb_stat.h"

namespace pbtree::tools {

namespace {

struct Side {
  std::map<std::string, IndexStats> stats;  // by index name
  uint32_t page_size = 0;
};

}  // namespace

bool is_firebird_file(const std::string& path) {
  try {
    firebird::FdbFile::open(path);
    return true;
  } catch (const CorruptError& e) {
    return std::string(e.what()).find("not a Firebird database") == std::string::npos;
  } catch (const UsageError&) {
    return true;  // a Firebird file of another ODS: let the real open report it
  } catch (const IoError&) {
    return false;  // no such file, unreadable: the pbtree open reports it as it always did
  }
}

namespace {

Side load(const std::string& path, const std::string& only) {
  Side s;
  if (is_firebird_file(path)) {
    auto file = firebird::FdbFile::open(path);
    s.page_size = file->page_size();
    const std::vector<firebird::FdbTable> catalog = firebird::read_catalog(*file);
    for (const firebird::FdbTable& t : catalog) {
      for (const firebird::FdbIndex& ix : t.indexes) {
        if (!only.empty() && ix.name != only) continue;
        if (ix.inactive) {
          if (!only.empty()) throw UsageError(fmt::format("{}: index {} is inactive", path, only));
          continue;
        }
        IndexStats st = firebird::analyze_fdb_index(*file, t, ix);
        st.bytes_per_entry =
            st.nodes ? static_cast<double>(st.index_pages) * s.page_size / st.nodes : 0;
        s.stats[ix.name] = st;
      }
    }
    if (!only.empty() && s.stats.empty()) {
      throw firebird::fdb_no_index_error(path, firebird::user_tables(catalog), only,
                                         "no index on a user table");
    }
  } else {
    auto file = IndexFile::open(path);
    s.page_size = file->page_size();
    for (const IndexInfo& info : file->indexes()) {
      if (!only.empty() && info.def.name != only) continue;
      s.stats[info.def.name] = file->analyze(info.def.name);
    }
    if (!only.empty() && s.stats.empty()) throw file->no_index_error(only);
  }
  return s;
}

std::string table(const std::string& a_name, const std::string& a_file, const IndexStats& a,
                  const std::string& b_name, const std::string& b_file, const IndexStats& b) {
  struct Row {
    const char* name;
    double x, y;
    bool integer;
  };
  const std::vector<Row> rows = {
      {"depth", double(a.depth), double(b.depth), true},
      {"leaf buckets", double(a.leaf_buckets), double(b.leaf_buckets), true},
      {"index pages", double(a.index_pages), double(b.index_pages), true},
      {"nodes", double(a.nodes), double(b.nodes), true},
      {"avg node length", a.avg_node_length, b.avg_node_length, false},
      {"avg key length", a.avg_key_length, b.avg_key_length, false},
      {"avg prefix length", a.avg_prefix_length, b.avg_prefix_length, false},
      {"avg data length", a.avg_data_length, b.avg_data_length, false},
      {"compression ratio", a.compression_ratio, b.compression_ratio, false},
      {"total dup", double(a.total_dup), double(b.total_dup), true},
      {"max dup", double(a.max_dup), double(b.max_dup), true},
      {"clustering factor", double(a.clustering_factor), double(b.clustering_factor), true},
      {"bytes per entry", a.bytes_per_entry, b.bytes_per_entry, false},
  };
  std::string out = fmt::format("Compare {} ({}) with {} ({})\n", a_name, a_file, b_name, b_file);
  out += fmt::format("  {:<18} {:>12} {:>12} {:>7}\n", "figure", "A", "B", "B/A");
  out += "  " + std::string(18 + 1 + 12 + 1 + 12 + 1 + 7, '-') + "\n";
  for (const Row& r : rows) {
    auto cell = [&](double v) {
      return r.integer ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}", v);
    };
    out += fmt::format("  {:<18} {:>12} {:>12} {:>7}\n", r.name, cell(r.x), cell(r.y),
                       r.x == 0 ? std::string("-") : fmt::format("{:.2f}", r.y / r.x));
  }
  return out + "\n";
}

}  // namespace

std::string compare_stats(const CompareArgs& a) {
  const std::string b_index = a.b_index.empty() ? a.index : a.b_index;
  const Side sa = load(a.a, a.index);
  const Side sb = load(a.b, b_index);
  std::string out;
  if (!a.index.empty()) {
    return table(a.index, a.a, sa.stats.begin()->second, b_index, a.b, sb.stats.begin()->second);
  }
  for (const auto& [name, st] : sa.stats) {
    auto it = sb.stats.find(name);
    if (it != sb.stats.end()) out += table(name, a.a, st, name, a.b, it->second);
  }
  if (out.empty())
    throw UsageError(fmt::format("{} and {} have no index name in common", a.a, a.b));
  return out;
}

}  // namespace pbtree::tools
