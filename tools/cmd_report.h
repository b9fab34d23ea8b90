// `pbtree report FILE -o report.html`: one self-contained HTML page (inline SVG, no scripts,
// no network fetches) for a pbtree file or a Firebird database (ODS 11-13): per index gstat's
// figures, a bar chart of its predicted size in each key format and layout (btree/what_if.h;
// compound indexes: each segment's formats, one segment changed at a time,
// file/what_if_compound.h), the fill histogram and the per-level table (btree/level_stats.h).
#pragma once

#include <pbtree/index_file.h>

#include <optional>
#include <string>
#include <vector>

#include "btree/level_stats.h"
#include "btree/what_if.h"
#include "file/what_if_compound.h"

namespace pbtree::tools {

/// What the page shows of one index.
struct ReportIndex {
  std::string table;  ///< Firebird table, empty for pbtree files
  std::string name;
  std::string type;  ///< "bigint", ...; compound: "integer, varchar(4)" (empty if unknown)
  IndexStats stats;
  TreeShape shape;
  std::optional<WhatIfReport> what_if;  ///< absent: not predicted (why in `not_predicted`)
  /// A compound index's prediction, instead of `what_if`: one bar per segment formats and
  /// layout, labelled "double + text / firebird".
  std::optional<CompoundWhatIfReport> compound_what_if;
  std::string not_predicted;
};

/// The HTML page. Every text is HTML-escaped. Bars are proportional to index pages.
std::string render_report_html(const std::string& file, uint32_t page_size,
                               const std::vector<ReportIndex>& indexes);

/// Reads `file` (Firebird if its header says so, else pbtree; Firebird: user tables only)
/// and writes the page to `output`. An index whose size cannot be predicted gets the reason
/// on the page instead of its chart. Throws UsageError, CorruptError, IoError.
void run_report(const std::string& file, const std::string& output);

}  // namespace pbtree::tools
