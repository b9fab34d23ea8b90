// `pbtree find` and `pbtree scan`: equality lookups and value-ordered range / prefix scans of
// one index through the living B-tree, with search values converted by <pbtree/search.h>.
#include <fmt/format.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>

#include <algorithm>

#include "tools/cli_checks.h"
#include "tools/cli_errors.h"
#include "tools/compound_cli.h"
#include "tools/index_session.h"
#include "tools/json_out.h"
#include "tools/stat_format.h"
#include "tools/tree_commands.h"

namespace pbtree::tools {

namespace {

struct FindArgs {
  std::string db, index;
  bool null = false, explain = false;
  std::vector<std::string> values;
};

struct ScanArgs {
  std::string db, index;
  std::string from, to, starting_with;
  bool from_null = false, to_null = false, from_exclusive = false, to_exclusive = false;
  bool desc = false, explain = false;
  std::vector<std::string> values;  // compound: equality on the leading segments
  uint64_t limit = 0;
  std::string format = "raw";  // raw (value TAB recno, unescaped), tsv, csv, json
  CLI::Option* from_opt = nullptr;
  CLI::Option* to_opt = nullptr;
  CLI::Option* starting_opt = nullptr;
};

// find on a compound index: one value per leading segment (tools/compound_cli.h).
void run_compound_find(const FindArgs& a, IndexSession& session, std::ostream& out,
                       std::ostream& err) {
  const IndexDefinition& def = session.info().def;
  if (a.null) throw ArgumentError("--null is for single-segment indexes: give the token NULL");
  if (a.values.empty()) throw ArgumentError("expected V1 [V2 ...]: one value per leading segment");
  const std::optional<LeadingSearch> s = leading_search_of(def, a.values, nullptr);
  LeadingPlan plan;
  plan.empty = true;
  if (s) plan = plan_leading_search(def, *s);
  std::vector<uint64_t> recnos;
  const uint64_t examined =
      run_leading_plan(session.tree(), plan, [&](std::span<const uint8_t>, uint64_t r) {
        recnos.push_back(r);
        return true;
      });
  std::sort(recnos.begin(), recnos.end());
  std::string text;
  for (uint64_t r : recnos) text += std::to_string(r) + '\n';
  out << text;
  if (a.explain) err << explain_text(plan, examined);
}

void run_find(const FindArgs& a, std::ostream& out, std::ostream& err) {
  auto session = IndexSession::open(a.db, a.index, false);
  if (session->info().def.compound()) return run_compound_find(a, *session, out, err);
  if (a.values.size() != (a.null ? 0u : 1u)) {
    throw ArgumentError(a.null ? "--null takes no VALUE" : "expected one VALUE (or --null)");
  }
  const IndexDefinition& def = session->info().def;
  std::optional<std::vector<uint8_t>> key =
      a.null ? std::optional(null_key(def.descending)) : equality_key(def, a.values[0]);
  if (!key) return;
  std::string text;
  if (a.explain) {  // the same walk through the counting scan (file/compound_search.h)
    LeadingSearch s;
    s.equal.push_back(*key);
    const LeadingPlan plan = plan_leading_search(def, s);
    std::vector<uint64_t> recnos;
    const uint64_t examined =
        run_leading_plan(session->tree(), plan, [&](std::span<const uint8_t>, uint64_t r) {
          recnos.push_back(r);
          return true;
        });
    std::sort(recnos.begin(), recnos.end());
    for (uint64_t r : recnos) text += std::to_string(r) + '\n';
    out << text;
    err << explain_text(plan, examined);
    return;
  }
  for (uint64_t r : session->tree().find(*key)) {
    text += std::to_string(r);
    text += '\n';
  }
  out << text;
}

// One value as --format prints it: tsv escapes backslash, TAB, newline and CR (\\ \t \n \r)
// and writes NULL as \N; csv quotes a value holding a comma, quote, CR or LF (RFC 4180, quotes
// doubled) and writes NULL as an empty field; json writes a string whatever the type, null for
// NULL (the JSON rule: column_value_json, tools/json_out.h).
std::string format_scan_value(const std::string& format, bool is_null, const std::string& v) {
  if (format == "tsv") {
    if (is_null) return "\\N";
    std::string s;
    for (char ch : v) {
      switch (ch) {
        case '\\':
          s += "\\\\";
          break;
        case '\t':
          s += "\\t";
          break;
        case '\n':
          s += "\\n";
          break;
        case '\r':
          s += "\\r";
          break;
        default:
          s += ch;
      }
    }
    return s;
  }
  if (format == "csv") {
    if (is_null) return "";
    if (v.find_first_of(",\"\r\n") == std::string::npos && !v.empty()) return v;
    std::string s = "\"";
    for (char ch : v) s += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return s + "\"";
  }
  if (format == "json") {
    return json_dump(
        column_value_json(is_null ? std::nullopt : std::optional<std::string_view>(v)));
  }
  return v;
}

// Writes the entries in --format (raw / tsv: "value<TAB>recno" lines; csv: a header line
// "value,record_number" (compound: "value_1,value_2,...,record_number", one field per
// segment) and one line per entry; json: an array of {"value", "record_number"} objects, the
// value an array of one per segment on a compound index), at most `limit` (0: all),
// buffered.
class ScanPrinter {
 public:
  ScanPrinter(const IndexDefinition& def, uint64_t limit, std::ostream& out,
              const std::string& format = "raw")
      : def_(def), limit_(limit), out_(out), format_(format), null_(null_key(def.descending)) {
    if (format_ == "csv") {
      if (def.compound()) {
        for (size_t i = 1; i <= def.segment_count(); ++i) buf_ += fmt::format("value_{},", i);
        buf_ += "record_number\n";
      } else {
        buf_ = "value,record_number\n";
      }
    }
    if (format_ == "json") buf_ = "[";
  }
  ~ScanPrinter() {
    if (format_ == "json") buf_ += count_ == 0 ? "]\n" : "\n]\n";
    out_ << buf_;
  }
  bool full() const { return limit_ != 0 && count_ >= limit_; }
  // A compound key's segments: raw / tsv TAB-separated, csv comma-separated, json an array.
  std::string compound_value(std::span<const uint8_t> key) const {
    const std::vector<std::string> texts = segment_texts(def_, key);
    std::string s;
    Json values = Json::array();
    for (size_t i = 0; i < texts.size(); ++i) {
      const bool null =
          texts[i] == "NULL" && texts.size() == def_.segment_count() && key_segment_is_null(i, key);
      if (format_ == "json") {
        values.push_back(
            column_value_json(null ? std::nullopt : std::optional<std::string_view>(texts[i])));
        continue;
      }
      if (i > 0) s += format_ == "csv" ? "," : "\t";
      s += format_scan_value(format_, null, texts[i]);
    }
    return format_ == "json" ? json_dump(values) : s;
  }
  bool key_segment_is_null(size_t i, std::span<const uint8_t> key) const {
    const auto parts = split_compound_key(def_, key);
    return parts && i < parts->size() && is_null_key((*parts)[i], def_.descending);
  }
  // One run of equal keys; record numbers printed ascending.
  void run(std::span<const uint8_t> key, std::vector<uint64_t>& recnos, bool reversed) {
    if (reversed) std::reverse(recnos.begin(), recnos.end());
    if (recnos.empty() || full()) return;
    const bool is_null = std::equal(key.begin(), key.end(), null_.begin(), null_.end());
    const std::string value =
        def_.compound()
            ? compound_value(key)
            : format_scan_value(format_, is_null,
                                key_to_text(def_.type, def_.format, def_.descending, key));
    for (uint64_t r : recnos) {
      if (full()) break;
      if (format_ == "json") {
        buf_ += count_ == 0 ? "\n  " : ",\n  ";
        buf_ += "{\"value\":" + value + ",\"record_number\":" + std::to_string(r) + "}";
      } else {
        buf_ += value;
        buf_ += format_ == "csv" ? ',' : '\t';
        buf_ += std::to_string(r);
        buf_ += '\n';
      }
      ++count_;
    }
    if (buf_.size() > (1u << 16)) {
      out_ << buf_;
      buf_.clear();
    }
  }

 private:
  const IndexDefinition& def_;
  uint64_t limit_;
  std::ostream& out_;
  std::string format_;
  std::vector<uint8_t> null_;
  std::string buf_;
  uint64_t count_ = 0;
};

// scan on the leading segments (compound indexes, and --explain on any index): one
// LeadingPlan through the counting scan of file/compound_search.h. A --starting-with prefix
// ending in spaces also matches the value equal to the prefix without them (PAD SPACE; not
// combined with --from / --to): that equality runs first in ascending value order.
void run_leading_scan(const ScanArgs& a, const ScanRequest& req, IndexSession& session,
                      std::ostream& out, std::ostream& err) {
  const IndexDefinition& def = session.info().def;
  BTree& tree = session.tree();
  ScanPrinter printer(def, a.limit, out, a.format);
  uint64_t examined = 0;
  std::string explain;
  const bool backward_runs = req.descending != def.descending;
  auto run = [&](const std::optional<LeadingSearch>& s) {
    LeadingPlan plan;
    plan.empty = true;
    if (s) plan = plan_leading_search(def, *s);
    std::vector<uint8_t> run_key;
    std::vector<uint64_t> run_recnos;
    const uint64_t n = run_leading_plan(tree, plan, [&](std::span<const uint8_t> k, uint64_t r) {
      if (!run_recnos.empty() && !std::equal(k.begin(), k.end(), run_key.begin(), run_key.end())) {
        printer.run(run_key, run_recnos, backward_runs);
        run_recnos.clear();
      }
      if (run_recnos.empty()) run_key.assign(k.begin(), k.end());
      run_recnos.push_back(r);
      return !printer.full();
    });
    if (!run_recnos.empty()) printer.run(run_key, run_recnos, backward_runs);
    examined += n;
    explain += explain_text(plan, n);
  };
  std::optional<LeadingSearch> padded;
  const std::string& sw = a.starting_with;
  if (req.starting_with && !req.from && !req.to && !sw.empty() && sw.back() == ' ') {
    const std::string trimmed = sw.substr(0, sw.find_last_not_of(' ') + 1);
    if (!trimmed.empty()) {
      std::vector<std::string> tokens = a.values;
      tokens.push_back("=" + trimmed);
      if (tokens.size() <= def.segment_count()) padded = leading_search_of(def, tokens, nullptr);
      if (padded) padded->value_descending = req.descending;
      if (!padded) padded = std::nullopt;
    }
  }
  std::optional<LeadingSearch> main = leading_search_of(def, a.values, &req);
  if (padded && !req.descending) run(padded);
  run(main);
  if (padded && req.descending) run(padded);
  if (a.explain) {
    if (padded) explain += fmt::format("examined: {} entries in all\n", examined);
    err << explain;
  }
}

void run_scan(const ScanArgs& a, std::ostream& out, std::ostream& err) {
  ScanRequest req;
  if (a.from_opt->count() > 0) req.from = a.from;
  if (a.to_opt->count() > 0) req.to = a.to;
  if (a.starting_opt->count() > 0) req.starting_with = a.starting_with;
  req.from_null = a.from_null;
  req.to_null = a.to_null;
  req.from_exclusive = a.from_exclusive;
  req.to_exclusive = a.to_exclusive;
  req.descending = a.desc;
  if (req.from && req.from_null) throw ArgumentError("--from and --from-null exclude each other");
  if (req.to && req.to_null) throw ArgumentError("--to and --to-null exclude each other");
  auto session = IndexSession::open(a.db, a.index, false);
  const IndexDefinition& def = session->info().def;
  if (!a.values.empty() && !def.compound()) {
    throw ArgumentError(
        fmt::format("index {} has one segment: give its bounds with --from / "
                    "--to, or use find",
                    def.name));
  }
  if (def.compound() || a.explain) return run_leading_scan(a, req, *session, out, err);
  const ScanPlan plan = plan_scan(def, req);
  if (plan.empty) return;
  BTree& tree = session->tree();
  ScanPrinter printer(def, a.limit, out, a.format);
  auto padded = [&] {
    if (!plan.padded_equal) return;
    std::vector<uint64_t> r = tree.find(*plan.padded_equal);
    printer.run(*plan.padded_equal, r, false);
  };
  if (!req.descending) padded();
  const std::vector<uint8_t> null = null_key(def.descending);
  const bool backward = plan.range.backward;
  std::vector<uint8_t> run_key;
  std::vector<uint64_t> run_recnos;
  bool in_run = false;
  uint32_t run_page = 0, run_offset = 0;  // where the run's first entry lies (for messages)
  auto print_run = [&] {
    try {
      printer.run(run_key, run_recnos, backward);
    } catch (const KeyError& e) {
      throw CorruptError(fmt::format("{}: index {}: page {}, node at offset {}: {}", a.db, def.name,
                                     run_page, run_offset, e.what()));
    }
  };
  for (Cursor c = tree.scan(plan.range); c.valid() && !printer.full(); c.next()) {
    std::span<const uint8_t> k = c.key();
    if (in_run && std::equal(k.begin(), k.end(), run_key.begin(), run_key.end())) {
      run_recnos.push_back(c.record_number());
      continue;
    }
    if (in_run) print_run();
    run_page = c.page_number();
    run_offset = c.node_offset();
    run_key.assign(k.begin(), k.end());
    run_recnos.clear();
    in_run = !(plan.skip_nulls && run_key == null);
    if (in_run) run_recnos.push_back(c.record_number());
  }
  if (in_run) print_run();
  if (req.descending) padded();
}

}  // namespace

void add_find_command(CLI::App& app, TreeCommands& commands) {
  auto args = std::make_shared<FindArgs>();
  CLI::App* sub = app.add_subcommand(
      "find", "Print the record numbers of the entries equal to a value, one per line, ascending");
  sub->add_option("db", args->db, "Index file")->required();
  sub->add_option("--index", args->index, "Index name")->required();
  sub->add_flag("--null", args->null, "Look up the NULL entries (SQL IS NULL)");
  sub->add_option("value", args->values, "The value (put -- before a negative value)");
  sub->footer(
      "VALUE is converted to the index's type: on numeric indexes any number (1.5, 1e3, huge\n"
      "values) is accepted, and a value the column cannot hold exactly (1.5 on an integer\n"
      "index, 40000 on smallint) matches nothing; on double indexes it is the nearest double.\n"
      "--null is an explicit IS NULL lookup: it prints the NULL entries.");
  sub->add_flag("--explain", args->explain,
                "Also print the key range searched and 'examined: N entries' on stderr");
  commands.add(sub, [args](std::ostream& out, std::ostream& err) { run_find(*args, out, err); });
}

void add_scan_command(CLI::App& app, TreeCommands& commands) {
  auto args = std::make_shared<ScanArgs>();
  CLI::App* sub = app.add_subcommand(
      "scan", "Print index entries in value order as 'value<TAB>record number' lines");
  sub->add_option("db", args->db, "Index file")->required();
  sub->add_option("--index", args->index, "Index name")->required();
  args->from_opt = sub->add_option("--from", args->from, "Lower value bound (use --from=-5)");
  args->to_opt = sub->add_option("--to", args->to, "Upper value bound (use --to=-5)");
  sub->add_flag("--from-exclusive", args->from_exclusive, "Values > --from (default >=)");
  sub->add_flag("--to-exclusive", args->to_exclusive, "Values < --to (default <=)");
  sub->add_flag("--from-null", args->from_null, "The lower bound is NULL: matches nothing");
  sub->add_flag("--to-null", args->to_null, "The upper bound is NULL: matches nothing");
  sub->add_flag("--desc", args->desc, "Descending value order");
  args->starting_opt = sub->add_option("--starting-with", args->starting_with,
                                       "Varchar indexes: values starting with these bytes");
  sub->add_option("--limit", args->limit, "Print at most N entries (0: all)")
      ->check(count_check("0 (all) or a positive count"));
  sub->add_option("--format", args->format,
                  "raw (default: value TAB record number, unescaped), tsv (\\t \\n \\r \\\\ "
                  "escaped, NULL as \\N), csv (RFC 4180, header line, NULL empty), json")
      ->check(CLI::IsMember({"raw", "tsv", "csv", "json"}));
  sub->footer(
      "Bounds are in value order whatever the index's direction. Values are converted to the\n"
      "index's type; one the column cannot hold exactly is rounded toward the inside of the\n"
      "range (integer index: --from=1.5 is from 2, --to=1.5 is to 1), out-of-range bounds\n"
      "drop the bound or make the result empty. NULLs: an unbounded scan prints every entry,\n"
      "NULL ones as 'NULL' (first in ascending, last in descending value order); with any\n"
      "bound or --starting-with NULLs never match, and a NULL bound (--from-null, --to-null)\n"
      "matches nothing, as in SQL. Within one value, record numbers are ascending.\n"
      "--starting-with compares values padded with spaces (PAD SPACE): 'AB ' matches 'AB'.");
  sub->add_flag("--explain", args->explain,
                "Also print the key range searched and 'examined: N entries' (leaf entries "
                "read, the one that ends the range included) on stderr");
  sub->add_option("values", args->values,
                  "Compound indexes: one value per leading segment (equality; NULL: IS NULL, "
                  "=NULL: the text NULL); bounds apply to the next segment");
  commands.add(sub, [args](std::ostream& out, std::ostream& err) { run_scan(*args, out, err); });
}

}  // namespace pbtree::tools
