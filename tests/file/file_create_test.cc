// Creation of a file (issue #10 item 3, file/file_create.h): a path holds either no file or a
// valid one. A second creator never replaces the first's file, a failed creation leaves
// nothing (no file, no temporary), and what a creator killed right after creating its file
// leaves (a 0-byte temporary beside the path) blocks no later command.
#include "file/file_create.h"

#include <gtest/gtest.h>
#include <pbtree/index_file.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/cli_test_util.h"
#include "tests/support/crash_ops.h"

namespace pbtree::tools::testing {
namespace {

IndexDefinition index_named(const std::string& name) {
  IndexDefinition d = crash::index_definition();
  d.name = name;
  return d;
}

void load_index(IndexFile& f, const std::string& name, int64_t entries) {
  EntryBatch b;
  for (int64_t i = 0; i < entries; ++i) b.add(crash::key_of(i), static_cast<uint64_t>(i), 0);
  f.bulk_load(index_named(name), b);
}

// Names in the directory of `path` (sorted), to see what a creation left.
std::vector<std::string> directory_names(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class FileCreate : public ::testing::Test {
 protected:
  FileCreate() : dir_("create"), db_(dir_.file("n.pbt")) {}
  ScratchDir dir_;
  std::string db_;
};

TEST_F(FileCreate, CreatedFileHoldsWhatTheFillPutIn) {
  ASSERT_TRUE(create_file_with(db_, 4096, [](IndexFile& f) { load_index(f, "A", 1000); }));
  EXPECT_EQ(directory_names(db_), std::vector<std::string>{"n.pbt"});
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "OK: " + db_ + ": 1 index, 6 pages (2 fixed, 4 b-tree, 0 free), 1000 entries\n");
}

TEST_F(FileCreate, SecondCreatorDoesNotReplaceTheFirst) {
  bool inner = false;
  // While this creator fills its file, another one creates the path first.
  const bool outer = create_file_with(db_, 4096, [&](IndexFile& f) {
    inner = create_file_with(db_, 4096, [](IndexFile& g) { load_index(g, "FIRST", 10); });
    load_index(f, "SECOND", 20);
  });
  EXPECT_TRUE(inner);
  EXPECT_FALSE(outer);
  auto f = IndexFile::open(db_);
  ASSERT_EQ(f->indexes().size(), 1u);
  EXPECT_EQ(f->indexes()[0].def.name, "FIRST");
  EXPECT_EQ(directory_names(db_), std::vector<std::string>{"n.pbt"});
}

TEST_F(FileCreate, OpenOrCreateOpensTheFileAnotherCreatorPublished) {
  ASSERT_TRUE(create_file_with(db_, 8192, [](IndexFile& f) { load_index(f, "FIRST", 10); }));
  auto f = IndexFile::open_or_create(db_, 0);
  EXPECT_EQ(f->page_size(), 8192u);
  ASSERT_EQ(f->indexes().size(), 1u);
}

TEST_F(FileCreate, FailedFillLeavesNoFileAndNoTemporary) {
  EXPECT_THROW(create_file_with(db_, 4096,
                                [](IndexFile& f) {
                                  load_index(f, "A", 100);
                                  throw std::runtime_error("fill failed");
                                }),
               std::runtime_error);
  EXPECT_EQ(directory_names(db_), std::vector<std::string>{});
}

TEST_F(FileCreate, FailedLoadOfANewFileLeavesNoFileAndNoTemporary) {
  const std::string csv = dir_.write("dup.csv", "1\n1\n");
  auto r = run({"load", db_, "--index", "U", "--type", "bigint", "--unique", "--input", csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(directory_names(db_), std::vector<std::string>{"dup.csv"});
}

// A creator killed right after it created its file leaves a 0-byte temporary (never a 0-byte
// or header-less file at the path): the next load creates the file as if nothing happened.
TEST_F(FileCreate, CrashRightAfterCreationBlocksNothing) {
  const std::string leftover = temporary_prefix(db_) + "4242-00000000deadbeef";
  dir_.write(std::filesystem::path(leftover).filename().string(), "");
  EXPECT_FALSE(std::filesystem::exists(db_));
  const std::string csv = dir_.write("k.csv", "1\n2\n3\n");
  auto r = run({"load", db_, "--index", "K", "--type", "bigint", "--input", csv});
  ASSERT_EQ(r.code, 0) << r.err;
  auto v = run({"verify", db_});
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_EQ(run({"find", db_, "--index", "K", "2"}).out, "1\n");
  EXPECT_TRUE(std::filesystem::exists(leftover));  // another creator's: not ours to remove
}

// A path whose directory is missing is refused by that path, not the temporary's name.
TEST_F(FileCreate, MissingDirectoryIsNamedByThePath) {
  const std::string csv = dir_.write("a.csv", "1\n2\n");
  const std::string path = dir_.file("nodir") + "/x.pbt";
  auto r = run({"load", path, "--index", "I", "--type", "bigint", "--input", csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + path + ": cannot create: the directory " + dir_.file("nodir") +
                       " does not exist\n");
  EXPECT_EQ(directory_names(db_), std::vector<std::string>{"a.csv"});
}

// A symbolic link to nothing is not a file another process created: the load says what it is
// and leaves the link as it was.
TEST_F(FileCreate, DanglingSymbolicLinkIsRefusedByWhatItIs) {
  const std::string csv = dir_.write("a.csv", "1\n2\n");
  std::filesystem::create_symlink("missing/y.pbt", db_);
  auto r = run({"load", db_, "--index", "I", "--type", "bigint", "--input", csv});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "pbtree: " + db_ +
                       ": cannot create: a symbolic link to missing/y.pbt, which does not exist "
                       "(make the file there, or remove the link)\n");
  EXPECT_EQ(directory_names(db_), (std::vector<std::string>{"a.csv", "n.pbt"}));
  EXPECT_EQ(std::filesystem::read_symlink(db_), "missing/y.pbt");
}

}  // namespace
}  // namespace pbtree::tools::testing
