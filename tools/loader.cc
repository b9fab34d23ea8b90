// read_entries / load_index_file: CSV rows -> (normalized key, record number, line) entries
// -> IndexFile::bulk_load, with every input error reported as "<file>:<line>: <what>".
#include "tools/loader.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <ostream>
#include <thread>
#include <vector>

#include "file/file_create.h"
#include "tools/cli_checks.h"
#include "tools/cli_errors.h"
#include "tools/compound_cli.h"
#include "tools/load_pipeline.h"
#include "tools/progress.h"
#include "tools/stat_format.h"

namespace pbtree::tools {

uint64_t parse_csv_recno(std::string_view text, const CsvReader& reader, size_t column) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      v > kMaxRecordNumber) {
    throw InputError(reader.name(), reader.line(),
                     fmt::format("bad record number '{}' in column {} (want an integer 0..{})",
                                 text, column, kMaxRecordNumber));
  }
  return v;
}

uint64_t read_entries(CsvReader& reader, const ColumnSource& source, EntryBatch& batch) {
  const bool compound = source.segments.size() > 1;
  const size_t n = compound ? source.segments.size() : 1;
  if (compound && source.columns.size() != n) {
    throw InputError(reader.name(), 0,
                     fmt::format("{} segments but {} columns", n, source.columns.size()));
  }
  const std::vector<size_t> columns = compound ? source.columns : std::vector{source.column};
  // No key reaches page_size / 4 bytes, so a longer field is refused as soon as it is seen
  // (not buffered whole, not echoed whole into the error).
  const std::string why = fmt::format("keys of {}-byte pages are shorter than {} bytes",
                                      source.page_size, source.page_size / 4);
  size_t need = source.recno_column;
  for (size_t c : columns) {
    if (c == 0) throw InputError(reader.name(), 0, "columns are numbered from 1");
    reader.limit_field(c - 1, source.page_size / 4, why);
    need = std::max(need, c);
  }
  if (source.recno_column != 0) {
    reader.limit_field(source.recno_column - 1, source.page_size / 4, why);
  }
  KeyBuffer key;
  std::vector<Segment> segs(n);
  uint64_t row = 0;
  bool header_done = false;
  while ((source.max_rows == 0 || row < source.max_rows) && reader.next()) {
    if (source.header && !header_done) {
      header_done = true;
      continue;
    }
    if (reader.field_count() < need) {
      throw InputError(reader.name(), reader.line(),
                       fmt::format("missing column {} (the record has {} field{})", need,
                                   reader.field_count(), reader.field_count() == 1 ? "" : "s"));
    }
    size_t at = columns[0];  // the column an error names
    try {
      if (compound) {
        for (size_t i = 0; i < n; ++i) {
          at = columns[i];
          const IndexSegment& g = source.segments[i];
          segs[i] = Segment{
              &g.type, g.format,
              reader.is_null(at - 1) ? Value::null() : parse_value(g.type, reader.field(at - 1))};
        }
        at = columns[0];
        build_compound_key(segs, source.descending, key);
      } else {
        const Value value =
            reader.is_null(at - 1) ? Value::null() : parse_value(source.type, reader.field(at - 1));
        build_key(source.type, source.format, value, source.descending, key);
      }
      check_key_length(key.length, source.page_size);
    } catch (const KeyError& e) {
      throw InputError(reader.name(), reader.line(), fmt::format("column {}: {}", at, e.what()));
    }
    uint64_t recno;
    if (source.recno_column != 0) {
      recno = parse_csv_recno(reader.field(source.recno_column - 1), reader, source.recno_column);
    } else {
      recno = source.recno_of_row ? source.recno_of_row(row) : row;
      if (recno > kMaxRecordNumber) {
        throw InputError(reader.name(), reader.line(),
                         "too many rows: record number over 2^40 - 1");
      }
    }
    batch.add(key.bytes(), recno, reader.line());
    ++row;
  }
  return row;
}

IndexInfo bulk_load_from(IndexFile& file, const IndexDefinition& def, EntryBatch& batch,
                         const std::string& input_name) {
  try {
    return file.bulk_load(def, batch);
  } catch (const DuplicateKeyError& e) {
    uint64_t later = std::max(e.tag_a, e.tag_b), earlier = std::min(e.tag_a, e.tag_b);
    // The value as `load --append` shows it (tags are input lines, one entry each).
    const EntryBatch::Item* a = nullptr;
    const EntryBatch::Item* b = nullptr;
    for (const EntryBatch::Item& it : batch.items()) {
      if (it.tag == earlier && !a) a = &it;
      if (it.tag == later && !b) b = &it;
    }
    if (!a || !b) {
      throw InputError(input_name, later,
                       fmt::format("{} (same key as line {})", e.what(), earlier));
    }
    const std::string value =
        def.compound() ? key_value_text(def, batch.key(*a))
                       : key_to_text(def.type, def.format, def.descending, batch.key(*a));
    if (a->recno == b->recno) {
      throw InputError(
          input_name, later,
          fmt::format("entry ({}, {}) appears twice (same as line {})", value, a->recno, earlier));
    }
    throw InputError(input_name, later,
                     fmt::format("unique index {}: value {} appears twice (same as line {})",
                                 def.name, value, earlier));
  }
}

namespace {

// BoundedLoad::build on a oneTBB arena of `threads` threads (0: the hardware threads), so the
// sort of the entries uses as many as the leaf coding.
IndexInfo build_in_arena(BoundedLoad& load, IndexFile& file, uint32_t threads) {
  const int n =
      static_cast<int>(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency()));
  tbb::task_arena arena(n);
  IndexInfo info;
  arena.execute([&] { info = load.build(file); });
  return info;
}

}  // namespace

IndexInfo load_index_file(const std::string& db_path, const IndexDefinition& def_in,
                          uint32_t page_size, const std::string& input, ColumnSource source,
                          std::ostream* progress, KeyFormatChoice* choice,
                          const LoadLimits& limits) {
  IndexDefinition def = def_in;
  if (def.auto_format) def.format = default_key_format(def.type);
  check_key_format(def.type, def.format);
  // An unsupported --page-size is an argument error whether or not the file exists.
  check_page_size_argument(page_size);
  std::error_code ec;
  const bool exists = std::filesystem::exists(db_path, ec);
  std::unique_ptr<IndexFile> file;
  if (exists) {
    file = IndexFile::open_or_create(db_path, page_size);
    if (file->find_index(def.name)) {
      throw UsageError(fmt::format("{}: index {} already exists", db_path, def.name));
    }
    page_size = file->page_size();
  } else if (page_size == 0) {
    page_size = kDefaultPageSize;
  }
  if (def.compound()) {
    if (def.auto_format) throw UsageError("--key-format auto is for single-segment indexes");
    if (source.columns.size() != def.segments.size()) {
      throw ArgumentError(fmt::format("{} --type but {} --column: give one --column per segment",
                                      def.segments.size(), source.columns.size()));
    }
    for (IndexSegment& g : def.segments) {
      g.format = resolve_key_format(g.type, g.format);
      check_key_format(g.type, g.format);
    }
    source.segments = def.segments;
  }
  // Firebird's definition-time rule, before the file is touched (keys/compound.cc).
  check_definition_key_limit(def, page_size);
  source.type = def.type;
  source.format = def.format;
  source.descending = def.descending;
  source.page_size = page_size;

  // --threads above the machine's threads: oneTBB may run that many (else it warns and
  // caps its workers); the result is the same at any count.
  std::optional<tbb::global_control> parallelism;
  if (source.threads > std::thread::hardware_concurrency()) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism, source.threads);
  }
  // Read once, in chunks of the memory budget, spilled as sorted runs beyond one
  // (tools/load_pipeline.h); the file is touched only to build.
  LoadProgress line(limits.progress, progress, def.name);
  std::string temp_dir = limits.temp_dir;
  if (temp_dir.empty()) {
    temp_dir = std::filesystem::path(db_path).parent_path().string();
    if (temp_dir.empty()) temp_dir = ".";
  }
  BoundedLoad load(def, limits.memory != 0 ? limits.memory : default_bulk_load_memory(), temp_dir,
                   input, line);
  load.read_csv(input, source, source.threads);  // parsed in parallel chunks
  const uint64_t rows = load.rows();
  line.message(fmt::format("pbtree: read {} rows from {}\n", rows, input));
  if (def.auto_format) {
    const KeyFormatChoice c = load.sample(page_size);
    if (choice) *choice = c;
    line.message(fmt::format("pbtree: key format {}\n", describe_choice(def.type, c)));
    if (c.format != def.format) {
      def.format = c.format;
      check_index_key_limit(def.type, def.format, def.descending, page_size);
      load.switch_format(def.format);
    }
  }

  if (file) {
    file->set_build_threads(source.threads);
    IndexInfo info = build_in_arena(load, *file, source.threads);
    line.message(fmt::format("pbtree: built index {} ({} entries)\n", def.name, rows));
    return info;
  }
  // A new file: built whole under a temporary name and moved into place only then
  // (file/file_create.h), so a failed or killed load leaves no file at db_path.
  IndexInfo info;
  if (!create_file_with(db_path, page_size, [&](IndexFile& f) {
        f.set_build_threads(source.threads);
        info = build_in_arena(load, f, source.threads);
      })) {
    throw UsageError(fmt::format(
        "{}: created by another process during this load: left as it is, nothing loaded", db_path));
  }
  line.message(fmt::format("pbtree: built index {} ({} entries)\n", def.name, rows));
  return info;
}

}  // namespace pbtree::tools
