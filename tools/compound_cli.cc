// Compound indexes in the CLI (declarations and rules in tools/compound_cli.h).
#include "tools/compound_cli.h"

#include <fmt/format.h>
#include <pbtree/keys.h>

#include <charconv>

#include "tools/cli_errors.h"
#include "util/bytes.h"

namespace pbtree::tools {

std::optional<std::string> value_token(const std::string& token) {
  if (token == "NULL") return std::nullopt;
  if (!token.empty() && token[0] == '=') return token.substr(1);
  return token;
}

IndexDefinition segment_definition(const IndexDefinition& def, size_t i) {
  IndexDefinition d;
  d.name = def.name;
  const IndexSegment g = def.segment(i);
  d.type = g.type;
  d.format = resolve_key_format(g.type, g.format);
  d.descending = def.descending;
  d.layout = def.layout;
  return d;
}

std::vector<uint8_t> entry_key_of_tokens(const IndexDefinition& def,
                                         const std::vector<std::string>& tokens) {
  const size_t n = def.segment_count();
  if (tokens.size() != n) {
    throw ArgumentError(
        fmt::format("index {} has {} segments: expected {} values then RECNO, "
                    "got {} values",
                    def.name, n, n, tokens.size()));
  }
  std::vector<IndexSegment> g(n);
  std::vector<std::optional<std::string>> texts(n);
  std::vector<Segment> segs(n);
  for (size_t i = 0; i < n; ++i) {
    g[i] = def.segment(i);
    g[i].format = resolve_key_format(g[i].type, g[i].format);
    texts[i] = value_token(tokens[i]);
  }
  for (size_t i = 0; i < n; ++i) {
    segs[i] = Segment{&g[i].type, g[i].format,
                      texts[i] ? parse_value(g[i].type, *texts[i]) : Value::null()};
  }
  KeyBuffer key;
  build_compound_key(segs, def.descending, key);
  return {key.data, key.data + key.length};
}

std::optional<LeadingSearch> leading_search_of(const IndexDefinition& def,
                                               const std::vector<std::string>& tokens,
                                               const ScanRequest* request) {
  const size_t n = def.segment_count();
  if (tokens.size() > n) {
    throw ArgumentError(fmt::format("index {} has {} segment{}: at most {} values, not {}",
                                    def.name, n, n == 1 ? "" : "s", n, tokens.size()));
  }
  LeadingSearch s;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const IndexDefinition d = segment_definition(def, i);
    const std::optional<std::string> t = value_token(tokens[i]);
    if (!t) {
      s.equal.push_back(null_key(def.descending));
      continue;
    }
    std::optional<std::vector<uint8_t>> k = equality_key(d, *t);
    if (!k) return std::nullopt;
    s.equal.push_back(std::move(*k));
  }
  if (!request) return s;
  const bool bounded = request->from || request->to || request->from_null || request->to_null ||
                       request->starting_with;
  s.value_descending = request->descending;
  if (!bounded) return s;
  if (tokens.size() == n) {
    throw ArgumentError(
        fmt::format("every segment of index {} has a value: bounds apply to the "
                    "segment after the values",
                    def.name));
  }
  if (request->from_null || request->to_null) return std::nullopt;  // x >= NULL: never true
  const IndexDefinition d = segment_definition(def, tokens.size());
  s.not_null = true;
  if (request->from) {
    ValueBound b = bound_key(d, *request->from, BoundSide::From, request->from_exclusive);
    if (b.kind == ValueBound::Kind::Empty) return std::nullopt;
    if (b.kind == ValueBound::Kind::At) s.from = KeyBound{b.key, b.inclusive};
  }
  if (request->to) {
    ValueBound b = bound_key(d, *request->to, BoundSide::To, request->to_exclusive);
    if (b.kind == ValueBound::Kind::Empty) return std::nullopt;
    if (b.kind == ValueBound::Kind::At) s.to = KeyBound{b.key, b.inclusive};
  }
  if (request->starting_with) {
    if (d.type.type != ColumnType::Varchar) {
      throw UsageError(
          fmt::format("--starting-with needs a varchar segment; segment {} of index "
                      "{} is {}",
                      tokens.size() + 1, def.name, d.type.name()));
    }
    const std::string& p = *request->starting_with;
    s.starting_with = std::vector<uint8_t>(p.begin(), p.end());
  }
  return s;
}

std::vector<std::string> segment_texts(const IndexDefinition& def, std::span<const uint8_t> key) {
  if (auto t = key_segment_texts(def, key)) return *t;
  return {hex_bytes(key)};
}

std::string explain_text(const LeadingPlan& plan, uint64_t examined) {
  auto end = [](const std::optional<KeyBound>& b) {
    if (!b) return std::string("none");
    return fmt::format("{} ({})", hex_bytes(b->key), b->inclusive ? "inclusive" : "exclusive");
  };
  std::string s;
  if (plan.empty) {
    s = "plan: empty (no value can match)\n";
  } else {
    s = fmt::format("plan: lower {}, upper {}, {}\n", end(plan.lower), end(plan.upper),
                    plan.backward ? "backward" : "forward");
  }
  return s + fmt::format("examined: {} entries\n", examined);
}

}  // namespace pbtree::tools
