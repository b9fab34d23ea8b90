// Write-ahead log under PageFile (page/wal.h): writes stay in the log until a checkpoint,
// checkpoint cost counters, recovery of a committed batch, discarding of uncommitted or torn
// ones, the read-only overlay, and refusal to go on after a failure.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "file/index_root.h"
#include "page/file_header.h"
#include "page/io.h"
#include "page/page_file.h"
#include "page/wal.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

constexpr uint32_t kPs = 4096;

// A db with pages 0..4, page p filled with byte `base + p` after the 16-byte page header.
void make_db(const std::string& path, uint8_t base) {
  PageFile f = PageFile::create(path, kPs);
  std::vector<uint8_t> page(kPs);
  for (uint32_t p = 0; p < 5; ++p) {
    std::memset(page.data(), base + p, kPs);
    std::memset(page.data(), 0, kPageHeaderSize);
    page[0] = static_cast<uint8_t>(PageType::Btree);
    f.write(p, page.data());
  }
  f.sync();
}

void fill(std::vector<uint8_t>& page, uint8_t byte) {
  std::memset(page.data(), byte, kPs);
  std::memset(page.data(), 0, kPageHeaderSize);
  page[0] = static_cast<uint8_t>(PageType::Btree);
}

// Byte 100 of page `p` read straight from the db file (no log).
uint8_t raw_byte(const std::string& path, uint32_t p) {
  int fd = ::open(path.c_str(), O_RDONLY);
  uint8_t b = 0;
  EXPECT_EQ(::pread(fd, &b, 1, static_cast<off_t>(p) * kPs + 100), 1);
  ::close(fd);
  return b;
}

// Byte 100 of page `p` through a fresh PageFile (recovery included).
uint8_t page_byte(const std::string& path, uint32_t p, bool writable = true) {
  PageFile f = PageFile::open(path, writable);
  f.set_page_size(kPs);
  std::vector<uint8_t> page(kPs);
  f.read(p, page.data());
  return page[100];
}

uint64_t log_size(const std::string& path) {
  return std::filesystem::file_size(Wal::log_path(path));
}

// Header filler for checkpoints: type 1, byte 100 = 0xEE.
void header(const CommitStats&, uint8_t* page) {
  page[0] = static_cast<uint8_t>(PageType::Header);
  page[100] = 0xEE;
}

struct WalFile {
  explicit WalFile(const std::string& path, Io& io = posix_io())
      : file(PageFile::open(path, true, io)) {
    file.set_page_size(kPs);
    file.enable_wal();
  }
  void put(uint32_t p, uint8_t byte) {
    std::vector<uint8_t> page(kPs);
    fill(page, byte);
    file.write(p, page.data());
  }
  PageFile file;
};

TEST(PageWalLog, WritesStayInTheLogUntilTheCommittedBatchIsApplied) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  WalFile w(tmp.path());
  EXPECT_EQ(log_size(tmp.path()), kWalHeaderSize);
  w.put(2, 0xA2);
  EXPECT_EQ(raw_byte(tmp.path(), 2), 0x12);
  std::vector<uint8_t> page(kPs);
  w.file.read(2, page.data());
  EXPECT_EQ(page[100], 0xA2);
  EXPECT_EQ(log_size(tmp.path()), kWalHeaderSize + 24 + kPs);
  w.file.commit(1, 5, header);
  // Committed: header frame and commit record appended, nothing in place yet.
  EXPECT_EQ(log_size(tmp.path()), kWalHeaderSize + 2 * (24 + kPs) + 40);
  EXPECT_TRUE(w.file.wal()->holds_committed_batch());
  EXPECT_EQ(w.file.wal()->pending_pages(), 0u);
  EXPECT_EQ(raw_byte(tmp.path(), 2), 0x12);
  EXPECT_EQ(raw_byte(tmp.path(), 0), 0x10);
  w.file.read(0, page.data());
  EXPECT_EQ(page[100], 0xEE);
  w.file.wal()->checkpoint();
  EXPECT_FALSE(w.file.wal()->holds_committed_batch());
  EXPECT_EQ(raw_byte(tmp.path(), 2), 0xA2);
  EXPECT_EQ(raw_byte(tmp.path(), 0), 0xEE);
  EXPECT_EQ(log_size(tmp.path()), kWalHeaderSize);
}

TEST(PageWalLog, NextWriteAppliesTheCommittedBatchFirst) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  WalFile w(tmp.path());
  w.put(2, 0xA2);
  w.file.commit(1, 5, header);
  w.put(3, 0xA3);
  EXPECT_EQ(raw_byte(tmp.path(), 2), 0xA2);
  EXPECT_EQ(raw_byte(tmp.path(), 0), 0xEE);
  EXPECT_EQ(raw_byte(tmp.path(), 3), 0x13);
  EXPECT_EQ(log_size(tmp.path()), kWalHeaderSize + 24 + kPs);
  EXPECT_EQ(w.file.wal()->pending_pages(), 1u);
}

TEST(PageWalLog, CloseAppliesTheCommittedBatchAndRemovesTheLog) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  {
    WalFile w(tmp.path());
    w.put(4, 0xA4);
    w.file.commit(1, 5, header);
    EXPECT_EQ(raw_byte(tmp.path(), 4), 0x14);
  }
  EXPECT_EQ(raw_byte(tmp.path(), 4), 0xA4);
  EXPECT_EQ(raw_byte(tmp.path(), 0), 0xEE);
  EXPECT_FALSE(std::filesystem::exists(Wal::log_path(tmp.path())));
}

TEST(PageWalLog, CommitSyncIsTheLastIoOfACheckpoint) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  FaultyIo io;
  WalFile w(tmp.path(), io);
  w.put(1, 0xA1);
  w.file.commit(1, 5, header);
  io.clear_trace();
  w.file.commit(2, 5, header);
  const std::string db = tmp.path(), log = Wal::log_path(tmp.path());
  // Batch 1 in place (pages 0 and 1 read from the log, written, db synced), the log emptied
  // (new header, then the cut to it, sync), then batch 2: header frame, commit record, sync.
  EXPECT_EQ(io.trace(),
            (std::vector<std::string>{"pread " + log, "pwrite " + db, "pread " + log,
                                      "pwrite " + db, "fdatasync " + db, "pwrite " + log,
                                      "ftruncate " + log, "fdatasync " + log, "pwrite " + log,
                                      "pwrite " + log, "fdatasync " + log}));
}

TEST(PageWalLog, FailedCommitSyncLeavesThePreviousState) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  {
    FaultyIo io;
    WalFile w(tmp.path(), io);
    w.put(1, 0xA1);
    io.arm(FaultyIo::Op::Fdatasync, 1);  // the commit point
    EXPECT_THROW(w.file.commit(1, 5, header), IoError);
    EXPECT_TRUE(io.fired());
  }
  PageFile f = PageFile::open(tmp.path(), true);
  EXPECT_FALSE(f.recovery().replayed);
  EXPECT_EQ(page_byte(tmp.path(), 1, false), 0x11);
  EXPECT_EQ(page_byte(tmp.path(), 0, false), 0x10);
  std::filesystem::remove(Wal::log_path(tmp.path()));
}

TEST(PageWalLog, RewrittenPageKeepsOneFrame) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  WalFile w(tmp.path());
  w.put(3, 0xA3);
  w.put(3, 0xB3);
  w.put(3, 0xC3);
  EXPECT_EQ(log_size(tmp.path()), kWalHeaderSize + 24 + kPs);
  EXPECT_EQ(w.file.wal()->pending_pages(), 1u);
  w.file.commit(1, 5, {});
  w.file.wal()->checkpoint();
  EXPECT_EQ(raw_byte(tmp.path(), 3), 0xC3);
}

TEST(PageWalLog, CheckpointCountsOnlyChangedPagesAndHeader) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  WalFile w(tmp.path());
  w.put(4, 0xA4);
  w.put(2, 0xA2);
  w.put(4, 0xB4);
  CommitStats seen;
  CommitStats s = w.file.commit(7, 5, [&](const CommitStats& st, uint8_t* page) {
    seen = st;
    header(st, page);
  });
  EXPECT_EQ(s.checkpoint, 7u);
  EXPECT_EQ(s.pages_written, 3u);
  EXPECT_EQ(s.bytes_written, 3u * 4096);
  EXPECT_EQ(s.bytes_synced, 3u * (24 + 4096) + 40);
  EXPECT_EQ(seen.pages_written, 3u);
  EXPECT_EQ(seen.bytes_synced, 12400u);
  EXPECT_EQ(w.file.wal()->last_checkpoint_pages(), (std::vector<uint32_t>{0, 2, 4}));
}

TEST(PageWalLog, NewPagesBeyondTheEndLiveInTheLog) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  WalFile w(tmp.path());
  w.put(9, 0xA9);
  EXPECT_EQ(std::filesystem::file_size(tmp.path()), 5u * kPs);
  EXPECT_EQ(w.file.file_size(), 10u * kPs);
  w.file.commit(1, 10, {});
  EXPECT_EQ(std::filesystem::file_size(tmp.path()), 5u * kPs);
  EXPECT_EQ(w.file.file_size(), 10u * kPs);
  w.file.wal()->checkpoint();
  EXPECT_EQ(std::filesystem::file_size(tmp.path()), 10u * kPs);
  EXPECT_EQ(raw_byte(tmp.path(), 9), 0xA9);
}

TEST(PageWalLog, UncommittedFramesAreDiscardedAtOpen) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  const std::string log = Wal::log_path(tmp.path()), crashed = tmp.path() + ".crashed-log";
  {
    WalFile w(tmp.path());
    w.put(1, 0xA1);
    w.put(2, 0xA2);
    // The log as a crash here would leave it (closing cuts the uncommitted frames off).
    std::filesystem::copy_file(log, crashed);
  }
  EXPECT_FALSE(std::filesystem::exists(log));
  std::filesystem::rename(crashed, log);
  {
    PageFile f = PageFile::open(tmp.path(), true);
    EXPECT_TRUE(f.recovery().log_found);
    EXPECT_FALSE(f.recovery().replayed);
    EXPECT_EQ(f.recovery().discarded, 2u);
    EXPECT_FALSE(std::filesystem::exists(log));
  }
  EXPECT_EQ(page_byte(tmp.path(), 1), 0x11);
  EXPECT_EQ(page_byte(tmp.path(), 2), 0x12);
}

// Leaves a committed batch (pages 0, 1, 3) in the log, none of it in place: the checkpoint
// succeeds, then applying it fails at its first write in place (the log stays at close).
void crash_after_commit(const std::string& path) {
  FaultyIo io;
  WalFile w(path, io);
  w.put(1, 0xA1);
  w.put(3, 0xA3);
  w.file.commit(1, 5, header);
  io.arm(FaultyIo::Op::Pwrite, 1);
  EXPECT_THROW(w.file.wal()->checkpoint(), IoError);
  EXPECT_TRUE(io.fired());
}

TEST(PageWalLog, CommittedBatchIsReplayedAtOpen) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  crash_after_commit(tmp.path());
  EXPECT_EQ(raw_byte(tmp.path(), 1), 0x11);
  PageFile f = PageFile::open(tmp.path(), true);
  EXPECT_TRUE(f.recovery().replayed);
  EXPECT_EQ(f.recovery().pages, 3u);
  EXPECT_EQ(f.recovery().checkpoint, 1u);
  EXPECT_EQ(raw_byte(tmp.path(), 0), 0xEE);
  EXPECT_EQ(raw_byte(tmp.path(), 1), 0xA1);
  EXPECT_EQ(raw_byte(tmp.path(), 2), 0x12);
  EXPECT_EQ(raw_byte(tmp.path(), 3), 0xA3);
  EXPECT_FALSE(std::filesystem::exists(Wal::log_path(tmp.path())));
}

TEST(PageWalLog, ReplayIsIdempotent) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  crash_after_commit(tmp.path());
  std::string saved = tmp.path() + ".saved";
  std::filesystem::copy_file(Wal::log_path(tmp.path()), saved);
  { PageFile f = PageFile::open(tmp.path(), true); }
  std::filesystem::copy_file(saved, Wal::log_path(tmp.path()),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(saved);
  PageFile f = PageFile::open(tmp.path(), true);
  EXPECT_TRUE(f.recovery().replayed);
  EXPECT_EQ(raw_byte(tmp.path(), 1), 0xA1);
  EXPECT_EQ(raw_byte(tmp.path(), 3), 0xA3);
  EXPECT_EQ(raw_byte(tmp.path(), 4), 0x14);
  std::filesystem::remove(Wal::log_path(tmp.path()));
}

TEST(PageWalLog, ReadOnlyOpenServesTheCommittedBatchWithoutWriting) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  crash_after_commit(tmp.path());
  EXPECT_EQ(page_byte(tmp.path(), 1, false), 0xA1);
  EXPECT_EQ(page_byte(tmp.path(), 2, false), 0x12);
  {
    PageFile f = PageFile::open(tmp.path(), false);
    uint8_t prefix[8];
    f.read_raw(100, prefix, 8);
    EXPECT_EQ(prefix[0], 0xEE);
  }
  EXPECT_EQ(raw_byte(tmp.path(), 1), 0x11);
  EXPECT_EQ(page_byte(tmp.path(), 1, true), 0xA1);
  EXPECT_EQ(raw_byte(tmp.path(), 1), 0xA1);
  std::filesystem::remove(Wal::log_path(tmp.path()));
}

TEST(PageWalLog, TornCommitRecordIsDiscarded) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  {
    FaultyIo io;
    WalFile w(tmp.path(), io);
    w.put(1, 0xA1);
    io.arm(FaultyIo::Op::Pwrite, 2, FaultyIo::Mode::ShortWrite);  // the commit record
    EXPECT_THROW(w.file.commit(1, 5, header), IoError);
  }
  PageFile f = PageFile::open(tmp.path(), true);
  EXPECT_FALSE(f.recovery().replayed);
  EXPECT_EQ(page_byte(tmp.path(), 1, false), 0x11);
  EXPECT_EQ(page_byte(tmp.path(), 0, false), 0x10);
  std::filesystem::remove(Wal::log_path(tmp.path()));
}

TEST(PageWalLog, CorruptFrameStopsTheScan) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  crash_after_commit(tmp.path());
  // Flip one image byte of the second frame: its CRC fails, the batch is not committed.
  int fd = ::open(Wal::log_path(tmp.path()).c_str(), O_RDWR);
  uint8_t b = 0x55;
  ASSERT_EQ(::pwrite(fd, &b, 1, kWalHeaderSize + (24 + kPs) + 24 + 200), 1);
  ::close(fd);
  PageFile f = PageFile::open(tmp.path(), true);
  EXPECT_FALSE(f.recovery().replayed);
  EXPECT_EQ(f.recovery().discarded, 1u);
  EXPECT_EQ(raw_byte(tmp.path(), 1), 0x11);
  std::filesystem::remove(Wal::log_path(tmp.path()));
}

TEST(PageWalLog, FailedLogRefusesFurtherWork) {
  TempPath tmp;
  make_db(tmp.path(), 0x10);
  FaultyIo io;
  WalFile w(tmp.path(), io);
  io.arm(FaultyIo::Op::Pwrite, 1);
  EXPECT_THROW(w.put(1, 0xA1), IoError);
  EXPECT_TRUE(w.file.wal()->failed());
  try {
    w.put(2, 0xA2);
    FAIL() << "no exception";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("reopen the file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(w.file.commit(1, 5, header), IoError);
  std::filesystem::remove(Wal::log_path(tmp.path()));
}

TEST(PageWalLog, HeaderPageKeepsCheckpointCounters) {
  FileHeader h;
  h.page_size = 8192;
  h.page_count = 2;
  h.checkpoint = 12;
  h.last_pages_written = 3;
  h.last_bytes_written = 24576;
  h.last_bytes_synced = 24688;
  std::vector<uint8_t> page(8192);
  encode_header_page(h, page.data());
  EXPECT_EQ(get_u32(page.data() + 56), 3u);
  EXPECT_EQ(get_u64(page.data() + 64), 24576u);
  EXPECT_EQ(get_u64(page.data() + 72), 24688u);
  FileHeader d = decode_header_prefix(page.data(), kHeaderStatsEnd, "x");
  EXPECT_EQ(d.last_pages_written, 3u);
  EXPECT_EQ(d.last_bytes_written, 24576u);
  EXPECT_EQ(d.last_bytes_synced, 24688u);
  FileHeader p = decode_header_prefix(page.data(), kHeaderPrefixSize, "x");
  EXPECT_EQ(p.last_pages_written, 0u);
}

TEST(PageFaultyIoTest, FailsOnlyTheArmedCallAndTracesPaths) {
  TempPath tmp;
  FaultyIo io;
  int fd = io.open(tmp.path(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  io.arm(FaultyIo::Op::Pwrite, 2, FaultyIo::Mode::ShortWrite);
  EXPECT_EQ(io.pwrite(fd, buf, 8, 0), 8);
  EXPECT_EQ(io.pwrite(fd, buf, 8, 8), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_TRUE(io.fired());
  EXPECT_EQ(io.pwrite(fd, buf, 8, 16), 8);
  uint64_t size = 0;
  io.file_size(fd, &size);
  EXPECT_EQ(size, 24u);  // the torn write left its first half
  io.arm(FaultyIo::Op::Mutating, 1);
  EXPECT_EQ(io.fdatasync(fd), -1);
  EXPECT_EQ(io.calls(FaultyIo::Op::Pwrite), 3u);
  EXPECT_EQ(io.calls(FaultyIo::Op::Mutating), 4u);
  std::vector<std::string> trace = io.trace();
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(trace[3], "fdatasync " + tmp.path());
  io.close(fd);
}

}  // namespace
}  // namespace pbtree
