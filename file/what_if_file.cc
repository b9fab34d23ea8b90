// The file-level what-if: re-encodes an index's stored keys through WhatIfEstimator
// (btree/what_if.h), and recomputes the reason behind a `--key-format auto` choice.
#include <fmt/format.h>
#include <pbtree/index_file.h>

#include <optional>

#include "btree/btree.h"
#include "btree/what_if.h"
#include "file/index_file_access.h"

namespace pbtree {

WhatIfReport what_if(IndexFile& file, const std::string& name, uint64_t sample_every,
                     const std::vector<NodeLayout>& layouts,
                     const std::function<void(uint64_t)>& on_entries) {
  const std::optional<IndexInfo> info = file.find_index(name);
  if (!info) throw file.no_index_error(name);
  if (sample_every == 0) throw UsageError("what_if: sample_every must be >= 1");
  if (info->def.compound()) {
    throw UsageError(
        fmt::format("{}: index {} is compound: its what-if is per segment (pbtree stat "
                    "--what-if)",
                    file.path(), name));
  }
  WhatIfEstimator::Options o;
  o.type = info->def.type;
  o.source = info->def.format;
  o.descending = info->def.descending;
  o.page_size = file.page_size();
  o.current = std::make_pair(info->def.format, info->def.layout);
  o.layouts = layouts;
  WhatIfEstimator estimator(o);
  uint64_t i = 0;
  for (Cursor c = btree_of(file, name).scan(); c.valid(); c.next(), ++i) {
    if (on_entries && i % kWhatIfProgressEvery == 0 && i != 0) on_entries(i);
    if (i % sample_every != 0) continue;
    try {
      estimator.add(c.key(), c.record_number());
    } catch (const KeyError& e) {
      throw CorruptError(fmt::format("{}: index {}: page {}, node at offset {}: {}", file.path(),
                                     name, c.page_number(), c.node_offset(), e.what()));
    }
  }
  if (on_entries) on_entries(i);
  WhatIfReport report;
  report.info = *info;
  report.page_size = file.page_size();
  report.entries = estimator.entries();
  report.rows = estimator.finish();
  return report;
}

KeyFormatChoice recompute_auto_choice(IndexFile& file, const std::string& name) {
  const std::optional<IndexInfo> info = file.find_index(name);
  if (!info) throw file.no_index_error(name);
  const WhatIfReport report = what_if(file, name, kAutoSampleEvery, {info->def.layout});
  return choose_key_format(report.info.def.type, report.info.def.layout, report.rows,
                           report.entries);
}

}  // namespace pbtree
