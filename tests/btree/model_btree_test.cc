// Model-based test of the living B-tree: random inserts, removes, finds and range/prefix scans
// (random bounds and direction) against a std::set of (key bytes, record number) in index
// order, with duplicates and NULLs, unique and non-unique, ascending and descending indexes,
// and a structural verify() every 10^4 operations. The seed and the operation count are
// printed; PBTREE_MODEL_OPS (total over all configurations) and PBTREE_MODEL_SEED override
// the defaults. After every insert and remove, every changed page's in-memory directory is
// brought up to date lazily (a search) and compared with one built from scratch
// (tests/support/directory_check.h). A twin tree takes the same operations with the leaf
// writer's splits turned off (WriterCache::leaf_splits: every split from the general path's
// page image) as the oracle of the one split's other sources (the leaf's over-full node bytes,
// the rightmost split in the frame): at every check both files hold the same pages, byte for
// byte.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>

#include "btree/leaf_writer.h"
#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/directory_check.h"

namespace pbtree {
namespace {

using testing::TreeEnv;
using Entry = std::pair<std::vector<uint8_t>, uint64_t>;

struct EntryLess {
  bool descending;
  bool operator()(const Entry& a, const Entry& b) const {
    int c = compare_keys(a.first, b.first, descending);
    if (c != 0) return c < 0;
    return a.second < b.second;
  }
};

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// Typed: real normalized keys of `type` in `format` (build_key), one index per key format.
// VeryLongText: text keys up to the longest varchar of the page size (page_size/4 - 9 bytes),
// often with long runs of one byte: pages of a few nodes, nodes longer than the jump interval.
enum class KeyShape { ShortBytes, BigEndianInt, LongText, Typed, VeryLongText };

struct ModelConfig {
  bool unique;
  bool descending;
  KeyShape shape;
  uint32_t page_size;
  const char* type = "bigint";
  KeyFormat format = KeyFormat::RescaledDouble;
  NodeLayout layout = NodeLayout::Firebird;
};

class ModelRun {
 public:
  ModelRun(const ModelConfig& cfg, uint64_t seed)
      : cfg_(cfg),
        env_(cfg.unique, cfg.descending, cfg.page_size, 64, 576, cfg.layout),
        oracle_(cfg.unique, cfg.descending, cfg.page_size, 64, 576, cfg.layout),
        rng_(seed),
        model_(EntryLess{cfg.descending}) {
    LeafWriter::cache(*oracle_.tree, cfg.page_size).leaf_splits = false;
    // A pool of distinct keys, small enough that keys repeat (duplicates), plus NULL.
    const size_t pool_size =
        cfg.shape == KeyShape::LongText || cfg.shape == KeyShape::VeryLongText ? 3000 : 20000;
    auto less = [](const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
      return compare_keys(a, b, false) < 0;
    };
    std::set<std::vector<uint8_t>, decltype(less)> seen(less);
    while (keys_.size() < pool_size) {
      std::vector<uint8_t> k = make_key();
      if (seen.insert(k).second) keys_.push_back(std::move(k));
    }
    keys_.push_back(null_key());
  }

  std::vector<uint8_t> null_key() const {
    return cfg_.descending ? std::vector<uint8_t>{0xFF} : std::vector<uint8_t>{};
  }

  std::vector<uint8_t> make_key() {
    std::vector<uint8_t> k;
    switch (cfg_.shape) {
      case KeyShape::ShortBytes: {
        // Few distinct bytes: long shared prefixes, keys that are prefixes of others.
        size_t len = 1 + rng_() % 10;
        for (size_t i = 0; i < len; ++i)
          k.push_back(static_cast<uint8_t>("\x00\x01\x41\x42\xFE\xFF"[rng_() % 6]));
        break;
      }
      case KeyShape::BigEndianInt: {
        uint64_t v = rng_() % 1000000;
        k = testing::be_key(v, 8);
        while (k.size() > 1 && k.back() == 0) k.pop_back();  // suffix compression, as keys do
        break;
      }
      case KeyShape::LongText: {
        size_t len = 1 + rng_() % 200;
        for (size_t i = 0; i < len; ++i) k.push_back(static_cast<uint8_t>('a' + rng_() % 3));
        break;
      }
      case KeyShape::VeryLongText: {
        const size_t len = 1 + rng_() % (cfg_.page_size / 4 - 9);
        const size_t run = rng_() % 2 == 0 ? rng_() % len : 0;
        for (size_t i = 0; i < len; ++i)
          k.push_back(static_cast<uint8_t>(i < run ? 'a' : 'a' + rng_() % 3));
        break;
      }
      case KeyShape::Typed:
        return make_typed_key();  // build_key already inverts descending keys
    }
    if (cfg_.descending) {
      for (auto& b : k) b = static_cast<uint8_t>(~b);
    }
    if (k == null_key()) k.push_back(0x41);
    return k;
  }

  // A random non-NULL value of cfg_.type, from small magnitudes up to the type's edges.
  std::vector<uint8_t> make_typed_key() {
    const TypeSpec type = TypeSpec::parse(cfg_.type);
    KeyBuffer buf;
    std::string text;
    Value v;
    switch (type.type) {
      case ColumnType::Double:
        v = Value::of_double(static_cast<double>(static_cast<int64_t>(rng_() % 2000001) - 1000000) /
                             static_cast<double>(1 + rng_() % 1000));
        break;
      case ColumnType::Varchar: {
        size_t len = rng_() % 12;
        for (size_t i = 0; i < len; ++i) text.push_back(static_cast<char>("ab z"[rng_() % 4]));
        v = Value::of_text(text);
        break;
      }
      default: {
        const int bits = type.storage_bits();
        const int shift = static_cast<int>(rng_() % static_cast<uint64_t>(bits - 1));
        __int128 mag =
            static_cast<__int128>(rng_() | (static_cast<unsigned __int128>(rng_()) << 64));
        if (mag < 0) mag = -mag;
        mag >>= (127 - shift);
        if (type.type == ColumnType::Numeric) {
          __int128 limit = 1;
          for (int i = 0; i < type.precision; ++i) limit *= 10;
          mag %= limit;
        }
        v = Value::exact(rng_() % 2 == 0 ? mag : -mag, type.scale);
        break;
      }
    }
    build_key(type, cfg_.format, v, cfg_.descending, buf);
    std::vector<uint8_t> k(buf.data, buf.data + buf.length);
    if (k == null_key()) k.push_back(0x41);
    return k;
  }

  uint64_t random_recno() {
    // Mostly a small range (exact-pair collisions), sometimes anywhere in 40 bits.
    return rng_() % 8 == 0 ? rng_() % (kMaxRecordNumber + 1) : rng_() % 64;
  }

  bool key_exists(const std::vector<uint8_t>& key) const {
    auto it = model_.lower_bound(Entry{key, 0});
    return it != model_.end() && it->first == key;
  }

  void insert() {
    const std::vector<uint8_t>& key = keys_[rng_() % keys_.size()];
    uint64_t recno = random_recno();
    bool is_null = key == null_key();
    bool expect_fail =
        model_.count(Entry{key, recno}) > 0 || (cfg_.unique && !is_null && key_exists(key));
    if (expect_fail) {
      EXPECT_THROW(env_.tree->insert(key, recno), UsageError) << context();
      EXPECT_THROW(oracle_.tree->insert(key, recno), UsageError) << context();
      ++refused_;
    } else {
      env_.tree->insert(key, recno);
      oracle_.tree->insert(key, recno);
      model_.insert(Entry{key, recno});
      dirs_.check_after_change(key);
    }
  }

  void remove() {
    if (!model_.empty() && rng_() % 5 != 0) {
      // An existing entry near a random key.
      auto it = model_.lower_bound(Entry{keys_[rng_() % keys_.size()], 0});
      if (it == model_.end()) it = model_.begin();
      Entry e = *it;
      env_.tree->remove(e.first, e.second);
      oracle_.tree->remove(e.first, e.second);
      model_.erase(it);
      dirs_.check_after_change(e.first);
    } else {
      const std::vector<uint8_t>& key = keys_[rng_() % keys_.size()];
      uint64_t recno = random_recno();
      if (model_.count(Entry{key, recno})) return;
      EXPECT_THROW(env_.tree->remove(key, recno), UsageError) << context();
      EXPECT_THROW(oracle_.tree->remove(key, recno), UsageError) << context();
    }
  }

  void find() {
    const std::vector<uint8_t>& key = keys_[rng_() % keys_.size()];
    std::vector<uint64_t> expected;
    for (auto it = model_.lower_bound(Entry{key, 0}); it != model_.end() && it->first == key;
         ++it) {
      expected.push_back(it->second);
    }
    ASSERT_EQ(env_.tree->find(key), expected) << context();
  }

  std::optional<KeyBound> random_bound() {
    switch (rng_() % 3) {
      case 0:
        return std::nullopt;
      case 1:
        return KeyBound{keys_[rng_() % keys_.size()], true};
      default:
        return KeyBound{keys_[rng_() % keys_.size()], false};
    }
  }

  void scan() {
    ScanRange r;
    r.lower = random_bound();
    r.upper = random_bound();
    r.backward = rng_() % 2 == 0;
    if (rng_() % 4 == 0) {
      const std::vector<uint8_t>& k = keys_[rng_() % keys_.size()];
      r.prefix =
          std::vector<uint8_t>(k.begin(), k.begin() + std::min<size_t>(k.size(), rng_() % 3));
    }
    const bool desc = cfg_.descending;
    auto in_range = [&](const std::vector<uint8_t>& key) {
      if (r.lower) {
        int c = compare_keys(key, r.lower->key, desc);
        if (c < 0 || (c == 0 && !r.lower->inclusive)) return false;
      }
      if (r.upper) {
        int c = compare_keys(key, r.upper->key, desc);
        if (c > 0 || (c == 0 && !r.upper->inclusive)) return false;
      }
      if (r.prefix && (key.size() < r.prefix->size() ||
                       !std::equal(r.prefix->begin(), r.prefix->end(), key.begin()))) {
        return false;
      }
      return true;
    };
    const size_t limit = 1 + rng_() % 300;
    std::vector<Entry> expected;
    if (!r.backward) {
      for (auto it = model_.begin(); it != model_.end() && expected.size() < limit; ++it) {
        if (in_range(it->first)) expected.push_back(*it);
      }
    } else {
      for (auto it = model_.rbegin(); it != model_.rend() && expected.size() < limit; ++it) {
        if (in_range(it->first)) expected.push_back(*it);
      }
    }
    std::vector<Entry> got;
    for (Cursor c = env_.tree->scan(r); c.valid() && got.size() < limit; c.next()) {
      got.emplace_back(std::vector<uint8_t>(c.key().begin(), c.key().end()), c.record_number());
    }
    ASSERT_EQ(got, expected) << context();
  }

  void check() {
    TreeCheck c = env_.tree->verify();
    ASSERT_EQ(c.entries, model_.size()) << context();
    // The oracle's pages (bytes 16..: 0..15 are the generic page header, set when written).
    ASSERT_EQ(env_.alloc.in_use(), oracle_.alloc.in_use()) << context();
    ASSERT_EQ(env_.tree->root(), oracle_.tree->root()) << context();
    const uint32_t ps = env_.pool.page_size();
    for (uint32_t p = 1; p <= env_.alloc.in_use(); ++p) {
      PageRef a = env_.pool.pin(p);
      PageRef b = oracle_.pool.pin(p);
      ASSERT_EQ(std::memcmp(a.data() + 16, b.data() + 16, ps - 16), 0)
          << "page " << p << " " << context();
    }
  }

  std::string context() const { return fmt::format("after {} operations", ops_); }

  void run(uint64_t ops) {
    for (ops_ = 0; ops_ < ops; ++ops_) {
      // Phases: grow, then shrink, then mixed, so pages split and merge.
      uint64_t phase = (ops_ * 3) / ops;
      uint32_t dice = rng_() % 100;
      uint32_t insert_share = phase == 0 ? 70 : (phase == 1 ? 20 : 45);
      if (dice < insert_share) {
        insert();
      } else if (dice < 80) {
        remove();
      } else if (dice < 92) {
        find();
      } else {
        scan();
      }
      if (::testing::Test::HasFatalFailure()) return;
      if ((ops_ + 1) % 10000 == 0) check();
      if (::testing::Test::HasFatalFailure()) return;
    }
    check();
  }

  size_t size() const { return model_.size(); }
  uint64_t refused() const { return refused_; }
  uint64_t maintained() const { return dirs_.maintained(); }

 private:
  ModelConfig cfg_;
  TreeEnv env_;
  TreeEnv oracle_;
  testing::DirectoryCheck dirs_{env_.pool, cfg_.descending};
  std::mt19937_64 rng_;
  std::set<Entry, EntryLess> model_;
  std::vector<std::vector<uint8_t>> keys_;
  uint64_t ops_ = 0;
  uint64_t refused_ = 0;
};

class BtreeModelBtree : public ::testing::TestWithParam<ModelConfig> {};

constexpr uint64_t kConfigurations = 16;  // the Values() list below

TEST_P(BtreeModelBtree, MatchesModel) {
  const uint64_t total = env_u64("PBTREE_MODEL_OPS", 80000);
  // Compact trees write through the page-image path (slower): half the operations.
  const uint64_t ops = std::max<uint64_t>(
      total / kConfigurations / (GetParam().layout == NodeLayout::Compact ? 2 : 1), 1);
  const uint64_t seed = env_u64("PBTREE_MODEL_SEED", 20261130) +
                        static_cast<uint64_t>(GetParam().shape) * 1000 +
                        static_cast<uint64_t>(GetParam().format) * 100 + GetParam().unique * 10 +
                        GetParam().descending + static_cast<uint64_t>(GetParam().layout) * 100000;
  std::cout << "model test: seed " << seed << ", " << ops << " operations, type "
            << (GetParam().shape == KeyShape::Typed ? GetParam().type : "bytes") << ", "
            << (GetParam().layout == NodeLayout::Compact ? "compact" : "firebird") << " layout"
            << std::endl;
  RecordProperty("seed", std::to_string(seed));
  ModelRun run(GetParam(), seed);
  run.run(ops);
  std::cout << "model test: " << run.size() << " entries at the end, " << run.refused()
            << " inserts refused, " << run.maintained()
            << " page directories kept current by the writer" << std::endl;
}

// How gtest prints a configuration (test listings, failure messages).
void PrintTo(const ModelConfig& c, std::ostream* os) {
  *os << (c.unique ? "unique " : "") << (c.descending ? "descending " : "") << c.type << " "
      << key_format_name(c.format) << " " << c.page_size << " B pages"
      << (c.layout == NodeLayout::Compact ? " compact" : "");
}

// Test names such as 3_Unique_Descending_BigEndianInt_bigint_rescaled_double_4096.
std::string config_name(const ::testing::TestParamInfo<ModelConfig>& info) {
  static const char* const kShapes[] = {"ShortBytes", "BigEndianInt", "LongText", "Typed",
                                        "VeryLongText"};
  const ModelConfig& c = info.param;
  std::string name = std::to_string(info.index) + (c.unique ? "_Unique" : "_Dups") +
                     (c.descending ? "_Descending_" : "_Ascending_") +
                     kShapes[static_cast<int>(c.shape)] + "_" + c.type + "_" +
                     std::string(key_format_name(c.format)) + "_" + std::to_string(c.page_size);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Configurations, BtreeModelBtree,
    ::testing::Values(
        ModelConfig{false, false, KeyShape::ShortBytes, 4096},
        ModelConfig{true, false, KeyShape::ShortBytes, 4096},
        ModelConfig{false, true, KeyShape::ShortBytes, 4096},
        ModelConfig{true, true, KeyShape::BigEndianInt, 4096},
        ModelConfig{false, false, KeyShape::BigEndianInt, 4096},
        ModelConfig{false, true, KeyShape::BigEndianInt, 8192},
        ModelConfig{false, false, KeyShape::LongText, 4096},
        ModelConfig{true, true, KeyShape::LongText, 4096},
        ModelConfig{false, false, KeyShape::Typed, 4096, "integer", KeyFormat::Double},
        ModelConfig{true, true, KeyShape::Typed, 4096, "double", KeyFormat::Double},
        ModelConfig{false, true, KeyShape::Typed, 4096, "bigint", KeyFormat::RescaledDouble},
        ModelConfig{true, false, KeyShape::Typed, 4096, "bigint", KeyFormat::Decimal128},
        ModelConfig{false, false, KeyShape::Typed, 4096, "int128", KeyFormat::Bcd},
        ModelConfig{false, true, KeyShape::Typed, 4096, "numeric(12,2)", KeyFormat::Decimal128},
        ModelConfig{true, false, KeyShape::Typed, 4096, "smallint", KeyFormat::Bcd},
        ModelConfig{false, false, KeyShape::Typed, 4096, "varchar(16)", KeyFormat::Text}),
    config_name);

// The compact node layout (docs/FORMAT.md §2.9) under the same model.
constexpr NodeLayout kCompact = NodeLayout::Compact;
INSTANTIATE_TEST_SUITE_P(
    CompactLayout, BtreeModelBtree,
    ::testing::Values(
        ModelConfig{false, false, KeyShape::ShortBytes, 4096, "bigint", KeyFormat::RescaledDouble,
                    kCompact},
        ModelConfig{true, true, KeyShape::BigEndianInt, 4096, "bigint", KeyFormat::RescaledDouble,
                    kCompact},
        ModelConfig{false, false, KeyShape::LongText, 4096, "bigint", KeyFormat::RescaledDouble,
                    kCompact},
        ModelConfig{false, false, KeyShape::Typed, 4096, "bigint", KeyFormat::Decimal128, kCompact},
        ModelConfig{false, true, KeyShape::Typed, 4096, "numeric(12,2)", KeyFormat::Decimal128,
                    kCompact},
        ModelConfig{true, false, KeyShape::Typed, 4096, "varchar(16)", KeyFormat::Text, kCompact}),
    config_name);

// Keys up to the page size's limit through inserts and removes (page splits and merges of
// pages holding a few long nodes; encode_page's jump nodes).
INSTANTIATE_TEST_SUITE_P(LongKeys, BtreeModelBtree,
                         ::testing::Values(ModelConfig{false, false, KeyShape::VeryLongText, 4096},
                                           ModelConfig{true, true, KeyShape::VeryLongText, 4096},
                                           ModelConfig{false, true, KeyShape::VeryLongText, 8192},
                                           ModelConfig{false, false, KeyShape::VeryLongText, 4096,
                                                       "bigint", KeyFormat::RescaledDouble,
                                                       kCompact}),
                         config_name);

// ---- Long keys through the bulk loader (fast_load) and then the living tree ----
//
// Random keys of 1 .. page_size/4 - 9 bytes (the longest varchar; descending keys one byte
// more at most), many sharing long prefixes, so pages hold few nodes, nodes pass the jump
// interval and fast_load leaves jump nodes on END_BUCKETs and long first nodes. A bulk load,
// then inserts and removes through the living tree; after each phase full forward and
// backward scans, random bounded scans in both directions and finds are compared with a
// sorted model (a std::set of (key, record number) in index order: a multimap whose
// duplicates are ordered by record number).
struct LongKeyConfig {
  uint32_t page_size;
  bool descending;
};

void PrintTo(const LongKeyConfig& c, std::ostream* os) {
  *os << c.page_size << " B pages" << (c.descending ? " descending" : "");
}

class BtreeModelLongKeys : public ::testing::TestWithParam<LongKeyConfig> {
 protected:
  using Model = std::set<Entry, EntryLess>;

  std::vector<uint8_t> make_key(std::mt19937_64& rng, size_t max_len) const {
    const size_t len = 1 + rng() % max_len;
    const size_t run = rng() % 2 == 0 ? rng() % len : 0;  // a long shared prefix of 'a's
    std::vector<uint8_t> k(len);
    for (size_t i = 0; i < len; ++i) k[i] = static_cast<uint8_t>(i < run ? 'a' : 'a' + rng() % 3);
    if (GetParam().descending) {
      for (auto& b : k) b = static_cast<uint8_t>(~b);
    }
    return k;
  }

  // Every check of one phase; `what` names the phase in failure messages.
  void compare(const BTree& tree, const Model& model, const std::vector<std::vector<uint8_t>>& keys,
               std::mt19937_64& rng, const std::string& what) {
    const bool desc = GetParam().descending;
    const std::vector<Entry> all(model.begin(), model.end());
    const std::vector<Entry> reversed(all.rbegin(), all.rend());
    ScanRange fwd;
    ASSERT_EQ(testing::collect(tree.scan(fwd)), all) << what << ": forward scan";
    ScanRange bwd;
    bwd.backward = true;
    ASSERT_EQ(testing::collect(tree.scan(bwd)), reversed) << what << ": backward scan";
    for (int i = 0; i < 60; ++i) {
      ScanRange r;
      r.lower = KeyBound{keys[rng() % keys.size()], rng() % 2 == 0};
      r.upper = KeyBound{keys[rng() % keys.size()], rng() % 2 == 0};
      r.backward = i % 2 == 1;
      std::vector<Entry> expected;
      for (const Entry& e : all) {
        const int lo = compare_keys(e.first, r.lower->key, desc);
        const int hi = compare_keys(e.first, r.upper->key, desc);
        if ((lo > 0 || (lo == 0 && r.lower->inclusive)) &&
            (hi < 0 || (hi == 0 && r.upper->inclusive))) {
          expected.push_back(e);
        }
      }
      if (r.backward) std::reverse(expected.begin(), expected.end());
      ASSERT_EQ(testing::collect(tree.scan(r)), expected)
          << what << ": bounded scan " << i << (r.backward ? " backward" : " forward");
    }
    for (int i = 0; i < 60; ++i) {
      const std::vector<uint8_t>& key = keys[rng() % keys.size()];
      std::vector<uint64_t> expected;
      for (auto it = model.lower_bound(Entry{key, 0}); it != model.end() && it->first == key; ++it)
        expected.push_back(it->second);
      ASSERT_EQ(tree.find(key), expected) << what << ": find " << i;
    }
    ASSERT_EQ(tree.verify().entries, model.size()) << what;
  }
};

TEST_P(BtreeModelLongKeys, BulkLoadInsertRemoveMatchModel) {
  const LongKeyConfig cfg = GetParam();
  const uint64_t seed = env_u64("PBTREE_MODEL_SEED", 20261130) + cfg.page_size + cfg.descending;
  std::cout << "model test (long keys): seed " << seed << std::endl;
  RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 rng(seed);
  const size_t max_len = cfg.page_size / 4 - 9;  // the longest varchar (docs/FORMAT.md §1.1)
  std::vector<std::vector<uint8_t>> keys;
  for (int i = 0; i < 300; ++i) keys.push_back(make_key(rng, max_len));

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      fmt::format("pbtree-model-long-{}-{}", ::getpid(), cfg.page_size + cfg.descending);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    auto file = IndexFile::open_or_create((dir / "l.pbt").string(), cfg.page_size);
    IndexDefinition def;
    def.name = "L";
    def.type.type = ColumnType::Varchar;
    def.type.length = static_cast<uint16_t>(max_len);
    def.format = KeyFormat::Text;
    def.descending = cfg.descending;
    Model model(EntryLess{cfg.descending});
    EntryBatch batch;
    uint64_t recno = 0;
    for (int i = 0; i < 500; ++i, ++recno) {  // keys repeat: duplicates
      const std::vector<uint8_t>& k = keys[rng() % keys.size()];
      batch.add(k, recno, recno);
      model.insert(Entry{k, recno});
    }
    file->bulk_load(def, batch);
    BTree& tree = btree_of(*file, "L");
    compare(tree, model, keys, rng, "after the bulk load");
    if (HasFatalFailure()) return;
    for (int i = 0; i < 300; ++i, ++recno) {
      const std::vector<uint8_t>& k = keys[rng() % keys.size()];
      tree.insert(k, recno);
      model.insert(Entry{k, recno});
    }
    compare(tree, model, keys, rng, "after inserts");
    if (HasFatalFailure()) return;
    for (int i = 0; i < 400; ++i) {
      auto it = model.lower_bound(Entry{keys[rng() % keys.size()], 0});
      if (it == model.end()) it = model.begin();
      tree.remove(it->first, it->second);
      model.erase(it);
    }
    compare(tree, model, keys, rng, "after removes");
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Pages, BtreeModelLongKeys,
                         ::testing::Values(LongKeyConfig{4096, false}, LongKeyConfig{4096, true},
                                           LongKeyConfig{8192, false}, LongKeyConfig{8192, true}),
                         [](const ::testing::TestParamInfo<LongKeyConfig>& info) {
                           return std::to_string(info.param.page_size) +
                                  (info.param.descending ? "_Descending" : "_Ascending");
                         });

}  // namespace
}  // namespace pbtree
