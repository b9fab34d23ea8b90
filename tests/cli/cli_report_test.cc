// `pbtree report FILE -o report.html`: structure and figures of the HTML page for a pbtree
// file (the Firebird side runs in tests/firebird/compare_stat.sh).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

class CliReport : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string csv = dir_.write("v.csv", testing::numbers(1, 20000));
    db_ = dir_.file("a.pbt");
    ASSERT_EQ(run({"load", db_, "--index", "I_B", "--type", "bigint", "--input", csv, "--page-size",
                   "4096"})
                  .code,
              0);
    html_path_ = dir_.file("r.html");
    testing::CliResult r = run({"report", db_, "-o", html_path_});
    ASSERT_EQ(r.code, 0) << r.err;
    html_ = testing::read_bytes(html_path_);
  }
  ScratchDir dir_{"report"};
  std::string db_, html_path_, html_;
};

TEST_F(CliReport, OneSelfContainedPage) {
  EXPECT_EQ(html_.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  EXPECT_EQ(html_.substr(html_.size() - 8), "</html>\n");
  EXPECT_EQ(count(html_, "<script"), 0u);
  EXPECT_EQ(count(html_, "src="), 0u);
  EXPECT_EQ(count(html_, "href="), 0u);
  EXPECT_EQ(count(html_, "url("), 0u);
}

TEST_F(CliReport, PerIndexSizeChartFillChartAndLevels) {
  EXPECT_EQ(count(html_, "<section class=\"index\">"), 1u);
  EXPECT_EQ(count(html_, "<svg class=\"sizes\""), 1u);
  EXPECT_EQ(count(html_, "<svg class=\"fill\""), 1u);
  EXPECT_EQ(count(html_, "<table class=\"levels\">"), 1u);
  // bigint: rescaled-double, decimal128, bcd x firebird, compact = 6 bars plus 5 fill bars.
  EXPECT_EQ(count(html_, "<rect "), 11u);
}

TEST_F(CliReport, FiguresEqualStat) {
  testing::CliResult st = run({"stat", "--json", db_});
  ASSERT_EQ(st.code, 0);
  EXPECT_NE(st.out.find("\"leaf_buckets\":58,"), std::string::npos) << st.out;
  EXPECT_NE(html_.find("<tr><td>leaf buckets</td><td>58</td></tr>"), std::string::npos);
  EXPECT_NE(html_.find("<tr><td>nodes</td><td>20000</td></tr>"), std::string::npos);
  EXPECT_NE(html_.find("* rescaled-double / firebird</text>"), std::string::npos);
  EXPECT_NE(html_.find("<tr><td>0</td><td>58</td><td>20000</td>"), std::string::npos);
}

TEST(CliReportErrors, MissingFileIsAnError) {
  ScratchDir dir("report-missing");
  testing::CliResult r = run({"report", dir.file("none.pbt"), "-o", dir.file("r.html")});
  EXPECT_EQ(r.code, 1);
}

}  // namespace
}  // namespace pbtree::tools
