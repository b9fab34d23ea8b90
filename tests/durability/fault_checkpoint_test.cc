// Fault injection (page/io.h FaultyIo) into IndexFile checkpoints: for every N from 1 to the
// number of writes/syncs/truncations (and, separately, reads) one checkpoint makes, the N-th
// fails with EIO or is torn (half written, then EIO). Each failure surfaces as an IoError
// from flush(), and reopened with the real Io the file is at the previous checkpoint
// (page/wal.h: the log's fdatasync is a checkpoint's last I/O), passes verify(), and takes a
// clean checkpoint. Two shapes: the first checkpoint of a session (evictions put pages in the
// log beforehand), and a checkpoint that first applies the previous one's committed batch.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/io.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/crash_ops.h"

namespace pbtree {
namespace {

// A file name on tmpfs when there is one (the faults are injected; real fsyncs would only
// slow the many checkpoints down), removed with its log at destruction.
class ShmPath {
 public:
  ShmPath() {
    static int counter = 0;
    std::string dir = ::access("/dev/shm", W_OK) == 0
                          ? "/dev/shm"
                          : std::filesystem::temp_directory_path().string();
    path_ = dir + "/pbtree-fault-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    std::filesystem::remove(path_);
  }
  ~ShmPath() {
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + "-wal");
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// State A: keys 0, 2, .. 3998 (bulk-built). Change 1: odd keys 1, 3, .. 299 (state B).
// Change 2: odd keys 3001, 3003, .. 3299 (state C).
std::set<int64_t> state_a() {
  std::set<int64_t> s;
  for (int64_t k = 0; k < 4000; k += 2) s.insert(k);
  return s;
}
std::set<int64_t> state_b() {
  std::set<int64_t> s = state_a();
  for (int64_t k = 1; k < 300; k += 2) s.insert(k);
  return s;
}
std::set<int64_t> state_c() {
  std::set<int64_t> s = state_b();
  for (int64_t k = 3001; k < 3300; k += 2) s.insert(k);
  return s;
}

void insert_range(IndexFile& f, int64_t from, int64_t to) {
  BTree& t = btree_of(f, "K");
  for (int64_t k = from; k < to; k += 2) t.insert(crash::key_of(k), static_cast<uint64_t>(k));
}

void make_template(const std::string& path) {
  auto f = IndexFile::open_or_create(path, 4096);
  EntryBatch batch;
  for (int64_t k : state_a()) batch.add(crash::key_of(k), static_cast<uint64_t>(k), k);
  f->bulk_load(crash::index_definition(), batch);
}

// Which checkpoint the faults hit.
enum class Shape {
  First,   // template (A) + change 1 with 8 frames (evictions into the log), checkpoint -> B
  Second,  // A + change 1, checkpoint (B, committed in the log), change 2, checkpoint -> C
};

// Opens a copy of the template through `io` and makes the changes before the checkpoint under
// test. Returns the file and the state of the previous checkpoint.
std::unique_ptr<IndexFile> prepare(Shape shape, const std::string& tmpl, const std::string& path,
                                   Io& io, std::set<int64_t>* previous) {
  std::filesystem::copy_file(tmpl, path, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(path + "-wal");
  auto f = IndexFile::open(path, {.writable = true, .io = &io});
  if (shape == Shape::First) {
    f->set_cache_frames(8);  // evictions put pages in the log before the checkpoint
    insert_range(*f, 1, 300);
    *previous = state_a();
  } else {
    f->set_cache_frames(256);  // no eviction: the committed batch stays in the log
    insert_range(*f, 1, 300);
    f->commit();
    EXPECT_GT(f->last_checkpoint().pages_written, 0u);
    insert_range(*f, 3001, 3300);
    *previous = state_b();
  }
  return f;
}

std::set<int64_t> reopened_state(const std::string& path) {
  auto f = IndexFile::open(path, {.writable = true});
  f->set_cache_frames(64);
  BTree& t = btree_of(*f, "K");
  EXPECT_NO_THROW(t.verify());
  std::set<int64_t> out;
  for (const auto& [key, recno] : testing::collect(t.scan({}))) {
    out.insert(static_cast<int64_t>(recno));
  }
  return out;
}

struct Plan {
  uint64_t mutating = 0;   // pwrite + fdatasync + ftruncate calls of one checkpoint
  uint64_t preads = 0;     // pread calls of one checkpoint
  std::string last_call;   // "<op> <path>" of its last call
  uint64_t db_writes = 0;  // pwrite calls on the db file
};

// A clean checkpoint, traced.
Plan plan(Shape shape, const std::string& tmpl, const std::string& path) {
  FaultyIo io;
  std::set<int64_t> previous;
  auto f = prepare(shape, tmpl, path, io, &previous);
  io.clear_trace();
  f->commit();
  Plan p;
  for (const std::string& call : io.trace()) {
    p.last_call = call;
    if (call.rfind("pread ", 0) == 0) {
      ++p.preads;
      continue;
    }
    ++p.mutating;
    if (call == "pwrite " + path) ++p.db_writes;
  }
  f.reset();
  EXPECT_EQ(reopened_state(path), shape == Shape::First ? state_b() : state_c());
  return p;
}

// Runs the checkpoint of `shape` with call `n` of kind `op` failing in `mode`; expects the
// error, then the previous checkpoint after reopen, then a clean checkpoint on top of it.
void fail_and_check(Shape shape, const std::string& tmpl, const std::string& path, FaultyIo::Op op,
                    uint64_t n, FaultyIo::Mode mode) {
  std::set<int64_t> previous;
  {
    FaultyIo io;
    auto f = prepare(shape, tmpl, path, io, &previous);
    io.arm(op, n, mode);
    EXPECT_THROW(f->commit(), IoError);
    EXPECT_TRUE(io.fired());
    // The log refuses further work (an eviction into it, or the next checkpoint).
    EXPECT_THROW(
        {
          insert_range(*f, 5001, 5003);
          f->commit();
        },
        IoError);
  }  // closing neither retries the checkpoint nor applies anything
  EXPECT_EQ(reopened_state(path), previous);
  {
    auto f = IndexFile::open(path, {.writable = true});
    f->set_cache_frames(64);
    insert_range(*f, 7001, 7011);
    f->commit();
  }
  std::set<int64_t> after = previous;
  for (int64_t k = 7001; k < 7011; k += 2) after.insert(k);
  EXPECT_EQ(reopened_state(path), after);
}

class DurabilityFaultCheckpointShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(DurabilityFaultCheckpointShapes, EveryFailingCallLeavesThePreviousCheckpoint) {
  const Shape shape = GetParam();
  ShmPath tmpl, db;
  make_template(tmpl.path());
  const Plan p = plan(shape, tmpl.path(), db.path());
  std::printf(
      "fault test (%s checkpoint): %llu writes/syncs/truncations (%llu writes into the db "
      "file), %llu reads; last call: %s\n",
      shape == Shape::First ? "first" : "second", static_cast<unsigned long long>(p.mutating),
      static_cast<unsigned long long>(p.db_writes), static_cast<unsigned long long>(p.preads),
      p.last_call.c_str());
  EXPECT_EQ(p.last_call, "fdatasync " + db.path() + "-wal");
  if (shape == Shape::First) {
    EXPECT_EQ(p.db_writes, 0u);
    EXPECT_EQ(p.preads, 0u);
  } else {
    EXPECT_GT(p.db_writes, 0u);  // the previous batch goes in place first
    EXPECT_EQ(p.preads, p.db_writes);
  }
  for (FaultyIo::Mode mode : {FaultyIo::Mode::Eio, FaultyIo::Mode::ShortWrite}) {
    for (uint64_t n = 1; n <= p.mutating; ++n) {
      SCOPED_TRACE("mutating call " + std::to_string(n) +
                   (mode == FaultyIo::Mode::Eio ? " (EIO)" : " (torn)"));
      fail_and_check(shape, tmpl.path(), db.path(), FaultyIo::Op::Mutating, n, mode);
    }
  }
  for (uint64_t n = 1; n <= p.preads; ++n) {
    SCOPED_TRACE("read " + std::to_string(n));
    fail_and_check(shape, tmpl.path(), db.path(), FaultyIo::Op::Pread, n, FaultyIo::Mode::Eio);
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoint, DurabilityFaultCheckpointShapes,
                         ::testing::Values(Shape::First, Shape::Second),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return std::string(info.param == Shape::First ? "First" : "Second");
                         });

TEST(DurabilityFaultCheckpoint, CommittedBatchStaysInTheLogUntilTheNextCheckpoint) {
  ShmPath tmpl, db;
  make_template(tmpl.path());
  std::set<int64_t> previous;
  const uint64_t size_a = std::filesystem::file_size(tmpl.path());
  auto f = prepare(Shape::First, tmpl.path(), db.path(), posix_io(), &previous);
  f->commit();
  // Committed in the log; the db file still holds checkpoint A, byte for byte.
  std::ifstream a(tmpl.path(), std::ios::binary), b(db.path(), std::ios::binary);
  std::string bytes_a((std::istreambuf_iterator<char>(a)), {});
  std::string bytes_b((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(bytes_b.size(), size_a);
  EXPECT_TRUE(bytes_a == bytes_b);
  EXPECT_TRUE(std::filesystem::exists(db.path() + "-wal"));
  f.reset();  // close applies it
  EXPECT_FALSE(std::filesystem::exists(db.path() + "-wal"));
  EXPECT_EQ(reopened_state(db.path()), state_b());
}

TEST(DurabilityFaultCheckpoint, ReadOnlyOpenSeesACommittedBatchLeftInTheLog) {
  ShmPath tmpl, db;
  make_template(tmpl.path());
  const uint64_t size_a = std::filesystem::file_size(tmpl.path());
  {
    FaultyIo io;
    std::set<int64_t> previous;
    auto f = prepare(Shape::Second, tmpl.path(), db.path(), io, &previous);
    io.arm(FaultyIo::Op::Pwrite, 1);  // applying batch B: its first write in place
    EXPECT_THROW(f->commit(), IoError);
    EXPECT_TRUE(io.fired());
  }
  ASSERT_TRUE(std::filesystem::exists(db.path() + "-wal"));
  {
    auto f = IndexFile::open(db.path());
    f->set_cache_frames(64);
    std::set<int64_t> got;
    for (const auto& [key, recno] : testing::collect(btree_of(*f, "K").scan({}))) {
      got.insert(static_cast<int64_t>(recno));
    }
    EXPECT_EQ(got, state_b());
    EXPECT_EQ(btree_of(*f, "K").verify().entries, state_b().size());
  }
  EXPECT_EQ(std::filesystem::file_size(db.path()), size_a);  // nothing written
  EXPECT_EQ(reopened_state(db.path()), state_b());           // the writable open replays
  EXPECT_FALSE(std::filesystem::exists(db.path() + "-wal"));
}

TEST(DurabilityFaultCheckpoint, FailedEvictionIntoTheLogKeepsThePreviousCheckpoint) {
  ShmPath tmpl, db;
  make_template(tmpl.path());
  {
    FaultyIo io;
    std::filesystem::copy_file(tmpl.path(), db.path());
    auto f = IndexFile::open(db.path(), {.writable = true, .io = &io});
    f->set_cache_frames(8);
    io.arm(FaultyIo::Op::Pwrite, 1, FaultyIo::Mode::ShortWrite);
    BTree& t = btree_of(*f, "K");
    // The tree outgrows the 8 frames: dirty pages are evicted into the log; the first
    // eviction is torn and fails.
    EXPECT_THROW(for (int64_t k = 10000; k < 30000; ++k)
                     t.insert(crash::key_of(k), static_cast<uint64_t>(k)),
                 IoError);
    EXPECT_TRUE(io.fired());
  }
  EXPECT_EQ(reopened_state(db.path()), state_a());
}

}  // namespace
}  // namespace pbtree
