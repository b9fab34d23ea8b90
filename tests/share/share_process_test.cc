// Real processes on one file (issue 9 "Done when"): two writer processes (`pbtree insert`
// loops) and reader processes (`scan`, `verify`, `stat`) for 10 s (PBTREE_SHARE_FULL=1: 30 s),
// then every acknowledged insert is present and nothing else, readers saw no false error, every
// scan held every insert acknowledged before it began and nothing never attempted, and the
// file verifies. And a reader process paused inside a scan does not stop the writer's commits.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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
const TypeSpec kBigint = TypeSpec::parse("bigint");

std::vector<uint8_t> key_of(int64_t v) {
  KeyBuffer k;
  build_key(kBigint, default_key_format(kBigint), parse_value(kBigint, std::to_string(v)), false,
            k);
  return {k.bytes().begin(), k.bytes().end()};
}

// Runs kPbtree with `args`, stdout and stderr into files; returns the exit code (-1: killed).
int run_pbtree(const std::vector<std::string>& args, const std::string& out,
               const std::string& err) {
  std::vector<std::string> storage{kPbtree};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, kPbtree.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -2;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Values in `pbtree scan` output ("VALUE\tRECNO" lines).
std::set<int64_t> scanned_values(const std::string& text) {
  std::set<int64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.insert(std::stoll(line.substr(0, line.find('\t'))));
  return out;
}

// A file with a unique bigint index "I" holding 1..n (record number = value), closed.
void make_file(const std::string& path, int64_t n) {
  auto f = IndexFile::open_or_create(path, 8192);
  IndexDefinition def;
  def.name = "I";
  def.type = kBigint;
  def.format = default_key_format(kBigint);
  def.unique = true;
  f->create_index(def);
  BTree& t = btree_of(*f, "I");
  for (int64_t v = 1; v <= n; ++v) t.insert(key_of(v), static_cast<uint64_t>(v));
  f->close();
}

struct Attempt {
  int64_t value;
  Clock::time_point start, end;
  int rc;
};

TEST(ShareProcesses, TwoWritersAndReadersOnOneFileLoseNothingAndSeeNoFalseErrors) {
  const int seconds = std::getenv("PBTREE_SHARE_FULL") ? 30 : 10;
  const int64_t initial = 1000;
  ScratchDir dir("share-processes");
  const std::string db = dir.file("db.pbt");
  make_file(db, initial);

  std::mutex mutex;
  std::vector<Attempt> attempts;
  std::map<int64_t, Clock::time_point> started;  // value -> when its insert began
  std::vector<std::string> reader_errors;
  std::map<std::string, int> reader_runs;
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);

  auto writer = [&](int w) {
    const std::string out = dir.file(fmt::format("w{}.out", w));
    const std::string err = dir.file(fmt::format("w{}.err", w));
    for (int64_t i = 0; Clock::now() < deadline; ++i) {
      const int64_t v = 1000000 * (w + 1) + i;
      Attempt a{v, Clock::now(), {}, 0};
      {
        std::lock_guard lock(mutex);
        started[v] = a.start;
      }
      a.rc = run_pbtree({"--busy-timeout", "20000", "insert", db, "--index", "I", std::to_string(v),
                         std::to_string(v)},
                        out, err);
      a.end = Clock::now();
      std::lock_guard lock(mutex);
      if (a.rc != 0)
        reader_errors.push_back(fmt::format("writer {}: rc {}: {}", w, a.rc, read_bytes(err)));
      attempts.push_back(a);
    }
  };
  auto reader = [&](const std::string& command, int r) {
    const std::string out = dir.file(fmt::format("r{}.out", r));
    const std::string err = dir.file(fmt::format("r{}.err", r));
    while (Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // leave the writers a core
      std::vector<std::string> args{command, db};
      if (command == "scan") args.insert(args.end(), {"--index", "I"});
      const auto start = Clock::now();
      const int rc = run_pbtree(args, out, err);
      const auto end = Clock::now();
      std::lock_guard lock(mutex);
      ++reader_runs[command];
      const std::string err_text = read_bytes(err);
      if (rc != 0 || !err_text.empty()) {
        reader_errors.push_back(fmt::format("{}: rc {}: {}{}", command, rc, err_text,
                                            command == "scan" ? "" : read_bytes(out)));
        continue;
      }
      if (command == "verify" && read_bytes(out).rfind("OK: ", 0) != 0 &&
          read_bytes(out).find("\nOK: ") == std::string::npos) {
        reader_errors.push_back("verify: " + read_bytes(out));
      }
      if (command != "scan") continue;
      const std::set<int64_t> seen = scanned_values(read_bytes(out));
      for (int64_t v = 1; v <= initial; ++v) {
        if (!seen.count(v)) reader_errors.push_back(fmt::format("scan lost initial {}", v));
      }
      std::set<int64_t> attempted;
      for (const auto& [v, t] : started) {
        if (t < end) attempted.insert(v);
      }
      for (const Attempt& a : attempts) {
        if (a.rc == 0 && a.end < start && !seen.count(a.value)) {
          reader_errors.push_back(fmt::format("scan misses {} acknowledged before it", a.value));
        }
      }
      for (int64_t v : seen) {
        if (v > initial && !attempted.count(v)) {
          reader_errors.push_back(fmt::format("scan holds {}, never attempted", v));
        }
      }
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(writer, 0);
  threads.emplace_back(writer, 1);
  threads.emplace_back(reader, "scan", 0);
  threads.emplace_back(reader, "scan", 1);
  threads.emplace_back(reader, "verify", 2);
  threads.emplace_back(reader, "stat", 3);
  for (auto& t : threads) t.join();

  std::set<int64_t> acked;
  int per_writer[2] = {0, 0};
  for (const Attempt& a : attempts) {
    if (a.rc != 0) continue;
    acked.insert(a.value);
    ++per_writer[a.value / 1000000 - 1];
  }
  // >= 100 each in the full 30 s run (issue 9's figure); the short CI run, on a machine shared
  // with other builds and under sanitizers, only checks that both writers got on.
  const int min_inserts = seconds >= 30 ? 100 : 10;
  EXPECT_GE(per_writer[0], min_inserts);
  EXPECT_GE(per_writer[1], min_inserts);
  EXPECT_GT(reader_runs["scan"], 0);
  EXPECT_GT(reader_runs["verify"], 0);
  EXPECT_GT(reader_runs["stat"], 0);
  std::string first_errors;
  for (size_t i = 0; i < reader_errors.size() && i < 5; ++i) first_errors += reader_errors[i];
  EXPECT_EQ(reader_errors.size(), 0u) << first_errors;
  const std::string out = dir.file("final.out"), err = dir.file("final.err");
  ASSERT_EQ(run_pbtree({"scan", db, "--index", "I"}, out, err), 0) << read_bytes(err);
  std::set<int64_t> expected = acked;
  for (int64_t v = 1; v <= initial; ++v) expected.insert(v);
  EXPECT_EQ(scanned_values(read_bytes(out)), expected);
  EXPECT_EQ(run_pbtree({"verify", db}, out, err), 0) << read_bytes(out) << read_bytes(err);
  RecordProperty("acknowledged_inserts", static_cast<int>(acked.size()));
  RecordProperty("reader_runs", reader_runs["scan"] + reader_runs["verify"] + reader_runs["stat"]);
  std::printf("share: %d s, inserts acknowledged %d + %d, reader runs scan %d verify %d stat %d\n",
              seconds, per_writer[0], per_writer[1], reader_runs["scan"], reader_runs["verify"],
              reader_runs["stat"]);
}

// Commits (one insert each) by a writer in this process during `window`.
int commits_during(IndexFile& writer, int64_t& next, std::chrono::milliseconds window) {
  BTree& t = btree_of(writer, "I");
  int n = 0;
  for (const auto end = Clock::now() + window; Clock::now() < end; ++n) {
    t.insert(key_of(next), static_cast<uint64_t>(next));
    ++next;
    writer.commit();
  }
  return n;
}

TEST(ShareProcesses, ReaderPausedInsideAScanDoesNotStopCommits) {
  const auto window = std::chrono::milliseconds(std::getenv("PBTREE_SHARE_FULL") ? 10000 : 3000);
  ScratchDir dir("share-paused");
  const std::string db = dir.file("db.pbt");
  make_file(db, 5000);
  auto writer = IndexFile::open(db, {.writable = true});
  int64_t next = 100000;
  const int alone = commits_during(*writer, next, window);

  // The reader: a child process paused inside its scan for the whole window.
  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  const std::string child = std::string(PBTREE_BIN_DIR) + "/pbtree-share-child";
  const std::string pause = std::to_string(window.count() + 1000);
  std::vector<std::string> storage{child, db, "I", pause};
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_addclose(&fa, out_pipe[0]);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, child.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  FILE* from_child = ::fdopen(out_pipe[0], "r");
  char line[64] = {};
  ASSERT_NE(std::fgets(line, sizeof line, from_child), nullptr);
  ASSERT_EQ(std::string(line), "paused\n");
  const uint64_t committed_before = 5000 + static_cast<uint64_t>(alone);
  const int with_reader = commits_during(*writer, next, window);
  // The checkpoint waits for the reader: the log holds every commit since it began.
  EXPECT_GT(writer->log_committed_frames(), 0u);
  ASSERT_NE(std::fgets(line, sizeof line, from_child), nullptr);
  std::fclose(from_child);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The reader's scan saw its snapshot: the entries committed before it opened.
  EXPECT_EQ(std::stoull(line), committed_before);
  EXPECT_GE(2 * with_reader, alone)
      << "commits alone " << alone << ", with a paused reader " << with_reader;
  std::printf("share: commits in %lld ms: %d alone, %d with a reader paused in a scan\n",
              static_cast<long long>(window.count()), alone, with_reader);
  EXPECT_TRUE(writer->checkpoint(1000));
  EXPECT_EQ(writer->log_committed_frames(), 0u);
  writer->close();
}

}  // namespace
}  // namespace pbtree
