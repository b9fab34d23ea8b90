// Tests of the real `pbtree` binary started with standard descriptors closed (tools/main.cc):
// the index file must never become fd 0 or 2, so a closed stderr does not get progress lines
// written into the database and a closed stdin does not make `--input -` read the database.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"

namespace pbtree {
namespace {

class FdsDir {
 public:
  FdsDir() {
    char tmpl[] = "/tmp/pbtree-fds-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
  }
  ~FdsDir() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

// Runs `pbtree <args> <redirections>` through the shell; returns the exit code.
int run_shell(const std::string& args, const std::string& redirections) {
  const std::string cmd = std::string(PBTREE_BIN_DIR) + "/pbtree " + args + " " + redirections;
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<uint64_t> record_numbers(const std::string& db, const std::string& index) {
  auto f = IndexFile::open(db);
  std::vector<uint64_t> out;
  for (Cursor c = btree_of(*f, index).scan(); c.valid(); c.next()) out.push_back(c.record_number());
  return out;
}

// A database with index A over 1..n and a CSV of 1..m for a second load.
void make_inputs(const FdsDir& d, int n, int m) {
  std::ofstream a(d.file("a.csv"));
  for (int i = 1; i <= n; ++i) a << i << "\n";
  a.close();
  std::ofstream b(d.file("b.csv"));
  for (int i = 1; i <= m; ++i) b << (m - i) << "\n";
  b.close();
  ASSERT_EQ(run_shell("load '" + d.file("db.pbt") + "' --index A --type integer --input '" +
                          d.file("a.csv") + "'",
                      "> /dev/null 2>&1"),
            0);
}

TEST(CliClosedFds, ClosedStderrWithProgressKeepsTheDatabaseIntact) {
  FdsDir d;
  make_inputs(d, 3000, 200000);
  const std::string db = d.file("db.pbt");
  EXPECT_EQ(run_shell("load '" + db + "' --index B --type integer --memory 64K --temp-dir '" +
                          d.file("") + "' --progress --input '" + d.file("b.csv") + "'",
                      "> /dev/null 2>&-"),
            0);
  const std::vector<uint64_t> a = record_numbers(db, "A");
  ASSERT_EQ(a.size(), 3000u);
  EXPECT_EQ(a.front(), 0u);
  EXPECT_EQ(a.back(), 2999u);
  EXPECT_EQ(record_numbers(db, "B").size(), 200000u);
  EXPECT_EQ(run_shell("verify '" + db + "'", "> /dev/null 2>&1"), 0);
}

TEST(CliClosedFds, ClosedStdinReadsAsEmptyInputNotTheDatabase) {
  FdsDir d;
  make_inputs(d, 3000, 10);
  const std::string db = d.file("db.pbt");
  const std::string copy = d.file("copy.pbt");
  ASSERT_EQ(std::system(("cp '" + db + "' '" + copy + "'").c_str()), 0);
  const std::string load = "load '" + db + "' --index B --type integer --input -";
  const int closed = run_shell(load, "<&- > /dev/null 2> '" + d.file("closed.err") + "'");
  const std::string load_copy = "load '" + copy + "' --index B --type integer --input -";
  const int devnull =
      run_shell(load_copy, "< /dev/null > /dev/null 2> '" + d.file("null.err") + "'");
  EXPECT_EQ(closed, devnull);
  std::ifstream e1(d.file("closed.err"));
  std::string s1((std::istreambuf_iterator<char>(e1)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s1.find("malformed"), std::string::npos) << s1;
  EXPECT_EQ(s1.find("\\x"), std::string::npos) << s1;
  EXPECT_EQ(record_numbers(db, "A").size(), 3000u);
}

}  // namespace
}  // namespace pbtree
