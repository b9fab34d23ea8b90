// `pbtree insert`, `pbtree delete` and `pbtree load --append`: changes to an existing index
// through the living B-tree (IndexSession). Every check runs before the tree is touched, and
// the file is durable (flushed and fsynced) when the command returns.
#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <numeric>

#include "page/wal_io.h"
#include "tools/cli_errors.h"
#include "tools/compound_cli.h"
#include "tools/csv_reader.h"
#include "tools/index_session.h"
#include "tools/tree_commands.h"

namespace pbtree::tools {

namespace {

struct ChangeArgs {
  std::string db, index;
  bool null = false;
  std::vector<std::string> args;  // [VALUE] RECNO
};

uint64_t parse_recno(const std::string& text) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      v > kMaxRecordNumber) {
    throw UsageError(
        fmt::format("bad record number '{}' (want an integer 0..{})", text, kMaxRecordNumber));
  }
  return v;
}

// The value text (nullopt for --null) and the record number from the positional arguments.
std::pair<std::optional<std::string>, uint64_t> value_and_recno(const ChangeArgs& a) {
  const size_t want = a.null ? 1 : 2;
  if (a.args.size() != want) {
    throw ArgumentError(a.null ? "expected RECNO after --null (one argument)"
                               : "expected VALUE RECNO (or --null RECNO)");
  }
  std::optional<std::string> value;
  if (!a.null) value = a.args[0];
  return {value, parse_recno(a.args.back())};
}

// insert / delete on a compound index: exactly one value per segment, then RECNO.
void run_compound_change(const ChangeArgs& a, bool insert, std::unique_ptr<IndexSession> session,
                         wal_io::HeldWarnings& held) {
  const IndexDefinition def = session->info().def;
  if (a.null) throw ArgumentError("--null is for single-segment indexes: give the token NULL");
  if (a.args.empty()) throw ArgumentError("expected V1 .. Vn RECNO");
  const uint64_t recno = parse_recno(a.args.back());
  const std::vector<std::string> tokens(a.args.begin(), a.args.end() - 1);
  const std::vector<uint8_t> key = entry_key_of_tokens(def, tokens);
  {
    check_key_length(key.size(), session->page_size());
    const std::string shown = key_value_text(def, key);
    BTree& tree = session->tree();
    if (insert) {
      if (tree.contains(key, recno)) {
        throw UsageError(
            fmt::format("index {}: entry ({}, {}) already exists", def.name, shown, recno));
      }
      if (def.unique && !key_exempt_from_unique(def, key)) {
        std::vector<uint64_t> found = tree.find(key);
        if (!found.empty()) {
          throw UsageError(fmt::format("unique index {}: value {} already exists (record {})",
                                       def.name, shown, found.front()));
        }
      }
    } else if (!tree.contains(key, recno)) {
      throw NotFoundError(fmt::format("index {}: no entry ({}, {})", def.name, shown, recno));
    }
  }
  session.reset();
  held.drop();  // the writer's open repeats the check open's warnings
  session = IndexSession::open(a.db, a.index, true);
  if (insert) {
    session->tree().insert(key, recno);
  } else {
    session->tree().remove(key, recno);
  }
  session->commit();
}

void run_change(const ChangeArgs& a, bool insert) {
  // Every check on a read-only open: on error the file is not even opened for writing. Its
  // warnings about the log are held back: the writer's open gives the same ones, with what
  // it did (issue 30: "ignored" then "set aside" for one log).
  wal_io::HeldWarnings held;
  auto first = IndexSession::open(a.db, a.index, false);
  if (first->info().def.compound()) return run_compound_change(a, insert, std::move(first), held);
  auto [text, recno] = value_and_recno(a);
  KeyBuffer key;
  {
    auto session = std::move(first);
    const IndexDefinition& def = session->info().def;
    build_key(def.type, def.format, text ? parse_value(def.type, *text) : Value::null(),
              def.descending, key);
    check_key_length(key.length, session->page_size());
    const std::string shown = text ? *text : "NULL";
    BTree& tree = session->tree();
    if (insert) {
      if (tree.contains(key.bytes(), recno)) {
        throw UsageError(
            fmt::format("index {}: entry ({}, {}) already exists", def.name, shown, recno));
      }
      if (def.unique && text) {
        std::vector<uint64_t> found = tree.find(key.bytes());
        if (!found.empty()) {
          throw UsageError(fmt::format("unique index {}: value {} already exists (record {})",
                                       def.name, shown, found.front()));
        }
      }
    } else if (!tree.contains(key.bytes(), recno)) {
      throw NotFoundError(fmt::format("index {}: no entry ({}, {})", def.name, shown, recno));
    }
  }
  held.drop();
  auto session = IndexSession::open(a.db, a.index, true);
  if (insert) {
    session->tree().insert(key.bytes(), recno);
  } else {
    session->tree().remove(key.bytes(), recno);
  }
  session->commit();
}

void add_change_command(CLI::App& app, TreeCommands& commands, bool insert) {
  auto args = std::make_shared<ChangeArgs>();
  CLI::App* sub = app.add_subcommand(
      insert ? "insert" : "delete",
      insert ? "Insert one (value, record number) entry into an index (durable at exit)"
             : "Delete one (value, record number) entry from an index (durable at exit)");
  sub->add_option("db", args->db, "Index file")->required();
  sub->add_option("--index", args->index, "Index name")->required();
  sub->add_flag("--null", args->null, "The value is NULL");
  sub->add_option("args", args->args,
                  "VALUE RECNO, or RECNO after --null (put -- before a negative value); on a "
                  "compound index V1 .. Vn RECNO, one value per segment (NULL: a NULL "
                  "segment, =NULL: the text NULL)");
  sub->footer(
      "VALUE is read as `load` reads it (the index's column type). Errors (exit 1): no such\n"
      "index, malformed value, a key too long, insert of an existing (value, record number)\n"
      "or of an existing non-NULL value in a unique index, delete of an absent entry.");
  commands.add(sub, [args, insert](std::ostream&, std::ostream&) { run_change(*args, insert); });
}

}  // namespace

void add_insert_command(CLI::App& app, TreeCommands& commands) {
  add_change_command(app, commands, true);
}

void add_delete_command(CLI::App& app, TreeCommands& commands) {
  add_change_command(app, commands, false);
}

uint64_t append_to_index(const std::string& db_path, const std::string& index,
                         const std::string& input, ColumnSource source,
                         const std::string& type_text) {
  // Checks on a read-only open, then the inserts on a writable one, which repeats the
  // check open's warnings about the log (held back until then).
  wal_io::HeldWarnings held;
  auto session = IndexSession::open(db_path, index, false);
  const IndexDefinition def = session->info().def;
  if (def.compound()) {  // one --column per segment (tools/compound_cli.h)
    if (source.columns.size() != def.segments.size()) {
      throw ArgumentError(fmt::format("index {} has {} segments: give --column {} times", def.name,
                                      def.segments.size(), def.segments.size()));
    }
    source.segments = def.segments;
  } else if (source.columns.size() > 1) {
    throw ArgumentError(fmt::format("index {} has one segment: give one --column", def.name));
  } else if (!type_text.empty() && TypeSpec::parse(type_text) != def.type) {
    throw UsageError(fmt::format("index {} is {}, not {}", def.name, def.type.name(),
                                 TypeSpec::parse(type_text).name()));
  }
  source.type = def.type;
  source.format = def.format;
  source.descending = def.descending;
  source.page_size = session->page_size();
  CsvReader reader(input);
  EntryBatch batch;
  read_entries(reader, source, batch);

  // Sorted by (key in index order, record number, line): duplicates are neighbours.
  auto& items = batch.items();
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const bool desc = def.descending;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const auto& a = items[x];
    const auto& b = items[y];
    int c = compare_keys(batch.key(a), batch.key(b), desc);
    if (c != 0) return c < 0;
    if (a.recno != b.recno) return a.recno < b.recno;
    return a.tag < b.tag;
  });
  const std::vector<uint8_t> null = null_key(desc);
  auto is_null = [&](std::span<const uint8_t> k) {
    if (def.compound()) return key_exempt_from_unique(def, k);  // any NULL segment
    return k.size() == null.size() && std::equal(k.begin(), k.end(), null.begin());
  };
  BTree& tree = session->tree();
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& it = items[order[i]];
    std::span<const uint8_t> k = batch.key(it);
    auto value_text = [&] {
      return def.compound() ? key_value_text(def, k) : key_to_text(def.type, def.format, desc, k);
    };
    if (i > 0) {
      const auto& prev = items[order[i - 1]];
      if (compare_keys(batch.key(prev), k, desc) == 0) {
        const uint64_t line = std::max(prev.tag, it.tag);
        const uint64_t other = std::min(prev.tag, it.tag);
        if (prev.recno == it.recno) {
          throw InputError(input, line,
                           fmt::format("entry ({}, {}) appears twice (same as line {})",
                                       value_text(), it.recno, other));
        }
        if (def.unique && !is_null(k)) {
          throw InputError(input, line,
                           fmt::format("unique index {}: value {} appears twice (same as line {})",
                                       def.name, value_text(), other));
        }
      }
    }
    if (tree.contains(k, it.recno)) {
      throw InputError(
          input, it.tag,
          fmt::format("index {}: entry ({}, {}) already exists", def.name, value_text(), it.recno));
    }
    if (def.unique && !is_null(k)) {
      std::vector<uint64_t> found = tree.find(k);
      if (!found.empty()) {
        throw InputError(input, it.tag,
                         fmt::format("unique index {}: value {} already exists (record {})",
                                     def.name, value_text(), found.front()));
      }
    }
  }
  session.reset();
  held.drop();
  session = IndexSession::open(db_path, index, true);
  // Tests reach the level limit with a few entries (tests/cli/cli_level_limit_test.cc).
  if (const char* env = std::getenv("PBTREE_LEVEL_LIMIT")) {
    const long v = std::atol(env);
    if (v > 0) session->tree().set_level_limit(static_cast<uint32_t>(v));
  }
  // One merge-append (btree/batch_insert.cc): each touched leaf rewritten full, one tree change.
  session->tree().insert_batch(batch);
  session->commit();
  return order.size();
}

}  // namespace pbtree::tools
