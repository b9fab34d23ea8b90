// `pbtree` subcommands (CLI11): key, load (--key-format auto), stat (--what-if), demo. Every
// failure becomes one line "pbtree: <message>" on the error stream and exit code 1; bad usage gives
// exit code 2.
#include "tools/cli.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <pbtree/version.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "btree/level_stats.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "page/file_lock.h"
#include "tools/cli_checks.h"
#include "tools/cli_errors.h"
#include "tools/cmd_compare.h"
#include "tools/cmd_firebird.h"
#include "tools/cmd_report.h"
#include "tools/compound_cli.h"
#include "tools/csv_reader.h"
#include "tools/demo.h"
#include "tools/load_pipeline.h"
#include "tools/loader.h"
#include "tools/progress.h"
#include "tools/stat_format.h"
#include "tools/tree_commands.h"
#include "tools/what_if_format.h"
#include "util/bytes.h"

namespace pbtree::tools {

namespace {

struct KeyArgs {
  std::vector<std::string> types;
  std::string key_format;
  bool descending = false;
  std::vector<std::string> values;
};

struct LoadArgs {
  std::vector<std::string> types;
  std::vector<size_t> columns;
  std::string db, index, key_format, input;
  bool unique = false, descending = false, header = false, progress = false;
  std::string layout = "firebird";
  bool append = false;
  uint32_t page_size = 0;
  size_t recno_column = 0;
  std::string memory, temp_dir;  // --memory, --temp-dir (tools/load_pipeline.h)
  uint32_t threads = 0;          // --threads: 0 = hardware_concurrency
};

struct StatArgs {
  std::string db, index;
  bool json = false, io = false, what_if = false;
  bool firebird = false, system = false;  // --firebird: a Firebird database (cmd_firebird.h)
  bool levels = false;                    // --levels: btree/level_stats.h
  bool progress = false;                  // --progress: tools/progress.h even off a terminal
  std::string compare, compare_index;     // --compare B [--compare-index I]: cmd_compare.h
  std::string table;
};

// --column / --recno-column: a 1-based column number (a short message, not CLI11's range),
// at most the fields a record of CsvReader::kMaxRecordBytes can hold: no column past it can
// exist, and nothing is sized by it (CsvReader::limit_field keeps one entry per limit).
CLI::Validator column_number_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        constexpr size_t kMaxColumn = CsvReader::kMaxRecordBytes + 1;
        size_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v == 0) {
          return "columns are numbered from 1 (got '" + text.substr(0, 40) + "')";
        }
        if (v > kMaxColumn) {
          return fmt::format(
              "columns are numbered from 1 to {} (a record holds at most 64 MiB, "
              "so at most that many fields), not '{}'",
              kMaxColumn, text.substr(0, 40));
        }
        return "";
      },
      "COLUMN");
}

// --type's value; an unknown type name is an argument error (exit 2).
TypeSpec parse_type_argument(const std::string& text) {
  try {
    return TypeSpec::parse(text);
  } catch (const KeyError& e) {
    throw ArgumentError(e.what());
  }
}

// An error message as one line of stderr: control characters a value brought into it (a
// newline inside a quoted CSV field, say) are written as \n, \r, \t or \xNN.
std::string one_line(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (const char ch : message) {
    const auto b = static_cast<unsigned char>(ch);
    if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7F) {
      out += fmt::format("\\x{:02X}", b);
    } else {
      out += ch;
    }
  }
  return out;
}

// --key-format's value (not "auto"); an unknown name is an argument error (exit 2).
KeyFormat parse_key_format_argument(const std::string& text) {
  try {
    return parse_key_format(text);
  } catch (const KeyError& e) {
    throw ArgumentError(e.what());
  }
}

// `key --type T1 --type T2 -- V1 V2`: one compound key, one value per segment (NULL is a
// NULL segment, '=' drops one leading '='; tools/compound_cli.h).
void run_compound_key(const KeyArgs& a, std::ostream& out) {
  if (!a.key_format.empty()) throw ArgumentError("--key-format is for one --type");
  if (a.values.size() != a.types.size()) {
    throw ArgumentError(fmt::format("{} --type need {} values, got {}", a.types.size(),
                                    a.types.size(), a.values.size()));
  }
  IndexDefinition def;
  def.name = "KEY";
  def.descending = a.descending;
  for (const std::string& t : a.types) {
    const TypeSpec type = parse_type_argument(t);
    def.segments.push_back(IndexSegment{type, default_key_format(type)});
  }
  out << hex_bytes(entry_key_of_tokens(def, a.values)) << '\n';
}

void run_key(const KeyArgs& a, std::ostream& out) {
  if (a.types.size() > 1) return run_compound_key(a, out);
  const TypeSpec type = parse_type_argument(a.types.at(0));
  const KeyFormat format =
      a.key_format.empty() ? default_key_format(type) : parse_key_format_argument(a.key_format);
  check_key_format(type, format);
  KeyBuffer key;
  std::string text;
  for (const std::string& v : a.values) {
    build_key(type, format, parse_value(type, v), a.descending, key);
    text += hex_bytes(key.bytes());
    text += '\n';
  }
  out << text;
}

void run_load(const LoadArgs& a, std::ostream& err) {
  if (a.append) {
    ColumnSource source;
    source.header = a.header;
    if (a.types.size() > 1) throw ArgumentError("--append takes at most one --type");
    source.column = a.columns.empty() ? 1 : a.columns[0];
    if (a.columns.size() > 1) source.columns = a.columns;
    source.recno_column = a.recno_column;
    append_to_index(a.db, a.index, a.input, source, a.types.empty() ? "" : a.types[0]);
    return;
  }
  IndexDefinition def;
  def.name = a.index;
  if (!valid_index_name(def.name)) {
    throw ArgumentError(
        fmt::format("bad index name '{}': 1 to 31 characters of A-Z a-z 0-9 _ $", def.name));
  }
  def.type = parse_type_argument(a.types.at(0));
  if (a.types.size() > 1) {  // a compound index: --type and --column once per segment
    if (a.types.size() > kMaxIndexSegments) {
      throw ArgumentError(fmt::format("an index has at most {} segments, not {}", kMaxIndexSegments,
                                      a.types.size()));
    }
    if (!a.key_format.empty()) {
      throw ArgumentError(
          "--key-format applies to single-segment indexes (compound: each "
          "segment has its type's default format)");
    }
    if (a.columns.size() != a.types.size()) {
      throw ArgumentError(fmt::format("{} --type but {} --column: give one --column per segment",
                                      a.types.size(), a.columns.size()));
    }
    for (const std::string& t : a.types) {
      const TypeSpec type = parse_type_argument(t);
      def.segments.push_back(IndexSegment{type, default_key_format(type)});
    }
  } else if (a.columns.size() > 1) {
    throw ArgumentError(
        fmt::format("{} --column but one --type: give one --type per segment", a.columns.size()));
  }
  if (a.key_format == "auto") {
    def.auto_format = true;
    def.format = default_key_format(def.type);
  } else {
    def.format = a.key_format.empty() ? default_key_format(def.type)
                                      : parse_key_format_argument(a.key_format);
  }
  def.unique = a.unique;
  def.descending = a.descending;
  def.layout = a.layout == "compact" ? NodeLayout::Compact : NodeLayout::Firebird;
  ColumnSource source;
  source.header = a.header;
  source.column = a.columns.empty() ? 1 : a.columns[0];
  if (def.compound()) source.columns = a.columns;
  source.recno_column = a.recno_column;
  source.threads = a.threads;
  LoadLimits limits;
  limits.memory = a.memory.empty() ? default_bulk_load_memory() : parse_memory_size(a.memory);
  limits.temp_dir = a.temp_dir;
  Progress progress(err, a.progress);
  limits.progress = &progress;
  load_index_file(a.db, def, a.page_size, a.input, source, a.progress ? &err : nullptr, nullptr,
                  limits);
}

void run_stat(const StatArgs& a, std::ostream& out, std::ostream& err) {
  Progress progress(err, a.progress);
  if (!a.compare.empty()) {
    out << compare_stats(CompareArgs{a.db, a.compare, a.index, a.compare_index});
    return;
  }
  // A Firebird database is told by its header page, as --compare and report do.
  if (a.firebird || is_firebird_file(a.db)) {
    if (a.io) throw ArgumentError(fmt::format("{}: --io is for pbtree files, not Firebird", a.db));
    run_firebird_stat(
        FirebirdStatArgs{a.db, {a.table, a.index, a.system}, a.json, a.what_if, a.levels}, out,
        &progress);
    return;
  }
  auto file = IndexFile::open(a.db);
  if (a.io) {
    // The last checkpoint's cost, from the header page (page/file_header.h, page/wal.h).
    CommitStats c = file->last_checkpoint();
    out << fmt::format(
        "Last checkpoint: {}, pages written: {}, bytes written: {}, bytes synced: {}\n",
        c.checkpoint, c.pages_written, c.bytes_written, c.bytes_synced);
    return;
  }
  std::vector<IndexInfo> list;
  if (!a.index.empty()) {
    auto info = file->find_index(a.index);
    if (!info) throw file->no_index_error(a.index);
    list.push_back(*info);
  } else {
    list = file->indexes();
  }
  std::string text;
  if (a.json) text += "[";
  bool first = true;
  for (const IndexInfo& info : list) {
    if (a.what_if) {
      std::function<void(uint64_t)> on_entries;
      if (progress.enabled()) {
        progress.start("what-if: index " + info.def.name, 0, "entries");
        on_entries = [&progress](uint64_t n) { progress.set(n); };
      }
      if (info.def.compound()) {  // per segment (file/what_if_compound.h)
        const CompoundWhatIfReport report = compound_what_if(*file, info.def.name, on_entries);
        progress.finish();
        if (a.json) {
          text += first ? "\n  " : ",\n  ";
          text += format_compound_what_if_json(report);
        } else {
          text += format_compound_what_if_table(report);
        }
        first = false;
        continue;
      }
      const WhatIfReport report = what_if(*file, info.def.name, 1, {}, on_entries);
      progress.finish();
      if (a.json) {
        text += first ? "\n  " : ",\n  ";
        text += format_what_if_json(report);
      } else {
        text += format_what_if_table(report);
      }
      first = false;
      continue;
    }
    std::function<void(uint32_t)> on_page;
    if (progress.enabled()) {
      progress.start("stat: index " + info.def.name, file->page_count(), "pages");
      on_page = [&progress](uint32_t) { progress.add(); };
    }
    IndexStats stats = file->analyze(info.def.name, on_page);
    progress.finish();
    std::optional<KeyFormatChoice> choice;
    if (info.def.auto_format) choice = recompute_auto_choice(*file, info.def.name);
    std::optional<TreeShape> shape;
    if (a.levels) {
      shape = analyze_tree_shape([&](uint32_t p, uint8_t* buf) { read_file_page(*file, p, buf); },
                                 info.root_page, file->page_size(), file->page_count(),
                                 info.def.descending);
    }
    if (a.json) {
      text += first ? "\n  " : ",\n  ";
      text += format_json_object(info, stats, file->page_size(), choice ? &*choice : nullptr,
                                 shape ? &*shape : nullptr);
    } else {
      text += format_gstat_block(info, stats);
      if (shape) text += format_tree_shape(*shape);
      if (choice) text += format_choice_line(info, *choice);
      text += format_extra_lines(info, stats, file->page_size());
    }
    first = false;
  }
  if (a.json) text += list.empty() ? "]\n" : "\n]\n";
  out << text;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"pbtree: paged B-tree index files with Firebird-format normalized keys"};
  app.name("pbtree");
  app.require_subcommand(1);
  app.fallthrough();
  int busy_timeout = 0;
  app.add_option("--busy-timeout", busy_timeout,
                 "Milliseconds a writing command waits for another writer to finish before "
                 "failing with exit code 3 (default 0: fail at once)")
      ->check(wait_ms_check());
  app.set_version_flag("--version", std::string("pbtree ") + PBTREE_VERSION_STRING);
  // Usage errors start with "pbtree: " like every other error (CLI11's own text after it).
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return "pbtree: " + CLI::FailureMessage::simple(a, e);
  });

  // Options given once per segment (--type, --column) take exactly one value each time
  // (allow_extra_args(false)): CLI11 would otherwise take the words after the value as more
  // values (`key --type integer 5 -3`) and drop a "--" that follows (`key --type double --
  // -inf`).
  KeyArgs key_args;
  CLI::App* key = app.add_subcommand("key", "Print the normalized key of each value as hex bytes");
  key->add_option("--type", key_args.types,
                  "Column type: smallint integer bigint int128 double numeric(P,S) varchar(N); "
                  "repeat it for a compound key (one value per --type)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  key->add_option("--key-format", key_args.key_format,
                  "Key format: double rescaled-double decimal128 bcd text (default: Firebird 5's)");
  key->add_flag("--descending", key_args.descending, "Descending key");
  key->add_option("values", key_args.values, "Values (put -- before negative numbers)")->required();

  LoadArgs load_args;
  CLI::App* load = app.add_subcommand("load", "Bulk-build one new index from a CSV file");
  load->add_option("db", load_args.db, "Index file (created if missing)")->required();
  load->add_option("--index", load_args.index, "Name of the new index")->required();
  load->add_option("--type", load_args.types,
                   "Column type (required unless --append); repeat it, with --column, once "
                   "per segment of a compound index")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  load->add_option("--key-format", load_args.key_format,
                   "Key format, or auto: the smallest on a 25% sample if >= 1.2x smaller than "
                   "the default (default: Firebird 5's)");
  load->add_flag("--unique", load_args.unique, "Unique index");
  load->add_flag("--descending", load_args.descending, "Descending index");
  load->add_option("--layout", load_args.layout,
                   "Node layout: firebird (default, Firebird's ODS 12 nodes) or compact "
                   "(docs/FORMAT.md 2.9)")
      ->check(CLI::IsMember({"firebird", "compact"}));
  load->add_option("--page-size", load_args.page_size,
                   "Page size in bytes for a new file (must match an existing file)")
      ->check(page_size_check());
  load->add_option("--input", load_args.input,
                   "CSV input, plain or .zst; - reads standard input (plain or zstd)")
      ->required();
  load->add_flag("--header", load_args.header, "The input's first line is a header");
  load->add_option("--column", load_args.columns,
                   "1-based column of the values (default 1); once per --type of a compound "
                   "index, in segment order")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false)
      ->check(column_number_check());
  load->add_option("--recno-column", load_args.recno_column,
                   "1-based column of record numbers (default: row ordinal from 0)")
      ->check(column_number_check());
  load->add_flag("--progress", load_args.progress,
                 "Progress line (phase, rows, rate, ETA) and messages on stderr even when it is "
                 "not a terminal (the line is shown on a terminal anyway)");
  load->add_option("--memory", load_args.memory,
                   "Bytes for the entry buffers, e.g. 256M or 1G (default 256M, at most a "
                   "quarter of the RAM; least 64K); beyond it sorted runs spill to a temporary "
                   "file");
  load->add_option("--temp-dir", load_args.temp_dir,
                   "Directory of the temporary run file (default: the index file's); the file "
                   "has no name and vanishes with the process");
  load->add_option("--threads", load_args.threads,
                   "Threads for parsing, sorting and building (default: the machine's "
                   "hardware threads); the index is the same at any count")
      ->check(CLI::Range(1u, 1024u));
  load->add_flag("--append", load_args.append,
                 "Insert into the existing index instead (all-or-nothing, durable at exit)");
  load->callback([&load_args, load] {
    if (!load_args.append && load_args.types.empty()) throw CLI::RequiredError("--type");
    if (!load_args.append) return;
    for (const char* o : {"--memory", "--temp-dir"}) {
      if (load->count(o) > 0) {
        throw CLI::ValidationError(std::string(o) +
                                   " applies to building a new index, not --append");
      }
    }
    // --append inserts into an index as it was created: options that define a new index
    // would be ignored, so they are refused.
    for (const char* o : {"--key-format", "--unique", "--descending", "--layout", "--page-size"}) {
      if (load->count(o) > 0) {
        throw CLI::ValidationError(std::string(o) +
                                   " defines a new index; --append inserts "
                                   "into the existing one as it was created");
      }
    }
  });

  StatArgs stat_args;
  CLI::App* stat = app.add_subcommand("stat", "Print gstat-style statistics of indexes");
  stat->add_option("db", stat_args.db, "Index file")->required();
  stat->add_option("--index", stat_args.index, "Only this index");
  stat->add_flag("--json", stat_args.json, "JSON array of objects instead of text");
  CLI::Option* io_flag =
      stat->add_flag("--io", stat_args.io,
                     "Only the last checkpoint's cost: pages and bytes written, bytes synced");
  stat->add_flag("--what-if", stat_args.what_if,
                 "Predicted size in every key format x layout (a bulk build; no file written)")
      ->excludes(io_flag);
  CLI::Option* fb_flag = stat->add_flag(
      "--firebird", stat_args.firebird,
      "DB is a Firebird database (ODS 11-13: Firebird 2.x-5): gstat -r's table and index "
      "blocks, read-only");
  stat->add_option("--table", stat_args.table, "With --firebird: only this table")->needs(fb_flag);
  stat->add_flag("--system", stat_args.system, "With --firebird: system tables too")
      ->needs(fb_flag);
  fb_flag->excludes(io_flag);
  CLI::Option* cmp = stat->add_option(
      "--compare", stat_args.compare,
      "Another file (pbtree, or Firebird ODS 11-13): the same-named indexes side by side with "
      "ratios");
  stat->add_option("--compare-index", stat_args.compare_index,
                   "With --compare: the index of the other file to set against --index")
      ->needs(cmp);
  cmp->excludes(io_flag);
  stat->add_flag("--progress", stat_args.progress,
                 "Progress lines on stderr even when it is not a terminal (shown on a terminal "
                 "anyway)");
  stat->add_flag("--levels", stat_args.levels,
                 "Per level: pages, nodes, fill, node length, unused bytes; leaves out of file "
                 "order, NULL entries (with --json: keys levels, leaves_out_of_order, "
                 "null_entries)");

  FirebirdImportArgs import_args;
  CLI::App* import = app.add_subcommand(
      "import",
      "Build a pbtree index from the entries of an index of a Firebird database (ODS 11-13: "
      "Firebird 2.x-5)");
  import->add_option("fdb", import_args.fdb, "Firebird database (read-only)")->required();
  import->add_option("db", import_args.db, "pbtree index file (created if missing)")->required();
  import->add_option("--index", import_args.index, "Firebird index name")->required();
  import->add_option("--name", import_args.name, "Name of the new index (default: the same)");
  import->add_option("--key-format", import_args.key_format,
                     "Key format (default: the Firebird index's own)");
  import->add_option("--layout", import_args.layout, "Node layout: firebird (default) or compact")
      ->check(CLI::IsMember({"firebird", "compact"}));
  import
      ->add_option("--page-size", import_args.page_size,
                   "Page size of a new file (default: the database's)")
      ->check(page_size_check());

  std::string report_file, report_output;
  CLI::App* report = app.add_subcommand(
      "report", "Write one self-contained HTML page (inline SVG) about a pbtree or Firebird file");
  report->add_option("file", report_file, "pbtree file or Firebird database (ODS 11-13)")
      ->required();
  report->add_option("-o,--output", report_output, "HTML file to write")->required();

  DemoOptions demo_args;
  CLI::App* demo =
      app.add_subcommand("demo", "Build the seed and real-data indexes and compare them");
  demo->add_option("--rows", demo_args.rows, "Rows per data set (default: all)")
      ->check(count_check("a count of rows from 0 (all) to 18446744073709551615"));
  demo->add_option("--page-size", demo_args.page_size, "Page size in bytes (default 8192)")
      ->check(page_size_check());
  demo->add_option("--data-dir", demo_args.data_dir, "Data directory (default: found by itself)");
  demo->add_option("--output", demo_args.output,
                   "Demo index file (default: <tmp>/pbtree-demo.pbt)");

  TreeCommands tree_commands;
  add_insert_command(app, tree_commands);
  add_delete_command(app, tree_commands);
  add_find_command(app, tree_commands);
  add_scan_command(app, tree_commands);
  add_verify_command(app, tree_commands);
  add_checkpoint_command(app, tree_commands);
  add_backup_command(app, tree_commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? 0 : 2;
  }

  set_default_busy_timeout_ms(busy_timeout);
  try {
    if (*key) run_key(key_args, out);
    if (*load) run_load(load_args, err);
    if (*stat) run_stat(stat_args, out, err);
    if (*demo) {
      check_page_size_argument(demo_args.page_size);
      run_demo(demo_args, out, err);
    }
    if (*import) {
      check_page_size_argument(import_args.page_size);
      run_firebird_import(import_args, out);
    }
    if (*report) run_report(report_file, report_output);
    tree_commands.run(out, err);
  } catch (const ArgumentError& e) {
    out.flush();
    err << "pbtree: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const LockedError& e) {
    out.flush();
    err << "pbtree: " << one_line(e.what()) << "\n";
    return 3;
  } catch (const std::exception& e) {
    out.flush();
    err << "pbtree: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace pbtree::tools
