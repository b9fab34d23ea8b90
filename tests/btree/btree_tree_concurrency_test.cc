// Readers and a writer on one tree at once: 2 reader threads scan and look up while 1 writer
// inserts and removes. Every scan must come back strictly sorted, every lookup of a key that
// is never removed must succeed, and the tree must verify at the end.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TreeEnv;

// Stable keys are even (recno = value), volatile keys odd; `len` bytes long (8 or more).
std::vector<uint8_t> key_of(uint64_t v, size_t len) {
  std::vector<uint8_t> k(len, static_cast<uint8_t>('a' + v % 7));
  for (int i = 7; i >= 0; --i, v >>= 8) k[i] = static_cast<uint8_t>(v & 0xFF);
  return k;
}

// 2 readers (lookups of stable keys, short forward and backward scans) against 1 writer
// (inserts and removes of volatile keys) on a tree of `key_len`-byte keys in 4 KiB pages and
// a 64-frame pool (so pages are evicted and read back while the readers run). The readers'
// descents route non-leaf pages through their route tables without a latch
// (btree/tree.cc), validated against the writer's exclusive latches.
void run_two_readers_one_writer(size_t key_len, uint64_t stable, uint64_t writer_ops,
                                uint64_t min_reader_ops) {
  TreeEnv env(false, false, 4096, 64);
  auto key_of = [key_len](uint64_t v) { return pbtree::key_of(v, key_len); };
  for (uint64_t i = 0; i < stable; ++i) env.tree->insert(key_of(2 * i), 2 * i);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> reader_ops{0};
  std::atomic<uint64_t> optimistic_steps{0};
  std::atomic<uint64_t> errors{0};
  std::string first_error;
  std::mutex error_mutex;
  auto report = [&](const std::string& what) {
    if (errors.fetch_add(1) == 0) {
      std::lock_guard l(error_mutex);
      first_error = what;
    }
  };

  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    uint64_t ops = 0;
    try {
      const uint64_t steps0 = optimistic_descent_steps();
      while (!done.load() || ops < min_reader_ops) {
        uint64_t v = 2 * (rng() % stable);
        if (rng() % 2 == 0) {
          std::vector<uint64_t> got = env.tree->find(key_of(v));
          if (got != std::vector<uint64_t>{v}) report(fmt::format("find {} failed", v));
        } else {
          ScanRange r;
          r.lower = KeyBound{key_of(v), rng() % 2 == 0};
          r.backward = rng() % 2 == 0;
          if (r.backward) {
            r.upper = r.lower;
            r.lower.reset();
          }
          std::vector<uint8_t> prev;
          uint64_t prev_recno = 0;
          size_t n = 0;
          uint64_t stable_seen = 0;
          for (Cursor c = env.tree->scan(r); c.valid() && n < 60; c.next(), ++n) {
            std::vector<uint8_t> k(c.key().begin(), c.key().end());
            if (n > 0) {
              int cmp = compare_keys(prev, k, false);
              bool sorted = r.backward ? (cmp > 0 || (cmp == 0 && prev_recno > c.record_number()))
                                       : (cmp < 0 || (cmp == 0 && prev_recno < c.record_number()));
              if (!sorted) report(fmt::format("scan from {} not sorted at item {}", v, n));
            }
            if (c.record_number() % 2 == 0) ++stable_seen;
            prev = std::move(k);
            prev_recno = c.record_number();
          }
          // Stable keys are at most one volatile key apart below 2 * stable: 60 items walked
          // there include stable ones (unless a reader skipped them).
          bool inside = r.backward || v + 200 < 2 * stable;
          if (n == 60 && inside && stable_seen < 20)
            report(fmt::format("scan from {} saw no stable key", v));
        }
        ++ops;
      }
      optimistic_steps += optimistic_descent_steps() - steps0;
    } catch (const std::exception& e) {
      report(std::string("reader: ") + e.what());
    }
    reader_ops += ops;
  };

  std::thread r1(reader, 1), r2(reader, 2);
  std::mt19937_64 rng(3);
  std::set<uint64_t> present;
  try {
    for (uint64_t i = 0; i < writer_ops; ++i) {
      uint64_t v = 2 * (rng() % writer_ops) + 1;
      if (present.count(v)) {
        env.tree->remove(key_of(v), v);
        present.erase(v);
      } else {
        env.tree->insert(key_of(v), v);
        present.insert(v);
      }
    }
  } catch (const std::exception& e) {
    report(std::string("writer: ") + e.what());
  }
  done = true;
  r1.join();
  r2.join();
  PageRef root = env.pool.pin(env.tree->root());
  const int levels = BtreePage(root.data()).level() + 1;
  root.reset();
  std::cout << "concurrency (" << key_len << "-byte keys, " << levels << " levels): " << writer_ops
            << " writer ops, " << reader_ops.load() << " reader ops, " << optimistic_steps.load()
            << " non-leaf pages routed without a latch" << std::endl;
  EXPECT_EQ(errors.load(), 0u) << first_error;
  EXPECT_GE(reader_ops.load(), 2 * min_reader_ops);
  EXPECT_GT(optimistic_steps.load(), 0u);
  TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.entries, stable + present.size());
  EXPECT_EQ(env.pool.pinned_frames(), 0u);
}

TEST(BtreeTreeConcurrency, TwoReadersOneWriter) {
  run_two_readers_one_writer(32, 3000, 20000, 40000);
}

// 200-byte keys: three and four levels, so the readers route through several non-leaf
// levels while the writer splits and merges them.
TEST(BtreeTreeConcurrency, TwoReadersOneWriterDeepTree) {
  run_two_readers_one_writer(200, 3000, 6000, 20000);
}

}  // namespace
}  // namespace pbtree
