// Crash safety: pbtree-crash-child (tests/support/crash_child.cc) toggles keys with a checkpoint
// after each batch and is killed with SIGKILL 1-50 ms after it has opened the file; the file is
// then reopened (recovery) and must hold exactly the model state of the last checkpoint the child
// reported (or of the next one, whose commit can land before the report), pass verify(), and
// take new writes. PBTREE_CRASH_KILLS kills (default 200), fixed printed seed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/crash_ops.h"

namespace pbtree {
namespace {

uint64_t env_kills() {
  const char* v = std::getenv("PBTREE_CRASH_KILLS");
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : 200;
}

// A running child with its stdout on a pipe.
struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string text;  // everything read so far

  // Reads what is available, waiting up to `ms` for something; false at end of file.
  bool pump(int ms) {
    pollfd p{out, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return true;
    char buf[4096];
    ssize_t n = ::read(out, buf, sizeof buf);
    if (n <= 0) return false;
    text.append(buf, static_cast<size_t>(n));
    return true;
  }
};

Child spawn(const std::string& db, uint64_t seed) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const std::string exe = std::string(PBTREE_BIN_DIR) + "/pbtree-crash-child";
  const std::string seed_text = std::to_string(seed);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execl(exe.c_str(), exe.c_str(), db.c_str(), seed_text.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  return Child{pid, fds[0], {}};
}

// Batches completed per the child's last complete "C n" line (0 if none).
uint64_t last_reported(const std::string& text) {
  uint64_t last = 0;
  size_t pos = 0;
  while (true) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) break;
    if (text[pos] == 'C') last = std::strtoull(text.c_str() + pos + 2, nullptr, 10);
    pos = end + 1;
  }
  return last;
}

std::set<int64_t> file_state(BTree& t) {
  std::set<int64_t> out;
  for (const auto& [key, recno] : testing::collect(t.scan({}))) {
    EXPECT_EQ(key, crash::key_of(static_cast<int64_t>(recno))) << "record " << recno;
    out.insert(static_cast<int64_t>(recno));
  }
  return out;
}

// Kills the child `kills` times over an index of `layout`; each time the reopened file must
// hold exactly the state of a checkpoint the child reached.
void run_crash_test(NodeLayout layout, uint64_t kills) {
  const uint64_t seed = 20261130;
  std::printf("crash test: seed %llu, %llu kills, %s layout\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(kills),
              layout == NodeLayout::Compact ? "compact" : "firebird");
  // On tmpfs when there is one: a SIGKILL loses no page cache, so fdatasync adds nothing to
  // what this test checks, and on tmpfs it costs nothing.
  const std::string dir =
      std::filesystem::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0
          ? "/dev/shm"
          : std::filesystem::temp_directory_path().string();
  const std::string db = dir + "/pbtree-crash-" + std::to_string(::getpid()) + ".pbt";
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::filesystem::remove(path);
      std::filesystem::remove(path + "-wal");
    }
  } cleanup{db};
  {
    auto f = IndexFile::open_or_create(db, 4096);
    IndexDefinition def = crash::index_definition();
    def.layout = layout;
    f->create_index(def);
  }
  std::mt19937_64 rng(seed);
  std::set<int64_t> model;
  uint64_t total_ops = 0, total_checkpoints = 0, unreported = 0;
  for (uint64_t i = 0; i < kills; ++i) {
    const uint64_t child_seed = seed * 1000 + i;
    Child c = spawn(db, child_seed);
    // Wait until the child has the file open (up to 10 s), then let it run 1..50 ms.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (c.text.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      if (!c.pump(10)) break;
    }
    ASSERT_EQ(c.text.substr(0, 2), "R\n") << "child did not start (kill " << i << ")";
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % 50));
    ::kill(c.pid, SIGKILL);
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    while (c.pump(0)) {
    }
    ::close(c.out);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited by itself: status " << status;
    const uint64_t reported = last_reported(c.text);

    // The model at the reported checkpoint and at the next one.
    crash::OpStream ops(child_seed);
    std::set<int64_t> expected = model;
    uint64_t ops_done = 0;
    for (uint64_t b = 0; b < reported; ++b) {
      std::vector<int64_t> batch = ops.next_batch();
      ops_done += batch.size();
      crash::toggle(expected, batch);
    }
    std::set<int64_t> next = expected;
    const std::vector<int64_t> next_batch = ops.next_batch();
    crash::toggle(next, next_batch);

    auto f = IndexFile::open(db, {.writable = true});
    f->set_cache_frames(64);
    BTree& t = btree_of(*f, "K");
    std::set<int64_t> got = file_state(t);
    if (got == next && got != expected) {
      ++unreported;
      expected = next;
      ops_done += next_batch.size();
    }
    ASSERT_EQ(got, expected) << "kill " << i << " (child seed " << child_seed << "): reported "
                             << reported << " checkpoints";
    ASSERT_EQ(t.verify().entries, expected.size());
    // New writes work: toggle one key and checkpoint.
    int64_t k = static_cast<int64_t>(rng() % crash::kKeySpace);
    if (expected.count(k)) {
      t.remove(crash::key_of(k), static_cast<uint64_t>(k));
    } else {
      t.insert(crash::key_of(k), static_cast<uint64_t>(k));
    }
    f->commit();
    crash::toggle(expected, {k});
    model = expected;
    total_ops += ops_done;
    total_checkpoints += reported;
  }
  std::printf(
      "crash test: %llu kills, %llu ops and %llu checkpoints reported before the kills, "
      "%llu kills after an unreported commit\n",
      static_cast<unsigned long long>(kills), static_cast<unsigned long long>(total_ops),
      static_cast<unsigned long long>(total_checkpoints),
      static_cast<unsigned long long>(unreported));
  EXPECT_GT(total_checkpoints, kills);
}

TEST(DurabilityCrashKill, FileEqualsTheLastCheckpointAfterSigkill) {
  run_crash_test(NodeLayout::Firebird, env_kills());
}

TEST(DurabilityCrashKill, CompactLayoutFileEqualsTheLastCheckpointAfterSigkill) {
  run_crash_test(NodeLayout::Compact, std::max<uint64_t>(env_kills() / 2, 1));
}

}  // namespace
}  // namespace pbtree
