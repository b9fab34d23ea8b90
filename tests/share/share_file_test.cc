// Sharing one file between IndexFile objects (each its own open file description, so they
// lock each other out exactly as processes do; page/file_lock.h): one writer, snapshot
// readers, deferred checkpoints, explicit commit and close, rollback by the destructor, and
// the loop guard counting pages only the pool holds (issue 9 items 1-5).
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/file_lock.h"
#include "page/io.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

const TypeSpec kBigint = TypeSpec::parse("bigint");

std::vector<uint8_t> key_of(int64_t v) {
  KeyBuffer k;
  build_key(kBigint, default_key_format(kBigint), parse_value(kBigint, std::to_string(v)), false,
            k);
  return {k.bytes().begin(), k.bytes().end()};
}

// A new file with an empty unique bigint index "I", closed.
void make_file(const std::string& path, uint32_t page_size = 8192) {
  auto f = IndexFile::open_or_create(path, page_size);
  IndexDefinition def;
  def.name = "I";
  def.type = kBigint;
  def.format = default_key_format(kBigint);
  def.unique = true;
  f->create_index(def);
  f->close();
}

void insert_range(IndexFile& f, int64_t from, int64_t to) {
  BTree& t = btree_of(f, "I");
  for (int64_t v = from; v <= to; ++v) t.insert(key_of(v), static_cast<uint64_t>(v));
}

uint64_t count(IndexFile& f) {
  uint64_t n = 0;
  for (Cursor c = btree_of(f, "I").scan(); c.valid(); c.next()) ++n;
  return n;
}

uint64_t count_in(const std::string& path) {
  auto f = IndexFile::open(path);
  return count(*f);
}

TEST(ShareFile, SecondWriterGetsLockedErrorNamingTheFile) {
  TempPath tmp;
  make_file(tmp.path());
  auto writer = IndexFile::open(tmp.path(), {.writable = true});
  try {
    IndexFile::open(tmp.path(), {.writable = true, .busy_timeout_ms = 0});
    FAIL() << "a second writer was let in";
  } catch (const LockedError& e) {
    EXPECT_EQ(e.file, tmp.path());
    EXPECT_EQ(std::string(e.what()), tmp.path() +
                                         ": locked: another writer has the file open; "
                                         "a busy timeout waits for it (pbtree "
                                         "--busy-timeout MS)");
  }
}

TEST(ShareFile, BusyTimeoutWaitsUntilTheWriterCloses) {
  TempPath tmp;
  make_file(tmp.path());
  auto writer = IndexFile::open(tmp.path(), {.writable = true});
  insert_range(*writer, 1, 10);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    writer->close();
  });
  auto second = IndexFile::open(tmp.path(), {.writable = true, .busy_timeout_ms = 20000});
  closer.join();
  EXPECT_EQ(count(*second), 10u);
}

TEST(ShareFile, ReaderKeepsItsSnapshotWhileTheWriterCommits) {
  TempPath tmp;
  make_file(tmp.path());
  auto writer = IndexFile::open(tmp.path(), {.writable = true});
  insert_range(*writer, 1, 100);
  writer->commit();
  auto reader = IndexFile::open(tmp.path());
  insert_range(*writer, 101, 300);
  writer->commit();
  EXPECT_EQ(count(*reader), 100u);
  EXPECT_EQ(count_in(tmp.path()), 300u);
}

TEST(ShareFile, CheckpointWaitsForTheLastReaderOfAnOlderSnapshot) {
  TempPath tmp;
  make_file(tmp.path());
  auto writer = IndexFile::open(tmp.path(), {.writable = true});
  insert_range(*writer, 1, 50);
  writer->commit();
  auto reader = IndexFile::open(tmp.path());
  insert_range(*writer, 51, 80);
  EXPECT_FALSE(writer->checkpoint(0));
  EXPECT_GT(writer->log_committed_frames(), 0u);
  reader.reset();
  EXPECT_TRUE(writer->checkpoint(0));
  EXPECT_EQ(writer->log_committed_frames(), 0u);
  writer->close();
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "-wal"));
  EXPECT_EQ(count_in(tmp.path()), 80u);
}

TEST(ShareFile, DestructorRollsBackWhatWasNotCommitted) {
  TempPath tmp;
  make_file(tmp.path());
  {
    auto f = IndexFile::open(tmp.path(), {.writable = true});
    insert_range(*f, 1, 10);
    f->commit();
    insert_range(*f, 11, 20);
  }
  EXPECT_EQ(count_in(tmp.path()), 10u);
}

TEST(ShareFile, DestructorRollsBackTheSameWayWhenAnExceptionLeavesTheScope) {
  TempPath tmp;
  make_file(tmp.path());
  try {
    auto f = IndexFile::open(tmp.path(), {.writable = true});
    insert_range(*f, 1, 10);
    f->commit();
    insert_range(*f, 11, 20);
    throw std::runtime_error("leave");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(count_in(tmp.path()), 10u);
}

TEST(ShareFile, CloseKeepsWhatWasNotYetCommitted) {
  TempPath tmp;
  make_file(tmp.path());
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  insert_range(*f, 1, 25);
  f->close();
  EXPECT_EQ(count_in(tmp.path()), 25u);
}

// The fdatasync calls of close() after 1000 committed and 1000 uncommitted inserts, as
// "fdatasync <path>" in order (a dry run).
std::vector<std::string> syncs_of_close() {
  TempPath tmp;
  make_file(tmp.path());
  FaultyIo io;
  auto f = IndexFile::open(tmp.path(), {.writable = true, .io = &io});
  insert_range(*f, 1, 1000);
  f->commit();
  insert_range(*f, 1001, 2000);
  io.clear_trace();
  f->close();
  std::vector<std::string> out;
  for (const std::string& t : io.trace()) {
    if (t.rfind("fdatasync ", 0) != 0) continue;
    out.push_back(t.find("-wal") != t.npos ? "fdatasync log" : "fdatasync db");
  }
  return out;
}

// The `nth` fdatasync of close() fails: close() throws, and the reopened file equals the last
// commit that succeeded (`expected` entries).
void close_with_failing_sync(uint64_t nth, uint64_t expected) {
  TempPath tmp;
  make_file(tmp.path());
  {
    FaultyIo io;
    auto f = IndexFile::open(tmp.path(), {.writable = true, .io = &io});
    insert_range(*f, 1, 1000);
    f->commit();
    insert_range(*f, 1001, 2000);
    io.arm(FaultyIo::Op::Fdatasync, nth);
    EXPECT_THROW(f->close(), IoError);
    EXPECT_TRUE(io.fired());
  }
  auto again = IndexFile::open(tmp.path(), {.writable = true});
  EXPECT_EQ(count(*again), expected);
  EXPECT_EQ(btree_of(*again, "I").verify().entries, expected);
}

// close() syncs: the checkpoint of the first commit (file, then the emptied log) before the
// new batch, the commit point of the second, then its checkpoint (file, log).
TEST(ShareFile, CloseSyncsTheLogAtTheCommitPointThenTheFileAtTheCheckpoint) {
  EXPECT_EQ(syncs_of_close(),
            (std::vector<std::string>{"fdatasync db", "fdatasync log", "fdatasync log",
                                      "fdatasync db", "fdatasync log"}));
}

TEST(ShareFile, FailingCommitSyncInCloseThrowsAndReopenHasTheLastCommit) {
  close_with_failing_sync(3, 1000);
}

TEST(ShareFile, FailingFinalCheckpointSyncInCloseThrowsAndReopenHasTheLastCommit) {
  close_with_failing_sync(4, 2000);
}

TEST(ShareFile, FailingEarlierCheckpointSyncInCloseThrowsAndReopenHasTheLastCommit) {
  close_with_failing_sync(1, 1000);
}

TEST(ShareFile, ReadOnlyFileRefusesCommitAndCheckpointWithReadOnlyError) {
  TempPath tmp;
  make_file(tmp.path());
  auto f = IndexFile::open(tmp.path());
  EXPECT_THROW(f->checkpoint(0), ReadOnlyError);
}

// Issue 9 item 3: a scan before any commit walks more leaves than the file has pages.
TEST(ShareFile, ScanBeforeTheFirstCommitReturnsEveryEntryOfAFreshIndex) {
  const int64_t n = std::getenv("PBTREE_SHARE_FULL") ? 1000000 : 300000;
  TempPath tmp;
  make_file(tmp.path(), 4096);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  insert_range(*f, 1, n);
  EXPECT_EQ(btree_of(*f, "I").verify().entries, static_cast<uint64_t>(n));
  EXPECT_EQ(count(*f), static_cast<uint64_t>(n));
  f->commit();
  EXPECT_EQ(count(*f), static_cast<uint64_t>(n));
}

}  // namespace
}  // namespace pbtree
