// Fault injection (page/io.h FaultyIo) into an IndexFile checkpoint: for every N from 1 to the
// number of writes/syncs/truncations one checkpoint makes, the N-th fails with EIO or is torn
// (half written, then EIO); reads of the log fail likewise. Each failure surfaces as an
// IoError from flush(); reopened with the real Io, the file is at the previous checkpoint if
// the failure came before the log's commit record was synced, else at the new one, and passes
// verify().
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "btree/index_file.h"
#include "btree_tree_fixture.h"
#include "crash_ops.h"
#include "page/io.h"

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

// State A: keys 0, 2, .. 3998 (bulk-built). The change: odd keys 1, 3, .. 599 (state B).
std::set<int64_t> state_a() {
  std::set<int64_t> s;
  for (int64_t k = 0; k < 4000; k += 2) s.insert(k);
  return s;
}
std::set<int64_t> state_b() {
  std::set<int64_t> s = state_a();
  for (int64_t k = 1; k < 600; k += 2) s.insert(k);
  return s;
}

void make_template(const std::string& path) {
  auto f = IndexFile::open_or_create(path, 4096);
  EntryBatch batch;
  for (int64_t k : state_a()) batch.add(crash::key_of(k), static_cast<uint64_t>(k), k);
  f->bulk_load(crash::index_definition(), batch);
}

// Opens a copy of the template through `io` and inserts the change (not yet checkpointed).
std::unique_ptr<IndexFile> open_changed(const std::string& tmpl, const std::string& path, Io& io) {
  std::filesystem::copy_file(tmpl, path, std::filesystem::copy_options::overwrite_existing);
  auto f = IndexFile::open(path, true, io);
  f->set_cache_frames(8);  // evictions put pages in the log before the checkpoint
  BTree& t = f->tree("K");
  for (int64_t k = 1; k < 600; k += 2) t.insert(crash::key_of(k), static_cast<uint64_t>(k));
  return f;
}

std::set<int64_t> reopened_state(const std::string& path) {
  auto f = IndexFile::open(path, true);
  f->set_cache_frames(64);
  BTree& t = f->tree("K");
  EXPECT_NO_THROW(t.verify());
  std::set<int64_t> out;
  for (const auto& [key, recno] : testing::collect(t.scan({}))) {
    out.insert(static_cast<int64_t>(recno));
  }
  return out;
}

struct Plan {
  uint64_t mutating = 0;  // pwrite + fdatasync + ftruncate calls of one checkpoint
  uint64_t commit = 0;    // 1-based position among them of the log's fdatasync (commit point)
  uint64_t preads = 0;
};

// A clean checkpoint, traced.
Plan plan(const std::string& tmpl, const std::string& path) {
  FaultyIo io;
  auto f = open_changed(tmpl, path, io);
  io.clear_trace();
  f->flush();
  Plan p;
  for (const std::string& call : io.trace()) {
    if (call.rfind("pread ", 0) == 0) {
      ++p.preads;
      continue;
    }
    ++p.mutating;
    if (p.commit == 0 && call == "fdatasync " + path + "-wal") p.commit = p.mutating;
  }
  f.reset();
  EXPECT_EQ(reopened_state(path), state_b());
  return p;
}

TEST(FaultCheckpoint, EveryFailingCallLeavesTheOldOrTheNewCheckpoint) {
  ShmPath tmpl, db;
  make_template(tmpl.path());
  const Plan p = plan(tmpl.path(), db.path());
  std::printf(
      "fault test: one checkpoint makes %llu writes/syncs/truncations (commit point at "
      "%llu) and %llu reads\n",
      static_cast<unsigned long long>(p.mutating), static_cast<unsigned long long>(p.commit),
      static_cast<unsigned long long>(p.preads));
  ASSERT_GT(p.commit, 2u);
  ASSERT_GT(p.mutating, p.commit);
  int old_state = 0, new_state = 0;
  for (FaultyIo::Mode mode : {FaultyIo::Mode::Eio, FaultyIo::Mode::ShortWrite}) {
    for (uint64_t n = 1; n <= p.mutating; ++n) {
      SCOPED_TRACE("mutating call " + std::to_string(n) +
                   (mode == FaultyIo::Mode::Eio ? " (EIO)" : " (torn)"));
      {
        FaultyIo io;
        auto f = open_changed(tmpl.path(), db.path(), io);
        io.arm(FaultyIo::Op::Mutating, n, mode);
        EXPECT_THROW(f->flush(), IoError);
        EXPECT_TRUE(io.fired());
        EXPECT_THROW(f->tree("K").insert(crash::key_of(5001), 5001), IoError);
      }  // closing does not retry the checkpoint
      const bool committed = n > p.commit;
      EXPECT_EQ(reopened_state(db.path()), committed ? state_b() : state_a());
      ++(committed ? new_state : old_state);
    }
  }
  for (uint64_t n = 1; n <= p.preads; ++n) {
    SCOPED_TRACE("read " + std::to_string(n));
    {
      FaultyIo io;
      auto f = open_changed(tmpl.path(), db.path(), io);
      io.arm(FaultyIo::Op::Pread, n);
      EXPECT_THROW(f->flush(), IoError);
    }
    EXPECT_EQ(reopened_state(db.path()), state_b());  // the log is only read after the commit
    ++new_state;
  }
  std::printf("fault test: %d failures left the previous checkpoint, %d the new one\n", old_state,
              new_state);
}

TEST(FaultCheckpoint, ReadOnlyOpenSeesACommittedBatchLeftInTheLog) {
  ShmPath tmpl, db;
  make_template(tmpl.path());
  const Plan p = plan(tmpl.path(), db.path());
  const uint64_t size_a = std::filesystem::file_size(tmpl.path());
  {
    FaultyIo io;
    auto f = open_changed(tmpl.path(), db.path(), io);
    io.arm(FaultyIo::Op::Mutating, p.commit + 1);  // the first write in place
    EXPECT_THROW(f->flush(), IoError);
  }
  ASSERT_TRUE(std::filesystem::exists(db.path() + "-wal"));
  {
    auto f = IndexFile::open(db.path(), false);
    f->set_cache_frames(64);
    std::set<int64_t> got;
    for (const auto& [key, recno] : testing::collect(f->tree("K").scan({}))) {
      got.insert(static_cast<int64_t>(recno));
    }
    EXPECT_EQ(got, state_b());
    EXPECT_EQ(f->tree("K").verify().entries, state_b().size());
  }
  EXPECT_EQ(std::filesystem::file_size(db.path()), size_a);  // nothing written
  EXPECT_EQ(reopened_state(db.path()), state_b());           // the writable open replays
  EXPECT_FALSE(std::filesystem::exists(db.path() + "-wal"));
}

TEST(FaultCheckpoint, FailedEvictionIntoTheLogKeepsThePreviousCheckpoint) {
  ShmPath tmpl, db;
  make_template(tmpl.path());
  {
    FaultyIo io;
    std::filesystem::copy_file(tmpl.path(), db.path());
    auto f = IndexFile::open(db.path(), true, io);
    f->set_cache_frames(8);
    io.arm(FaultyIo::Op::Pwrite, 1, FaultyIo::Mode::ShortWrite);
    BTree& t = f->tree("K");
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
