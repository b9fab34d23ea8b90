// analyze_fdb_index (gstat figures of one Firebird index) and select_tables (gstat -r's list).
#include "firebird/fdb_stat.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <algorithm>

#include "btree/stats.h"
#include "node/btree_page.h"

namespace pbtree::firebird {

BtreePageReader fdb_btree_reader(const FdbFile& file, const FdbTable& table,
                                 const FdbIndex& index) {
  return [&file, id = table.id, index_id = index.id](uint32_t page_no, uint8_t* out) {
    file.read_page(page_no, FdbPage::Btree, out);
    const BtreeHeader h = read_btree_header(out);
    if (h.relation != id) {
      file.fail(
          page_no, FdbPage::Btree,
          fmt::format("btr_relation {} but the index belongs to relation {}", h.relation, id));
    }
    if (h.index_id != (index_id & 0xFF)) {
      file.fail(page_no, FdbPage::Btree,
                fmt::format("btr_id {} but the index id is {}", h.index_id, index_id));
    }
  };
}

IndexStats analyze_fdb_index(const FdbFile& file, const FdbTable& table, const FdbIndex& index,
                             const std::function<void(uint32_t)>& on_page) {
  IndexStats zero;
  if (index.root_page == 0) return zero;
  BtreePageReader reader = fdb_btree_reader(file, table, index);
  if (on_page) {
    reader = [inner = std::move(reader), &on_page](uint32_t page_no, uint8_t* out) {
      inner(page_no, out);
      on_page(page_no);
    };
  }
  try {
    return analyze_btree(reader, index.root_page, file.page_size(), file.page_count());
  } catch (const CorruptError& e) {
    const std::string what = e.what();
    if (what.rfind(file.path() + ":", 0) == 0) throw;
    throw CorruptError(fmt::format("{}: index {}: {}", file.path(), index.name, what));
  }
}

std::vector<const FdbTable*> user_tables(const std::vector<FdbTable>& catalog, bool system) {
  std::vector<const FdbTable*> out;
  for (const FdbTable& t : catalog) {
    if (system || !t.system) out.push_back(&t);
  }
  return out;
}

NotFoundError fdb_no_index_error(const std::string& path,
                                 const std::vector<const FdbTable*>& tables,
                                 const std::string& name, const std::string& none) {
  std::vector<std::string> names;
  for (const FdbTable* t : tables) {
    for (const FdbIndex& ix : t->indexes) names.push_back(ix.name);
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (size_t i = 0; i < names.size() && i < kFdbIndexNamesListed; ++i) {
    list += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kFdbIndexNamesListed) {
    list += fmt::format(", and {} more", names.size() - kFdbIndexNamesListed);
  }
  return NotFoundError(fmt::format("{}: no index named {} ({})", path, name,
                                   names.empty() ? none : "indexes: " + list));
}

std::vector<const FdbTable*> select_tables(const std::string& path,
                                           const std::vector<FdbTable>& catalog,
                                           const FdbStatFilter& filter) {
  std::vector<const FdbTable*> out, searched;
  bool table_found = filter.table.empty(), index_found = filter.index.empty();
  for (const FdbTable& t : catalog) {
    if (!filter.table.empty()) {
      if (t.name != filter.table) continue;
      table_found = true;
    } else if (!t.listed || (t.system && !filter.system)) {
      continue;
    }
    searched.push_back(&t);
    if (!filter.index.empty()) {
      bool has = false;
      for (const FdbIndex& ix : t.indexes) has = has || ix.name == filter.index;
      if (!has) continue;
      index_found = true;
    }
    out.push_back(&t);
  }
  if (!table_found) throw UsageError(fmt::format("{}: no table named {}", path, filter.table));
  if (!index_found) {
    throw fdb_no_index_error(path, searched, filter.index,
                             !filter.table.empty() ? "table " + filter.table + " has no index"
                             : filter.system       ? "the database has no index"
                                                   : "no index on a user table");
  }
  return out;
}

bool fdb_index_wanted(const FdbIndex& ix, const FdbStatFilter& filter) {
  return !ix.inactive && (filter.index.empty() || ix.name == filter.index);
}

std::string fdb_type_name(const FdbSegment& s) {
  const bool scaled = s.scale != 0 || s.field_sub_type == 1 || s.field_sub_type == 2;
  const char* kind = s.field_sub_type == 2 ? "decimal" : "numeric";
  switch (s.field_type) {
    case 7:
      return scaled ? fmt::format("{}({},{})", kind, s.precision, -s.scale) : "smallint";
    case 8:
      return scaled ? fmt::format("{}({},{})", kind, s.precision, -s.scale) : "integer";
    case 16:
      return scaled ? fmt::format("{}({},{})", kind, s.precision, -s.scale) : "bigint";
    case 26:
      return scaled ? fmt::format("{}({},{})", kind, s.precision, -s.scale) : "int128";
    case 24:
      return "decfloat(16)";
    case 25:
      return "decfloat(34)";
    case 28:
      return "time with time zone";
    case 29:
      return "timestamp with time zone";
    case 10:
      return "float";
    case 27:
      return s.scale != 0 ? fmt::format("numeric({},{})", s.precision, -s.scale) : "double";
    case 12:
      return "date";
    case 13:
      return "time";
    case 35:
      return "timestamp";
    case 23:
      return "boolean";
    case 14:
      return fmt::format("char({})", s.length);
    case 37:
      return fmt::format("varchar({})", s.length);
    case 261:
      return "blob";
    default:
      return fmt::format("type {}", s.field_type);
  }
}

}  // namespace pbtree::firebird
