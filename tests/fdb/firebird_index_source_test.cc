// The source texts of Firebird 5's partial and expression indexes (RDB$CONDITION_SOURCE,
// RDB$EXPRESSION_SOURCE, read from their blobs) in the catalog, in `stat --firebird --json`
// and in `--what-if`, never in the gstat text; a damaged source blob is a one-line
// CorruptError naming its page. Database: ../shared/data/firebird5's fb5_small_8192 (real
// Firebird 5.0.4, ODS 13.1), whose fb5_small_8192.indexes.tsv gives the texts.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/errors.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"
#include "firebird/fdb_stat.h"
#include "tests/support/fb5_data.h"
#include "tools/cmd_firebird.h"
#include "tools/json_out.h"

namespace pbtree::firebird {
namespace {

using pbtree::testdata::fb5_bytes;

uint16_t u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

class FdbIndexSource : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bytes_ = new std::vector<uint8_t>(fb5_bytes("fb5_small_8192"));
    file_ = FdbFile::from_bytes("fb5_small_8192.fdb", *bytes_).release();
    catalog_ = new std::vector<FdbTable>(read_catalog(*file_));
  }
  static void TearDownTestSuite() {
    delete catalog_;
    delete file_;
    delete bytes_;
  }
  static const FdbIndex& index(const std::string& name) {
    for (const FdbTable& t : *catalog_) {
      for (const FdbIndex& ix : t.indexes) {
        if (ix.name == name) return ix;
      }
    }
    throw std::runtime_error("no index " + name);
  }
  static FdbStatFilter only(const std::string& name) {
    FdbStatFilter f;
    f.index = name;
    return f;
  }
  // The one object of `stat --firebird --json --index NAME`.
  static tools::Json stat_json(const std::string& name) {
    const tools::Json a =
        tools::Json::parse(tools::format_fdb_stat_json(*file_, *catalog_, only(name)));
    EXPECT_EQ(a.size(), 1u);
    return a.at(0);
  }
  static std::string what_if_text(const std::string& name) {
    return tools::format_fdb_what_if(*file_, *catalog_, only(name), false, nullptr);
  }
  static tools::Json what_if_json(const std::string& name) {
    const tools::Json a =
        tools::Json::parse(tools::format_fdb_what_if(*file_, *catalog_, only(name), true, nullptr));
    EXPECT_EQ(a.size(), 1u);
    return a.at(0);
  }
  static inline std::vector<uint8_t>* bytes_ = nullptr;
  static inline FdbFile* file_ = nullptr;
  static inline std::vector<FdbTable>* catalog_ = nullptr;
};

TEST_F(FdbIndexSource, PartialIndexHasItsCondition) {
  const FdbIndex& ix = index("T_TYPES_SMALL_POS");
  EXPECT_TRUE(ix.condition);
  EXPECT_EQ(ix.condition_source, "WHERE C_SMALL > 0");
  EXPECT_FALSE(ix.expression);
  EXPECT_EQ(ix.expression_source, "");
}

TEST_F(FdbIndexSource, ExpressionIndexHasItsExpression) {
  const FdbIndex& ix = index("T_TYPES_UTF8_UPPER");
  EXPECT_TRUE(ix.expression);
  EXPECT_EQ(ix.expression_source, "(UPPER(C_UTF8))");
  EXPECT_FALSE(ix.condition);
  EXPECT_EQ(ix.condition_source, "");
}

TEST_F(FdbIndexSource, PlainIndexHasNoSourceText) {
  const FdbIndex& ix = index("T_TYPES_SMALL");
  EXPECT_EQ(ix.expression_source, "");
  EXPECT_EQ(ix.condition_source, "");
}

TEST_F(FdbIndexSource, StatJsonCarriesTheCondition) {
  const tools::Json o = stat_json("T_TYPES_SMALL_POS");
  EXPECT_EQ(o.at("condition").get<std::string>(), "WHERE C_SMALL > 0");
  EXPECT_FALSE(o.contains("expression"));
}

TEST_F(FdbIndexSource, StatJsonCarriesTheExpression) {
  const tools::Json o = stat_json("T_TYPES_UTF8_UPPER");
  EXPECT_EQ(o.at("expression").get<std::string>(), "(UPPER(C_UTF8))");
  EXPECT_FALSE(o.contains("condition"));
}

TEST_F(FdbIndexSource, StatJsonOfAPlainIndexHasNeither) {
  const tools::Json o = stat_json("T_TYPES_SMALL");
  EXPECT_FALSE(o.contains("expression"));
  EXPECT_FALSE(o.contains("condition"));
}

TEST_F(FdbIndexSource, GstatTextPrintsNoSourceText) {
  FdbStatFilter f = only("T_TYPES_SMALL_POS");
  f.table = "T_TYPES";
  EXPECT_EQ(tools::format_fdb_stat(*file_, *catalog_, f),
            "T_TYPES (136)\n"
            "    Primary pointer page: 243, Index root page: 244\n"
            "\n"
            "    Index T_TYPES_SMALL_POS (15)\n"
            "\tRoot page: 2135, depth: 2, leaf buckets: 2, nodes: 2238\n"
            "\tAverage node length: 5.83, total dup: 75, max dup: 2\n"
            "\tAverage key length: 3.91, compression ratio: 0.89\n"
            "\tAverage prefix length: 2.05, average data length: 1.44\n"
            "\tClustering factor: 2212, ratio: 0.99\n"
            "\tFill distribution:\n"
            "\t     0 - 19% = 0\n"
            "\t    20 - 39% = 0\n"
            "\t    40 - 59% = 0\n"
            "\t    60 - 79% = 1\n"
            "\t    80 - 99% = 1\n"
            "\n");
}

TEST_F(FdbIndexSource, WhatIfTextShowsTheConditionUnderItsFirstLine) {
  const std::string text = what_if_text("T_TYPES_SMALL_POS");
  EXPECT_EQ(text.substr(0, text.find('\n', text.find('\n') + 1) + 1),
            "What-if for index T_TYPES_SMALL_POS (15): smallint, 2238 entries, page size 8192\n"
            "  condition: WHERE C_SMALL > 0\n")
      << text;
}

TEST_F(FdbIndexSource, WhatIfTextShowsTheExpressionOfAnIndexItCannotPredict) {
  const std::string text = what_if_text("T_TYPES_UTF8_UPPER");
  const std::string want =
      "What-if for index T_TYPES_UTF8_UPPER (16) of T_TYPES: n/a: expression index (its keys "
      "are values of the expression, not of a column)\n"
      "  expression: (UPPER(C_UTF8))\n"
      "\n";
  EXPECT_EQ(text.substr(0, want.size()), want) << text;
}

TEST_F(FdbIndexSource, WhatIfTextOfAPlainIndexHasNoSourceLine) {
  const std::string text = what_if_text("T_TYPES_SMALL");
  EXPECT_EQ(text.find("condition:"), std::string::npos) << text;
  EXPECT_EQ(text.find("expression:"), std::string::npos) << text;
}

TEST_F(FdbIndexSource, WhatIfJsonCarriesTheCondition) {
  const tools::Json o = what_if_json("T_TYPES_SMALL_POS");
  EXPECT_EQ(o.at("condition").get<std::string>(), "WHERE C_SMALL > 0");
  EXPECT_FALSE(o.contains("expression"));
}

TEST_F(FdbIndexSource, WhatIfJsonCarriesTheExpression) {
  const tools::Json o = what_if_json("T_TYPES_UTF8_UPPER");
  EXPECT_EQ(o.at("expression").get<std::string>(), "(UPPER(C_UTF8))");
  EXPECT_FALSE(o.contains("condition"));
}

// The data page and line of the level-0 blob of RDB$INDICES (relation 4) holding `text`.
std::pair<uint32_t, uint32_t> blob_holding(const std::vector<uint8_t>& img,
                                           const std::string& text) {
  const uint32_t ps = u16(img.data() + 16);
  for (uint32_t p = 1; p < img.size() / ps; ++p) {
    const uint8_t* page = img.data() + uint64_t{p} * ps;
    if (page[0] != 5 || u16(page + 20) != 4) continue;
    for (uint32_t l = 0; l < u16(page + 22); ++l) {
      const uint32_t off = u16(page + 24 + 4 * l), len = u16(page + 26 + 4 * l);
      if (off == 0 || len <= 28 || off + len > ps || !(u16(page + off + 10) & 16)) continue;
      const std::string data(reinterpret_cast<const char*>(page + off + 28), len - 28);
      if (page[off + 12] == 0 && data.find(text) != std::string::npos) return {p, l};
    }
  }
  return {0, 0};
}

TEST_F(FdbIndexSource, DamagedConditionBlobIsAOneLineErrorNamingItsPage) {
  std::vector<uint8_t> img = *bytes_;
  const auto [page, line] = blob_holding(img, "WHERE C_SMALL > 0");
  ASSERT_NE(page, 0u);
  const uint32_t ps = file_->page_size();
  const uint32_t off = u16(img.data() + uint64_t{page} * ps + 24 + 4 * line);
  img[uint64_t{page} * ps + off + 12] = 9;  // blh_level
  auto f = FdbFile::from_bytes("fb5_small_8192.fdb", std::move(img));
  try {
    read_catalog(*f);
    FAIL() << "read";
  } catch (const CorruptError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("fb5_small_8192.fdb: index T_TYPES_SMALL_POS: RDB$CONDITION_SOURCE: page "
                          "{} (data): line {}: blob level 9 (0, 1 or 2 expected)",
                          page, line));
  }
}

TEST_F(FdbIndexSource, DamagedExpressionBlobIsAOneLineErrorNamingItsPage) {
  std::vector<uint8_t> img = *bytes_;
  const auto [page, line] = blob_holding(img, "(UPPER(C_UTF8))");
  ASSERT_NE(page, 0u);
  const uint32_t ps = file_->page_size();
  const uint32_t off = u16(img.data() + uint64_t{page} * ps + 24 + 4 * line);
  img[uint64_t{page} * ps + off + 12] = 1;  // level 1: the text read as page numbers
  auto f = FdbFile::from_bytes("fb5_small_8192.fdb", std::move(img));
  try {
    read_catalog(*f);
    FAIL() << "read";
  } catch (const CorruptError& e) {
    const std::string what = e.what();
    EXPECT_EQ(
        what.rfind("fb5_small_8192.fdb: index T_TYPES_UTF8_UPPER: RDB$EXPRESSION_SOURCE: page ", 0),
        0u)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace pbtree::firebird
