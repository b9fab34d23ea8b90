// Input limits (issue #10 item 8): a CSV field longer than any key (page_size / 4 bytes) is
// refused as soon as the reader sees it, with only its first 80 bytes in the message; the
// reader's buffer never grows past its record limit; a .zst of 2 GB of NUL bytes without a
// newline (built here by streaming compression) fails with that error and bounded memory
// (the CLI runs as a child process and its peak RSS is read from getrusage).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_test_util.h"
#include "tests/support/watchdog.h"
#include "tools/csv_reader.h"

namespace pbtree::tools::testing {
namespace {

using ::pbtree::testing::Watchdog;

std::string error_of(CsvReader& r) {
  try {
    while (r.next()) {
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CliCsvLimits, FieldOverItsLimitIsRefusedWithItsFirst80Bytes) {
  std::string text = "short,1\n" + std::string(100, 'x') + ",2\n";
  CsvReader r = CsvReader::from_string(text, "t.csv");
  r.limit_field(0, 10, "why");
  EXPECT_EQ(error_of(r), "t.csv:2: column 1: field longer than 10 bytes (why): starts '" +
                             std::string(80, 'x') + "'");
}

TEST(CliCsvLimits, QuotedFieldAtItsLimitIsRead) {
  CsvReader r = CsvReader::from_string("\"0123456789\",x\n", "t.csv");
  r.limit_field(0, 10, "why");
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.field(0), "0123456789");
}

TEST(CliCsvLimits, OtherColumnsAreNotLimitedByTheFieldLimit) {
  const std::string wide(5000, 'w');
  CsvReader r = CsvReader::from_string("1," + wide + "\n", "t.csv");
  r.limit_field(0, 10, "why");
  ASSERT_TRUE(r.next());
  EXPECT_EQ(r.field(1), wide);
}

TEST(CliCsvLimits, NonPrintableBytesAreShownEscaped) {
  std::string text(20, '\0');
  text[1] = '\x7F';
  CsvReader r = CsvReader::from_string(text, "t.csv");
  r.limit_field(0, 4, "why");
  std::string shown;
  for (int i = 0; i < 20; ++i) shown += i == 1 ? "\\x7F" : "\\x00";
  EXPECT_EQ(error_of(r),
            "t.csv:1: column 1: field longer than 4 bytes (why): starts '" + shown + "'");
}

TEST(CliCsvLimits, RecordOverTheRecordLimitIsRefused) {
  const size_t limit = size_t{2} << 20;
  CsvReader r = CsvReader::from_string(std::string(3 << 20, 'y'), "t.csv");
  r.limit_record(limit);
  EXPECT_EQ(error_of(r),
            "t.csv:1: record longer than 2097152 bytes (the longest record this "
            "reader takes): starts '" +
                std::string(80, 'y') + "'");
}

class CliInputLimits : public ::testing::Test {
 protected:
  CliInputLimits() : dir_("limits"), db_(dir_.file("t.pbt")) {}

  // Runs build/bin/pbtree ARGS as a child of pbtree-rss-child (tests/support/rss_child.cc,
  // which says why); returns its exit code, stderr and peak resident set in KiB.
  struct Run {
    int code;
    std::string err;
    long max_rss_kib;
  };
  Run run_process(const std::vector<std::string>& args) {
    const std::string helper = std::string(PBTREE_BIN_DIR) + "/pbtree-rss-child";
    const std::string exe = std::string(PBTREE_BIN_DIR) + "/pbtree";
    const std::string err_path = dir_.file("stderr.txt");
    const std::string rss_path = dir_.file("rss.txt");
    std::vector<std::string> storage{helper, rss_path, exe};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 2);
      ::execv(helper.c_str(), argv.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "pbtree-rss-child failed";
    int code = -1;
    long rss = -1;
    std::istringstream(read_bytes(rss_path)) >> code >> rss;
    return {code, read_bytes(err_path), rss};
  }

  // `out` gets `total` bytes of NULs in one zstd frame, compressed while streaming.
  static void write_zst_of_nuls(const std::string& out, uint64_t total) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
    std::vector<char> in(size_t{1} << 20, '\0');
    std::vector<char> buf(ZSTD_CStreamOutSize());
    std::ofstream f(out, std::ios::binary);
    for (uint64_t done = 0; done < total;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(in.size(), total - done));
      done += n;
      ZSTD_inBuffer input{in.data(), n, 0};
      const ZSTD_EndDirective mode = done == total ? ZSTD_e_end : ZSTD_e_continue;
      for (;;) {
        ZSTD_outBuffer output{buf.data(), buf.size(), 0};
        const size_t left = ZSTD_compressStream2(cctx, &output, &input, mode);
        ASSERT_FALSE(ZSTD_isError(left));
        f.write(buf.data(), static_cast<std::streamsize>(output.pos));
        if (mode == ZSTD_e_end ? left == 0 : input.pos == input.size) break;
      }
    }
    ZSTD_freeCCtx(cctx);
  }

  ScratchDir dir_;
  std::string db_;
};

TEST_F(CliInputLimits, HugeFieldIsRefusedWithItsFirst80Bytes) {
  Watchdog w(300);
  const std::string in = dir_.file("huge.csv");
  {
    std::ofstream f(in, std::ios::binary);
    const std::string chunk(1 << 20, 'z');
    for (int i = 0; i < 20; ++i) f << chunk;  // one 20 MiB field
    f << "\n";
  }
  auto r = run({"load", db_, "--index", "A", "--type", "varchar(100)", "--page-size", "4096",
                "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + in +
                       ":1: column 1: field longer than 1024 bytes (keys of 4096-byte pages are "
                       "shorter than 1024 bytes): starts '" +
                       std::string(80, 'z') + "'\n");
}

TEST_F(CliInputLimits, TwoGigabytesOfNulsWithoutANewlineFailWithBoundedMemory) {
  Watchdog w(600);
  const std::string in = dir_.file("nuls.csv.zst");
  write_zst_of_nuls(in, uint64_t{2} << 30);
  std::string shown;
  for (int i = 0; i < 80; ++i) shown += "\\x00";
  Run r = run_process({"load", db_, "--index", "A", "--type", "integer", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + in +
                       ":1: column 1: field longer than 2048 bytes (keys of 8192-byte pages are "
                       "shorter than 2048 bytes): starts '" +
                       shown + "'\n");
  EXPECT_LT(r.max_rss_kib, 256 * 1024) << "peak RSS of the load";
  std::printf("2 GiB of NULs, value column: peak RSS %ld KiB\n", r.max_rss_kib);
  EXPECT_FALSE(std::filesystem::exists(db_));
}

// The value in column 2: column 1 (the NULs) has no field limit, so the record limit stops it.
TEST_F(CliInputLimits, TwoGigabytesOfNulsInAnUnlimitedColumnStopAtTheRecordLimit) {
  Watchdog w(600);
  const std::string in = dir_.file("nuls.csv.zst");
  write_zst_of_nuls(in, uint64_t{2} << 30);
  std::string shown;
  for (int i = 0; i < 80; ++i) shown += "\\x00";
  Run r = run_process(
      {"load", db_, "--index", "A", "--type", "integer", "--column", "2", "--input", in});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + in +
                       ":1: record longer than 67108864 bytes (the longest record this reader "
                       "takes): starts '" +
                       shown + "'\n");
  EXPECT_LT(r.max_rss_kib, 512 * 1024) << "peak RSS of the load";
  std::printf("2 GiB of NULs, other column: peak RSS %ld KiB\n", r.max_rss_kib);
}

}  // namespace
}  // namespace pbtree::tools::testing
