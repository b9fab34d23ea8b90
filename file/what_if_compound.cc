// compound_what_if (file/what_if_compound.h).
#include "file/what_if_compound.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>

#include <memory>

#include "btree/btree.h"
#include "file/index_file_access.h"

namespace pbtree {

CompoundWhatIfReport compound_what_if(IndexFile& file, const std::string& name,
                                      const std::function<void(uint64_t)>& on_entries) {
  const std::optional<IndexInfo> info = file.find_index(name);
  if (!info) throw file.no_index_error(name);
  const IndexDefinition& def = info->def;
  if (!def.compound()) throw UsageError(fmt::format("index {} is not compound", name));
  CompoundWhatIfReport report;
  report.info = *info;
  report.page_size = file.page_size();
  std::vector<KeyFormat> current;
  for (const IndexSegment& g : def.segments) current.push_back(g.format);
  report.variants.push_back({current, 0, {}});
  for (size_t i = 0; i < def.segments.size(); ++i) {
    for (KeyFormat f : allowed_key_formats(def.segments[i].type)) {
      if (f == current[i]) continue;
      std::vector<KeyFormat> v = current;
      v[i] = f;
      report.variants.push_back({v, i + 1, {}});
    }
  }
  std::vector<std::unique_ptr<WhatIfEstimator>> estimators;
  std::vector<std::vector<Segment>> segs(report.variants.size());
  for (size_t v = 0; v < report.variants.size(); ++v) {
    IndexDefinition d = def;
    for (size_t i = 0; i < d.segments.size(); ++i)
      d.segments[i].format = report.variants[v].formats[i];
    const size_t len = definition_max_key_length(d);
    WhatIfEstimator::Options o;
    o.type = TypeSpec::parse(fmt::format("varchar({})", len > 1 ? len - 1 : 1));
    o.source = KeyFormat::Text;
    o.formats = {KeyFormat::Text};
    o.descending = def.descending;
    o.page_size = file.page_size();
    if (v == 0) o.current = std::make_pair(KeyFormat::Text, def.layout);
    estimators.push_back(std::make_unique<WhatIfEstimator>(o));
    segs[v].resize(def.segments.size());
    for (size_t i = 0; i < def.segments.size(); ++i) {
      segs[v][i] = Segment{&def.segments[i].type, report.variants[v].formats[i], Value{}};
    }
  }
  std::vector<std::string> storage;
  KeyBuffer kb;
  uint64_t n = 0;
  for (Cursor c = btree_of(file, name).scan(); c.valid(); c.next(), ++n) {
    if (on_entries && n % kWhatIfProgressEvery == 0 && n != 0) on_entries(n);
    const auto values = compound_key_values(def, c.key(), storage);
    if (!values) {
      throw CorruptError(
          fmt::format("{}: index {}: page {}, node at offset {}: not a compound "
                      "key of the index",
                      file.path(), name, c.page_number(), c.node_offset()));
    }
    estimators[0]->add(c.key(), c.record_number());
    for (size_t v = 1; v < estimators.size(); ++v) {
      for (size_t i = 0; i < values->size(); ++i) segs[v][i].value = (*values)[i];
      build_compound_key(segs[v], def.descending, kb);
      estimators[v]->add(kb.bytes(), c.record_number());
    }
  }
  if (on_entries) on_entries(n);
  report.entries = n;
  for (size_t v = 0; v < estimators.size(); ++v) report.variants[v].rows = estimators[v]->finish();
  return report;
}

}  // namespace pbtree
