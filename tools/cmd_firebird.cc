// `pbtree stat --firebird`: the report loop of gstat (src/utilities/gstat/dba.epp) over
// pbtree's own reading of the database (firebird/fdb_catalog.h, firebird/fdb_stat.h).
#include "tools/cmd_firebird.h"

#include <fmt/format.h>

#include "tools/stat_format.h"

namespace pbtree::tools {

using namespace pbtree::firebird;

namespace {

IndexInfo info_of(const FdbIndex& ix) {
  IndexInfo info;
  info.def.name = ix.name;
  info.id = ix.id;
  info.root_page = ix.root_page;
  return info;
}

}  // namespace

std::string format_fdb_stat(const FdbFile& file, const std::vector<FdbTable>& catalog,
                            const FdbStatFilter& filter) {
  std::string out;
  for (const FdbTable* t : select_tables(catalog, filter)) {
    out += fmt::format("{} ({})\n", t->name, t->id);
    out += fmt::format("    Primary pointer page: {}, Index root page: {}\n", t->pointer_page,
                       t->index_root);
    out += "\n";
    for (const FdbIndex& ix : t->indexes) {
      if (!fdb_index_wanted(ix, filter)) continue;
      out += format_gstat_block(info_of(ix), analyze_fdb_index(file, *t, ix));
    }
  }
  return out;
}

std::string format_fdb_stat_json(const FdbFile& file, const std::vector<FdbTable>& catalog,
                                 const FdbStatFilter& filter) {
  std::string out = "[";
  bool first = true;
  for (const FdbTable* t : select_tables(catalog, filter)) {
    for (const FdbIndex& ix : t->indexes) {
      if (!fdb_index_wanted(ix, filter)) continue;
      const IndexStats s = analyze_fdb_index(file, *t, ix);
      out += first ? "\n  {" : ",\n  {";
      first = false;
      out += fmt::format("\"table\": {}, \"table_id\": {}, \"name\": {}, \"id\": {}, ",
                         json_string(t->name), t->id, json_string(ix.name), ix.id);
      out += fmt::format("\"unique\": {}, \"descending\": {}, \"page_size\": {}, \"segments\": [",
                         ix.unique ? "true" : "false", ix.descending ? "true" : "false",
                         file.page_size());
      for (size_t k = 0; k < ix.segments.size(); ++k) {
        const FdbSegment& g = ix.segments[k];
        out += fmt::format("{}{{\"field\": {}, \"type\": {}, \"itype\": {}}}", k ? ", " : "",
                           json_string(g.field), json_string(fdb_type_name(g)), g.itype);
      }
      out += "], ";
      out += fmt::format("\"root_page\": {}, \"depth\": {}, \"leaf_buckets\": {}, \"nodes\": {}, ",
                         s.root_page, s.depth, s.leaf_buckets, s.nodes);
      out += fmt::format("\"avg_node_length\": {}, \"total_dup\": {}, \"max_dup\": {}, ",
                         json_number(s.avg_node_length), s.total_dup, s.max_dup);
      out += fmt::format("\"avg_key_length\": {}, \"compression_ratio\": {}, ",
                         json_number(s.avg_key_length), json_number(s.compression_ratio));
      out += fmt::format("\"avg_prefix_length\": {}, \"avg_data_length\": {}, ",
                         json_number(s.avg_prefix_length), json_number(s.avg_data_length));
      out += fmt::format("\"clustering_factor\": {}, \"clustering_ratio\": {}, ",
                         s.clustering_factor, json_number(s.clustering_ratio));
      out += fmt::format("\"fill_distribution\": [{}, {}, {}, {}, {}], \"index_pages\": {}}}",
                         s.fill_distribution[0], s.fill_distribution[1], s.fill_distribution[2],
                         s.fill_distribution[3], s.fill_distribution[4], s.index_pages);
    }
  }
  out += first ? "]\n" : "\n]\n";
  return out;
}

void run_firebird_stat(const FirebirdStatArgs& a, std::ostream& out) {
  auto file = FdbFile::open(a.db);
  const std::vector<FdbTable> catalog = read_catalog(*file);
  out << (a.json ? format_fdb_stat_json(*file, catalog, a.filter)
                 : format_fdb_stat(*file, catalog, a.filter));
}

}  // namespace pbtree::tools
