// The typed error kinds of <pbtree/errors.h> (issue 9 build item 5): each
// kind's exact type, fields and message, the CLI exit code of each kind, and
// IndexDefinition's default key format (build item 6).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/io.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/cli_test_util.h"

namespace pbtree {
namespace {

using testing::TempPath;

IndexDefinition bigint_index(const std::string& name, bool unique) {
  IndexDefinition def;
  def.name = name;
  def.type = TypeSpec::parse("bigint");
  def.unique = unique;
  return def;
}

std::vector<uint8_t> bigint_key(int64_t v) {
  KeyBuffer k;
  build_key(TypeSpec::parse("bigint"), KeyFormat::RescaledDouble, Value::exact(v), false, k);
  return {k.bytes().begin(), k.bytes().end()};
}

TEST(FileErrorKinds, UniqueViolationThroughTreeInsertShowsTheValue) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(bigint_index("U", true));
  BTree& tree = btree_of(*f, "U");
  tree.insert(bigint_key(-5), 1000001);
  try {
    tree.insert(bigint_key(-5), 3);
    FAIL() << "duplicate accepted";
  } catch (const DuplicateKeyError& e) {
    EXPECT_EQ(std::string(e.what()), "unique index U: value -5 already exists (record 1000001)");
    EXPECT_EQ(e.index, "U");
    EXPECT_EQ(e.value, "-5");
    EXPECT_EQ(e.record_number, 1000001u);
    EXPECT_EQ(e.tag_a, 0u);
    EXPECT_EQ(e.tag_b, 0u);
  }
}

TEST(FileErrorKinds, EqualPairThroughTreeInsertShowsTheValue) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(bigint_index("I", false));
  BTree& tree = btree_of(*f, "I");
  tree.insert(bigint_key(5), 7);
  try {
    tree.insert(bigint_key(5), 7);
    FAIL() << "duplicate accepted";
  } catch (const DuplicateKeyError& e) {
    EXPECT_EQ(std::string(e.what()), "index I: entry (5, 7) already exists");
    EXPECT_EQ(e.index, "I");
    EXPECT_EQ(e.value, "5");
    EXPECT_EQ(e.record_number, 7u);
  }
}

TEST(FileErrorKinds, UniqueViolationInBulkLoadShowsTheValue) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  EntryBatch batch;
  batch.add(bigint_key(1), 10, 1);
  batch.add(bigint_key(7), 20, 2);
  batch.add(bigint_key(3), 30, 3);
  batch.add(bigint_key(7), 40, 4);
  try {
    f->bulk_load(bigint_index("U", true), batch);
    FAIL() << "duplicate accepted";
  } catch (const DuplicateKeyError& e) {
    EXPECT_EQ(std::string(e.what()), "unique index U: value 7 appears twice (entries 2 and 4)");
    EXPECT_EQ(e.index, "U");
    EXPECT_EQ(e.value, "7");
    EXPECT_EQ(e.record_number, 20u);
    EXPECT_EQ(e.tag_a, 2u);
    EXPECT_EQ(e.tag_b, 4u);
  }
}

TEST(FileErrorKinds, UniqueViolationInInsertBatchShowsTheValue) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  f->create_index(bigint_index("U", true));
  BTree& tree = btree_of(*f, "U");
  tree.insert(bigint_key(-42), 9);
  EntryBatch batch;
  batch.add(bigint_key(1), 10, 1);
  batch.add(bigint_key(-42), 11, 2);
  try {
    tree.insert_batch(batch);
    FAIL() << "duplicate accepted";
  } catch (const DuplicateKeyError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unique index U: value -42 already exists (record 9) (entry 2)");
    EXPECT_EQ(e.index, "U");
    EXPECT_EQ(e.value, "-42");
    EXPECT_EQ(e.record_number, 9u);
    EXPECT_EQ(e.tag_b, 2u);
  }
}

// Flips one byte of the index's root page in a checkpointed file.
uint32_t file_with_damaged_root(const std::string& path) {
  uint32_t root = 0;
  {
    auto f = IndexFile::open_or_create(path, 8192);
    root = f->create_index(bigint_index("I", false)).root_page;
    btree_of(*f, "I").insert(bigint_key(1), 1);
    f->commit();
    EXPECT_TRUE(f->checkpoint());
    f->close();
  }
  int fd = ::open(path.c_str(), O_RDWR);
  EXPECT_GE(fd, 0);
  uint8_t b = 0;
  EXPECT_EQ(::pread(fd, &b, 1, off_t{root} * 8192 + 100), 1);
  b ^= 0xFF;
  EXPECT_EQ(::pwrite(fd, &b, 1, off_t{root} * 8192 + 100), 1);
  ::close(fd);
  return root;
}

TEST(FileErrorKinds, CorruptPageNamesFilePageAndType) {
  TempPath tmp;
  const uint32_t root = file_with_damaged_root(tmp.path());
  auto f = IndexFile::open(tmp.path());
  try {
    btree_of(*f, "I").find(bigint_key(1));
    FAIL() << "damaged page read";
  } catch (const CorruptError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("{}: page {} (b-tree): checksum mismatch", tmp.path(), root));
    EXPECT_EQ(e.file, tmp.path());
    EXPECT_EQ(e.page, int64_t{root});
    EXPECT_EQ(e.page_type, "b-tree");
  }
}

TEST(FileErrorKinds, FailedCommitSyncCarriesErrnoOperationAndFile) {
  TempPath tmp;
  IndexFile::open_or_create(tmp.path(), 8192)->create_index(bigint_index("I", false));
  FaultyIo io;
  auto f = IndexFile::open(tmp.path(), {.writable = true, .io = &io});
  btree_of(*f, "I").insert(bigint_key(1), 1);
  io.arm(FaultyIo::Op::Fdatasync, 1);
  try {
    f->commit();
    FAIL() << "failed sync not reported";
  } catch (const IoError& e) {
    const std::string log = tmp.path() + "-wal";
    EXPECT_EQ(std::string(e.what()), log + ": fdatasync: " + std::strerror(EIO));
    EXPECT_EQ(e.error_number, EIO);
    EXPECT_EQ(e.operation, "fdatasync");
    EXPECT_EQ(e.file, log);
  }
}

TEST(FileErrorKinds, CliExitCodeOfCorruptIs1) {
  TempPath tmp;
  file_with_damaged_root(tmp.path());
  const auto r = tools::testing::run({"scan", tmp.path(), "--index", "I"});
  EXPECT_EQ(r.code, 1);
}

TEST(FileErrorKinds, CliExitCodeOfIoErrorIs1) {
  TempPath tmp;
  IndexFile::open_or_create(tmp.path(), 8192)->create_index(bigint_index("I", false));
  // The log path taken by a directory: opening it for writing fails with an IoError.
  std::filesystem::create_directory(tmp.path() + "-wal");
  const auto r = tools::testing::run({"insert", tmp.path(), "--index", "I", "1", "1"});
  std::filesystem::remove(tmp.path() + "-wal");
  EXPECT_EQ(r.code, 1);
}

TEST(FileIndexDefinitionDefaults, FormatIsTheTypesDefault) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  IndexDefinition def;
  def.name = "B";
  def.type = TypeSpec::parse("bigint");
  EXPECT_EQ(def.format, KeyFormat::TypeDefault);
  const IndexInfo info = f->create_index(def);
  EXPECT_EQ(info.def.format, KeyFormat::RescaledDouble);
  EXPECT_EQ(f->find_index("B")->def.format, KeyFormat::RescaledDouble);
}

TEST(FileIndexDefinitionDefaults, ExplicitWrongFormatIsRefused) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  IndexDefinition def = bigint_index("B", false);
  def.format = KeyFormat::Double;
  try {
    f->create_index(def);
    FAIL() << "double format accepted for bigint";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "key format double cannot hold every value of bigint; allowed: rescaled-double, "
              "decimal128, bcd");
  }
}

}  // namespace
}  // namespace pbtree
