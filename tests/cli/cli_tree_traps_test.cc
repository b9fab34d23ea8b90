// The traps of the living B-tree behind the CLI: a run of one key spanning many pages,
// deletes that empty pages in the middle of a level followed by re-inserts, a bulk-loaded
// index against the same entries inserted one by one, and leading-segment / STARTING WITH
// searches on compound keys whose search key ends exactly on a 4-byte chunk boundary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "tests/support/btree_tree_fixture.h"
#include "tests/support/cli_tree_test_util.h"
#include "tools/index_session.h"

namespace pbtree::tools {
namespace {

using testing::CliTreeTest;
using testing::numbers;
using testing::run;

using CliTrapsTest = CliTreeTest;

TEST_F(CliTrapsTest, LongRunOfOneKeySpansPages) {
  std::string csv = "1\n";
  for (int i = 0; i < 5000; ++i) csv += "7\n";
  csv += "9\n";
  load({"--index", "R", "--type", "integer", "--input", dir_.write("r.csv", csv)});
  ASSERT_GE(IndexFile::open(db_)->analyze("R").leaf_buckets, 3u);  // the run spans leaves
  EXPECT_EQ(run({"find", db_, "--index", "R", "7"}).out, numbers(1, 5000));
  EXPECT_EQ(run({"insert", db_, "--index", "R", "7", "0"}).code, 0);
  EXPECT_EQ(run({"insert", db_, "--index", "R", "7", "9000"}).code, 0);
  EXPECT_EQ(run({"find", db_, "--index", "R", "7"}).out, numbers(0, 5000) + "9000\n");
  EXPECT_EQ(run({"scan", db_, "--index", "R", "--from=7", "--to=7", "--limit", "3"}).out,
            "7\t0\n7\t1\n7\t2\n");
  EXPECT_EQ(run({"scan", db_, "--index", "R", "--from=7", "--to=7", "--desc", "--limit", "2"}).out,
            "7\t0\n7\t1\n");
  EXPECT_EQ(run({"scan", db_, "--index", "R", "--from=6", "--desc", "--limit", "2"}).out,
            "9\t5001\n7\t0\n");
  EXPECT_EQ(run({"verify", db_, "--index", "R"}).code, 0);
}

// Value i of the long-key index: 5 digits and 150 'x' (about 25 entries per 4 KiB leaf).
std::string long_value(int i) {
  return fmt::format("{:05d}", i) + std::string(150, 'x');
}

// Deletes (or re-inserts) values 100..200 of index M through a session, then commits.
void change_middle(const std::string& db, bool insert) {
  auto s = IndexSession::open(db, "M", true);
  const IndexDefinition& def = s->info().def;
  KeyBuffer k;
  for (int i = 100; i <= 200; ++i) {
    const std::string v = long_value(i);
    build_key(def.type, def.format, Value::of_text(v), false, k);
    if (insert) {
      s->tree().insert(k.bytes(), static_cast<uint64_t>(i - 1));
    } else {
      s->tree().remove(k.bytes(), static_cast<uint64_t>(i - 1));
    }
  }
  s->commit();
}

TEST_F(CliTrapsTest, DeletesEmptyMiddlePagesThenReinsert) {
  std::string csv;
  for (int i = 1; i <= 300; ++i) csv += long_value(i) + "\n";
  load({"--index", "M", "--type", "varchar(200)", "--input", dir_.write("m.csv", csv)});
  ASSERT_GE(IndexFile::open(db_)->analyze("M").leaf_buckets, 10u);
  const std::string full = run({"scan", db_, "--index", "M"}).out;
  change_middle(db_, false);
  auto v1 = run({"verify", db_});
  EXPECT_EQ(v1.code, 0) << v1.out;
  EXPECT_EQ(v1.out.find(" 0 free"), std::string::npos) << v1.out;  // emptied pages were freed
  EXPECT_EQ(
      run({"scan", db_, "--index", "M", "--from", long_value(98), "--to", long_value(202)}).out,
      long_value(98) + "\t97\n" + long_value(99) + "\t98\n" + long_value(201) + "\t200\n" +
          long_value(202) + "\t201\n");
  EXPECT_EQ(run({"find", db_, "--index", "M", long_value(150)}).out, "");
  change_middle(db_, true);
  auto v2 = run({"verify", db_});
  EXPECT_EQ(v2.code, 0) << v2.out;
  EXPECT_EQ(run({"scan", db_, "--index", "M"}).out, full);
  EXPECT_EQ(run({"find", db_, "--index", "M", long_value(150)}).out, "149\n");
}

TEST_F(CliTrapsTest, BulkLoadedEqualsInsertedOneByOne) {
  const uint32_t seed = 20261130;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::string csv;
  std::vector<std::pair<std::string, uint64_t>> rows;
  for (uint64_t i = 0; i < 3000; ++i) {
    std::string v = rng() % 10 == 0 ? "" : std::to_string(static_cast<int>(rng() % 101) - 50);
    csv += v + "\n";
    rows.emplace_back(v, i);
  }
  const std::string in = dir_.write("data.csv", csv);
  const std::string empty = dir_.write("empty.csv", "");
  for (bool desc : {false, true}) {
    const std::string a = desc ? "AD" : "A";
    const std::string b = desc ? "BD" : "B";
    if (desc) {
      load({"--index", a, "--type", "integer", "--descending", "--input", in});
      load({"--index", b, "--type", "integer", "--descending", "--input", empty});
    } else {
      load({"--index", a, "--type", "integer", "--input", in});
      load({"--index", b, "--type", "integer", "--input", empty});
    }
    std::shuffle(rows.begin(), rows.end(), rng);
    {
      auto s = IndexSession::open(db_, b, true);
      const IndexDefinition& def = s->info().def;
      KeyBuffer k;
      for (const auto& [v, recno] : rows) {
        build_key(def.type, def.format, v.empty() ? Value::null() : parse_value(def.type, v),
                  def.descending, k);
        s->tree().insert(k.bytes(), recno);
      }
      s->commit();
    }
    for (std::vector<std::string> extra : {std::vector<std::string>{},
                                           {"--desc"},
                                           {"--from=-10", "--to=10"},
                                           {"--to=0", "--desc"}}) {
      std::vector<std::string> qa{"scan", db_, "--index", a};
      std::vector<std::string> qb{"scan", db_, "--index", b};
      qa.insert(qa.end(), extra.begin(), extra.end());
      qb.insert(qb.end(), extra.begin(), extra.end());
      auto ra = run_args(qa);
      auto rb = run_args(qb);
      EXPECT_EQ(ra.code, 0);
      EXPECT_EQ(ra.out, rb.out) << "index " << b;
    }
    EXPECT_EQ(run({"scan", db_, "--index", a}).out.size(),
              run({"scan", db_, "--index", a, "--desc"}).out.size());
  }
  EXPECT_EQ(run({"verify", db_}).code, 0);
}

// Compound keys (double, varchar(10)) in a tree of their own.
class CliCompoundKeyTest : public ::testing::TestWithParam<bool> {
 protected:
  CliCompoundKeyTest() : env_(false, GetParam()) {
    // r0 (1,'ABCD') r1 (1,'ABCDE') r2 (1,'ABC') r3 (1,NULL) r4 (2,'ABCD')
    // r5 (1 + 2^-30,'ABCD')  -- first segment BF F0 00 00 04: continues the padded chunk
    // r6 (1e6,'A')           -- first segment C1 2E 84 80: exactly one chunk
    // r7 (1000000.0000001,'A') -- C1 2E 84 80 ...: continues it
    // r8 (0.5,'Z')
    add(0, 1.0, "ABCD");
    add(1, 1.0, "ABCDE");
    add(2, 1.0, "ABC");
    add(3, 1.0, std::nullopt);
    add(4, 2.0, "ABCD");
    add(5, 1.0 + 1.0 / (1u << 30), "ABCD");
    add(6, 1e6, "A");
    add(7, 1000000.0000001, "A");
    add(8, 0.5, "Z");
  }

  void add(uint64_t recno, double d, std::optional<std::string> s) {
    Segment segs[2] = {{&dbl_, KeyFormat::Double, Value::of_double(d)},
                       {&text_, KeyFormat::Text, s ? Value::of_text(*s) : Value::null()}};
    KeyBuffer k;
    build_compound_key(segs, GetParam(), k);
    env_.tree->insert(k.bytes(), recno);
  }

  std::vector<uint8_t> search(double d, std::optional<std::string> s, bool starting_with) {
    std::vector<Segment> segs{{&dbl_, KeyFormat::Double, Value::of_double(d)}};
    if (s) segs.push_back({&text_, KeyFormat::Text, Value::of_text(*s)});
    KeyBuffer k;
    build_compound_key(segs, GetParam(), k, 2, starting_with);
    return std::vector<uint8_t>(k.data, k.data + k.length);
  }

  // Record numbers (sorted) of the prefix scan; `exact`: leading-segment equality filter.
  std::vector<uint64_t> prefix_scan(const std::vector<uint8_t>& key, size_t segments, bool exact) {
    ScanRange r;
    r.prefix = key;
    std::vector<uint64_t> out;
    for (Cursor c = env_.tree->scan(r); c.valid(); c.next()) {
      if (exact && !compound_leading_equal(c.key(), key, 2, segments, GetParam())) continue;
      out.push_back(c.record_number());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  TypeSpec dbl_{ColumnType::Double, 0, 0, 0};
  TypeSpec text_{ColumnType::Varchar, 0, 0, 10};
  pbtree::testing::TreeEnv env_;
};

TEST_P(CliCompoundKeyTest, PaddedLeadingSegmentPrefixAlsoMatchesLongerValues) {
  EXPECT_EQ(prefix_scan(search(1.0, std::nullopt, false), 1, false),
            (std::vector<uint64_t>{0, 1, 2, 3, 5}));
}

TEST_P(CliCompoundKeyTest, PaddedLeadingSegmentEquality) {
  EXPECT_EQ(prefix_scan(search(1.0, std::nullopt, false), 1, true),
            (std::vector<uint64_t>{0, 1, 2, 3}));
}

TEST_P(CliCompoundKeyTest, LeadingSegmentOnChunkBoundaryEquality) {
  const auto k = search(1e6, std::nullopt, false);
  EXPECT_EQ(k.size(), 5u);
  EXPECT_EQ(prefix_scan(k, 1, false), (std::vector<uint64_t>{6, 7}));
  EXPECT_EQ(prefix_scan(k, 1, true), (std::vector<uint64_t>{6}));
}

TEST_P(CliCompoundKeyTest, StartingWithSecondSegmentOnChunkBoundary) {
  const auto k = search(1.0, "ABCD", true);
  EXPECT_EQ(k.size(), 10u);
  EXPECT_EQ(prefix_scan(k, 2, false), (std::vector<uint64_t>{0, 1}));
}

TEST_P(CliCompoundKeyTest, StartingWithSecondSegmentShort) {
  EXPECT_EQ(prefix_scan(search(1.0, "ABC", true), 2, false), (std::vector<uint64_t>{0, 1, 2}));
}

TEST_P(CliCompoundKeyTest, FullEqualityOnBothSegments) {
  EXPECT_EQ(prefix_scan(search(1.0, "ABCD", false), 2, true), (std::vector<uint64_t>{0}));
}

INSTANTIATE_TEST_SUITE_P(Directions, CliCompoundKeyTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Descending" : "Ascending"; });

}  // namespace
}  // namespace pbtree::tools
