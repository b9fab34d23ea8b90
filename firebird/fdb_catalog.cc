// read_catalog: system relations RDB$PAGES (0), RDB$FIELDS (2), RDB$INDEX_SEGMENTS (3),
// RDB$INDICES (4) with its source blobs, RDB$RELATION_FIELDS (5), RDB$RELATIONS (6) in the
// layouts of the ODS read (src/jrd/relations.h field order, src/jrd/fields.h types), plus
// the index root pages.
#include "firebird/fdb_catalog.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <algorithm>
#include <map>

#include "firebird/fdb_records.h"

namespace pbtree::firebird {

namespace {

// Index root page fields (byte table in fdb_catalog.h): irt_count, irt_rpt[] and its slot size.
constexpr uint32_t kIrtCount = 18, kIrtSlots = 20, kIrtSlotSize = 12;

FieldDesc shrt() {
  return {Dtype::Short, 2};
}
FieldDesc lng() {
  return {Dtype::Long, 4};
}
FieldDesc blob() {
  return {Dtype::Blob, 8};
}
FieldDesc dbl() {
  return {Dtype::Double, 8};
}
FieldDesc boolean() {
  return {Dtype::Boolean, 1};
}
FieldDesc varchar(uint16_t n) {
  return {Dtype::Varying, static_cast<uint16_t>(n + 2)};
}

// The record formats of the system relations read, per ODS (relations.h field order,
// fields.h types; names are CHAR(31), ODS 13: CHAR(252)). Fields an ODS added come last.
struct SystemFormats {
  RecordFormat pages, relations, indices, segments, relation_fields, fields;
  explicit SystemFormats(const FdbOds& ods) {
    const FieldDesc name{Dtype::Text, static_cast<uint16_t>(ods.identifier_bytes)};
    // RDB$PAGES: PAGE_NUMBER, RELATION_ID, PAGE_SEQUENCE, PAGE_TYPE.
    pages = RecordFormat::layout({lng(), shrt(), lng(), shrt()});
    // RDB$RELATIONS: VIEW_BLR, VIEW_SOURCE, DESCRIPTION, RELATION_ID(3), SYSTEM_FLAG(4),
    // DBKEY_LENGTH, FORMAT, FIELD_ID, RELATION_NAME(8), SECURITY_CLASS, EXTERNAL_FILE(10),
    // RUNTIME, EXTERNAL_DESCRIPTION, OWNER_NAME, DEFAULT_CLASS, FLAGS, RELATION_TYPE(16,
    // ODS 11.1+), SQL_SECURITY (ODS 13+).
    std::vector<FieldDesc> rel = {blob(), blob(), blob(), shrt(), shrt(),       shrt(),
                                  shrt(), shrt(), name,   name,   varchar(255), blob(),
                                  blob(), name,   name,   shrt()};
    if (ods.relation_type) rel.push_back(shrt());
    if (ods.sql_security) rel.push_back(boolean());
    relations = RecordFormat::layout(rel);
    // RDB$INDICES: INDEX_NAME(0), RELATION_NAME(1), INDEX_ID(2), UNIQUE_FLAG(3), DESCRIPTION,
    // SEGMENT_COUNT(5), INDEX_INACTIVE(6), INDEX_TYPE(7), FOREIGN_KEY, SYSTEM_FLAG,
    // EXPRESSION_BLR(10), EXPRESSION_SOURCE(11), STATISTICS, CONDITION_BLR(13, ODS 13.1+),
    // CONDITION_SOURCE(14).
    std::vector<FieldDesc> ind = {name,   name, shrt(), shrt(), blob(), shrt(), shrt(),
                                  shrt(), name, shrt(), blob(), blob(), dbl()};
    if (ods.index_condition) {
      ind.push_back(blob());
      ind.push_back(blob());
    }
    indices = RecordFormat::layout(ind);
    // RDB$INDEX_SEGMENTS: INDEX_NAME, FIELD_NAME, FIELD_POSITION, STATISTICS.
    segments = RecordFormat::layout({name, name, shrt(), dbl()});
    // RDB$RELATION_FIELDS: FIELD_NAME(0), RELATION_NAME(1), FIELD_SOURCE(2), QUERY_NAME,
    // BASE_FIELD, EDIT_STRING, FIELD_POSITION, QUERY_HEADER, UPDATE_FLAG, FIELD_ID(9),
    // VIEW_CONTEXT, DESCRIPTION, DEFAULT_VALUE, SYSTEM_FLAG, SECURITY_CLASS, COMPLEX_NAME,
    // NULL_FLAG, DEFAULT_SOURCE, COLLATION_ID(18), then (ODS 12+) GENERATOR_NAME,
    // IDENTITY_TYPE.
    std::vector<FieldDesc> rfr = {name,   name,   name,   name,   name,   varchar(127), shrt(),
                                  blob(), shrt(), shrt(), shrt(), blob(), blob(),       shrt(),
                                  name,   name,   shrt(), blob(), shrt()};
    if (ods.rfr_identity) {
      rfr.push_back(name);
      rfr.push_back(shrt());
    }
    relation_fields = RecordFormat::layout(rfr);
    // RDB$FIELDS: FIELD_NAME(0), QUERY_NAME, VALIDATION_BLR, VALIDATION_SOURCE, COMPUTED_BLR,
    // COMPUTED_SOURCE, DEFAULT_VALUE, DEFAULT_SOURCE, FIELD_LENGTH(8), FIELD_SCALE(9),
    // FIELD_TYPE(10), FIELD_SUB_TYPE(11), MISSING_VALUE, MISSING_SOURCE, DESCRIPTION,
    // SYSTEM_FLAG, QUERY_HEADER, SEGMENT_LENGTH, EDIT_STRING, EXTERNAL_LENGTH, EXTERNAL_SCALE,
    // EXTERNAL_TYPE, DIMENSIONS, NULL_FLAG, CHARACTER_LENGTH, COLLATION_ID(25),
    // CHARACTER_SET_ID(26), FIELD_PRECISION(27), then (ODS 12+) SECURITY_CLASS, OWNER_NAME.
    std::vector<FieldDesc> fld = {name,   name,   blob(), blob(), blob(),       blob(), blob(),
                                  blob(), shrt(), shrt(), shrt(), shrt(),       blob(), blob(),
                                  blob(), shrt(), blob(), shrt(), varchar(127), shrt(), shrt(),
                                  shrt(), shrt(), shrt(), shrt(), shrt(),       shrt(), shrt()};
    if (ods.fields_owner) {
      fld.push_back(name);
      fld.push_back(name);
    }
    fields = RecordFormat::layout(fld);
  }
};

constexpr size_t kMaxRecord = 65535;
constexpr uint16_t kIndicesRelation = 4;        // RDB$INDICES
constexpr size_t kMaxSource = size_t{1} << 20;  // bytes of an index's source text

struct PagesRow {
  uint32_t page;
  uint16_t relation;
  uint32_t sequence;
  uint16_t type;
};

std::vector<uint32_t> pointer_pages_of(const FdbFile& file, const std::vector<PagesRow>& pages,
                                       uint16_t relation, const char* what) {
  std::vector<std::pair<uint32_t, uint32_t>> v;
  for (const PagesRow& r : pages) {
    if (r.relation == relation && r.type == static_cast<uint16_t>(FdbPage::Pointer)) {
      v.push_back({r.sequence, r.page});
    }
  }
  std::sort(v.begin(), v.end());
  if (v.empty()) {
    throw CorruptError(fmt::format("{}: RDB$PAGES lists no pointer page of {} (relation {})",
                                   file.path(), what, relation));
  }
  std::vector<uint32_t> out;
  for (auto& [seq, page] : v) out.push_back(page);
  return out;
}

void scan(const FdbFile& file, const std::vector<PagesRow>& pages, uint16_t relation,
          const char* what, const RecordFormat& format,
          const std::function<void(const RecordView&)>& fn) {
  scan_relation(file, relation, pointer_pages_of(file, pages, relation, what), kMaxRecord,
                [&](std::span<const uint8_t> rec) { fn(RecordView(format, rec)); });
}

void check_system_relations(const FdbFile& file, const std::map<uint16_t, FdbTable*>& by_id) {
  static constexpr std::pair<uint16_t, const char*> kNeeded[] = {
      {0, "RDB$PAGES"},   {2, "RDB$FIELDS"},          {3, "RDB$INDEX_SEGMENTS"},
      {4, "RDB$INDICES"}, {5, "RDB$RELATION_FIELDS"}, {6, "RDB$RELATIONS"}};
  std::string missing;
  for (auto& [id, name] : kNeeded) {
    auto it = by_id.find(id);
    if (it != by_id.end() && it->second->name == name) continue;
    missing += fmt::format("{}{} ({})", missing.empty() ? "" : ", ", name, id);
  }
  if (missing.empty()) return;
  throw CorruptError(
      fmt::format("{}: catalog not found: RDB$RELATIONS read as ODS {}.{} does not list {} (is the "
                  "header's ODS version right?)",
                  file.path(), file.ods().major, file.ods().minor, missing));
}

// The text of RDB$INDICES source blob `field` of index `index` ("" if NULL); a malformed blob
// gives "FILE: index NAME: FIELD: page N (type): what".
std::string source_text(const FdbFile& file, const std::vector<uint32_t>& indices_pages,
                        const std::string& index, const char* what, const RecordView& r,
                        size_t field) {
  const std::optional<FdbBlobId> id = r.blob_id(field);
  if (!id) return "";
  const std::string prefix = fmt::format("{}: index {}: {}: ", file.path(), index, what);
  if (id->relation != kIndicesRelation) {
    throw CorruptError(fmt::format("{}blob id of relation {}, not of RDB$INDICES ({})", prefix,
                                   id->relation, kIndicesRelation));
  }
  try {
    const std::vector<uint8_t> d = read_fdb_blob(file, indices_pages, *id, kMaxSource);
    return std::string(d.begin(), d.end());
  } catch (const CorruptError& e) {
    std::string msg = e.what();
    if (msg.rfind(file.path() + ": ", 0) == 0) msg.erase(0, file.path().size() + 2);
    throw CorruptError(prefix + msg);
  }
}

}  // namespace

std::vector<FdbTable> read_catalog(const FdbFile& file) {
  const SystemFormats formats(file.ods());
  auto pages_format = [&]() -> const RecordFormat& { return formats.pages; };
  auto relations_format = [&]() -> const RecordFormat& { return formats.relations; };
  auto indices_format = [&]() -> const RecordFormat& { return formats.indices; };
  auto segments_format = [&]() -> const RecordFormat& { return formats.segments; };
  auto relation_fields_format = [&]() -> const RecordFormat& { return formats.relation_fields; };
  auto fields_format = [&]() -> const RecordFormat& { return formats.fields; };
  std::vector<PagesRow> pages;
  scan_relation(
      file, 0, pages_relation_pointer_pages(file), kMaxRecord, [&](std::span<const uint8_t> rec) {
        RecordView r(pages_format(), rec);
        pages.push_back({static_cast<uint32_t>(r.integer(0)), static_cast<uint16_t>(r.integer(1)),
                         static_cast<uint32_t>(r.integer(2)), static_cast<uint16_t>(r.integer(3))});
      });

  std::map<std::string, FdbTable> tables;
  scan(file, pages, 6, "RDB$RELATIONS", relations_format(), [&](const RecordView& r) {
    FdbTable t;
    t.name = r.text(8);
    t.id = static_cast<uint16_t>(r.integer(3));
    t.system = r.integer(4) != 0;
    const int64_t type = r.is_null(16) ? 0 : r.integer(16);
    t.listed = r.is_null(0) && r.is_null(10) && !(r.integer(4) == 1 && type >= 3 && type <= 5);
    tables[t.name] = std::move(t);
  });
  std::map<uint16_t, FdbTable*> by_id;
  for (auto& [n, t] : tables) by_id[t.id] = &t;
  // A file whose header names the wrong ODS decodes RDB$RELATIONS in the wrong layout and
  // finds no tables: refuse it rather than print an empty catalog.
  check_system_relations(file, by_id);
  for (const PagesRow& p : pages) {
    auto it = by_id.find(p.relation);
    if (it == by_id.end()) continue;
    if (p.sequence == 0 && p.type == static_cast<uint16_t>(FdbPage::Pointer))
      it->second->pointer_page = p.page;
    if (p.sequence == 0 && p.type == static_cast<uint16_t>(FdbPage::IndexRoot))
      it->second->index_root = p.page;
  }
  for (auto& [n, t] : tables) {
    std::vector<std::pair<uint32_t, uint32_t>> v;
    for (const PagesRow& p : pages) {
      if (p.relation == t.id && p.type == static_cast<uint16_t>(FdbPage::Pointer))
        v.push_back({p.sequence, p.page});
    }
    std::sort(v.begin(), v.end());
    for (auto& [s, pg] : v) t.pointer_pages.push_back(pg);
  }

  // Column types: RDB$RELATION_FIELDS (relation, column) -> domain -> RDB$FIELDS.
  struct Domain {
    int16_t type, sub_type, scale, length, precision, charset;
  };
  std::map<std::string, Domain> domains;
  scan(file, pages, 2, "RDB$FIELDS", fields_format(), [&](const RecordView& r) {
    domains[r.text(0)] =
        Domain{static_cast<int16_t>(r.integer(10)), static_cast<int16_t>(r.integer(11)),
               static_cast<int16_t>(r.integer(9)),  static_cast<int16_t>(r.integer(8)),
               static_cast<int16_t>(r.integer(27)), static_cast<int16_t>(r.integer(26))};
  });
  std::map<std::pair<std::string, std::string>, std::string> column_domain;
  scan(file, pages, 5, "RDB$RELATION_FIELDS", relation_fields_format(), [&](const RecordView& r) {
    column_domain[{r.text(1), r.text(0)}] = r.text(2);
  });

  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> segments;
  scan(file, pages, 3, "RDB$INDEX_SEGMENTS", segments_format(), [&](const RecordView& r) {
    segments[r.text(0)].push_back({r.integer(2), r.text(1)});
  });

  std::vector<uint8_t> irt(file.page_size());
  const std::vector<uint32_t> indices_pages = pointer_pages_of(file, pages, 4, "RDB$INDICES");
  scan(file, pages, 4, "RDB$INDICES", indices_format(), [&](const RecordView& r) {
    auto it = tables.find(r.text(1));
    if (it == tables.end() || r.is_null(2) || r.integer(2) < 1) return;
    FdbIndex ix;
    ix.name = r.text(0);
    ix.id = static_cast<uint32_t>(r.integer(2) - 1);
    ix.unique = r.integer(3) == 1;
    ix.inactive = r.integer(6) != 0;
    ix.descending = r.integer(7) == 1;
    ix.expression = !r.is_null(10);
    ix.condition = file.ods().index_condition && !r.is_null(13);
    ix.expression_source =
        source_text(file, indices_pages, ix.name, "RDB$EXPRESSION_SOURCE", r, 11);
    if (file.ods().index_condition) {
      ix.condition_source =
          source_text(file, indices_pages, ix.name, "RDB$CONDITION_SOURCE", r, 14);
    }
    auto segs = segments[ix.name];
    std::sort(segs.begin(), segs.end());
    for (auto& [pos, field] : segs) {
      FdbSegment s;
      s.field = field;
      auto d = column_domain.find({it->first, field});
      if (d != column_domain.end()) {
        auto dom = domains.find(d->second);
        if (dom != domains.end()) {
          s.field_type = dom->second.type;
          s.field_sub_type = dom->second.sub_type;
          s.scale = dom->second.scale;
          s.length = dom->second.length;
          s.precision = dom->second.precision;
          s.charset = dom->second.charset;
        }
      }
      ix.segments.push_back(s);
    }
    it->second.indexes.push_back(std::move(ix));
  });

  // Root pages and key types from each table's index root page.
  std::vector<FdbTable> out;
  for (auto& [n, t] : tables) {
    std::sort(t.indexes.begin(), t.indexes.end(),
              [](const FdbIndex& a, const FdbIndex& b) { return a.name < b.name; });
    if (t.index_root != 0 && !t.indexes.empty()) {
      file.read_page(t.index_root, FdbPage::IndexRoot, irt.data());
      const uint32_t count = fdb_u16(irt.data() + kIrtCount);
      if (kIrtSlots + kIrtSlotSize * count > file.page_size()) {
        file.fail(t.index_root, FdbPage::IndexRoot,
                  fmt::format("irt_count {} does not fit the page", count));
      }
      for (FdbIndex& ix : t.indexes) {
        if (ix.id >= count) continue;
        const uint8_t* slot = irt.data() + kIrtSlots + kIrtSlotSize * ix.id;
        const uint8_t flags = slot[11];
        ix.root_page = (flags & 4) ? 0 : fdb_u32(slot);
        ix.descending = (flags & 2) != 0;
        ix.unique = (flags & 1) != 0;
        const uint32_t desc = fdb_u16(slot + 8), keys = slot[10];
        if (ix.root_page == 0) continue;
        if (desc < kIrtSlots + kIrtSlotSize * count || desc + 8 * keys > file.page_size()) {
          file.fail(t.index_root, FdbPage::IndexRoot,
                    fmt::format("index {}: segment descriptors at {} ({} keys) outside the page",
                                ix.id, desc, keys));
        }
        if (ix.expression) ix.segments.resize(keys);
        if (keys != ix.segments.size()) {
          file.fail(t.index_root, FdbPage::IndexRoot,
                    fmt::format("index {} ({}): {} segments where RDB$INDEX_SEGMENTS lists {}",
                                ix.id, ix.name, keys, ix.segments.size()));
        }
        for (uint32_t k = 0; k < keys; ++k) {
          ix.segments[k].field_id = fdb_u16(irt.data() + desc + 8 * k);
          ix.segments[k].itype = fdb_u16(irt.data() + desc + 8 * k + 2);
        }
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace pbtree::firebird
