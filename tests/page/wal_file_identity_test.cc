// The write-ahead log is tied to its db file by the file id (header page bytes 80..87, log
// header bytes 24..31; docs/FORMAT.md §2.2, §3.2): a committed log left behind by another
// file of the same name is never replayed (set aside on a writable open, ignored on a
// read-only one, with a warning on stderr), creating a new file sets a leftover committed log
// aside, and a file's own committed log is still replayed. A log whose header cannot be read
// but whose frames may be committed (a bad header CRC with frames after it, an unknown
// version) is refused by every open and left byte for byte as it was.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "page/file_header.h"
#include "page/page_file.h"
#include "page/wal.h"
#include "tests/support/cli_test_util.h"

namespace pbtree::tools {
namespace {

using testing::numbers;
using testing::read_bytes;
using testing::run;
using testing::ScratchDir;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

// The file id in the header page of `path`, as 16 hex digits.
std::string file_id_hex(const std::string& path) {
  const std::string b = read_bytes(path);
  return fmt::format("{:016x}", get_u64(reinterpret_cast<const uint8_t*>(b.data()) + 80));
}

class PageWalFileIdentity : public ::testing::Test {
 protected:
  PageWalFileIdentity()
      : dir_(std::string("walid-") +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        db_(dir_.file("x.pbt")),
        log_(Wal::log_path(db_)) {}

  void load(const std::string& db, const std::string& index, int rows) {
    const std::string csv = dir_.write(index + ".csv", numbers(1, rows));
    auto r = run(
        {"load", db, "--index", index, "--type", "integer", "--input", csv, "--page-size", "4096"});
    ASSERT_EQ(r.code, 0) << r.err;
  }

  // Inserts (200000, 1) into index I of db_ and checkpoints; returns the db bytes and the
  // log bytes as a crash right after the commit point would leave them (the committed batch
  // only in the log). The file itself is then closed normally (batch applied, log removed).
  std::pair<std::string, std::string> committed_log() {
    auto f = IndexFile::open(db_, {.writable = true});
    KeyBuffer k;
    const IndexDefinition def = f->find_index("I")->def;
    build_key(def.type, def.format, parse_value(def.type, "200000"), false, k);
    btree_of(*f, "I").insert(k.bytes(), 1);
    f->commit();
    return {read_bytes(db_), read_bytes(log_)};
  }

  // `r` failed on the damaged log `bad` beside the file bytes `db_bytes` with its one-line
  // error, and left both as they were.
  void expect_refused(const testing::CliResult& r, const std::string& bad,
                      const std::string& db_bytes) {
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, fmt::format("pbtree: {}: the log header fails its checksum, and {} bytes "
                                 "after it may hold committed changes: left alone; move it away "
                                 "to open {} without them\n",
                                 log_, bad.size() - kWalHeaderSize, db_));
    EXPECT_TRUE(read_bytes(log_) == bad);
    EXPECT_TRUE(read_bytes(db_) == db_bytes);
  }

  // Runs the CLI with the process's stderr captured (the log warnings go there).
  std::pair<testing::CliResult, std::string> run_capturing(
      std::initializer_list<std::string> args) {
    ::testing::internal::CaptureStderr();
    testing::CliResult r = run(args);
    return {r, ::testing::internal::GetCapturedStderr()};
  }

  ScratchDir dir_;
  std::string db_;
  std::string log_;
};

TEST_F(PageWalFileIdentity, NewFileGetsANonzeroIdThatItsLogCarries) {
  load(db_, "I", 10);
  EXPECT_NE(file_id_hex(db_), "0000000000000000");
  auto [db_bytes, log_bytes] = committed_log();
  ASSERT_EQ(log_bytes.size(), kWalHeaderSize + 2 * (24 + 4096) + 40);              // leaf + header
  EXPECT_EQ(get_u32(reinterpret_cast<const uint8_t*>(log_bytes.data()) + 8), 4u);  // version
  EXPECT_EQ(
      fmt::format("{:016x}", get_u64(reinterpret_cast<const uint8_t*>(log_bytes.data()) + 24)),
      file_id_hex(db_));
}

TEST_F(PageWalFileIdentity, OwnCommittedLogIsReplayed) {
  load(db_, "I", 1000);
  auto [db_bytes, log_bytes] = committed_log();
  // As a crash right after the commit point leaves them: the batch only in the log.
  write_bytes(db_, db_bytes);
  write_bytes(log_, log_bytes);
  auto [r, err] = run_capturing({"find", db_, "--index", "I", "200000"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(err, "");
  EXPECT_EQ(run({"verify", db_}).code, 0);
}

TEST_F(PageWalFileIdentity, LeftoverLogIsSetAsideWhenANewFileIsCreated) {
  load(db_, "I", 1000);
  const std::string log_bytes = committed_log().second;
  std::filesystem::remove(db_);
  write_bytes(log_, log_bytes);
  const std::string csv = dir_.write("small.csv", numbers(1, 10));
  auto [r, err] = run_capturing(
      {"load", db_, "--index", "J", "--type", "integer", "--input", csv, "--page-size", "4096"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(err, "pbtree: warning: " + log_ +
                     ": log left without its file: not replayed, set "
                     "aside as " +
                     log_ + ".aside-1\n");
  EXPECT_FALSE(std::filesystem::exists(log_));
  EXPECT_TRUE(read_bytes(log_ + ".aside-1") == log_bytes);
  auto v = run({"verify", db_});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  EXPECT_EQ(run({"find", db_, "--index", "J", "7"}).out, "6\n");  // record number = 0-based row
}

TEST_F(PageWalFileIdentity, LogOfARenamedFileIsNotSetAsideByANewFileAtTheOldName) {
  load(db_, "I", 1000);
  {
    // A reader's snapshot keeps the insert's batch in the log past the writer's close.
    auto reader = IndexFile::open(db_);
    ASSERT_EQ(run({"insert", db_, "--index", "I", "200000", "77"}).code, 0);
    ASSERT_TRUE(std::filesystem::exists(log_));
    const std::string renamed = dir_.file("renamed.pbt");
    std::filesystem::rename(db_, renamed);
    const std::string csv = dir_.write("small.csv", numbers(1, 10));
    auto [r, err] = run_capturing(
        {"load", db_, "--index", "J", "--type", "integer", "--input", csv, "--page-size", "4096"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "pbtree: " + log_ + ": holds committed changes of " + renamed +
                         " (the file that wrote it, under another name): open that file to "
                         "fold them in, or move the log away; nothing created\n");
    EXPECT_FALSE(std::filesystem::exists(db_));
    EXPECT_TRUE(std::filesystem::exists(log_));
    EXPECT_EQ(run({"find", renamed, "--index", "I", "200000"}).out, "77\n");
  }
  // Its writer folds the log in and removes it; then the name is free for a new file.
  const std::string renamed = dir_.file("renamed.pbt");
  ASSERT_EQ(run({"checkpoint", renamed}).code, 0);
  EXPECT_FALSE(std::filesystem::exists(log_));
  EXPECT_EQ(run({"find", renamed, "--index", "I", "200000"}).out, "77\n");
  load(db_, "J", 10);
}

TEST_F(PageWalFileIdentity, LeftoverLogOfABiggerFileDoesNotBreakANewLoad) {
  load(db_, "I", 100000);
  const std::string log_bytes = committed_log().second;
  std::filesystem::remove(db_);
  write_bytes(log_, log_bytes);
  const std::string csv = dir_.write("small.csv", numbers(1, 10));
  auto [r, err] = run_capturing(
      {"load", db_, "--index", "J", "--type", "integer", "--input", csv, "--page-size", "4096"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto v = run({"verify", db_});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  EXPECT_EQ(IndexFile::open(db_)->page_count(), 3u);
}

TEST_F(PageWalFileIdentity, StaleLogIsIgnoredByAReadOnlyOpen) {
  load(db_, "I", 1000);
  const std::string other = dir_.file("other.pbt");
  load(other, "K", 10);
  const std::string log_bytes = committed_log().second;
  const std::string old_id = file_id_hex(db_);
  // Another file now has the name; the log of the old one is still there.
  const std::string other_bytes = read_bytes(other);
  write_bytes(db_, other_bytes);
  write_bytes(log_, log_bytes);
  auto [r, err] = run_capturing({"find", db_, "--index", "K", "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n");
  EXPECT_EQ(err, "pbtree: warning: " + log_ + ": committed log of another file (file id " + old_id +
                     ", the file has " + file_id_hex(other) + "): ignored\n");
  EXPECT_TRUE(read_bytes(db_) == other_bytes);
  EXPECT_TRUE(read_bytes(log_) == log_bytes);
}

TEST_F(PageWalFileIdentity, StaleLogIsSetAsideByAWritableOpen) {
  load(db_, "I", 1000);
  const std::string other = dir_.file("other.pbt");
  load(other, "K", 10);
  const std::string log_bytes = committed_log().second;
  const std::string old_id = file_id_hex(db_);
  const std::string other_bytes = read_bytes(other);
  write_bytes(db_, other_bytes);
  write_bytes(log_, log_bytes);
  ::testing::internal::CaptureStderr();
  IndexFile::open(db_, {.writable = true}).reset();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "pbtree: warning: " + log_ + ": committed log of another file (file id " + old_id +
                ", the file has " + file_id_hex(other) + "): not replayed, set aside as " + log_ +
                ".aside-1\n");
  EXPECT_FALSE(std::filesystem::exists(log_));
  EXPECT_TRUE(read_bytes(log_ + ".aside-1") == log_bytes);
  EXPECT_TRUE(read_bytes(db_) == other_bytes);
}

// The committed log of committed_log() with byte `at` of its header changed, beside the file
// as the crash left it.
std::string damaged_log(const std::string& log_bytes, size_t at, uint8_t to) {
  std::string b = log_bytes;
  b[at] = static_cast<char>(to);
  return b;
}

TEST_F(PageWalFileIdentity, CommittedLogWithADamagedHeaderIsRefusedByAReader) {
  load(db_, "I", 1000);
  auto [db_bytes, log_bytes] = committed_log();
  const std::string bad = damaged_log(log_bytes, 20, log_bytes[20] ^ 0x01);  // the salt
  write_bytes(db_, db_bytes);
  write_bytes(log_, bad);
  auto r = run({"find", db_, "--index", "I", "200000"});
  EXPECT_EQ(r.out, "");
  expect_refused(r, bad, db_bytes);
}

TEST_F(PageWalFileIdentity, CommittedLogWithADamagedHeaderIsRefusedByAWriter) {
  load(db_, "I", 1000);
  auto [db_bytes, log_bytes] = committed_log();
  const std::string bad = damaged_log(log_bytes, 57, log_bytes[57] ^ 0x80);  // the header CRC
  write_bytes(db_, db_bytes);
  write_bytes(log_, bad);
  const std::string csv = dir_.write("j.csv", numbers(1, 10));
  auto r = run({"load", db_, "--index", "J", "--type", "integer", "--input", csv});
  expect_refused(r, bad, db_bytes);
}

TEST_F(PageWalFileIdentity, DamagedHeaderOfALogWhosePagesAreAllInTheFileIsIgnored) {
  load(db_, "I", 1000);
  const std::string bad = damaged_log(committed_log().second, 20, 0x5A);
  // The file was closed after the commit: its checkpoint put every logged page in place, as a
  // reset of the log torn by a crash leaves it.
  const std::string db_bytes = read_bytes(db_);
  write_bytes(log_, bad);
  auto [r, err] = run_capturing({"find", db_, "--index", "I", "200000"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(err, "pbtree: warning: " + log_ +
                     ": the log header fails its checksum; every page it commits is in the file "
                     "already: ignored\n");
  EXPECT_TRUE(read_bytes(db_) == db_bytes);
}

TEST_F(PageWalFileIdentity, LogOfAnUnknownVersionIsRefused) {
  load(db_, "I", 1000);
  auto [db_bytes, log_bytes] = committed_log();
  const std::string newer = damaged_log(log_bytes, 8, 5);  // version 5, header CRC unchanged
  write_bytes(db_, db_bytes);
  write_bytes(log_, newer);
  auto r = run({"checkpoint", db_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, fmt::format("pbtree: {}: log version 5 is not one this pbtree reads (1 to 4): "
                               "left alone; move it away to open {} without them\n",
                               log_, db_));
  EXPECT_TRUE(read_bytes(log_) == newer);
  EXPECT_TRUE(read_bytes(db_) == db_bytes);
}

TEST_F(PageWalFileIdentity, DamagedHeaderWithNothingAfterItIsNoLog) {
  load(db_, "I", 1000);
  auto [db_bytes, log_bytes] = committed_log();
  // A header cut short of its frames (a log torn while it was created): nothing is stored in it.
  write_bytes(db_, db_bytes);
  write_bytes(log_, damaged_log(log_bytes.substr(0, kWalHeaderSize), 20, log_bytes[20] ^ 0x01));
  auto [r, err] = run_capturing({"find", db_, "--index", "I", "7"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "6\n");
  EXPECT_EQ(err, "");
}

TEST_F(PageWalFileIdentity, LeftoverLogWithADamagedHeaderIsSetAsideWhenANewFileIsCreated) {
  load(db_, "I", 1000);
  const std::string bad = damaged_log(committed_log().second, 20, 0x5A);
  std::filesystem::remove(db_);
  write_bytes(log_, bad);
  const std::string csv = dir_.write("small.csv", numbers(1, 10));
  auto [r, err] = run_capturing(
      {"load", db_, "--index", "J", "--type", "integer", "--input", csv, "--page-size", "4096"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(err, fmt::format("pbtree: warning: {}: log left without its file, the log header "
                             "fails its checksum, and {} bytes after it may hold committed "
                             "changes: not replayed, set aside as {}.aside-1\n",
                             log_, bad.size() - kWalHeaderSize, log_));
  EXPECT_TRUE(read_bytes(log_ + ".aside-1") == bad);
}

}  // namespace
}  // namespace pbtree::tools
