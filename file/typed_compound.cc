// TypedIndex on compound indexes (issue 12): keys from one Value per segment, and search()
// on the leading segments through the counting leading-segment plan of
// file/compound_search.h.
#include <fmt/format.h>
#include <pbtree/typed_index.h>

#include "btree/btree.h"
#include "file/compound_search.h"
#include "file/index_file_access.h"
#include "file/value_check.h"

namespace pbtree {

namespace {

// The segment's key of `v` (single-segment form, index direction), after the kind checks
// TypedIndex::key_of(Value) makes. Throws KeyError.
std::vector<uint8_t> segment_key(const IndexSegment& g, bool descending, const Value& v) {
  if (v.kind == Value::Kind::Text && g.type.type != ColumnType::Varchar) {
    throw KeyError(fmt::format("text value '{}' for a {} segment", v.text, g.type.name()));
  }
  if (v.kind != Value::Kind::Text && v.kind != Value::Kind::Null &&
      g.type.type == ColumnType::Varchar) {
    throw KeyError("a number for a varchar segment");
  }
  KeyBuffer k;
  build_key(g.type, resolve_key_format(g.type, g.format), v, descending, k);
  return {k.data, k.data + k.length};
}

}  // namespace

std::vector<uint8_t> TypedIndex::key_of(std::span<const Value> values) const {
  const IndexDefinition& def = info_.def;
  const size_t n = def.segment_count();
  auto wrong = [&](const std::string& what) {
    return WrongTypeError(fmt::format("{}: index {}: {}", file_.path(), def.name, what));
  };
  if (values.size() != n) {
    throw wrong(fmt::format("{} value{} for {} segment{}", values.size(),
                            values.size() == 1 ? "" : "s", n, n == 1 ? "" : "s"));
  }
  std::vector<IndexSegment> g(n);
  std::vector<Segment> segs(n);
  KeyBuffer k;
  try {
    for (size_t i = 0; i < n; ++i) {
      g[i] = def.segment(i);
      g[i].format = resolve_key_format(g[i].type, g[i].format);
      (void)segment_key(g[i], def.descending, values[i]);  // kind checks
      segs[i] = Segment{&g[i].type, g[i].format, values[i]};
    }
    build_compound_key(segs, def.descending, k);
    check_key_length(k.length, file_.page_size());
  } catch (const KeyError& e) {
    throw wrong(e.what());
  }
  return {k.data, k.data + k.length};
}

void TypedIndex::insert(std::span<const Value> values, uint64_t recno) {
  const std::vector<uint8_t> key = key_of(values);
  // What verify would reject is not stored (file/value_check.h).
  for (size_t i = 0; i < values.size(); ++i) {
    try {
      check_value_of_type(info_.def.segment(i).type, values[i]);
    } catch (const KeyError& e) {
      throw WrongTypeError(fmt::format("{}: index {}: segment {}: {}", file_.path(), info_.def.name,
                                       i + 1, e.what()));
    }
  }
  try {
    tree_->insert(key, recno);
  } catch (const DuplicateKeyError& e) {
    throw DuplicateKeyError(fmt::format("{}: {}", file_.path(), e.what()), e.index, e.value,
                            e.record_number, e.tag_a, e.tag_b);
  }
}

void TypedIndex::remove(std::span<const Value> values, uint64_t recno) {
  tree_->remove(key_of(values), recno);
}

SearchResult TypedIndex::search(std::span<const Value> equal, const SegmentRange& next) const {
  const IndexDefinition& def = info_.def;
  const size_t n = def.segment_count();
  auto wrong = [&](const std::string& what) {
    return WrongTypeError(fmt::format("{}: index {}: {}", file_.path(), def.name, what));
  };
  LeadingSearch s;
  try {
    for (size_t i = 0; i < equal.size() && i < n; ++i) {
      s.equal.push_back(segment_key(def.segment(i), def.descending, equal[i]));
    }
    if (equal.size() < n) {
      const IndexSegment g = def.segment(equal.size());
      if (next.from)
        s.from = KeyBound{segment_key(g, def.descending, *next.from), !next.from_exclusive};
      if (next.to) s.to = KeyBound{segment_key(g, def.descending, *next.to), !next.to_exclusive};
      if (next.starting_with) {
        if (g.type.type != ColumnType::Varchar)
          throw KeyError("STARTING WITH on a non-varchar segment");
        s.starting_with =
            std::vector<uint8_t>(next.starting_with->begin(), next.starting_with->end());
      }
    }
  } catch (const KeyError& e) {
    throw wrong(e.what());
  }
  if (equal.size() > n) s.equal.resize(n + 1);  // plan_leading_search names the error
  s.not_null = next.not_null;
  const LeadingPlan plan = plan_leading_search(def, s);
  SearchResult r;
  // NULL bounds match nothing (x >= NULL is never true).
  if ((next.from && next.from->kind == Value::Kind::Null) ||
      (next.to && next.to->kind == Value::Kind::Null)) {
    return r;
  }
  r.examined = run_leading_plan(*tree_, plan, [&](std::span<const uint8_t> k, uint64_t recno) {
    r.entries.emplace_back(std::vector<uint8_t>(k.begin(), k.end()), recno);
    return true;
  });
  return r;
}

}  // namespace pbtree
