// What opening a path that is not a plain writable pbtree file says (issue 30 item 13 and
// smaller things): a FIFO as the database is refused without blocking, and a directory
// where the log cannot be created says that it must be writable for the log. Real `pbtree`
// processes, so a hang is a failed test (killed after 20 s), not a stuck suite.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::numbers;
using testing::read_bytes;
using testing::run;
using testing::ScratchDir;

const std::string kPbtree = std::string(PBTREE_BIN_DIR) + "/pbtree";

struct Outcome {
  int code = -1;  // exit code; -1: killed after the time limit
  std::string err;
};

// Runs pbtree with `args` as user `uid` (-1: unchanged), stderr into `err_path`; kills it
// after 20 s.
Outcome run_pbtree(const std::vector<std::string>& args, const std::string& err_path,
                   int uid = -1) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    if (uid >= 0 && (::setgid(uid) != 0 || ::setuid(uid) != 0)) ::_exit(120);
    std::vector<char*> argv{const_cast<char*>(kPbtree.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kPbtree.c_str(), argv.data());
    ::_exit(121);
  }
  Outcome o;
  int status = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      o.err = read_bytes(err_path);
      return o;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -2;
  o.err = read_bytes(err_path);
  return o;
}

TEST(PageFileOpen, FifoAsTheDatabaseIsRefusedWithoutBlocking) {
  ScratchDir dir("open-fifo");
  const std::string fifo = dir.file("f.pbt");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const char* command : {"verify", "checkpoint"}) {
    Outcome o = run_pbtree({command, fifo}, dir.file("err"));
    EXPECT_EQ(o.code, 1) << command << ": " << o.err;
    EXPECT_EQ(o.err, fmt::format("pbtree: {}: not a regular file\n", fifo)) << command;
  }
  Outcome o = run_pbtree({"insert", fifo, "--index", "I", "1", "1"}, dir.file("err"));
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(o.err, fmt::format("pbtree: {}: not a regular file\n", fifo));
}

TEST(PageFileOpen, FifoIsRefusedWithoutBlockingByStatReportAndImport) {
  // These look for a Firebird database first (firebird/fdb_file.cc), which opened without
  // O_NONBLOCK and so waited forever for a writer to the FIFO.
  ScratchDir dir("open-fifo-stat");
  const std::string fifo = dir.file("f.fdb");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::vector<std::vector<std::string>> commands = {
      {"stat", fifo},
      {"stat", fifo, "--what-if"},
      {"stat", fifo, "--firebird"},
      {"stat", fifo, "--io"},
      {"report", fifo, "-o", dir.file("r.html")},
      {"import", fifo, "--index", "X", dir.file("x.pbt")}};
  for (const auto& command : commands) {
    Outcome o = run_pbtree(command, dir.file("err"));
    EXPECT_EQ(o.code, 1) << command[0] << ": " << o.err;
    EXPECT_EQ(o.err, fmt::format("pbtree: {}: not a regular file\n", fifo)) << command[0];
  }
}

TEST(PageFileOpen, DirectoryWithoutWritePermissionSaysItMustBeWritableForTheLog) {
  if (::geteuid() != 0) FAIL() << "needs root (as CI has) to run pbtree as another user";
  ScratchDir dir("open-rodir");
  const std::string sub = dir.file("ro");
  std::filesystem::create_directory(sub);
  const std::string db = sub + "/x.pbt";
  const std::string csv = dir.write("rows.csv", numbers(1, 10));
  ASSERT_EQ(run({"load", db, "--index", "I", "--type", "integer", "--input", csv}).code, 0);
  ASSERT_EQ(::chmod(db.c_str(), 0666), 0);
  ASSERT_EQ(::chmod(sub.c_str(), 0755), 0);  // nobody may write the file, not the directory
  ASSERT_EQ(::chmod(dir.file("").c_str(), 0755), 0);
  Outcome o = run_pbtree({"insert", db, "--index", "I", "77", "77"}, dir.file("err"), 65534);
  EXPECT_EQ(o.code, 1) << o.err;
  EXPECT_EQ(o.err, fmt::format("pbtree: {}-wal: cannot create the log: Permission denied; the "
                               "directory {}/ must be writable for the log\n",
                               db, sub));
}

}  // namespace
}  // namespace pbtree::tools
