// The log folded into the file and hostile logs (issue 9 item 5, issue 10 items 4-6): after
// `pbtree checkpoint` the file alone is complete, `pbtree backup` under a writer gives a
// committed state, and recovery checks a log before it uses any of it: commit counter, page
// size, page numbers, image checksums, and a regular file at the log path.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/page_file.h"
#include "page/wal.h"
#include "tests/support/cli_test_util.h"

namespace pbtree {
namespace {

using tools::testing::read_bytes;
using tools::testing::run;
using tools::testing::ScratchDir;

const TypeSpec kBigint = TypeSpec::parse("bigint");

std::vector<uint8_t> key_of(int64_t v) {
  KeyBuffer k;
  build_key(kBigint, default_key_format(kBigint), parse_value(kBigint, std::to_string(v)), false,
            k);
  return {k.bytes().begin(), k.bytes().end()};
}

void make_file(const std::string& path) {
  auto f = IndexFile::open_or_create(path, 8192);
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

uint64_t count_in(const std::string& path) {
  auto f = IndexFile::open(path);
  uint64_t n = 0;
  for (Cursor c = btree_of(*f, "I").scan(); c.valid(); c.next()) ++n;
  return n;
}

// Commits 1..n while a reader holds a snapshot, so the commits stay in the log after close.
void commit_into_the_log(const std::string& db, int64_t from, int64_t to) {
  auto reader = IndexFile::open(db);
  auto writer = IndexFile::open(db, {.writable = true});
  insert_range(*writer, from, to);
  writer->close();
}

std::string log_of(const std::string& db) {
  return Wal::log_path(db);
}

TEST(ShareLog, AfterCheckpointTheFileAloneGivesTheSameScanAndStat) {
  ScratchDir dir("log-checkpoint");
  const std::string db = dir.file("db.pbt"), copy = dir.file("copy.pbt");
  make_file(db);
  commit_into_the_log(db, 1, 3000);
  ASSERT_TRUE(std::filesystem::exists(log_of(db)));
  auto verify = run({"verify", db});
  EXPECT_EQ(verify.code, 0);
  EXPECT_NE(verify.out.find("log: " + db + "-wal holds "), std::string::npos) << verify.out;
  auto done = run({"checkpoint", db});
  ASSERT_EQ(done.code, 0) << done.err;
  EXPECT_FALSE(std::filesystem::exists(log_of(db)));
  std::filesystem::copy_file(db, copy);
  auto scan_db = run({"scan", db, "--index", "I"}), scan_copy = run({"scan", copy, "--index", "I"});
  EXPECT_EQ(scan_copy.code, 0);
  EXPECT_EQ(scan_copy.out, scan_db.out);
  EXPECT_EQ(std::count(scan_copy.out.begin(), scan_copy.out.end(), '\n'), 3000);
  EXPECT_EQ(run({"stat", copy}).out, run({"stat", db}).out);
  EXPECT_EQ(run({"verify", copy}).code, 0);
}

// Verify through a second name (a hard link) reads the file's one log and names it, not a
// "<second name>-wal" that does not exist.
TEST(ShareLog, VerifyThroughAHardLinkNamesTheFilesOwnLog) {
  ScratchDir dir("log-verify-link");
  const std::string db = std::filesystem::absolute(dir.file("db.pbt")).string();
  const std::string other = std::filesystem::absolute(dir.file("other.pbt")).string();
  make_file(db);
  commit_into_the_log(db, 1, 500);
  ASSERT_EQ(::link(db.c_str(), other.c_str()), 0);
  auto verify = run({"verify", other});
  EXPECT_EQ(verify.code, 0) << verify.err;
  EXPECT_NE(verify.out.find("log: " + db + "-wal holds "), std::string::npos) << verify.out;
  EXPECT_FALSE(std::filesystem::exists(other + "-wal"));
}

// A file without a log is already complete: in a directory where no log can be created,
// checkpoint says so and exits 0 (it used to fail creating a log it would remove again). The
// CLI runs as a child process; under root, as user nobody, to whom the directory is read-only.
TEST(ShareLog, CheckpointWithoutALogInAReadOnlyDirectorySaysTheFileIsComplete) {
  ScratchDir dir("log-checkpoint-read-only");
  const std::string sub = dir.file("ro"), db = dir.file("ro/db.pbt");
  std::filesystem::create_directory(sub);
  make_file(db);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chmod(dir.file("").c_str(), 0755), 0);
    ASSERT_EQ(::chown(sub.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(db.c_str(), 65534, 65534), 0);
  }
  ASSERT_EQ(::chmod(sub.c_str(), 0555), 0);
  const std::string bytes = read_bytes(db);
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const std::string cli = std::string(PBTREE_BIN_DIR) + "/pbtree";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(99);
    ::execl(cli.c_str(), cli.c_str(), "checkpoint", db.c_str(), static_cast<char*>(nullptr));
    ::_exit(98);
  }
  ::close(out[1]);
  std::string text;
  char chunk[512];
  for (ssize_t n; (n = ::read(out[0], chunk, sizeof chunk)) > 0;) text.append(chunk, n);
  ::close(out[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ::chmod(sub.c_str(), 0755);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << text;
  EXPECT_EQ(text,
            fmt::format("checkpoint: {}: 0 committed frames copied into the file; no log\n", db));
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  EXPECT_EQ(read_bytes(db), bytes);
}

TEST(ShareLog, CheckpointWithAReaderHoldingASnapshotExitsThreeAndChangesNothing) {
  ScratchDir dir("log-checkpoint-busy");
  const std::string db = dir.file("db.pbt");
  make_file(db);
  commit_into_the_log(db, 1, 100);
  auto reader = IndexFile::open(db);
  auto busy = run({"checkpoint", db, "--wait", "50"});
  EXPECT_EQ(busy.code, 3);
  EXPECT_EQ(busy.err,
            "pbtree: " + db + ": checkpoint deferred: readers still hold snapshots after 50 ms\n");
  EXPECT_TRUE(std::filesystem::exists(log_of(db)));
}

TEST(ShareLog, BackupUnderAWriterVerifiesAndEqualsACommittedState) {
  ScratchDir dir("log-backup");
  const std::string db = dir.file("db.pbt");
  make_file(db);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> commits{0};
  std::thread writer([&] {
    auto w = IndexFile::open(db, {.writable = true});
    BTree& t = btree_of(*w, "I");
    for (int64_t v = 1; !stop; ++v) {
      t.insert(key_of(v), static_cast<uint64_t>(v));
      w->commit();
      commits = v;
    }
    w->close();
  });
  std::set<size_t> sizes;
  for (int i = 0; i < 5; ++i) {
    // Each backup starts after at least one more commit.
    for (const int64_t seen = commits; commits == seen;) std::this_thread::yield();
    const std::string dest = dir.file(fmt::format("backup{}.pbt", i));
    auto b = run({"backup", db, dest});
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_FALSE(std::filesystem::exists(log_of(dest)));
    EXPECT_EQ(run({"verify", dest}).code, 0);
    // A committed state: values 1..k, each commit having added the next one.
    auto scan = run({"scan", dest, "--index", "I"});
    std::istringstream in(scan.out);
    std::string line;
    int64_t expect = 1;
    bool contiguous = true;
    while (std::getline(in, line)) {
      contiguous = contiguous && std::stoll(line.substr(0, line.find('\t'))) == expect;
      ++expect;
    }
    EXPECT_TRUE(contiguous);
    sizes.insert(static_cast<size_t>(expect - 1));
  }
  stop = true;
  writer.join();
  EXPECT_GT(sizes.size(), 1u);  // the writer went on between backups
  EXPECT_EQ(run({"backup", db, dir.file("backup0.pbt")}).code, 1);  // never replaces a file
}

TEST(ShareLog, OlderLogOfTheSameFileIsStaleAndNotReplayed) {
  ScratchDir dir("log-stale");
  const std::string db = dir.file("db.pbt"), old_log = dir.file("old-wal");
  make_file(db);
  commit_into_the_log(db, 1, 100);
  std::filesystem::copy_file(log_of(db), old_log);
  {
    auto w = IndexFile::open(db, {.writable = true});  // checkpoints the log in, then changes more
    insert_range(*w, 101, 200);
    auto tree = &btree_of(*w, "I");
    for (int64_t v = 1; v <= 50; ++v) tree->remove(key_of(v), static_cast<uint64_t>(v));
    w->close();
  }
  ASSERT_FALSE(std::filesystem::exists(log_of(db)));
  std::filesystem::copy_file(old_log, log_of(db));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(count_in(db), 150u);
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("stale log: its last commit is"), std::string::npos) << warning;
  {
    ::testing::internal::CaptureStderr();
    auto w = IndexFile::open(db, {.writable = true});
    ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(w->log_recovery().stale);
    w->close();
  }
  EXPECT_EQ(count_in(db), 150u);
  EXPECT_EQ(run({"verify", db}).code, 0);
}

// A crafted log: header (version 3, still read) + one frame of `page_no` holding `image` +
// commit record.
std::string crafted_log(uint32_t page_size, uint64_t file_id, uint32_t page_no,
                        std::vector<uint8_t> image, uint32_t page_count, bool stamp = true) {
  const uint64_t salt = 0x1234;
  std::string out(kWalHeaderSizeV3, '\0');
  auto* h = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(h, kWalMagic, 8);
  put_u32(h + 8, kWalVersion3);
  put_u32(h + 12, page_size);
  put_u64(h + 16, salt);
  put_u64(h + 24, file_id);
  put_u32(h + 32, wal_crc(h, 32));
  if (stamp) {
    put_u32(image.data() + 12, page_no);
    put_u32(image.data() + 4, page_checksum(image.data(), static_cast<uint32_t>(image.size())));
  }
  std::vector<uint8_t> frame(kWalFrameHeaderSize + image.size());
  put_u32(frame.data(), kWalFrameImage);
  put_u32(frame.data() + 4, page_no);
  put_u64(frame.data() + 8, salt);
  std::memcpy(frame.data() + kWalFrameHeaderSize, image.data(), image.size());
  const uint32_t crc = wal_crc_frame(frame.data(), static_cast<uint32_t>(image.size()));
  put_u32(frame.data() + 16, crc);
  out.append(reinterpret_cast<const char*>(frame.data()), frame.size());
  uint8_t rec[kWalCommitSize] = {};
  put_u32(rec, kWalFrameCommit);
  put_u32(rec + 4, 1);
  put_u64(rec + 8, salt);
  put_u64(rec + 16, 1000);
  put_u32(rec + 24, page_count);
  put_u32(rec + 28, wal_batch_crc({crc}));
  put_u32(rec + 32, wal_crc(rec, 32));
  out.append(reinterpret_cast<const char*>(rec), sizeof rec);
  return out;
}

uint64_t file_id_of(const std::string& db) {
  int fd = ::open(db.c_str(), O_RDONLY);
  DbIdentity id = read_db_identity(posix_io(), fd, db);
  ::close(fd);
  return id.file_id;
}

// Opens `db` read-only and writable with `log` in place: both ignore it with a warning
// containing `why`, and the data is untouched.
void expect_log_ignored(const std::string& db, const std::string& log, const std::string& why) {
  std::ofstream(log_of(db), std::ios::binary) << log;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(count_in(db), 10u);
  std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find(why), std::string::npos) << warning;
  ::testing::internal::CaptureStderr();
  { IndexFile::open(db, {.writable = true})->close(); }
  warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find(why), std::string::npos) << warning;
  EXPECT_EQ(count_in(db), 10u);
  EXPECT_EQ(run({"verify", db}).code, 0);
}

struct ShareCraftedLog : ::testing::Test {
  ShareCraftedLog() : dir("log-crafted"), db(dir.file("db.pbt")) {
    make_file(db);
    auto w = IndexFile::open(db, {.writable = true});
    insert_range(*w, 1, 10);
    w->close();
  }
  ScratchDir dir;
  std::string db;
};

TEST_F(ShareCraftedLog, PageSizeOtherThanTheFilesIsIgnored) {
  std::vector<uint8_t> image(4096, 0);
  image[0] = 7;
  expect_log_ignored(db, crafted_log(4096, file_id_of(db), 2, image, 5),
                     "page size 4096 differs from the file's 8192");
}

TEST_F(ShareCraftedLog, FrameBeyondTheCommittedPageCountIsIgnored) {
  std::vector<uint8_t> image(8192, 0);
  image[0] = 7;
  expect_log_ignored(db, crafted_log(8192, file_id_of(db), 1u << 31, image, 5),
                     "a frame of page 2147483648 lies at or beyond the committed page count 5");
}

TEST_F(ShareCraftedLog, PageCountWithPagesNeitherInTheFileNorInTheLogIsIgnored) {
  std::vector<uint8_t> image(8192, 0);
  image[0] = 7;
  const uint32_t far = 1u << 31;
  expect_log_ignored(db, crafted_log(8192, file_id_of(db), far, image, far + 1),
                     "counts 2147483649 pages, but the file has ");
  EXPECT_LT(std::filesystem::file_size(db), uint64_t{1} << 20);
}

TEST_F(ShareCraftedLog, ImageWithABadChecksumIsIgnored) {
  std::vector<uint8_t> image(8192, 0);
  image[0] = 7;
  put_u32(image.data() + 12, 2);
  put_u32(image.data() + 4, 0xDEADBEEF);
  expect_log_ignored(db, crafted_log(8192, file_id_of(db), 2, image, 5, false),
                     "(page 2): the image's checksum or page number is wrong");
}

TEST_F(ShareCraftedLog, ImageCarryingAnotherPageNumberIsIgnored) {
  std::vector<uint8_t> image(8192, 0);
  image[0] = 7;
  put_u32(image.data() + 12, 3);
  put_u32(image.data() + 4, page_checksum(image.data(), 8192));
  expect_log_ignored(db, crafted_log(8192, file_id_of(db), 2, image, 5, false),
                     "(page 2): the image's checksum or page number is wrong");
}

TEST_F(ShareCraftedLog, SymbolicLinkAtTheLogPathIsRefusedAndItsTargetKept) {
  const std::string victim = dir.file("victim.txt");
  std::ofstream(victim) << "precious";
  std::filesystem::create_symlink(victim, log_of(db));
  EXPECT_THROW(IndexFile::open(db), IoError);
  EXPECT_THROW(IndexFile::open(db, {.writable = true}), IoError);
  auto scan = run({"scan", db, "--index", "I"});
  EXPECT_EQ(scan.code, 1);
  EXPECT_EQ(scan.err, "pbtree: " + log_of(db) + ": the log is a symbolic link: refused\n");
  EXPECT_EQ(read_bytes(victim), "precious");
}

TEST_F(ShareCraftedLog, FifoAtTheLogPathIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(log_of(db).c_str(), 0644), 0);
  auto scan = run({"scan", db, "--index", "I"});
  EXPECT_EQ(scan.code, 1);
  EXPECT_EQ(scan.err, "pbtree: " + log_of(db) + ": the log is not a regular file: refused\n");
  EXPECT_THROW(IndexFile::open(db, {.writable = true}), IoError);
}

}  // namespace
}  // namespace pbtree
