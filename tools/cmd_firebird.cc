// `pbtree stat --firebird`: the report loop of gstat (src/utilities/gstat/dba.epp) over
// pbtree's own reading of the database (firebird/fdb_catalog.h, firebird/fdb_stat.h).
#include "tools/cmd_firebird.h"

#include <fmt/format.h>

#include <pbtree/index_file.h>
#include "btree/level_stats.h"
#include "firebird/fdb_entries.h"
#include "firebird/fdb_table_stat.h"
#include "firebird/fdb_what_if.h"
#include <pbtree/keys.h>
#include "tools/fdb_table_format.h"
#include "tools/json_out.h"
#include "tools/stat_format.h"
#include "tools/what_if_format.h"

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

// analyze_fdb_index with a progress line "stat: index NAME: P / N pages (x%)" (N: the
// database's page count, an upper bound).
IndexStats analyze_with_progress(const FdbFile& file, const FdbTable& t, const FdbIndex& ix,
                                 Progress* progress) {
  if (!progress || !progress->enabled()) return analyze_fdb_index(file, t, ix);
  progress->start("stat: index " + ix.name, file.page_count(), "pages");
  IndexStats s = analyze_fdb_index(file, t, ix, [progress](uint32_t) { progress->add(); });
  progress->finish();
  return s;
}

// gstat -r's table figures of `tables`, with a progress line "stat: data pages: P / N pages"
// (N: the data pages the pointer pages list). None when an index is named (--index): gstat
// -i reads no data pages either.
std::vector<FdbTableStats> table_stats(const FdbFile& file, const std::vector<FdbTable>& catalog,
                                       const std::vector<const FdbTable*>& tables,
                                       const FdbStatFilter& filter, Progress* progress) {
  if (!filter.index.empty()) return {};
  const FdbFormatLengths formats = read_format_lengths(file, catalog);
  if (!progress || !progress->enabled()) return analyze_fdb_tables(file, tables, formats);
  bool started = false;
  std::vector<FdbTableStats> s =
      analyze_fdb_tables(file, tables, formats, [&](uint64_t done, uint64_t total) {
        if (!started) progress->start("stat: data pages", total, "pages");
        started = true;
        progress->set(done);
      });
  progress->finish();
  return s;
}

}  // namespace

std::string format_fdb_stat(const FdbFile& file, const std::vector<FdbTable>& catalog,
                            const FdbStatFilter& filter, bool levels, Progress* progress) {
  std::string out;
  const std::vector<const FdbTable*> tables = select_tables(catalog, filter);
  const std::vector<FdbTableStats> figures = table_stats(file, catalog, tables, filter, progress);
  for (size_t i = 0; i < tables.size(); ++i) {
    const FdbTable* t = tables[i];
    out += fmt::format("{} ({})\n", t->name, t->id);
    if (figures.empty()) {
      out += fmt::format("    Primary pointer page: {}, Index root page: {}\n", t->pointer_page,
                         t->index_root);
    } else {
      out += format_fdb_table_lines(figures[i], file.page_size(), file.header().ods_major);
    }
    out += "\n";
    for (const FdbIndex& ix : t->indexes) {
      if (!fdb_index_wanted(ix, filter)) continue;
      out += format_gstat_block(info_of(ix), analyze_with_progress(file, *t, ix, progress));
      if (levels && ix.root_page != 0) {
        out += format_tree_shape(analyze_tree_shape(fdb_btree_reader(file, *t, ix), ix.root_page,
                                                    file.page_size(), file.page_count(),
                                                    ix.descending));
      }
    }
  }
  return out;
}

std::string format_fdb_stat_json(const FdbFile& file, const std::vector<FdbTable>& catalog,
                                 const FdbStatFilter& filter, Progress* progress) {
  std::vector<std::string> objects;
  const std::vector<const FdbTable*> tables = select_tables(catalog, filter);
  const std::vector<FdbTableStats> figures = table_stats(file, catalog, tables, filter, progress);
  for (size_t i = 0; i < tables.size(); ++i) {
    const FdbTable* t = tables[i];
    if (!figures.empty()) {
      Json o;
      o["kind"] = "table";
      o["table"] = t->name;
      o["table_id"] = t->id;
      o["page_size"] = file.page_size();
      add_fdb_table_figures(o, figures[i], file.page_size());
      objects.push_back(json_dump(o));
    }
    for (const FdbIndex& ix : t->indexes) {
      if (!fdb_index_wanted(ix, filter)) continue;
      const IndexStats s = analyze_with_progress(file, *t, ix, progress);
      Json o;
      o["kind"] = "index";
      o["table"] = t->name;
      o["table_id"] = t->id;
      o["name"] = ix.name;
      o["id"] = ix.id;
      o["unique"] = ix.unique;
      o["descending"] = ix.descending;
      o["page_size"] = file.page_size();
      Json segments = Json::array();
      for (const FdbSegment& g : ix.segments) {
        segments.push_back(Json{{"field", g.field}, {"type", fdb_type_name(g)}, {"itype", g.itype}});
      }
      o["segments"] = std::move(segments);
      add_gstat_figures(o, s);
      objects.push_back(json_dump(o));
    }
  }
  return json_array_lines(objects);
}

void run_firebird_stat(const FirebirdStatArgs& a, std::ostream& out, Progress* progress) {
  auto file = FdbFile::open(a.db);
  const std::vector<FdbTable> catalog = read_catalog(*file);
  if (a.what_if) {
    out << format_fdb_what_if(*file, catalog, a.filter, a.json, progress);
    return;
  }
  out << (a.json ? format_fdb_stat_json(*file, catalog, a.filter, progress)
                 : format_fdb_stat(*file, catalog, a.filter, a.levels, progress));
}

std::string format_fdb_what_if(const FdbFile& file, const std::vector<FdbTable>& catalog,
                               const FdbStatFilter& filter, bool json, Progress* progress) {
  std::string text;
  std::vector<std::string> objects;  // json: one dumped object per index
  std::string summary;
  uint64_t before = 0, after = 0;
  for (const FdbTable* t : select_tables(catalog, filter)) {
    for (const FdbIndex& ix : t->indexes) {
      if (!fdb_index_wanted(ix, filter)) continue;
      std::function<void(uint64_t)> on_entries;
      if (progress && progress->enabled()) {
        progress->start("what-if: index " + ix.name, 0, "entries");
        on_entries = [progress](uint64_t n) { progress->set(n); };
      }
      const FdbWhatIf w = fdb_what_if(file, ix, on_entries);
      if (progress) progress->finish();
      if (json) {
        Json o;
        o["table"] = t->name;
        if (!w.predicted) {
          o["name"] = ix.name;
          o["predicted"] = false;
          o["reason"] = w.why;
        } else {
          o["predicted"] = true;
          o["shared_rescaled_keys"] = w.shared_keys;
          o["what_if"] = what_if_json(w.report);
        }
        objects.push_back(json_dump(o));
        continue;
      }
      if (!w.predicted) {
        text += fmt::format("What-if for index {} ({}) of {}: not predicted: {}\n\n", ix.name,
                            ix.id, t->name, w.why);
        continue;
      }
      text += format_what_if_table(w.report);
      if (w.report.info.def.format == KeyFormat::RescaledDouble) {
        text += fmt::format("  rescaled-double keys that several values map to: {} (re-encoded "
                            "from the smallest)\n\n", w.shared_keys);
      }
      const WhatIfRow* cur = nullptr;
      const WhatIfRow* best = nullptr;
      for (const WhatIfRow& r : w.report.rows) {
        if (!r.available) continue;
        if (r.current) cur = &r;
        if (!best || r.index_pages < best->index_pages) best = &r;
      }
      if (!cur || !best || best->index_pages == 0) continue;
      const double ratio = static_cast<double>(cur->index_pages) / best->index_pages;
      if (ratio >= kAutoMinGain) {
        summary += fmt::format("  {} ({}): {} -> {} pages with {}, {} layout: {:.2f}x\n",
                               ix.name, t->name, cur->index_pages, best->index_pages,
                               key_format_name(best->format), layout_name(best->layout), ratio);
        before += cur->index_pages;
        after += best->index_pages;
      }
    }
  }
  if (json) return json_array_lines(objects);
  text += fmt::format("Indexes that would shrink by >= {:.1f}x (index pages, bulk-built):\n",
                      kAutoMinGain);
  text += summary.empty() ? "  none\n" : summary;
  if (before > 0) {
    text += fmt::format("  in total: {} -> {} pages ({:.1f} MiB less, {:.2f}x)\n", before, after,
                        static_cast<double>(before - after) * file.page_size() / (1024.0 * 1024.0),
                        static_cast<double>(before) / after);
  }
  return text;
}

void run_firebird_import(const FirebirdImportArgs& a, std::ostream& out) {
  auto file = FdbFile::open(a.fdb);
  const std::vector<FdbTable> catalog = read_catalog(*file);
  const FdbIndex* index = nullptr;
  for (const FdbTable& t : catalog) {
    for (const FdbIndex& ix : t.indexes) {
      if (ix.name == a.index) index = &ix;
    }
  }
  if (!index) throw UsageError(fmt::format("{}: no index named {}", a.fdb, a.index));
  std::string why;
  const std::optional<FdbKeyType> kt = fdb_key_type(*index, why);
  if (!kt) throw UsageError(fmt::format("{}: index {} cannot be imported: {}", a.fdb, a.index, why));
  IndexDefinition def;
  def.name = a.name.empty() ? a.index : a.name;
  def.type = kt->type;
  def.format = a.key_format.empty() ? kt->format : parse_key_format(a.key_format);
  check_key_format(def.type, def.format);
  def.unique = index->unique;
  def.descending = index->descending;
  def.layout = a.layout == "compact" ? NodeLayout::Compact : NodeLayout::Firebird;
  EntryBatch batch;
  std::string storage;
  KeyBuffer buffer;
  uint64_t n = 0;
  for_each_fdb_entry(*file, *index, [&](std::span<const uint8_t> key, uint64_t recno) {
    if (def.format == kt->format) {
      batch.add(key, recno, n++);
      return;
    }
    const Value v = key_to_value(def.type, kt->format, def.descending, key, storage);
    build_key(def.type, def.format, v, def.descending, buffer);
    batch.add(buffer.bytes(), recno, n++);
  });
  auto db = IndexFile::open_or_create(a.db, a.page_size != 0 ? a.page_size : file->page_size());
  db->bulk_load(def, batch);
  out << fmt::format("imported {} entries of {} into {} (key format {}, layout {})\n", n, a.index,
                     a.db, key_format_name(def.format), layout_name(def.layout));
}

}  // namespace pbtree::tools
