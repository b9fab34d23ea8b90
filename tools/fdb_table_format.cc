// Text and JSON of gstat's table figures (src/utilities/gstat/dba.epp's report loop and
// print_distribution; message texts of src/include/firebird/impl/msg/gstat.h, 5.0).
#include "tools/fdb_table_format.h"

#include <fmt/format.h>

#include <cstdio>

namespace pbtree::tools {

using firebird::FdbTableStats;

namespace {

// printf's "%.Nf" (the rounding gstat's sprintf gives).
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string format_fdb_table_lines(const FdbTableStats& s, uint32_t page_size, uint16_t ods_major) {
  std::string o;
  o += fmt::format("    Primary pointer page: {}, Index root page: {}\n", s.pointer_page,
                   s.index_root);
  o += fmt::format("    Total formats: {}, used formats: {}\n", s.total_formats, s.used_formats);
  o += fmt::format("    Average record length: {}, total records: {}\n",
                   fixed(s.average_record_length(), 2), s.records);
  o += fmt::format("    Average version length: {}, total versions: {}, max versions: {}\n",
                   fixed(s.average_version_length(), 2), s.versions, s.max_versions);
  o += fmt::format("    Average fragment length: {}, total fragments: {}, max fragments: {}\n",
                   fixed(s.average_fragment_length(), 2), s.fragments, s.max_fragments);
  o += fmt::format("    Average unpacked length: {}, compression ratio: {}\n",
                   fixed(s.average_unpacked_length(), 2), fixed(s.compression_ratio(), 2));
  o += fmt::format("    Pointer pages: {}, data page slots: {}\n", s.pointer_pages, s.slots);
  o += fmt::format("    Data pages: {}, average fill: {}%\n", s.data_pages,
                   fixed(s.average_fill(page_size), 0));
  o += fmt::format("    Primary pages: {}, secondary pages: {}, swept pages: {}\n", s.primary_pages,
                   s.data_pages - s.primary_pages, s.swept_pages);
  o += fmt::format("    Empty pages: {}, full pages: {}\n", s.empty_pages, s.full_pages);
  if (s.bigrec_pages) o += fmt::format("    Big record pages: {}\n", s.bigrec_pages);
  if (s.blob_count()) {
    o += fmt::format("    Blobs: {}, total length: {}, blob pages: {}\n", s.blob_count(),
                     s.blob_space(), s.blob_pages());
    if (ods_major >= 13) {
      for (size_t l = 0; l < s.blobs.size(); ++l) {
        if (s.blobs[l].count == 0) continue;
        o += fmt::format("        Level {}: {}, total length: {}, blob pages: {}\n", l,
                         s.blobs[l].count, s.blobs[l].space, s.blobs[l].pages);
      }
    } else {
      o += fmt::format("        Level 0: {}, Level 1: {}, Level 2: {}\n", s.blobs[0].count,
                       s.blobs[1].count, s.blobs[2].count);
    }
  }
  if (ods_major >= 13) o += fmt::format("    Table size: {} bytes\n", s.table_size(page_size));
  o += "    Fill distribution:\n";
  for (int n = 0; n < 5; ++n) {
    o += fmt::format("\t{:2} - {:2}% = {}\n", n * 20, (n + 1) * 20 - 1,
                     s.fill[static_cast<size_t>(n)]);
  }
  return o;
}

void add_fdb_table_figures(Json& o, const FdbTableStats& s, uint32_t page_size) {
  o["pointer_page"] = s.pointer_page;
  o["index_root"] = s.index_root;
  o["total_formats"] = s.total_formats;
  o["used_formats"] = s.used_formats;
  o["avg_record_length"] = s.average_record_length();
  o["total_records"] = s.records;
  o["avg_version_length"] = s.average_version_length();
  o["total_versions"] = s.versions;
  o["max_versions"] = s.max_versions;
  o["avg_fragment_length"] = s.average_fragment_length();
  o["total_fragments"] = s.fragments;
  o["max_fragments"] = s.max_fragments;
  o["avg_unpacked_length"] = s.average_unpacked_length();
  o["compression_ratio"] = s.compression_ratio();
  o["pointer_pages"] = s.pointer_pages;
  o["data_page_slots"] = s.slots;
  o["data_pages"] = s.data_pages;
  o["avg_fill"] = s.average_fill(page_size);
  o["primary_pages"] = s.primary_pages;
  o["secondary_pages"] = s.data_pages - s.primary_pages;
  o["swept_pages"] = s.swept_pages;
  o["empty_pages"] = s.empty_pages;
  o["full_pages"] = s.full_pages;
  o["big_record_pages"] = s.bigrec_pages;
  Json levels = Json::array();
  for (size_t l = 0; l < s.blobs.size(); ++l) {
    levels.push_back(Json{{"level", l},
                          {"count", s.blobs[l].count},
                          {"total_length", s.blobs[l].space},
                          {"pages", s.blobs[l].pages}});
  }
  o["blobs"] = Json{{"count", s.blob_count()},
                    {"total_length", s.blob_space()},
                    {"pages", s.blob_pages()},
                    {"levels", std::move(levels)}};
  o["table_size"] = s.table_size(page_size);
  o["fill_distribution"] = Json(std::vector<uint64_t>(s.fill.begin(), s.fill.end()));
}

}  // namespace pbtree::tools
