// The table lines of `pbtree stat --firebird` (gstat -r's lines between "NAME (id)" and the
// first index block) as text, per the Firebird release that wrote the file, and as JSON.
#pragma once

#include <cstdint>
#include <string>

#include "firebird/fdb_table_stat.h"
#include "tools/json_out.h"

namespace pbtree::tools {

/// gstat -r's table lines, from "    Primary pointer page: ..." to the fill distribution,
/// byte-exact: `ods_major` 13 as Firebird 5.0's gstat (per-level blob lines, "Table size"),
/// 11 and 12 as Firebird 3.0's fbstat (one "Level 0: a, Level 1: b, Level 2: c" line).
/// `page_size`: bytes.
std::string format_fdb_table_lines(const firebird::FdbTableStats& stats, uint32_t page_size,
                                   uint16_t ods_major);

/// The same figures added to `object` as JSON numbers: pointer_page, index_root,
/// total_formats, used_formats, avg_record_length, total_records, avg_version_length,
/// total_versions, max_versions, avg_fragment_length, total_fragments, max_fragments,
/// avg_unpacked_length, compression_ratio, pointer_pages, data_page_slots, data_pages,
/// avg_fill (percent), primary_pages, secondary_pages, swept_pages, empty_pages, full_pages,
/// big_record_pages, blobs {count, total_length, pages, levels [{level, count, total_length,
/// pages}] (3)}, table_size (bytes), fill_distribution (5 counts: data pages per 20% band).
/// Averages are not rounded (the text rounds them to 2 decimals, avg_fill to 0), as the index
/// objects' figures.
void add_fdb_table_figures(Json& object, const firebird::FdbTableStats& stats, uint32_t page_size);

}  // namespace pbtree::tools
