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

// Stable keys are even (recno = value), volatile keys odd. Long-ish keys so the tree is deep.
std::vector<uint8_t> key_of(uint64_t v) {
  std::vector<uint8_t> k(32, static_cast<uint8_t>('a' + v % 7));
  for (int i = 7; i >= 0; --i, v >>= 8) k[i] = static_cast<uint8_t>(v & 0xFF);
  return k;
}

TEST(BtreeTreeConcurrency, TwoReadersOneWriter) {
  TreeEnv env(false, false, 4096, 64);
  const uint64_t stable = 3000;
  for (uint64_t i = 0; i < stable; ++i) env.tree->insert(key_of(2 * i), 2 * i);
  const uint64_t writer_ops = 20000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> reader_ops{0};
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
      while (!done.load() || ops < 40000) {
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
      uint64_t v = 2 * (rng() % 20000) + 1;
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
  std::cout << "concurrency: " << writer_ops << " writer ops, " << reader_ops.load()
            << " reader ops" << std::endl;
  EXPECT_EQ(errors.load(), 0u) << first_error;
  EXPECT_GE(writer_ops + reader_ops.load(), 100000u);
  TreeCheck c = env.tree->verify();
  EXPECT_EQ(c.entries, stable + present.size());
  EXPECT_EQ(env.pool.pinned_frames(), 0u);
}

}  // namespace
}  // namespace pbtree
