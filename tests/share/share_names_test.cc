// Several names of one file (issue 30 item 2): a hard link, a symbolic link and a bind mount
// reach the same log, so commits made under one name while a reader keeps the log are found,
// checkpointed and recovered under any other; no second log appears. And real processes (two
// writers under two names, readers under a third holding snapshots) lose nothing.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "tests/support/cli_test_util.h"

extern char** environ;

namespace pbtree {
namespace {

using Clock = std::chrono::steady_clock;
using tools::testing::read_bytes;
using tools::testing::ScratchDir;

const std::string kPbtree = std::string(PBTREE_BIN_DIR) + "/pbtree";
const std::string kChild = std::string(PBTREE_BIN_DIR) + "/pbtree-share-child";
const TypeSpec kBigint = TypeSpec::parse("bigint");

std::vector<uint8_t> key_of(int64_t v) {
  KeyBuffer k;
  build_key(kBigint, default_key_format(kBigint), parse_value(kBigint, std::to_string(v)), false,
            k);
  return {k.bytes().begin(), k.bytes().end()};
}

void make_file(const std::string& path, int64_t n) {
  auto f = IndexFile::open_or_create(path, 8192);
  IndexDefinition def;
  def.name = "I";
  def.type = kBigint;
  def.format = default_key_format(kBigint);
  def.unique = true;
  f->create_index(def);
  for (int64_t v = 1; v <= n; ++v) btree_of(*f, "I").insert(key_of(v), static_cast<uint64_t>(v));
  f->close();
}

void insert_and_close(const std::string& path, int64_t v) {
  auto f = IndexFile::open(path, {.writable = true});
  btree_of(*f, "I").insert(key_of(v), static_cast<uint64_t>(v));
  f->close();
}

std::set<int64_t> values_of(const std::string& path) {
  auto f = IndexFile::open(path);
  std::set<int64_t> out;
  for (Cursor c = btree_of(*f, "I").scan(); c.valid(); c.next()) {
    out.insert(static_cast<int64_t>(c.record_number()));
  }
  return out;
}

std::set<int64_t> one_to(int64_t n) {
  std::set<int64_t> s;
  for (int64_t v = 1; v <= n; ++v) s.insert(v);
  return s;
}

TEST(ShareNames, HardLinkInAnotherDirectoryReachesTheLogOfTheFirstName) {
  ScratchDir dir("names-hard");
  std::filesystem::create_directory(dir.file("sub"));
  const std::string db = dir.file("t.pbt"), other = dir.file("sub/h.pbt");
  make_file(db, 100);
  ASSERT_EQ(::link(db.c_str(), other.c_str()), 0);
  std::set<int64_t> want = one_to(100);
  want.insert({1001, 1002});
  {
    auto reader = IndexFile::open(db);  // keeps the log after each writer
    insert_and_close(db, 1001);
    ASSERT_TRUE(std::filesystem::exists(db + "-wal"));
    insert_and_close(other, 1002);
    EXPECT_FALSE(std::filesystem::exists(other + "-wal"));
    EXPECT_EQ(values_of(other), want);
    EXPECT_EQ(values_of(db), want);
  }
  {
    auto f = IndexFile::open(other, {.writable = true});  // checkpoint under the second name
    EXPECT_TRUE(f->checkpoint(0));
    f->close();
  }
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(other + "-wal"));
  EXPECT_EQ(values_of(db), want);
  EXPECT_EQ(values_of(other), want);
  auto f = IndexFile::open(db);
  EXPECT_EQ(btree_of(*f, "I").verify().entries, want.size());
}

TEST(ShareNames, SymbolicLinkReachesTheLogOfTheFile) {
  ScratchDir dir("names-sym");
  const std::string db = dir.file("t.pbt"), sym = dir.file("s.pbt");
  make_file(db, 100);
  std::filesystem::create_symlink("t.pbt", sym);
  {
    auto reader = IndexFile::open(db);
    insert_and_close(db, 1001);
    insert_and_close(sym, 1002);
    EXPECT_FALSE(std::filesystem::exists(sym + "-wal"));
    std::set<int64_t> want = one_to(100);
    want.insert({1001, 1002});
    EXPECT_EQ(values_of(sym), want);
    EXPECT_EQ(values_of(db), want);
  }
  {
    // the other way round: a log made under the symbolic link, found under the file's name
    auto reader = IndexFile::open(sym);
    insert_and_close(sym, 1003);
    insert_and_close(db, 1004);
  }
  std::set<int64_t> want = one_to(100);
  want.insert({1001, 1002, 1003, 1004});
  EXPECT_EQ(values_of(db), want);
  EXPECT_EQ(values_of(sym), want);
}

TEST(ShareNames, BindMountOfTheFileReachesItsLog) {
  if (::geteuid() != 0) FAIL() << "needs root (as CI has) to bind-mount a file";
  ScratchDir dir("names-bind");
  std::filesystem::create_directory(dir.file("a"));
  std::filesystem::create_directory(dir.file("b"));
  const std::string db = dir.file("a/t.pbt"), bound = dir.file("b/t.pbt");
  make_file(db, 100);
  { std::ofstream(bound).put('\0'); }
  if (::mount(db.c_str(), bound.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    FAIL() << "mount --bind refused: " << std::strerror(errno);
  }
  {
    auto reader = IndexFile::open(db);
    insert_and_close(db, 1001);
    insert_and_close(bound, 1002);
    EXPECT_FALSE(std::filesystem::exists(bound + "-wal"));
  }
  std::set<int64_t> want = one_to(100);
  want.insert({1001, 1002});
  EXPECT_EQ(values_of(bound), want);
  EXPECT_EQ(values_of(db), want);
  ::umount2(bound.c_str(), MNT_DETACH);
}

// Runs `args` (argv[0] included), stdout and stderr into files; returns the exit code.
int run_process(std::vector<std::string> args, const std::string& out, const std::string& err) {
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -2;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Done-when of issue 30: two writer processes under two names (the file and a hard link in
// another directory) and reader processes under a third (a symbolic link) that hold their
// snapshots for a while, so logs outlive their writers: every acknowledged insert is there,
// under every name, and the file verifies.
TEST(ShareNames, TwoWritersUnderTwoNamesAndReadersUnderAThirdLoseNothing) {
  const int seconds = 6;
  ScratchDir dir("names-processes");
  std::filesystem::create_directory(dir.file("sub"));
  const std::string db = dir.file("t.pbt"), hard = dir.file("sub/h.pbt"), sym = dir.file("s.pbt");
  make_file(db, 1000);
  ASSERT_EQ(::link(db.c_str(), hard.c_str()), 0);
  std::filesystem::create_symlink(db, sym);
  const std::string names[2] = {db, hard};
  std::mutex mutex;
  std::set<int64_t> acked;
  std::vector<std::string> errors;
  int per_writer[2] = {0, 0};
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  auto writer = [&](int w) {
    const std::string out = dir.file(fmt::format("w{}.out", w));
    const std::string err = dir.file(fmt::format("w{}.err", w));
    for (int64_t i = 0; Clock::now() < deadline; ++i) {
      const int64_t v = 1000000 * (w + 1) + i;
      const int rc = run_process({kPbtree, "--busy-timeout", "20000", "insert", names[w], "--index",
                                  "I", std::to_string(v), std::to_string(v)},
                                 out, err);
      std::lock_guard lock(mutex);
      if (rc == 0) {
        acked.insert(v);
        ++per_writer[w];
      } else {
        errors.push_back(fmt::format("writer {}: rc {}: {}", w, rc, read_bytes(err)));
      }
    }
  };
  auto reader = [&](int r) {
    const std::string out = dir.file(fmt::format("r{}.out", r));
    const std::string err = dir.file(fmt::format("r{}.err", r));
    while (Clock::now() < deadline) {
      const int rc = run_process({kChild, sym, "I", "200"}, out, err);
      if (rc != 0) {
        std::lock_guard lock(mutex);
        errors.push_back(fmt::format("reader: rc {}: {}", rc, read_bytes(err)));
      }
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(writer, 0);
  threads.emplace_back(writer, 1);
  threads.emplace_back(reader, 0);
  for (auto& t : threads) t.join();
  std::string first;
  for (size_t i = 0; i < errors.size() && i < 3; ++i) first += errors[i];
  EXPECT_EQ(errors.size(), 0u) << first;
  EXPECT_GE(per_writer[0], 3);
  EXPECT_GE(per_writer[1], 3);
  std::set<int64_t> want = acked;
  for (int64_t v = 1; v <= 1000; ++v) want.insert(v);
  EXPECT_EQ(values_of(sym), want);
  EXPECT_EQ(values_of(hard), want);
  EXPECT_EQ(values_of(db), want);
  const std::string out = dir.file("v.out"), err = dir.file("v.err");
  EXPECT_EQ(run_process({kPbtree, "verify", hard}, out, err), 0)
      << read_bytes(out) << read_bytes(err);
  // A log may outlive the last writer (a reader held a snapshot at its close), beside
  // whichever name started it; a checkpoint through the third name must find it and fold it in.
  EXPECT_FALSE(std::filesystem::exists(db + "-wal") && std::filesystem::exists(hard + "-wal"));
  EXPECT_EQ(run_process({kPbtree, "checkpoint", sym}, out, err), 0)
      << read_bytes(out) << read_bytes(err);
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(hard + "-wal"));
  EXPECT_EQ(values_of(db), want);
  std::printf("names: %d s, inserts acknowledged %d + %d\n", seconds, per_writer[0], per_writer[1]);
}

}  // namespace
}  // namespace pbtree
