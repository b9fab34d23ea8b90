// Compound indexes (issue 12): definitions of 1..16 segments stored in the index root page,
// the definition-time key-size rule, and leading-segment searches with exact answers and an
// exact count of the leaf entries examined (TypedIndex::search, file/compound_search.h).
#include <gtest/gtest.h>
#include <pbtree/typed_index.h>

#include <fstream>
#include <sstream>

#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

IndexDefinition compound(const std::vector<std::string>& types, bool descending = false,
                         NodeLayout layout = NodeLayout::Firebird) {
  IndexDefinition def;
  def.name = "C";
  for (const std::string& t : types) {
    const TypeSpec type = TypeSpec::parse(t);
    def.segments.push_back(IndexSegment{type, default_key_format(type)});
  }
  def.descending = descending;
  def.layout = layout;
  return def;
}

Value text(const char* s) {
  return Value::of_text(s);
}
Value num(int64_t v) {
  return Value::exact(v);
}

std::vector<uint64_t> recnos(const SearchResult& r) {
  std::vector<uint64_t> out;
  for (const auto& e : r.entries) out.push_back(e.second);
  return out;
}

std::vector<uint64_t> range(uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  for (uint64_t i = from; i <= to; ++i) out.push_back(i);
  return out;
}

TEST(FileCompoundIndex, DefinitionRoundTripsThroughTheIndexRootPage) {
  TempPath tmp;
  {
    auto f = IndexFile::open_or_create(tmp.path(), 8192);
    IndexDefinition def = compound({"varchar(2)", "bigint", "numeric(18,2)"}, true);
    def.unique = true;
    f->create_index(def);
  }
  auto f = IndexFile::open(tmp.path());
  const auto info = f->find_index("C");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->def.segments.size(), 3u);
  EXPECT_EQ(info->def.segments[0].type.name(), "varchar(2)");
  EXPECT_EQ(info->def.segments[1].type.name(), "bigint");
  EXPECT_EQ(info->def.segments[1].format, KeyFormat::RescaledDouble);
  EXPECT_EQ(info->def.segments[2].type.name(), "numeric(18,2)");
  EXPECT_TRUE(info->def.unique);
  EXPECT_TRUE(info->def.descending);
}

TEST(FileCompoundIndex, SingleSegmentListIsTodaysIndexByteForByte) {
  TempPath a, b;
  {
    auto f = IndexFile::open_or_create(a.path(), 8192);
    f->create_index(compound({"integer"}));
  }
  {
    auto f = IndexFile::open_or_create(b.path(), 8192);
    IndexDefinition def;
    def.name = "C";
    def.type = TypeSpec::parse("integer");
    f->create_index(def);
  }
  std::vector<uint8_t> pa(8192), pb(8192);
  auto fa = IndexFile::open(a.path());
  auto fb = IndexFile::open(b.path());
  read_file_page(*fa, 1, pa.data());
  read_file_page(*fb, 1, pb.data());
  EXPECT_EQ(pa, pb);
  EXPECT_TRUE(fa->find_index("C")->def.segments.empty());
}

// The longest second segment each page size accepts after an integer (10 bytes: two
// chunks): 10 + 5 * ceil(n / 4), rounded up to 8, must stay below page_size / 4.
TEST(FileCompoundIndex, TooLongDefinitionRefusedAtEveryPageSizeBeforeTheFileIsTouched) {
  const std::pair<uint32_t, int> cases[] = {
      {4096, 804}, {8192, 1624}, {16384, 3260}, {32768, 6536}};
  for (const auto& [ps, longest] : cases) {
    TempPath tmp;
    auto f = IndexFile::open_or_create(tmp.path(), ps);
    IndexDefinition ok = compound({"integer", "varchar(" + std::to_string(longest) + ")"});
    ok.name = "OK";
    EXPECT_NO_THROW(f->create_index(ok));
    std::vector<uint8_t> before(ps), after(ps);
    read_file_page(*f, 1, before.data());
    const uint64_t pages = f->page_count();
    IndexDefinition bad = compound({"integer", "varchar(" + std::to_string(longest + 1) + ")"});
    bad.name = "BAD";
    const int c = (longest + 1 + 3) / 4;
    const int max_len = 10 + 5 * c;
    try {
      f->create_index(bad);
      ADD_FAILURE() << "page size " << ps << ": accepted";
    } catch (const KeyError& e) {
      EXPECT_EQ(std::string(e.what()),
                "key size exceeds implementation restriction for an ascending index on (integer, "
                "varchar(" +
                    std::to_string(longest + 1) + ")): keys up to " + std::to_string(max_len) +
                    " bytes, rounded up to " + std::to_string((max_len + 7) / 8 * 8) +
                    ", must be below page_size/4 = " + std::to_string(ps / 4) +
                    " bytes (page size " + std::to_string(ps) + ")");
    }
    read_file_page(*f, 1, after.data());
    EXPECT_EQ(before, after);
    EXPECT_EQ(f->page_count(), pages);
    EXPECT_FALSE(f->find_index("BAD").has_value());
  }
}

TEST(FileCompoundIndex, SeventeenSegmentsRefused) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  EXPECT_THROW(f->create_index(compound(std::vector<std::string>(17, "integer"))), UsageError);
  EXPECT_NO_THROW(f->create_index(compound(std::vector<std::string>(16, "integer"))));
}

// Firebird #7494: c1 = '3611' (4 bytes, one full chunk) next to 500 longer values with that
// prefix: the range stops at the first key whose segment continues (marker 2).
TEST(FileCompoundIndex, MultipleOfFourLeadingProbeExaminesOnlyTheAnswerAndOneMore) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(compound({"varchar(8)", "integer"}));
  TypedIndex ix(*f, "C");
  std::vector<std::string> longer;
  for (int i = 0; i < 500; ++i) longer.push_back("3611" + std::to_string(1000 + i));
  for (int i = 0; i < 500; ++i) {
    ix.insert(std::vector<Value>{Value::of_text(longer[i]), num(i)}, 100 + i);
  }
  std::vector<Value> probe{text("3611")};
  SearchResult none = ix.search(probe);
  EXPECT_EQ(recnos(none), std::vector<uint64_t>{});
  EXPECT_EQ(none.examined, 1u);
  for (int i = 0; i < 3; ++i) ix.insert(std::vector<Value>{text("3611"), num(i)}, i);
  SearchResult three = ix.search(probe);
  EXPECT_EQ(recnos(three), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(three.examined, 4u);
}

// CORE-2709: ID1 = 1 AND ID2 IS NULL reads only the NULL entries of ID1 = 1.
TEST(FileCompoundIndex, IsNullOnAMiddleSegment) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(compound({"integer", "varchar(10)", "integer"}));
  TypedIndex ix(*f, "C");
  uint64_t r = 0;
  for (int i = 0; i < 10; ++i) ix.insert(std::vector<Value>{num(1), Value::null(), num(i)}, r++);
  for (int i = 0; i < 100; ++i) ix.insert(std::vector<Value>{num(1), text("a"), num(i)}, r++);
  for (int i = 0; i < 5; ++i) ix.insert(std::vector<Value>{num(1), text(""), num(i)}, r++);
  for (int i = 0; i < 7; ++i) ix.insert(std::vector<Value>{num(2), Value::null(), num(i)}, r++);
  for (int i = 0; i < 7; ++i) ix.insert(std::vector<Value>{num(0), Value::null(), num(i)}, r++);
  SearchResult s = ix.search(std::vector<Value>{num(1), Value::null()});
  EXPECT_EQ(recnos(s), range(0, 9));
  EXPECT_EQ(s.examined, 11u);
  SearchResult empty_text = ix.search(std::vector<Value>{num(1), text("")});
  EXPECT_EQ(recnos(empty_text), range(110, 114));
  EXPECT_EQ(empty_text.examined, 6u);
  // and the three segments NULL-ended: (1, NULL, 3)
  SearchResult full = ix.search(std::vector<Value>{num(1), Value::null(), num(3)});
  EXPECT_EQ(recnos(full), std::vector<uint64_t>{3});
  EXPECT_EQ(full.examined, 2u);
}

void load_countries(TypedIndex& ix) {
  // (country, population): AA, US, ZZ with populations 0..999; record = 1000 * c + pop.
  const char* countries[] = {"AA", "US", "ZZ"};
  for (int c = 0; c < 3; ++c) {
    for (int p = 0; p < 1000; ++p) {
      ix.insert(std::vector<Value>{text(countries[c]), num(p)},
                static_cast<uint64_t>(1000 * c + p));
    }
  }
  ix.insert(std::vector<Value>{text("US"), Value::null()}, 9999);
}

TEST(FileCompoundIndex, RangeOnTheSecondSegment) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(compound({"varchar(2)", "bigint"}));
  TypedIndex ix(*f, "C");
  load_countries(ix);
  SegmentRange r;
  r.from = num(100);
  r.to = num(199);
  SearchResult s = ix.search(std::vector<Value>{text("US")}, r);
  EXPECT_EQ(recnos(s), range(1100, 1199));
  EXPECT_EQ(s.examined, 101u);
  r.from_exclusive = r.to_exclusive = true;
  SearchResult x = ix.search(std::vector<Value>{text("US")}, r);
  EXPECT_EQ(recnos(x), range(1101, 1198));
  EXPECT_EQ(x.examined, 99u);
  SegmentRange open_top;
  open_top.from = num(990);
  SearchResult t = ix.search(std::vector<Value>{text("US")}, open_top);
  EXPECT_EQ(recnos(t), range(1990, 1999));
  EXPECT_EQ(t.examined, 11u);  // the first ZZ entry ends it
  SearchResult all_us = ix.search(std::vector<Value>{text("US")});
  EXPECT_EQ(all_us.entries.size(), 1001u);  // the NULL population first
  EXPECT_EQ(all_us.entries.front().second, 9999u);
  EXPECT_EQ(all_us.examined, 1002u);
  SegmentRange not_null;
  not_null.not_null = true;
  SearchResult nn = ix.search(std::vector<Value>{text("US")}, not_null);
  EXPECT_EQ(recnos(nn), range(1000, 1999));
  EXPECT_EQ(nn.examined, 1001u);
}

TEST(FileCompoundIndex, DescendingCompoundIndex) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(compound({"varchar(2)", "bigint"}, true));
  TypedIndex ix(*f, "C");
  load_countries(ix);
  SegmentRange r;
  r.from = num(100);
  r.to = num(199);
  SearchResult s = ix.search(std::vector<Value>{text("US")}, r);
  EXPECT_EQ(recnos(s), range(1100, 1199));  // ascending value order
  EXPECT_EQ(s.examined, 101u);
  SearchResult all_us = ix.search(std::vector<Value>{text("US")});
  EXPECT_EQ(all_us.entries.size(), 1001u);
  EXPECT_EQ(all_us.entries.front().second, 9999u);  // NULL first in ascending value order
  EXPECT_EQ(all_us.examined, 1002u);
  SearchResult one = ix.search(std::vector<Value>{text("ZZ"), num(5)});
  EXPECT_EQ(recnos(one), std::vector<uint64_t>{2005});
  EXPECT_EQ(one.examined, 2u);
  SearchResult null_pop = ix.search(std::vector<Value>{text("US"), Value::null()});
  EXPECT_EQ(recnos(null_pop), std::vector<uint64_t>{9999});
  EXPECT_EQ(null_pop.examined, 2u);
}

TEST(FileCompoundIndex, StartingWithOnATextSegment) {
  for (bool desc : {false, true}) {
    TempPath tmp;
    auto f = IndexFile::open_or_create(tmp.path(), 8192);
    f->create_index(compound({"integer", "varchar(20)", "integer"}, desc));
    TypedIndex ix(*f, "C");
    const char* names[] = {"ab", "abc", "abcd", "abcde", "abd", "b", ""};
    uint64_t r = 0;
    for (int id : {1, 2}) {
      for (const char* n : names) ix.insert(std::vector<Value>{num(id), text(n), num(7)}, r++);
      ix.insert(std::vector<Value>{num(id), Value::null(), num(7)}, r++);
    }
    SegmentRange sw;
    sw.starting_with = "abc";
    SearchResult s = ix.search(std::vector<Value>{num(1)}, sw);
    EXPECT_EQ(recnos(s), (std::vector<uint64_t>{1, 2, 3})) << desc;
    EXPECT_EQ(s.examined, 4u) << desc;
    sw.starting_with = "";  // every non-NULL name
    SearchResult all = ix.search(std::vector<Value>{num(2)}, sw);
    EXPECT_EQ(all.entries.size(), 7u) << desc;
    EXPECT_EQ(all.examined, 7u) << desc;
  }
}

// Compact layout, 4 KiB pages: 20000 entries over many leaves with suffix-truncated
// separators; every country's run crosses leaf boundaries.
TEST(FileCompoundIndex, ProbesCrossLeafBoundariesWithTruncatedSeparators) {
  for (bool desc : {false, true}) {
    TempPath tmp;
    auto f = IndexFile::open_or_create(tmp.path(), 4096);
    const IndexDefinition def = compound({"varchar(12)", "integer"}, desc, NodeLayout::Compact);
    const TypeSpec t12 = TypeSpec::parse("varchar(12)");
    const TypeSpec ti = TypeSpec::parse("integer");
    EntryBatch batch;
    const char* countries[] = {"ALPHA", "ALPHABET", "ALPHAB", "BETA"};
    uint64_t r = 0;
    KeyBuffer k;
    for (const char* c : countries) {
      for (int p = 0; p < 5000; ++p) {
        const Segment segs[] = {{&t12, KeyFormat::Text, text(c)}, {&ti, KeyFormat::Double, num(p)}};
        build_compound_key(segs, desc, k);
        batch.add(k.bytes(), r, r);
        ++r;
      }
    }
    f->bulk_load(def, batch);
    TypedIndex ix(*f, "C");
    const IndexStats st = f->analyze("C");
    EXPECT_EQ(st.leaf_buckets, 12u) << desc;  // each country spans 3 or 4 leaves
    SearchResult s = ix.search(std::vector<Value>{text("ALPHAB")});
    EXPECT_EQ(recnos(s), range(10000, 14999)) << desc;
    EXPECT_EQ(s.examined, 5001u) << desc;
    SegmentRange r2;
    r2.from = num(1234);
    r2.to = num(3456);
    SearchResult t = ix.search(std::vector<Value>{text("ALPHA")}, r2);
    EXPECT_EQ(recnos(t), range(1234, 3456)) << desc;
    EXPECT_EQ(t.examined, 2224u) << desc;
    EXPECT_NO_THROW(btree_of(*f, "C").verify());
  }
}

TEST(FileCompoundIndex, UniqueExemptsKeysWithANullSegment) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  IndexDefinition def = compound({"integer", "integer"});
  def.unique = true;
  f->create_index(def);
  TypedIndex ix(*f, "C");
  ix.insert(std::vector<Value>{num(1), num(2)}, 1);
  ix.insert(std::vector<Value>{num(1), Value::null()}, 2);
  ix.insert(std::vector<Value>{num(1), Value::null()}, 3);
  ix.insert(std::vector<Value>{Value::null(), Value::null()}, 4);
  ix.insert(std::vector<Value>{Value::null(), Value::null()}, 5);
  EXPECT_THROW(ix.insert(std::vector<Value>{num(1), num(2)}, 6), DuplicateKeyError);
  EXPECT_EQ(ix.value_text(ix.key_of(std::vector<Value>{num(1), Value::null()})), "(1, NULL)");
}

TEST(FileCompoundIndex, WrongValueCountRefused) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(compound({"integer", "integer"}));
  TypedIndex ix(*f, "C");
  EXPECT_THROW(ix.insert(std::vector<Value>{num(1)}, 1), WrongTypeError);
  EXPECT_THROW(ix.insert(num(1), 1), WrongTypeError);
  EXPECT_THROW(ix.search(std::vector<Value>{num(1), num(2), num(3)}), UsageError);
}

}  // namespace
}  // namespace pbtree
