// The operation stream shared by the crash-test child (tests/support/crash_child.cc) and its parent
// test (tests/durability/crash_kill_test.cc): from a seed, a sequence of batches (a checkpoint
// after each), each a run of bigint keys to toggle (insert if absent, else remove; record number =
// the key). The parent replays it against a model to know what each checkpoint holds.
#pragma once

#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace pbtree::crash {

/// Index of the crash-test file.
inline IndexDefinition index_definition() {
  IndexDefinition d;
  d.name = "K";
  d.type = TypeSpec::parse("bigint");
  d.format = default_key_format(d.type);
  d.unique = true;
  return d;
}

/// Normalized key of `v` in index_definition().
inline std::vector<uint8_t> key_of(int64_t v) {
  static const IndexDefinition d = index_definition();
  KeyBuffer kb;
  build_key(d.type, d.format, Value::exact(v), d.descending, kb);
  return std::vector<uint8_t>(kb.data, kb.data + kb.length);
}

/// Keys 0 .. kKeySpace - 1; batches of 1 .. kMaxBatch operations.
inline constexpr uint64_t kKeySpace = 3000;
inline constexpr uint64_t kMaxBatch = 30;

/// Batches of operations from a seed.
class OpStream {
 public:
  explicit OpStream(uint64_t seed) : rng_(seed) {}
  /// The keys of the next batch.
  std::vector<int64_t> next_batch() {
    std::vector<int64_t> keys(1 + rng_() % kMaxBatch);
    for (int64_t& k : keys) k = static_cast<int64_t>(rng_() % kKeySpace);
    return keys;
  }

 private:
  std::mt19937_64 rng_;
};

/// Applies `keys` to the model: toggles each.
inline void toggle(std::set<int64_t>& model, const std::vector<int64_t>& keys) {
  for (int64_t k : keys) {
    if (!model.erase(k)) model.insert(k);
  }
}

}  // namespace pbtree::crash
