// Model test of compound indexes (issue 12): (integer, varchar(40)) keys with NULLs, empty
// strings and long texts sharing prefixes whose lengths are multiples of 4, inserted through
// TypedIndex into ascending and descending indexes of both node layouts; every search on
// the leading segments is compared with a sorted model: the same entries in value order, a
// contiguous run of the index's order, and exactly one entry examined beyond it (when the
// index has one there). PBTREE_COMPOUND_MODEL_ENTRIES sets the entry count (default 3000).
#include <gtest/gtest.h>
#include <pbtree/typed_index.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>

#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

struct Row {
  std::optional<int> a;
  std::optional<std::string> b;
  uint64_t recno;
  std::vector<uint8_t> key;
};

size_t entry_count() {
  const char* v = std::getenv("PBTREE_COMPOUND_MODEL_ENTRIES");
  return v ? std::strtoul(v, nullptr, 10) : 3000;
}

std::string random_text(std::mt19937& rng) {
  const int kind = static_cast<int>(rng() % 8);
  if (kind == 0) return "";
  size_t len = kind == 1 ? 4 * (1 + rng() % 8) : 1 + rng() % 40;
  std::string s;
  for (size_t i = 0; i < len; ++i) s += static_cast<char>('a' + rng() % 2);
  return s;
}

Value value_of(const std::optional<int>& a) {
  return a ? Value::exact(*a) : Value::null();
}
Value value_of(const std::optional<std::string>& b) {
  return b ? Value::of_text(*b) : Value::null();
}

class FileCompoundModel : public ::testing::TestWithParam<std::tuple<bool, NodeLayout>> {};

TEST_P(FileCompoundModel, SearchesEqualTheSortedModel) {
  const bool desc = std::get<0>(GetParam());  // no structured binding: clang 14 lambdas
  const NodeLayout layout = std::get<1>(GetParam());
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 4096);
  IndexDefinition def;
  def.name = "C";
  for (const char* t : {"integer", "varchar(40)"}) {
    const TypeSpec type = TypeSpec::parse(t);
    def.segments.push_back(IndexSegment{type, default_key_format(type)});
  }
  def.descending = desc;
  def.layout = layout;
  f->create_index(def);
  TypedIndex ix(*f, "C");
  std::mt19937 rng(desc ? 12 : 21);
  std::vector<Row> rows;
  const size_t n = entry_count();
  for (size_t i = 0; i < n; ++i) {
    Row r;
    if (rng() % 10 != 0) r.a = static_cast<int>(rng() % 20) - 5;
    if (rng() % 10 != 0) r.b = random_text(rng);
    r.recno = i;
    const std::vector<Value> v{value_of(r.a), value_of(r.b)};
    r.key = ix.key_of(v);
    ix.insert(v, r.recno);
    rows.push_back(std::move(r));
  }
  // Index order.
  std::sort(rows.begin(), rows.end(), [&](const Row& x, const Row& y) {
    return compare_entry(x.key, x.recno, y.key, y.recno, desc) < 0;
  });
  const int queries = 400;
  for (int q = 0; q < queries; ++q) {
    const Row& pick = rows[rng() % rows.size()];
    const int k = static_cast<int>(rng() % 3);
    std::vector<Value> equal;
    if (k >= 1) equal.push_back(value_of(pick.a));
    if (k >= 2) equal.push_back(value_of(pick.b));
    SegmentRange range;
    std::optional<int> lo, hi;
    std::optional<std::string> tlo, thi, prefix;
    bool lo_x = rng() % 2, hi_x = rng() % 2;
    const int bound = k < 2 ? static_cast<int>(rng() % 4) : 0;  // 0 none 1 from 2 to 3 both/prefix
    if (k == 0 && bound != 0) {
      if (bound & 1) lo = static_cast<int>(rng() % 20) - 6;
      if (bound & 2) hi = static_cast<int>(rng() % 20) - 6;
      if (lo) range.from = Value::exact(*lo);
      if (hi) range.to = Value::exact(*hi);
    }
    std::string tlo_s, thi_s, prefix_s;
    if (k == 1 && bound != 0) {
      if (bound == 3) {
        prefix_s = random_text(rng).substr(0, rng() % 9);
        prefix = prefix_s;
        range.starting_with = prefix_s;
      } else {
        tlo_s = random_text(rng);
        thi_s = random_text(rng);
        if (thi_s < tlo_s) std::swap(tlo_s, thi_s);
        if (bound & 1) tlo = tlo_s;
        if (bound & 2) thi = thi_s;
        if (tlo) range.from = Value::of_text(*tlo);
        if (thi) range.to = Value::of_text(*thi);
      }
    }
    if (!range.from) lo_x = false;
    if (!range.to) hi_x = false;
    range.from_exclusive = lo_x;
    range.to_exclusive = hi_x;
    auto match = [&](const Row& r) {
      if (k >= 1 && r.a != pick.a) return false;
      if (k >= 2 && r.b != pick.b) return false;
      if (bound == 0) return true;
      if (k == 0) {
        if (!r.a) return false;
        if (lo && (lo_x ? *r.a <= *lo : *r.a < *lo)) return false;
        if (hi && (hi_x ? *r.a >= *hi : *r.a > *hi)) return false;
        return true;
      }
      if (!r.b) return false;
      // Stored text keys drop trailing spaces; the texts here have none.
      if (prefix) return r.b->compare(0, prefix->size(), *prefix) == 0;
      if (tlo && (lo_x ? *r.b <= *tlo : *r.b < *tlo)) return false;
      if (thi && (hi_x ? *r.b >= *thi : *r.b > *thi)) return false;
      return true;
    };
    size_t first = rows.size(), last = 0, count = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!match(rows[i])) continue;
      first = std::min(first, i);
      last = i;
      ++count;
    }
    const SearchResult got = ix.search(equal, range);
    std::vector<uint64_t> want;
    if (count > 0) {
      ASSERT_EQ(last - first + 1, count) << "query " << q << ": answer not contiguous";
      for (size_t i = first; i <= last; ++i) want.push_back(rows[i].recno);
      if (desc) std::reverse(want.begin(), want.end());
    }
    std::vector<uint64_t> have;
    for (const auto& e : got.entries) have.push_back(e.second);
    ASSERT_EQ(have, want) << "query " << q << " k " << k << " bound " << bound;
    if (count > 0) {
      const bool beyond = desc ? first > 0 : last + 1 < rows.size();
      ASSERT_EQ(got.examined, count + (beyond ? 1 : 0)) << "query " << q;
    } else {
      ASSERT_LE(got.examined, 1u) << "query " << q;
    }
  }
  EXPECT_NO_THROW(btree_of(*f, "C").verify());
}

INSTANTIATE_TEST_SUITE_P(Directions, FileCompoundModel,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(NodeLayout::Firebird,
                                                              NodeLayout::Compact)));

}  // namespace
}  // namespace pbtree
