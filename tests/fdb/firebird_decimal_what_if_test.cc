// What-if and import of Firebird indexes whose decimal128 keys (idx_decimal) pbtree's types do
// not take: DECFLOAT(16/34) (Firebird 4+) and INT128 on ODS 13.0 (Firebird 4.0 wrote
// idx_decimal keys for INT128, 13.1 writes idx_bcd). Database: ../shared/data/firebird5's
// fb5_small_8192 (real Firebird 5.0.4), whose T_DECFLOAT and T_INT128 hold the same values
// (ID 1..20000). The INT128-on-13.0 case is T_DECFLOAT_ID's real decimal128 keys read as an
// INT128 column's, which is what Firebird 4.0 writes for these integral values; its bcd rows
// must then equal those of T_INT128_ID, whose bcd keys real Firebird 5 wrote.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "firebird/fdb_catalog.h"
#include "firebird/fdb_entries.h"
#include "firebird/fdb_file.h"
#include "firebird/fdb_what_if.h"
#include "keys/key_internal.h"
#include "tests/support/cli_test_util.h"
#include "tests/support/fb5_data.h"
#include "tools/cmd_firebird.h"

namespace pbtree::firebird {
namespace {

using pbtree::testdata::fb5_bytes;

class FdbDecimalWhatIf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    file_ = FdbFile::from_bytes("fb5_small_8192.fdb", fb5_bytes("fb5_small_8192")).release();
    catalog_ = new std::vector<FdbTable>(read_catalog(*file_));
  }
  static void TearDownTestSuite() {
    delete catalog_;
    delete file_;
  }
  static const FdbIndex& index(const std::string& name) {
    for (const FdbTable& t : *catalog_) {
      for (const FdbIndex& ix : t.indexes) {
        if (ix.name == name) return ix;
      }
    }
    throw std::runtime_error("no index " + name);
  }
  // T_DECFLOAT_ID as Firebird 4.0's INT128 index on ODS 13.0 (blr_int128, idx_decimal).
  static FdbIndex int128_on_ods130() {
    FdbIndex ix = index("T_DECFLOAT_ID");
    ix.segments[0].field_type = 26;
    return ix;
  }
  static inline FdbFile* file_ = nullptr;
  static inline std::vector<FdbTable>* catalog_ = nullptr;
};

std::string row_text(const WhatIfRow& r) {
  return fmt::format("{} {} leaves {} pages {} depth {} used {:.2f}{}", key_format_name(r.format),
                     layout_name(r.layout), r.leaf_pages, r.index_pages, r.depth,
                     r.used_bytes_per_entry, r.current ? " *" : "");
}

TEST_F(FdbDecimalWhatIf, Decfloat34IndexGivesDecimal128RowsInBothLayouts) {
  const FdbIndex& ix = index("T_DECFLOAT_ID");
  ASSERT_EQ(ix.segments[0].field_type, 25);
  ASSERT_EQ(ix.segments[0].itype, 10);
  const FdbWhatIf w = fdb_what_if(*file_, ix);
  ASSERT_TRUE(w.predicted) << w.why;
  EXPECT_EQ(w.report.type_name, "decfloat(34)");
  EXPECT_EQ(w.report.entries, 20000u);  // gstat -r: nodes 20000, leaf buckets 16
  ASSERT_EQ(w.report.rows.size(), 2u);
  EXPECT_EQ(row_text(w.report.rows[0]),
            "decimal128 firebird leaves 16 pages 17 depth 2 used 6.18 *");
  EXPECT_EQ(row_text(w.report.rows[1]), "decimal128 compact leaves 10 pages 11 depth 2 used 4.02");
}

TEST_F(FdbDecimalWhatIf, Decfloat34RowsEqualBcdRowsOfTheSameInt128Values) {
  // Same values, keys of the same length byte for byte in both formats (2-byte exponent,
  // then 3 digits per 10 bits from the first digit): the same trees.
  const FdbWhatIf d = fdb_what_if(*file_, index("T_DECFLOAT_ID"));
  const FdbWhatIf b = fdb_what_if(*file_, index("T_INT128_ID"));
  ASSERT_TRUE(d.predicted && b.predicted);
  ASSERT_EQ(b.report.rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(d.report.rows[i].leaf_pages, b.report.rows[i].leaf_pages);
    EXPECT_EQ(d.report.rows[i].index_pages, b.report.rows[i].index_pages);
  }
}

TEST_F(FdbDecimalWhatIf, Decfloat16IndexIsPredicted) {
  const FdbWhatIf w = fdb_what_if(*file_, index("T_TYPES_DEC16"));
  ASSERT_TRUE(w.predicted) << w.why;
  EXPECT_EQ(w.report.type_name, "decfloat(16)");
  EXPECT_EQ(w.report.entries, 5000u);  // gstat -r: nodes 5000, leaf buckets 6
  ASSERT_EQ(w.report.rows.size(), 2u);
  EXPECT_EQ(row_text(w.report.rows[0]), "decimal128 firebird leaves 6 pages 7 depth 2 used 8.39 *");
  EXPECT_EQ(row_text(w.report.rows[1]), "decimal128 compact leaves 5 pages 6 depth 2 used 7.53");
}

TEST_F(FdbDecimalWhatIf, Int128OnOds130GivesDecimal128AsStoredAndBcdRows) {
  const FdbWhatIf w = fdb_what_if(*file_, int128_on_ods130());
  ASSERT_TRUE(w.predicted) << w.why;
  EXPECT_EQ(w.report.info.def.type.name(), "int128");
  EXPECT_EQ(w.report.entries, 20000u);
  ASSERT_EQ(w.report.rows.size(), 4u);
  EXPECT_EQ(row_text(w.report.rows[0]),
            "decimal128 firebird leaves 16 pages 17 depth 2 used 6.18 *");
  EXPECT_EQ(row_text(w.report.rows[1]), "decimal128 compact leaves 10 pages 11 depth 2 used 4.02");
  // The bcd rows: the trees of Firebird 5's own bcd keys of the same values.
  const FdbWhatIf b = fdb_what_if(*file_, index("T_INT128_ID"));
  for (size_t i = 0; i < 2; ++i) {
    WhatIfRow want = b.report.rows[i];
    want.current = false;
    EXPECT_EQ(row_text(w.report.rows[2 + i]), row_text(want));
  }
}

TEST_F(FdbDecimalWhatIf, Int128OnOds130TextListsEveryRow) {
  // Through the CLI's formatter: no "n/a" row for decimal128 now that it is predicted.
  std::vector<FdbTable> cat;
  for (const FdbTable& t : *catalog_) {
    if (t.name != "T_DECFLOAT") continue;
    cat.push_back(t);
    for (FdbIndex& ix : cat.back().indexes) {
      if (ix.name == "T_DECFLOAT_ID") ix.segments[0].field_type = 26;
    }
  }
  FdbStatFilter filter;
  filter.index = "T_DECFLOAT_ID";
  const std::string text = tools::format_fdb_what_if(*file_, cat, filter, false, nullptr);
  EXPECT_EQ(text.find("n/a"), std::string::npos) << text;
  EXPECT_NE(text.find("What-if for index T_DECFLOAT_ID (0): int128, 20000 entries"),
            std::string::npos)
      << text;
}

TEST_F(FdbDecimalWhatIf, Int128OnOds130ImportsAsBcdWithTheIndexValues) {
  tools::testing::ScratchDir dir("fdb-int128-130");
  const std::string db = dir.file("i.pbt");
  tools::FirebirdImportArgs a;
  a.fdb = "fb5_small_8192.fdb";
  a.index = "T_DECFLOAT_ID";
  a.db = db;
  a.name = "I";
  const FdbIndex ix = int128_on_ods130();
  std::ostringstream out;
  tools::import_fdb_index(*file_, ix, a, out);
  EXPECT_EQ(out.str(), "imported 20000 entries of T_DECFLOAT_ID into " + db +
                           " (key format bcd, layout firebird)\n");
  const auto v = tools::testing::run_args({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  // The Firebird index's values (its decimal128 keys decoded as int128), in index order.
  TypeSpec int128;
  int128.type = ColumnType::Int128;
  std::string storage;
  std::vector<std::pair<std::string, uint64_t>> want, got;
  for_each_fdb_entry(*file_, ix, [&](std::span<const uint8_t> key, uint64_t recno) {
    const Value val = key_to_value(int128, KeyFormat::Decimal128, false, key, storage);
    want.emplace_back(keys_internal::decimal_to_string(val.coefficient, val.scale, 0), recno);
  });
  auto f = IndexFile::open(db);
  const BTree& tree = btree_of(*f, "I");
  for (Cursor cur = tree.scan(); cur.valid(); cur.next()) {
    const Value val = key_to_value(int128, KeyFormat::Bcd, false, cur.key(), storage);
    got.emplace_back(keys_internal::decimal_to_string(val.coefficient, val.scale, 0),
                     cur.record_number());
  }
  ASSERT_EQ(want.size(), 20000u);
  EXPECT_EQ(want.front().first, "1");
  EXPECT_EQ(want.back().first, "20000");
  EXPECT_EQ(got, want);
}

TEST_F(FdbDecimalWhatIf, DecfloatImportIsRefusedWithTheReason) {
  tools::FirebirdImportArgs a;
  a.fdb = "fb5_small_8192.fdb";
  a.index = "T_DECFLOAT_ID";
  a.db = "/nonexistent/never-created.pbt";
  std::ostringstream out;
  try {
    tools::import_fdb_index(*file_, index("T_DECFLOAT_ID"), a, out);
    FAIL() << "imported";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "fb5_small_8192.fdb: index T_DECFLOAT_ID cannot be imported: n/a: "
                 "decfloat(34) has no pbtree column type to import its values into");
  }
}

}  // namespace
}  // namespace pbtree::firebird
