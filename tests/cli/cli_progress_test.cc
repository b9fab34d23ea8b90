// Progress lines (tools/progress.h) of `stat`, `stat --what-if` and `verify`: with --progress
// stderr holds the first line (count 0) and the final figure, joined by a carriage return;
// without it, and with stderr not a terminal, stderr stays empty.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/support/cli_test_util.h"
#include "tools/progress.h"

namespace pbtree::tools {
namespace {

using testing::run;
using testing::ScratchDir;

// File descriptor 2 points at /dev/null while it lives, so that isatty(2) is false even
// when the test binary runs on a terminal.
class StderrOffTerminal {
 public:
  StderrOffTerminal() : saved_(::dup(2)) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 2);
    ::close(null_fd);
  }
  ~StderrOffTerminal() {
    ::dup2(saved_, 2);
    ::close(saved_);
  }

 private:
  int saved_;
};

// A 4 KiB-page file with index I of 1..1000 (integer): header, root page, one leaf.
std::string small_file(const ScratchDir& dir) {
  const std::string csv = dir.write("v.csv", testing::numbers(1, 1000));
  const std::string db = dir.file("x.pbt");
  EXPECT_EQ(
      run({"load", db, "--index", "I", "--type", "integer", "--input", csv, "--page-size", "4096"})
          .code,
      0);
  return db;
}

// The walk reads the first page of each level twice (descent, then the level): 2 reads.
TEST(CliProgress, StatPrintsPagesReadOfTheFile) {
  ScratchDir dir("progress-stat");
  const std::string db = small_file(dir);
  StderrOffTerminal guard;
  testing::CliResult r = run({"stat", "--progress", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "stat: index I: 0 / 3 pages (0%)\rstat: index I: 2 / 3 pages (66%)\n");
}

TEST(CliProgress, StatWithoutFlagOffTerminalPrintsNothing) {
  ScratchDir dir("progress-stat-off");
  const std::string db = small_file(dir);
  StderrOffTerminal guard;
  testing::CliResult r = run({"stat", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(CliProgress, WhatIfPrintsEntriesRead) {
  ScratchDir dir("progress-what-if");
  const std::string db = small_file(dir);
  StderrOffTerminal guard;
  testing::CliResult r = run({"stat", "--what-if", "--progress", db});
  ASSERT_EQ(r.code, 0) << r.err;
  // First and last draw exactly; a slow run (sanitizers) may redraw in between, each time
  // with a count between them.
  const std::string first = "what-if: index I: 0 entries\r";
  const std::string last = "what-if: index I: 1,000 entries\n";
  ASSERT_GE(r.err.size(), first.size() + last.size()) << r.err;
  EXPECT_EQ(r.err.substr(0, first.size()), first);
  EXPECT_EQ(r.err.substr(r.err.size() - last.size()), last);
  const std::string middle = r.err.substr(first.size(), r.err.size() - first.size() - last.size());
  size_t pos = 0;
  while (pos < middle.size()) {
    const size_t end = middle.find('\r', pos);
    ASSERT_NE(end, std::string::npos) << r.err;
    EXPECT_EQ(middle.substr(pos, 18), "what-if: index I: ") << r.err;
    pos = end + 1;
  }
}

// --key-format auto samples the entries held in memory: its progress line counts them up to
// the whole input (it said "sample: 0 rows" and stopped there).
TEST(CliProgress, AutoFormatSampleCountsTheEntries) {
  ScratchDir dir("progress-sample");
  const std::string csv = dir.write("v.csv", testing::numbers(1, 1000));
  StderrOffTerminal guard;
  testing::CliResult r = run({"load", dir.file("x.pbt"), "--index", "I", "--type", "bigint",
                              "--key-format", "auto", "--input", csv, "--progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("load I: sample: 1,000 / 1,000 rows (100%)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("sample: 0 rows"), std::string::npos) << r.err;
}

TEST(CliProgress, WhatIfWithoutFlagOffTerminalPrintsNothing) {
  ScratchDir dir("progress-what-if-off");
  const std::string db = small_file(dir);
  StderrOffTerminal guard;
  testing::CliResult r = run({"stat", "--what-if", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(CliProgress, VerifyPrintsIndexThenOtherPages) {
  ScratchDir dir("progress-verify");
  const std::string db = small_file(dir);
  StderrOffTerminal guard;
  testing::CliResult r = run({"verify", "--progress", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err,
            "verify: index I: 0 / 3 pages (0%)\rverify: index I: 1 / 1 pages (100%)\n"
            "verify: other pages: 0 / 3 pages (0%)\rverify: other pages: 3 / 3 pages (100%)\n");
}

TEST(CliProgress, VerifyIndexEndsAtAHundredPercent) {
  ScratchDir dir("progress-verify-index");
  const std::string csv = dir.write("v.csv", testing::numbers(1, 20000));
  const std::string db = dir.file("x.pbt");
  ASSERT_EQ(
      run({"load", db, "--index", "I", "--type", "integer", "--input", csv, "--page-size", "4096"})
          .code,
      0);
  ASSERT_EQ(
      run({"load", db, "--index", "J", "--type", "integer", "--input", csv, "--page-size", "4096"})
          .code,
      0);
  StderrOffTerminal guard;
  testing::CliResult r = run({"verify", "--progress", "--index", "J", db});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string last = "verify: index J: 25 / 25 pages (100%)\n";
  ASSERT_GE(r.err.size(), last.size()) << r.err;
  EXPECT_EQ(r.err.substr(r.err.size() - last.size()), last) << r.err;
  EXPECT_EQ(r.err.rfind("verify: index J: 0 / 52 pages (0%)\r", 0), 0u) << r.err;
}

TEST(CliProgress, VerifyWithoutFlagOffTerminalPrintsNothing) {
  ScratchDir dir("progress-verify-off");
  const std::string db = small_file(dir);
  StderrOffTerminal guard;
  testing::CliResult r = run({"verify", db});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// Counts below kCheckEvery never read the clock: start's line and finish's line only.
TEST(CliProgressLine, LineWithoutTotalThenLineWithTotal) {
  std::ostringstream err;
  {
    Progress p(err, true);
    p.start("x", 0, "entries");
    p.set(200);
    p.finish();
    p.start("y", 10, "pages");
    p.finish();
  }
  EXPECT_EQ(err.str(),
            "x: 0 entries\rx: 200 entries\ny: 0 / 10 pages (0%)\ry: 0 / 10 pages (0%)\n");
}

TEST(CliProgressLine, GroupDigitsPutsACommaEveryThreeDigits) {
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(67890123), "67,890,123");
}

}  // namespace
}  // namespace pbtree::tools
