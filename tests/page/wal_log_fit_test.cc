// A log must fit its file (issue 30 items 4, 5, 15, 17, 18): it names the commit it starts
// from (log header bytes 32..39, docs/FORMAT.md §3.2) and is replayed only onto a file at that
// commit (or at its last one, a checkpoint cut short); one that does not fit is set aside
// under a new name with a one-line warning, never replayed. A file at the log path that is
// not a pbtree log is never deleted: a writer refuses to start and says what it found, a
// reader ignores it and says so; backup refuses a log name as its destination and leaves no
// temporary file when killed; checkpoint counts the frames folded in at open; a failed frame
// write gives the uncommitted log tail back.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/file_lock.h"
#include "page/io.h"
#include "page/page_file.h"
#include "page/wal.h"
#include "tests/support/cli_test_util.h"
#include "util/coding.h"

extern char** environ;

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

// The commit counter in the header page bytes `db` (bytes 48..55).
uint64_t counter_of(const std::string& db) {
  return get_u64(reinterpret_cast<const uint8_t*>(db.data()) + 48);
}

// Files in `dir`, by name.
std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

class PageWalFit : public ::testing::Test {
 protected:
  PageWalFit()
      : dir_(std::string("walfit-") +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        db_(dir_.file("x.pbt")),
        log_(Wal::log_path(db_)) {}

  void load(int rows) {
    const std::string csv = dir_.write("rows.csv", numbers(1, rows));
    auto r = run(
        {"load", db_, "--index", "I", "--type", "integer", "--input", csv, "--page-size", "4096"});
    ASSERT_EQ(r.code, 0) << r.err;
  }

  static void insert(IndexFile& f, int64_t value, uint64_t recno) {
    KeyBuffer k;
    const IndexDefinition def = f.find_index("I")->def;
    build_key(def.type, def.format, parse_value(def.type, std::to_string(value)), false, k);
    btree_of(f, "I").insert(k.bytes(), recno);
  }

  // The values of index I, as `pbtree scan` prints them (read-only open).
  std::set<int64_t> values() {
    auto r = run({"scan", db_, "--index", "I"});
    EXPECT_EQ(r.code, 0) << r.err;
    std::set<int64_t> out;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) out.insert(std::stoll(line.substr(0, line.find('\t'))));
    return out;
  }

  std::pair<testing::CliResult, std::string> run_capturing(
      std::initializer_list<std::string> args) {
    ::testing::internal::CaptureStderr();
    testing::CliResult r = run(args);
    return {r, ::testing::internal::GetCapturedStderr()};
  }

  static std::set<int64_t> range(int64_t from, int64_t to) {
    std::set<int64_t> s;
    for (int64_t v = from; v <= to; ++v) s.insert(v);
    return s;
  }

  ScratchDir dir_;
  std::string db_;
  std::string log_;
};

// Item 4, `cp db; cp db-wal` while a writer runs: the copy of the file is at commit c, the
// copy of the log was taken after a checkpoint had moved the file on to c+1 and reset the
// log, whose batch is c+2. Replaying it would give a state that never existed.
TEST_F(PageWalFit, CopyOfFileAndLogTakenAcrossACheckpointIsSetAsideNotReplayed) {
  load(1000);
  std::string db_copy, log_copy;
  {
    auto f = IndexFile::open(db_, {.writable = true});
    insert(*f, 0, 7);  // first leaf
    f->commit();       // commit c+1, in the log only
    db_copy = read_bytes(db_);
    insert(*f, 5000000, 8);  // last leaf; the new batch checkpoints c+1 first
    f->commit();             // commit c+2
    log_copy = read_bytes(log_);
    f->close();
  }
  const uint64_t c = counter_of(db_copy);
  write_bytes(db_, db_copy);
  write_bytes(log_, log_copy);
  auto [r, err] = run_capturing({"checkpoint", db_});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(err, fmt::format("pbtree: warning: {}: the log starts after commit {} and ends at "
                             "commit {}, the file is at commit {}: not replayed, set aside as "
                             "{}.aside-1\n",
                             log_, c + 1, c + 2, c, log_));
  EXPECT_FALSE(std::filesystem::exists(log_));
  EXPECT_EQ(read_bytes(log_ + ".aside-1"), log_copy);
  EXPECT_EQ(values(), range(1, 1000));  // the copy's own state: commit c
  EXPECT_EQ(run({"verify", db_}).code, 0);
}

// Item 4, a backup restored beside the live log (which a reader kept): the log starts after
// a later commit than the backup's, so it is set aside; the backup's state is what remains.
TEST_F(PageWalFit, BackupRestoredBesideTheLiveLogIsSetAsideNotReplayed) {
  load(1000);
  const std::string bk = dir_.file("bk.pbt");
  ASSERT_EQ(run({"backup", db_, bk}).code, 0);
  {
    auto f = IndexFile::open(db_, {.writable = true});
    insert(*f, 0, 7);
    f->close();  // checkpointed: the file is at commit c+1, no log
  }
  {
    auto reader = IndexFile::open(db_);  // keeps the next log
    auto f = IndexFile::open(db_, {.writable = true});
    insert(*f, 5000000, 8);
    f->close();  // commit c+2 stays in the log
  }
  ASSERT_TRUE(std::filesystem::exists(log_));
  const std::string log_bytes = read_bytes(log_);
  std::filesystem::copy_file(bk, db_, std::filesystem::copy_options::overwrite_existing);
  const uint64_t c = counter_of(read_bytes(bk));
  auto [r, err] = run_capturing({"insert", db_, "--index", "I", "3000000", "9"});
  EXPECT_EQ(r.code, 0) << r.err;
  // insert checks its input through a read-only open first (which ignores the log, quietly),
  // then writes (which sets it aside): one line.
  const std::string why = fmt::format(
      "pbtree: warning: {}: the log starts after commit {} and ends at commit {}, the file is "
      "at commit {}: ",
      log_, c + 1, c + 2, c);
  EXPECT_EQ(err, why + "not replayed, set aside as " + log_ + ".aside-1\n");
  EXPECT_EQ(read_bytes(log_ + ".aside-1"), log_bytes);
  std::set<int64_t> want = range(1, 1000);
  want.insert(3000000);
  EXPECT_EQ(values(), want);
  EXPECT_EQ(run({"verify", db_}).code, 0);
}

// A second set-aside log never replaces the first.
TEST_F(PageWalFit, SetAsideNeverReplacesAnEarlierOne) {
  load(1000);
  write_bytes(log_ + ".aside-1", "earlier\n");
  std::string db_copy, log_copy;
  {
    auto f = IndexFile::open(db_, {.writable = true});
    insert(*f, 0, 7);
    f->commit();
    db_copy = read_bytes(db_);
    insert(*f, 5000000, 8);
    f->commit();
    log_copy = read_bytes(log_);
    f->close();
  }
  write_bytes(db_, db_copy);
  write_bytes(log_, log_copy);
  auto [r, err] = run_capturing({"checkpoint", db_});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_bytes(log_ + ".aside-1"), "earlier\n");
  EXPECT_EQ(read_bytes(log_ + ".aside-2"), log_copy);
}

// The log header names the file, the commit the log starts after, and the file's device
// and inode (format version 4, 64 bytes).
TEST_F(PageWalFit, LogHeaderNamesTheFileAndTheCommitItStartsAfter) {
  load(10);
  auto f = IndexFile::open(db_, {.writable = true});
  insert(*f, 0, 7);
  f->commit();
  const std::string db_bytes = read_bytes(db_);
  const std::string log_bytes = read_bytes(log_);
  const auto* h = reinterpret_cast<const uint8_t*>(log_bytes.data());
  struct stat st;
  ASSERT_EQ(::stat(db_.c_str(), &st), 0);
  ASSERT_EQ(log_bytes.size(), 64u + 2 * (24 + 4096) + 40);
  EXPECT_EQ(get_u32(h + 8), 4u);
  EXPECT_EQ(get_u64(h + 24), get_u64(reinterpret_cast<const uint8_t*>(db_bytes.data()) + 80));
  EXPECT_EQ(get_u64(h + 32), counter_of(db_bytes));
  EXPECT_EQ(get_u64(h + 40), static_cast<uint64_t>(st.st_dev));
  EXPECT_EQ(get_u64(h + 48), static_cast<uint64_t>(st.st_ino));
  f->close();
}

// Item 5: a file at the log path that pbtree did not write is never deleted; a writer
// refuses to start and says what it found.
TEST_F(PageWalFit, ForeignFileAtTheLogPathIsLeftAloneAndAWriterRefuses) {
  load(10);
  write_bytes(log_, "my notes\n");
  auto r = run({"insert", db_, "--index", "I", "77", "77"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, fmt::format("pbtree: {}: not a pbtree log (9 bytes): left alone; move it "
                               "away to write {}\n",
                               log_, db_));
  EXPECT_EQ(read_bytes(log_), "my notes\n");
  EXPECT_EQ(values(), range(1, 10));
}

TEST_F(PageWalFit, ForeignFileAtTheLogPathIsIgnoredByAReaderWhichSaysSo) {
  load(10);
  write_bytes(log_, "my notes\n");
  ::testing::internal::CaptureStderr();
  const std::set<int64_t> v = values();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(v, range(1, 10));
  EXPECT_EQ(err, fmt::format("pbtree: warning: {}: not a pbtree log (9 bytes): left alone, not "
                             "read\n",
                             log_));
  EXPECT_EQ(read_bytes(log_), "my notes\n");
}

TEST_F(PageWalFit, CreatingAFileLeavesAForeignFileAtItsLogPathAlone) {
  write_bytes(log_, "my notes\n");
  const std::string csv = dir_.write("rows.csv", numbers(1, 10));
  auto r = run(
      {"load", db_, "--index", "I", "--type", "integer", "--input", csv, "--page-size", "4096"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(read_bytes(log_), "my notes\n");
}

TEST_F(PageWalFit, BackupRefusesALogNameAsItsDestination) {
  load(10);
  auto r = run({"backup", db_, log_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, fmt::format("pbtree: {}: a name ending in -wal is where pbtree keeps the log "
                               "of a file: choose another destination\n",
                               log_));
  EXPECT_FALSE(std::filesystem::exists(log_));
  auto r2 = run({"backup", db_, log_ + ".aside-1"});
  EXPECT_EQ(r2.code, 1);
  EXPECT_FALSE(std::filesystem::exists(log_ + ".aside-1"));
}

// Item 15: the frames folded in at open are the ones checkpoint copied.
TEST_F(PageWalFit, CheckpointCountsTheFramesFoldedInAtOpen) {
  load(1000);
  std::string db_bytes, log_bytes;
  {
    auto f = IndexFile::open(db_, {.writable = true});
    insert(*f, 0, 7);
    f->commit();
    db_bytes = read_bytes(db_);
    log_bytes = read_bytes(log_);
    f->close();
  }
  write_bytes(db_, db_bytes);  // as a crash right after the commit point leaves them
  write_bytes(log_, log_bytes);
  auto r = run({"checkpoint", db_});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            fmt::format("checkpoint: {}: 2 committed frames copied into the file; no log\n", db_));
  std::set<int64_t> want = range(1, 1000);
  want.insert(0);
  EXPECT_EQ(values(), want);
}

// True while another open file description holds the writer lock of `path`.
bool writer_lock_held(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct flock fl;
  std::memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kLockBase + static_cast<int>(LockByte::Writer);
  fl.l_len = 1;
  const bool held = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

// Item 14: `checkpoint --wait` waiting for an old snapshot does not keep new readers out
// (reading commands never wait for a writer).
TEST_F(PageWalFit, CheckpointWaitingForAReaderLetsNewReadersIn) {
  load(1000);
  auto old_reader = IndexFile::open(db_);
  {
    auto f = IndexFile::open(db_, {.writable = true});
    insert(*f, 0, 7);
    f->close();  // the log stays: old_reader holds a snapshot
  }
  const std::string pbtree = std::string(PBTREE_BIN_DIR) + "/pbtree";
  std::vector<std::string> storage{pbtree, "checkpoint", db_, "--wait", "8000"};
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, pbtree.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  while (!writer_lock_held(db_)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // now inside its wait
  {
    auto new_reader = IndexFile::open(db_);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the new reader waited for the checkpoint";
    EXPECT_EQ(btree_of(*new_reader, "I").verify().entries, 1001u);
  }
  old_reader.reset();  // now the checkpoint can go on
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(std::filesystem::exists(log_));
}

// Item 18: when a frame cannot be written (the disk is full) the uncommitted log tail is cut
// off at once, giving the space back, and the file reopens at its last commit.
TEST_F(PageWalFit, FailedFrameWriteCutsTheUncommittedTailOff) {
  load(1000);
  FaultyIo io;
  {
    PageFile file = PageFile::open(db_, true, io);
    file.set_page_size(4096);
    file.enable_wal();
    const uint64_t empty = std::filesystem::file_size(log_);
    std::vector<uint8_t> page(4096, 0);
    for (uint32_t p = 100; p < 110; ++p) file.write(p, page.data());  // uncommitted frames
    EXPECT_EQ(std::filesystem::file_size(log_), empty + 10 * (24 + 4096));
    io.arm(FaultyIo::Op::Pwrite, 1);
    EXPECT_THROW(file.write(110, page.data()), IoError);
    EXPECT_TRUE(io.fired());
    EXPECT_EQ(std::filesystem::file_size(log_), empty);
  }
  EXPECT_EQ(values(), range(1, 1000));
  EXPECT_EQ(run({"verify", db_}).code, 0);
}

// Item 18 on a real full disk: a 2 MiB tmpfs mounted by the test (root, as in CI). An insert
// batch that outgrows the cache writes frames into the log until the disk is full; the
// failing insert gives the log's space back at once, so a reader can still make a backup.
TEST_F(PageWalFit, DiskFullDuringAnInsertBatchGivesTheLogSpaceBack) {
  const std::string mnt = dir_.file("small");
  std::filesystem::create_directory(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=2m") != 0) {
    FAIL() << "cannot mount a tmpfs (this test needs root, as CI has): " << std::strerror(errno);
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mnt};
  db_ = mnt + "/x.pbt";
  log_ = Wal::log_path(db_);
  load(1000);
  const uint64_t db_size = std::filesystem::file_size(db_);
  {
    auto f = IndexFile::open(db_, {.writable = true});
    f->set_cache_frames(16);
    EXPECT_THROW(
        {
          for (int64_t v = 2000; v < 2000000; ++v) insert(*f, v, static_cast<uint64_t>(v));
          f->commit();
        },
        IoError);
    EXPECT_EQ(std::filesystem::file_size(log_), 64u);  // the header: nothing uncommitted
  }
  EXPECT_EQ(std::filesystem::file_size(db_), db_size);
  EXPECT_EQ(values(), range(1, 1000));
  auto r = run({"backup", db_, mnt + "/bk.pbt"});
  EXPECT_EQ(r.code, 0) << r.err;
}

// Item 17: a backup killed midway leaves nothing behind (its file has no name until it is
// complete).
TEST_F(PageWalFit, BackupKilledMidwayLeavesNoTemporaryFile) {
  load(400000);
  const std::string dest = dir_.file("bk.pbt");
  const std::string pbtree = std::string(PBTREE_BIN_DIR) + "/pbtree";
  std::vector<std::string> storage{pbtree, "backup", db_, dest};
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::set<std::string> before = names_in(dir_.file(""));
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, pbtree.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  // Kill it once it has a file open for writing in the directory (named or not).
  bool writing = false;
  for (int i = 0; i < 200000 && !writing; ++i) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec)) {
      std::error_code ec2;
      const std::string target = std::filesystem::read_symlink(e.path(), ec2).string();
      if (!ec2 && target.rfind(dir_.file(""), 0) == 0 &&
          target.find("x.pbt") == std::string::npos && target.find("rows.csv") == target.npos) {
        writing = true;
      }
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(writing) << "the backup ended before it could be killed";
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(names_in(dir_.file("")), before);
}

}  // namespace
}  // namespace pbtree::tools
