// Kills during a bulk load of a new index and during the creation of a new file (issue #10
// items 2 and 3): pbtree-crash-child (tests/support/crash_child.cc, --load / --create) is killed
// with SIGKILL at a random moment of its run (uniform over the time an unkilled run takes, from the
// fork: early kills land in process start-up, before the file is touched), or by
// SIGXFSZ when its file outgrows RLIMIT_FSIZE. After each kill `pbtree verify` must pass,
// the new index or file must be absent or complete, and verify must keep passing after the
// next insert (the writer cuts off the pages the load left past the header's page count, so
// the note about them goes too). PBTREE_CRASH_KILLS / 10 kills per test (default 20).
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "btree/btree.h"
#include "file/file_create.h"
#include "file/index_file_access.h"
#include "tests/support/cli_test_util.h"
#include "tests/support/crash_ops.h"
#include "tests/support/watchdog.h"

namespace pbtree::tools::testing {
namespace {

using ::pbtree::testing::Watchdog;

constexpr uint64_t kEntries = 20000;

uint64_t env_kills() {
  const char* v = std::getenv("PBTREE_CRASH_KILLS");
  const uint64_t k = v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) / 10 : 20;
  return std::max<uint64_t>(k, 1);
}

// Runs pbtree-crash-child with `args` and kills it `kill_after` after the fork (never, if
// nullopt: it runs to its end; it must then have printed "R"). `fsize_limit` (bytes, 0: none) is
// set as RLIMIT_FSIZE in the child. Returns the wait status and whether it reported "C".
struct Outcome {
  int status = 0;
  bool completed = false;
  std::chrono::microseconds ran{0};
};

Outcome run_child(const std::vector<std::string>& args,
                  std::optional<std::chrono::microseconds> kill_after, uint64_t fsize_limit = 0) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const std::string exe = std::string(PBTREE_BIN_DIR) + "/pbtree-crash-child";
  std::vector<std::string> storage{exe};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    if (fsize_limit != 0) {
      rlimit rl{fsize_limit, fsize_limit};
      ::setrlimit(RLIMIT_FSIZE, &rl);
    }
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  const auto started = std::chrono::steady_clock::now();
  ::close(fds[1]);
  std::string text;
  auto read_some = [&](int ms) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return true;
    char buf[256];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) return false;
    text.append(buf, static_cast<size_t>(n));
    return true;
  };
  if (kill_after) {
    std::this_thread::sleep_until(started + *kill_after);
    ::kill(pid, SIGKILL);
  }
  Outcome o;
  ::waitpid(pid, &o.status, 0);
  o.ran = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                started);
  while (read_some(0)) {
  }
  ::close(fds[0]);
  o.completed = text.find("C 1\n") != std::string::npos;
  if (!kill_after) {
    EXPECT_EQ(text.substr(0, 2), "R\n") << "child did not start";
  }
  return o;
}

// Entries of index `name`, or -1 if the file has no such index.
int64_t entries_of(const std::string& db, const std::string& name) {
  auto f = IndexFile::open(db);
  if (!f->find_index(name)) return -1;
  int64_t n = 0;
  for (Cursor c = btree_of(*f, name).scan({}); c.valid(); c.next()) ++n;
  return n;
}

class DurabilityCrashLoad : public ::testing::Test {
 protected:
  DurabilityCrashLoad() : dir_("crash-load"), db_(dir_.file("c.pbt")) {}

  // verify exits 0 (a note about pages past the page count allowed only if `note_allowed`).
  // Returns true if it printed that note.
  bool expect_verify_ok(bool note_allowed, const std::string& when) {
    auto r = run({"verify", db_});
    EXPECT_EQ(r.code, 0) << when << ": " << r.out << r.err;
    if (!note_allowed) {
      EXPECT_EQ(r.out.rfind("OK: ", 0), 0u) << when << ": " << r.out;
    }
    return r.out.rfind("note: ", 0) == 0;
  }
  // The next insert into index K, then verify (no note: the writer cut the pages off).
  void insert_and_verify(int64_t key, const std::string& when) {
    auto r = run({"insert", db_, "--index", "K", std::to_string(key), std::to_string(key)});
    ASSERT_EQ(r.code, 0) << when << ": " << r.err;
    expect_verify_ok(false, when + ", after the next insert");
  }
  // The median of three unkilled runs (`cleanup` between them), from fork to exit.
  std::chrono::microseconds unkilled_run(const std::vector<std::string>& args,
                                         const std::function<void()>& cleanup) {
    std::vector<std::chrono::microseconds> runs;
    for (int i = 0; i < 3; ++i) {
      Outcome o = run_child(args, std::nullopt);
      EXPECT_TRUE(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) << "status " << o.status;
      EXPECT_TRUE(o.completed);
      runs.push_back(o.ran);
      cleanup();
    }
    std::sort(runs.begin(), runs.end());
    return runs[1];
  }

  ScratchDir dir_;
  std::string db_;
};

TEST_F(DurabilityCrashLoad, KilledLoadOfANewIndexLeavesAVerifiableFile) {
  Watchdog w(600);
  ASSERT_TRUE(create_file_with(db_, 4096, [](IndexFile& f) {
    EntryBatch b;
    for (int64_t i = 0; i < 500; ++i) b.add(crash::key_of(i), static_cast<uint64_t>(i), 0);
    IndexDefinition d = crash::index_definition();
    f.bulk_load(d, b);
  }));
  const std::string probe = dir_.file("probe.pbt");
  std::filesystem::copy_file(db_, probe);
  const auto full = unkilled_run({"--load", probe, "L", std::to_string(kEntries)}, [&] {
    std::filesystem::remove(probe);
    std::filesystem::copy_file(db_, probe);
  });
  std::mt19937_64 rng(20261201);
  uint64_t absent = 0, complete = 0, orphans = 0;
  const std::string base = dir_.file("base.pbt");
  std::filesystem::copy_file(db_, base);
  for (uint64_t i = 0; i < env_kills(); ++i) {
    // Each kill on a fresh copy of the 500-entry file (verify stays cheap).
    std::filesystem::remove(db_);
    std::filesystem::copy_file(base, db_);
    const std::string name = "L" + std::to_string(i);
    const auto after = std::chrono::microseconds(rng() % (full.count() * 11 / 10 + 1));
    Outcome o = run_child({"--load", db_, name, std::to_string(kEntries)}, after);
    const std::string when =
        "kill " + std::to_string(i) + " after " + std::to_string(after.count()) + " us";
    if (expect_verify_ok(true, when)) ++orphans;
    const int64_t got = entries_of(db_, name);
    if (o.completed) {
      EXPECT_EQ(got, static_cast<int64_t>(kEntries)) << when;
    }
    EXPECT_TRUE(got == -1 || got == static_cast<int64_t>(kEntries)) << when << ": " << got;
    ++(got == -1 ? absent : complete);
    EXPECT_EQ(entries_of(db_, "K"), 500) << when;
    insert_and_verify(1000 + static_cast<int64_t>(i), when);
    EXPECT_EQ(entries_of(db_, "K"), 501) << when;
  }
  std::printf(
      "killed loads: %llu left no index (%llu of them pages past the count), %llu a complete "
      "one (unkilled run %lld us)\n",
      static_cast<unsigned long long>(absent), static_cast<unsigned long long>(orphans),
      static_cast<unsigned long long>(complete), static_cast<long long>(full.count()));
}

TEST_F(DurabilityCrashLoad, LoadKilledBySigxfszLeavesAVerifiableFile) {
  Watchdog w(300);
  ASSERT_TRUE(create_file_with(db_, 4096, [](IndexFile& f) {
    EntryBatch b;
    for (int64_t i = 0; i < 500; ++i) b.add(crash::key_of(i), static_cast<uint64_t>(i), 0);
    f.bulk_load(crash::index_definition(), b);
  }));
  const uint64_t size = std::filesystem::file_size(db_);
  Outcome o =
      run_child({"--load", db_, "L", std::to_string(kEntries)}, std::nullopt, size + 40 * 4096);
  ASSERT_TRUE(WIFSIGNALED(o.status)) << "status " << o.status;
  EXPECT_EQ(WTERMSIG(o.status), SIGXFSZ);
  EXPECT_GT(std::filesystem::file_size(db_), size);  // it wrote pages past the count
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("note: " + db_ + ": 40 pages past the header's page count", 0), 0u)
      << r.out;
  EXPECT_EQ(entries_of(db_, "L"), -1);
  insert_and_verify(1000, "after SIGXFSZ");
}

TEST_F(DurabilityCrashLoad, KilledCreationLeavesNoFileOrAValidOne) {
  Watchdog w(600);
  const std::string probe = dir_.file("probe.pbt");
  const auto full = unkilled_run({"--create", probe, std::to_string(kEntries)},
                                 [&] { std::filesystem::remove(probe); });
  std::mt19937_64 rng(20261202);
  uint64_t absent = 0, complete = 0;
  for (uint64_t i = 0; i < env_kills(); ++i) {
    const auto after = std::chrono::microseconds(rng() % (full.count() * 11 / 10 + 1));
    Outcome o = run_child({"--create", db_, std::to_string(kEntries)}, after);
    const std::string when =
        "kill " + std::to_string(i) + " after " + std::to_string(after.count()) + " us";
    if (!std::filesystem::exists(db_)) {
      EXPECT_FALSE(o.completed) << when;
      ++absent;
      // The path is free: a new load creates the file.
      const std::string csv = dir_.write("k.csv", "1\n2\n");
      auto r = run(
          {"load", db_, "--index", "K", "--type", "bigint", "--page-size", "4096", "--input", csv});
      ASSERT_EQ(r.code, 0) << when << ": " << r.err;
      expect_verify_ok(false, when);
      EXPECT_EQ(entries_of(db_, "K"), 2) << when;
    } else {
      ++complete;
      expect_verify_ok(false, when);
      EXPECT_EQ(entries_of(db_, "K"), static_cast<int64_t>(kEntries)) << when;
    }
    insert_and_verify(100000, when);
    // Next round: no file, no log, no temporary.
    for (const auto& e : std::filesystem::directory_iterator(dir_.file(""))) {
      const std::string n = e.path().filename().string();
      if (n.rfind("c.pbt", 0) == 0) std::filesystem::remove(e.path());
    }
  }
  std::printf("killed creations: %llu left no file, %llu a complete one (unkilled run %lld us)\n",
              static_cast<unsigned long long>(absent), static_cast<unsigned long long>(complete),
              static_cast<long long>(full.count()));
}

}  // namespace
}  // namespace pbtree::tools::testing
