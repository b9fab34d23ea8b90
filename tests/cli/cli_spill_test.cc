// `pbtree load --memory / --temp-dir` (tools/load_pipeline.h, file/entry_runs.h): a tiny
// budget spills many sorted runs (and merges them in several passes) and still builds the
// pages of an unbounded load; duplicates across runs and bad rows give the messages of an
// unbounded load and leave the index file byte-identical; the temporary file never shows in
// --temp-dir (after success, after an error, after SIGKILL mid-merge); standard input spills
// too; --key-format auto reads the input once and decides as before; the progress line.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/support/cli_test_util.h"
#include "tests/support/watchdog.h"
#include "tools/cli_errors.h"
#include "tools/load_pipeline.h"

namespace pbtree::tools {
namespace {

using testing::read_bytes;
using testing::run;
using testing::run_args;
using testing::ScratchDir;

constexpr uint32_t kPage = 4096;

// `rows` random 63-bit bigint values, one per line (fixed seed).
std::string random_bigints(uint64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (uint64_t i = 0; i < rows; ++i) {
    text += std::to_string(static_cast<int64_t>(rng()) >> 1);
    text += '\n';
  }
  return text;
}

// Files in `dir` (names).
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  return out;
}

// Pages 1.. of two files of kPage-byte pages are byte-identical and their page counts equal
// (page 0, the header, holds the random file id).
void expect_same_pages(const std::string& a, const std::string& b) {
  const std::string x = read_bytes(a), y = read_bytes(b);
  ASSERT_EQ(x.size(), y.size());
  ASSERT_GT(x.size(), kPage);
  for (size_t p = 1; p < x.size() / kPage; ++p) {
    ASSERT_EQ(x.compare(p * kPage, kPage, y, p * kPage, kPage), 0) << "page " << p;
  }
}

// The sequence of phase labels of a --progress stderr: the text before ": " and the count of
// every drawn line piece ("load I: sort run 1", ...), "parse" and repeats dropped.
std::vector<std::string> phases(const std::string& err) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find_first_of("\r\n", start);
    if (end == std::string::npos) end = err.size();
    const std::string piece = err.substr(start, end - start);
    start = end + 1;
    if (piece.rfind("load ", 0) != 0) continue;
    const size_t colon = piece.find(": ", 5);
    const size_t second = piece.find(": ", colon + 2);
    const std::string label = piece.substr(0, second);
    if (label.ends_with(": parse")) continue;  // between the runs
    if (out.empty() || out.back() != label) out.push_back(label);
  }
  return out;
}

class CliSpill : public ::testing::Test {
 protected:
  CliSpill()
      : dir_(::testing::UnitTest::GetInstance()->current_test_info()->name()),
        tmp_(dir_.file("tmp")) {
    std::filesystem::create_directories(tmp_);
  }

  // `load DB --index I --type bigint --key-format decimal128 --page-size 4096 --input IN`
  // plus `extra`.
  testing::CliResult load(const std::string& db, const std::string& in,
                          const std::vector<std::string>& extra) {
    std::vector<std::string> args{"load",        db,       "--index",      "I",
                                  "--type",      "bigint", "--key-format", "decimal128",
                                  "--page-size", "4096",   "--input",      in};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_args(args);
  }

  ScratchDir dir_;
  std::string tmp_;
};

TEST(CliLoadMemorySize, SuffixesAreBinaryMultiples) {
  EXPECT_EQ(parse_memory_size("65536"), 65536u);
  EXPECT_EQ(parse_memory_size("64K"), 65536u);
  EXPECT_EQ(parse_memory_size("256M"), size_t{256} << 20);
  EXPECT_EQ(parse_memory_size("1g"), size_t{1} << 30);
  EXPECT_EQ(parse_memory_size("2GiB"), size_t{2} << 30);
  EXPECT_EQ(parse_memory_size("100000B"), 100000u);
}

TEST(CliLoadMemorySize, MalformedOrTooSmallIsAnArgumentError) {
  auto message = [](const std::string& text) {
    try {
      parse_memory_size(text);
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("12X"), "bad memory size '12X' (want bytes, e.g. 256M or 1G)");
  EXPECT_EQ(message("M"), "bad memory size 'M' (want bytes, e.g. 256M or 1G)");
  EXPECT_EQ(message("1K"), "--memory 1K is below the least, 64K");
}

TEST(CliLoadMemorySize, DefaultIs256MiBOrAQuarterOfTheRam) {
  const size_t ram =
      static_cast<size_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(default_bulk_load_memory(), std::min(size_t{256} << 20, ram / 4));
}

TEST_F(CliSpill, BadMemoryArgumentIsExitCode2) {
  const std::string in = dir_.write("in.csv", "1\n");
  auto r = load(dir_.file("a.pbt"), in, {"--memory", "lots"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "pbtree: bad memory size 'lots' (want bytes, e.g. 256M or 1G)\n");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("a.pbt")));
}

// 5,000 entries of about 132 bytes each (96 + twice a decimal128 key of 17..19 bytes) in the
// 48 KiB of a 64 KiB budget left beside the chunks in flight: 12 runs, one merge takes them
// all (15 at most).
TEST_F(CliSpill, TinyBudgetSpillsRunsAndBuildsTheSamePages) {
  const std::string in = dir_.write("in.csv", random_bigints(5000, 11));
  auto a = load(dir_.file("a.pbt"), in, {});
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = load(dir_.file("b.pbt"), in, {"--memory", "64K", "--temp-dir", tmp_, "--progress"});
  ASSERT_EQ(b.code, 0) << b.err;
  const auto p = phases(b.err);
  ASSERT_GE(p.size(), 3u);
  EXPECT_EQ(p[p.size() - 2], "load I: sort run 12");
  EXPECT_EQ(p.back(), "load I: merge + build");
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

// 100,000 entries in 64 KiB: 240 runs, more than one merge takes (15), so runs are merged
// into longer ones first (phase "merge").
TEST_F(CliSpill, ManyRunsMergeInPassesAndBuildTheSamePages) {
  const std::string in = dir_.write("in.csv", random_bigints(100000, 12));
  auto a = load(dir_.file("a.pbt"), in, {});
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = load(dir_.file("b.pbt"), in, {"--memory", "64K", "--temp-dir", tmp_, "--progress"});
  ASSERT_EQ(b.code, 0) << b.err;
  const auto p = phases(b.err);
  ASSERT_GE(p.size(), 4u);
  EXPECT_EQ(p[p.size() - 3], "load I: sort run 240");
  EXPECT_EQ(p[p.size() - 2], "load I: merge");
  EXPECT_EQ(p.back(), "load I: merge + build");
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

TEST_F(CliSpill, DescendingUniqueSpilledLoadBuildsTheSamePages) {
  const std::string in = dir_.write("in.csv", random_bigints(20000, 13));
  auto a = load(dir_.file("a.pbt"), in, {"--descending", "--unique"});
  ASSERT_EQ(a.code, 0) << a.err;
  auto b = load(dir_.file("b.pbt"), in,
                {"--descending", "--unique", "--memory", "64K", "--temp-dir", tmp_});
  ASSERT_EQ(b.code, 0) << b.err;
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

// Two segments (integer, varchar(12)) with NULLs, from two columns.
TEST_F(CliSpill, CompoundSpilledLoadBuildsTheSamePages) {
  std::string text;
  for (int i = 0; i < 8000; ++i) {
    text += (i % 97 == 0 ? std::string() : std::to_string(i * 7919 % 1000)) + ",n" +
            std::to_string(i % 113) + "\n";
  }
  const std::string in = dir_.write("in.csv", text);
  auto args = [&](const std::string& db) {
    return std::vector<std::string>{
        "load",     db,  "--index",  "C", "--type",      "integer", "--type",  "varchar(12)",
        "--column", "1", "--column", "2", "--page-size", "4096",    "--input", in};
  };
  auto a = run_args(args(dir_.file("a.pbt")));
  ASSERT_EQ(a.code, 0) << a.err;
  auto bargs = args(dir_.file("b.pbt"));
  for (const char* x : {"--memory", "64K", "--temp-dir"}) bargs.push_back(x);
  bargs.push_back(tmp_);
  auto b = run_args(bargs);
  ASSERT_EQ(b.code, 0) << b.err;
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

TEST_F(CliSpill, AppendRefusesMemory) {
  const std::string in = dir_.write("in.csv", "1\n");
  auto r = run(
      {"load", dir_.file("a.pbt"), "--index", "I", "--append", "--input", in, "--memory", "1G"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("pbtree: --memory applies to building a new index, not --append", 0), 0u)
      << r.err;
}

TEST_F(CliSpill, SuccessLeavesNothingInTheTempDir) {
  const std::string in = dir_.write("in.csv", random_bigints(20000, 14));
  auto r = load(dir_.file("a.pbt"), in, {"--memory", "64K", "--temp-dir", tmp_});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(files_in(tmp_), std::vector<std::string>{});
  EXPECT_EQ(IndexFile::open(dir_.file("a.pbt"))->analyze("I").nodes, 20000u);
}

// Line 15,000 repeats line 3: the first run and the 27th hold them. The message is the
// unbounded one.
TEST_F(CliSpill, DuplicateAcrossRunsNamesBothLinesAndKeepsTheFile) {
  std::string text = random_bigints(20000, 15);
  std::vector<std::string> lines;
  for (size_t s = 0, e; (e = text.find('\n', s)) != std::string::npos; s = e + 1) {
    lines.push_back(text.substr(s, e - s));
  }
  lines[14999] = lines[2];
  text.clear();
  for (const std::string& l : lines) text += l + "\n";
  const std::string in = dir_.write("in.csv", text);
  const std::string db = dir_.file("a.pbt");
  ASSERT_EQ(run({"load", db, "--index", "K", "--type", "integer", "--page-size", "4096", "--input",
                 dir_.write("k.csv", "1\n2\n")})
                .code,
            0);
  const std::string before = read_bytes(db);
  auto unbounded = load(db, in, {"--unique"});
  auto spilled = load(db, in, {"--unique", "--memory", "64K", "--temp-dir", tmp_});
  EXPECT_EQ(spilled.code, 1);
  EXPECT_EQ(spilled.err, "pbtree: " + in + ":15000: unique index I: value " + lines[2] +
                             " appears twice (same as line 3)\n");
  EXPECT_EQ(spilled.err, unbounded.err);
  EXPECT_EQ(read_bytes(db), before);
  EXPECT_EQ(files_in(tmp_), std::vector<std::string>{});
}

TEST_F(CliSpill, SameEntryTwiceAcrossRunsNamesBothLines) {
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += std::to_string(i * 7 % 20000) + "," + std::to_string(i) + "\n";
  text += "21,3\n";  // 21 is on line 4 (i = 3) with record number 3
  const std::string in = dir_.write("in.csv", text);
  auto unbounded = load(dir_.file("a.pbt"), in, {"--recno-column", "2"});
  auto spilled =
      load(dir_.file("b.pbt"), in, {"--recno-column", "2", "--memory", "64K", "--temp-dir", tmp_});
  EXPECT_EQ(spilled.code, 1);
  EXPECT_EQ(spilled.err,
            "pbtree: " + in + ":20001: entry (21, 3) appears twice (same as line 4)\n");
  EXPECT_EQ(spilled.err, unbounded.err);
  EXPECT_FALSE(std::filesystem::exists(dir_.file("b.pbt")));
  EXPECT_EQ(files_in(tmp_), std::vector<std::string>{});
}

// The bad row comes after 17 runs are on disk.
TEST_F(CliSpill, BadRowAfterRunsSpilledKeepsTheFileAndTheTempDirEmpty) {
  std::string text = random_bigints(10000, 16);
  text += "12x\n";
  text += random_bigints(100, 17);
  const std::string in = dir_.write("in.csv", text);
  const std::string db = dir_.file("a.pbt");
  ASSERT_EQ(run({"load", db, "--index", "K", "--type", "integer", "--page-size", "4096", "--input",
                 dir_.write("k.csv", "1\n2\n")})
                .code,
            0);
  const std::string before = read_bytes(db);
  auto r = load(db, in, {"--memory", "64K", "--temp-dir", tmp_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + in +
                       ":10001: column 1: malformed integer '12x' for bigint (expected an optional "
                       "sign and decimal digits)\n");
  EXPECT_EQ(read_bytes(db), before);
  EXPECT_EQ(files_in(tmp_), std::vector<std::string>{});
}

TEST_F(CliSpill, MissingTempDirIsAnErrorAndKeepsTheFile) {
  const std::string in = dir_.write("in.csv", random_bigints(20000, 18));
  auto r = load(dir_.file("a.pbt"), in, {"--memory", "64K", "--temp-dir", dir_.file("nope")});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + dir_.file("nope") +
                       ": cannot create a temporary file: No such file or directory\n");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("a.pbt")));
}

// Fits in one buffer: no temporary file is ever made, even in an unusable --temp-dir.
TEST_F(CliSpill, InputThatFitsNeedsNoTempDir) {
  const std::string in = dir_.write("in.csv", random_bigints(300, 19));
  auto r = load(dir_.file("a.pbt"), in, {"--memory", "64K", "--temp-dir", dir_.file("nope")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(IndexFile::open(dir_.file("a.pbt"))->analyze("I").nodes, 300u);
}

TEST_F(CliSpill, AutoOnSpilledRunsChoosesAsInMemoryAndBuildsTheSamePages) {
  const std::string in = dir_.write("in.csv", testing::numbers(1, 20000));
  auto args = [&](const std::string& db) {
    return std::vector<std::string>{
        "load",        db,     "--index", "I", "--type",    "bigint", "--key-format", "auto",
        "--page-size", "4096", "--input", in,  "--progress"};
  };
  auto a = run_args(args(dir_.file("a.pbt")));
  ASSERT_EQ(a.code, 0) << a.err;
  auto bargs = args(dir_.file("b.pbt"));
  for (const char* x : {"--memory", "64K", "--temp-dir"}) bargs.push_back(x);
  bargs.push_back(tmp_);
  auto b = run_args(bargs);
  ASSERT_EQ(b.code, 0) << b.err;
  auto choice_line = [](const std::string& err) {
    const size_t at = err.find("pbtree: key format ");
    return at == std::string::npos ? std::string() : err.substr(at, err.find('\n', at) - at);
  };
  EXPECT_EQ(choice_line(a.err),
            "pbtree: key format decimal128 (auto: 7.02 vs 12.15 bytes/entry on a 25% sample, "
            "1.73x)");
  EXPECT_EQ(choice_line(b.err), choice_line(a.err));
  const auto p = phases(b.err);
  EXPECT_NE(std::find(p.begin(), p.end(), "load I: sample"), p.end());
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
  EXPECT_EQ(IndexFile::open(dir_.file("b.pbt"))->find_index("I")->def.format,
            KeyFormat::Decimal128);
}

TEST_F(CliSpill, ProgressLinesNamePhasesInOrder) {
  const std::string in = dir_.write("in.csv", random_bigints(2000, 20));
  auto r = load(dir_.file("a.pbt"), in, {"--progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("load I: parse: 0 rows\r", 0), 0u) << r.err;
  EXPECT_EQ(phases(r.err), (std::vector<std::string>{"load I: sort + build"}));
  EXPECT_NE(r.err.find("load I: sort + build: 2,000 / 2,000 rows (100%)"), std::string::npos)
      << r.err;
  const std::string last = "pbtree: built index I (2000 entries)\n";
  ASSERT_GE(r.err.size(), last.size());
  EXPECT_EQ(r.err.substr(r.err.size() - last.size()), last);
}

// Standard input, spilled, through the real binary.
TEST_F(CliSpill, NoProgressOffATerminalWithoutTheFlag) {
  const std::string in = dir_.write("in.csv", random_bigints(2000, 23));
  const int saved = ::dup(2);  // fd 2 on /dev/null: not a terminal even under a terminal
  const int null_fd = ::open("/dev/null", O_WRONLY);
  ::dup2(null_fd, 2);
  ::close(null_fd);
  auto r = load(dir_.file("a.pbt"), in, {"--memory", "64K", "--temp-dir", tmp_});
  ::dup2(saved, 2);
  ::close(saved);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(CliSpill, StandardInputSpillsAndBuildsTheSamePages) {
  const std::string in = dir_.write("in.csv", random_bigints(20000, 21));
  auto a = load(dir_.file("a.pbt"), in, {});
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string cmd = std::string(PBTREE_BIN_DIR) + "/pbtree load " + dir_.file("b.pbt") +
                          " --index I --type bigint --key-format decimal128 --page-size 4096 "
                          "--input - --memory 64K --temp-dir " +
                          tmp_ + " < " + in + " 2> " + dir_.file("err");
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_bytes(dir_.file("err"));
  EXPECT_EQ(read_bytes(dir_.file("err")), "");
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
  EXPECT_EQ(files_in(tmp_), std::vector<std::string>{});
}

// --key-format auto reads standard input once (it used to be refused there).
TEST_F(CliSpill, AutoReadsStandardInputOnce) {
  const std::string in = dir_.write("in.csv", testing::numbers(1, 20000));
  auto a = run({"load", dir_.file("a.pbt"), "--index", "I", "--type", "bigint", "--key-format",
                "auto", "--page-size", "4096", "--input", in});
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string cmd = std::string(PBTREE_BIN_DIR) + "/pbtree load " + dir_.file("b.pbt") +
                          " --index I --type bigint --key-format auto --page-size 4096 "
                          "--input - --memory 64K --temp-dir " +
                          tmp_ + " < " + in + " 2> " + dir_.file("err");
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_bytes(dir_.file("err"));
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

// SIGKILL while runs are merged (phase "merge", before the index file is touched): the run
// file had no name, so --temp-dir is empty, and the index file is byte-identical.
TEST_F(CliSpill, KilledMidMergeLeavesNoTempFileAndTheFileUnchanged) {
  ::pbtree::testing::Watchdog w(300);
  const std::string in = dir_.write("in.csv", random_bigints(400000, 22));
  const std::string db = dir_.file("a.pbt");
  ASSERT_EQ(run({"load", db, "--index", "K", "--type", "integer", "--page-size", "4096", "--input",
                 dir_.write("k.csv", "1\n2\n")})
                .code,
            0);
  const std::string before = read_bytes(db);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string exe = std::string(PBTREE_BIN_DIR) + "/pbtree";
  std::vector<std::string> storage{exe,      "load",       db,        "--index",   "I",
                                   "--type", "bigint",     "--input", in,          "--memory",
                                   "64K",    "--temp-dir", tmp_,      "--progress"};
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string err;
  char buf[4096];
  while (err.find("load I: merge:") == std::string::npos) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status << ": " << err;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_NE(err.find("load I: merge:"), std::string::npos) << err;
  EXPECT_EQ(files_in(tmp_), std::vector<std::string>{});
  EXPECT_EQ(read_bytes(db), before);
}

}  // namespace
}  // namespace pbtree::tools
