// Tests of `pbtree load --input -` (tools/csv_reader.cc StdinSource): the real binary reads
// plain and zstd-compressed CSV from standard input, builds the same index as from a file,
// and names standard input "<stdin>" in errors.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"

namespace pbtree {
namespace {

class StdinDir {
 public:
  StdinDir() {
    char tmpl[] = "/tmp/pbtree-stdin-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
  }
  ~StdinDir() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Runs `pbtree <args> < input 2> err`; returns the exit code.
int run_with_stdin(const std::string& args, const std::string& input, const std::string& err) {
  const std::string cmd = std::string(PBTREE_BIN_DIR) + "/pbtree " + args + " < '" + input +
                          "' 2> '" + err + "' > /dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::pair<std::vector<uint8_t>, uint64_t>> entries(const std::string& db) {
  auto f = IndexFile::open(db);
  std::vector<std::pair<std::vector<uint8_t>, uint64_t>> out;
  for (Cursor c = btree_of(*f, "I").scan(); c.valid(); c.next()) {
    out.emplace_back(std::vector<uint8_t>(c.key().begin(), c.key().end()), c.record_number());
  }
  return out;
}

std::string csv_text() {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string((i * 7919) % 100003 - 50000) + "\n";
  return text;
}

TEST(CliStdin, PlainStandardInputBuildsTheSameIndexAsTheFile) {
  StdinDir d;
  write_file(d.file("in.csv"), csv_text());
  ASSERT_EQ(run_with_stdin("load " + d.file("a.pbt") + " --index I --type bigint --input -",
                           d.file("in.csv"), d.file("err")),
            0)
      << read_all(d.file("err"));
  ASSERT_EQ(run_with_stdin(
                "load " + d.file("b.pbt") + " --index I --type bigint --input " + d.file("in.csv"),
                "/dev/null", d.file("err")),
            0);
  const auto a = entries(d.file("a.pbt"));
  EXPECT_EQ(a.size(), 5000u);
  EXPECT_EQ(a, entries(d.file("b.pbt")));
}

TEST(CliStdin, ZstdStandardInputIsRecognizedByItsMagic) {
  StdinDir d;
  const std::string text = csv_text();
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  write_file(d.file("in.csv.zst"), z);
  write_file(d.file("in.csv"), text);
  ASSERT_EQ(run_with_stdin("load " + d.file("a.pbt") + " --index I --type bigint --input -",
                           d.file("in.csv.zst"), d.file("err")),
            0)
      << read_all(d.file("err"));
  ASSERT_EQ(run_with_stdin(
                "load " + d.file("b.pbt") + " --index I --type bigint --input " + d.file("in.csv"),
                "/dev/null", d.file("err")),
            0);
  EXPECT_EQ(entries(d.file("a.pbt")), entries(d.file("b.pbt")));
}

TEST(CliStdin, ErrorsNameStandardInputWithTheLine) {
  StdinDir d;
  write_file(d.file("bad.csv"), "1\n2\nx3\n");
  EXPECT_EQ(run_with_stdin("load " + d.file("a.pbt") + " --index I --type bigint --input -",
                           d.file("bad.csv"), d.file("err")),
            1);
  EXPECT_NE(read_all(d.file("err")).find("<stdin>:3: "), std::string::npos)
      << read_all(d.file("err"));
}

TEST(CliStdin, AppendReadsStandardInput) {
  StdinDir d;
  write_file(d.file("a.csv"), "10\n20\n");
  write_file(d.file("b.csv"), "15\n5\n");
  ASSERT_EQ(run_with_stdin(
                "load " + d.file("a.pbt") + " --index I --type bigint --input " + d.file("a.csv"),
                "/dev/null", d.file("err")),
            0);
  ASSERT_EQ(run_with_stdin("load " + d.file("a.pbt") + " --index I --append --input -",
                           d.file("b.csv"), d.file("err")),
            0)
      << read_all(d.file("err"));
  EXPECT_EQ(entries(d.file("a.pbt")).size(), 4u);
}

}  // namespace
}  // namespace pbtree
