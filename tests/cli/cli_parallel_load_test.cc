// `pbtree load --threads` (tools/load_csv_parallel.cc, tools/csv_parallel.h): the CSV is
// parsed in parallel chunks; tiny chunks (PBTREE_LOAD_CHUNK_BYTES) whose edges fall inside
// quoted fields with newlines give the same pages as one serial parse; the pages are the
// same at --threads 1, 2 and 8, in memory and spilled, from a plain file, a .zst file and
// standard input; an error names the first bad file:line and leaves the file unchanged.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <zstd.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::read_bytes;
using testing::run_args;
using testing::ScratchDir;

constexpr uint32_t kPage = 4096;

// `rows` records "<random 63-bit value>,<quoted note>" where every third note holds a
// newline, a comma and a doubled quote (fixed seed).
std::string quoted_rows(uint64_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (uint64_t i = 0; i < rows; ++i) {
    text += std::to_string(static_cast<int64_t>(rng()) >> 1);
    text += i % 3 == 0 ? ",\"line one\nline \"\"two\"\",\nthree\"\n" : ",\"plain\"\n";
  }
  return text;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

class CliParallelLoad : public ::testing::Test {
 protected:
  CliParallelLoad() : dir_(::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

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

  // Pages 1.. of `a` and `b` byte-identical, page counts equal (page 0 holds the file id).
  static void expect_same_pages(const std::string& a, const std::string& b) {
    const std::string x = read_bytes(a), y = read_bytes(b);
    ASSERT_EQ(x.size(), y.size());
    ASSERT_GT(x.size(), kPage);
    for (size_t p = 1; p < x.size() / kPage; ++p) {
      ASSERT_EQ(x.compare(p * kPage, kPage, y, p * kPage, kPage), 0) << "page " << p;
    }
  }

  ScratchDir dir_;
};

// 64-byte chunks: nearly every chunk edge falls inside a quoted field with newlines.
TEST_F(CliParallelLoad, TinyChunksInsideQuotedNewlinesBuildTheSamePages) {
  const std::string in = dir_.write("in.csv", quoted_rows(3000, 1));
  auto a = load(dir_.file("a.pbt"), in, {"--threads", "1"});
  ASSERT_EQ(a.code, 0) << a.err;
  ScopedEnv env("PBTREE_LOAD_CHUNK_BYTES", "64");
  auto b = load(dir_.file("b.pbt"), in, {"--threads", "2"});
  ASSERT_EQ(b.code, 0) << b.err;
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

TEST_F(CliParallelLoad, SamePagesAtOneTwoAndEightThreadsInMemory) {
  const std::string in = dir_.write("in.csv", quoted_rows(20000, 2));
  ScopedEnv env("PBTREE_LOAD_CHUNK_BYTES", "4096");
  for (const char* t : {"1", "2", "8"}) {
    auto r = load(dir_.file(std::string("t") + t + ".pbt"), in, {"--threads", t});
    ASSERT_EQ(r.code, 0) << t << ": " << r.err;
  }
  expect_same_pages(dir_.file("t1.pbt"), dir_.file("t2.pbt"));
  expect_same_pages(dir_.file("t1.pbt"), dir_.file("t8.pbt"));
}

// 64 KiB: the 20,000 entries spill as sorted runs; the same pages as in memory at 1 thread.
TEST_F(CliParallelLoad, SamePagesAtOneTwoAndEightThreadsSpilled) {
  const std::string in = dir_.write("in.csv", quoted_rows(20000, 3));
  auto a = load(dir_.file("a.pbt"), in, {"--threads", "1"});
  ASSERT_EQ(a.code, 0) << a.err;
  for (const char* t : {"1", "2", "8"}) {
    auto r = load(dir_.file(std::string("t") + t + ".pbt"), in,
                  {"--threads", t, "--memory", "64K", "--temp-dir", dir_.file(".")});
    ASSERT_EQ(r.code, 0) << t << ": " << r.err;
    expect_same_pages(dir_.file("a.pbt"), dir_.file(std::string("t") + t + ".pbt"));
  }
}

TEST_F(CliParallelLoad, ZstdInputInTinyChunksBuildsTheSamePages) {
  const std::string text = quoted_rows(5000, 4);
  const std::string in = dir_.write("in.csv", text);
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  const std::string zin = dir_.write("in.csv.zst", z);
  auto a = load(dir_.file("a.pbt"), in, {"--threads", "1"});
  ASSERT_EQ(a.code, 0) << a.err;
  ScopedEnv env("PBTREE_LOAD_CHUNK_BYTES", "100");
  auto b = load(dir_.file("b.pbt"), zin, {"--threads", "8"});
  ASSERT_EQ(b.code, 0) << b.err;
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

// Standard input through the real binary, 8 threads, tiny chunks.
TEST_F(CliParallelLoad, StandardInputInTinyChunksBuildsTheSamePages) {
  const std::string in = dir_.write("in.csv", quoted_rows(5000, 5));
  auto a = load(dir_.file("a.pbt"), in, {"--threads", "1"});
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string cmd = "PBTREE_LOAD_CHUNK_BYTES=77 " + std::string(PBTREE_BIN_DIR) +
                          "/pbtree load " + dir_.file("b.pbt") +
                          " --index I --type bigint --key-format decimal128 --page-size 4096 "
                          "--threads 8 --input - < " +
                          in + " 2> " + dir_.file("err");
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_bytes(dir_.file("err"));
  EXPECT_EQ(read_bytes(dir_.file("err")), "");
  expect_same_pages(dir_.file("a.pbt"), dir_.file("b.pbt"));
}

// Two bad rows in different chunks: the first in input order is named, with its line (the
// quoted newlines before it counted), and the existing file keeps every byte.
TEST_F(CliParallelLoad, FirstBadLineWinsAndTheFileIsUnchanged) {
  std::string text = quoted_rows(2000, 6);  // 667 notes of 3 lines: 3,334 lines
  text += "12x,\"a\nb\"\n";                 // line 3335
  text += quoted_rows(2000, 7);
  text += "zz,\"c\"\n";
  const std::string in = dir_.write("in.csv", text);
  const std::string db = dir_.file("a.pbt");
  auto first = run_args({"load", db, "--index", "J", "--type", "integer", "--page-size", "4096",
                         "--input", dir_.write("one.csv", "1\n2\n")});
  ASSERT_EQ(first.code, 0) << first.err;
  const std::string before = read_bytes(db);
  ScopedEnv env("PBTREE_LOAD_CHUNK_BYTES", "64");
  auto r = load(db, in, {"--threads", "8"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("pbtree: " + in + ":3335: column 1: ", 0), 0u) << r.err;
  EXPECT_EQ(read_bytes(db), before);
}

}  // namespace
}  // namespace pbtree::tools
