// The installed API on its own: the Tree handle of IndexFile::tree() (find, contains, scan,
// insert, insert_batch, remove, verify through the handle, copies of it, read-only files),
// OpenOptions (writable, busy timeout, Io, cache bytes, build threads), and every error kind
// caught as pbtree::Error. Only <pbtree/pbtree.h> and the test helpers are included, so the
// test also shows that the installed headers are enough for all of it.
#include <gtest/gtest.h>
#include <pbtree/pbtree.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "page/io.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

IndexDefinition bigint_index(const std::string& name) {
  IndexDefinition def;
  def.name = name;
  def.type = TypeSpec::parse("bigint");
  def.format = KeyFormat::RescaledDouble;
  return def;
}

std::vector<uint8_t> key_of(int64_t v) {
  KeyBuffer k;
  build_key(TypeSpec::parse("bigint"), KeyFormat::RescaledDouble, Value::exact(v), false, k);
  return {k.data, k.data + k.length};
}

// A file with index I holding (v, v + 1) for v in [0, n).
void make_file(const std::string& path, int64_t n) {
  auto f = IndexFile::open_or_create(path, 4096);
  EntryBatch batch;
  for (int64_t v = 0; v < n; ++v) batch.add(key_of(v), static_cast<uint64_t>(v) + 1, 0);
  f->bulk_load(bigint_index("I"), batch);
  f->close();
}

// Every entry in scan order, keys as byte strings.
std::vector<std::pair<std::string, uint64_t>> all_entries(const Tree& t) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (IndexCursor c = t.scan(); c.valid(); c.next()) {
    out.emplace_back(std::string(c.key().begin(), c.key().end()), c.record_number());
  }
  return out;
}

TEST(PublicTree, RandomInsertsAndRemovesMatchAMultimap) {
  TempPath tmp;
  make_file(tmp.path(), 0);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  Tree t = f->tree("I");
  std::multimap<std::string, uint64_t> model;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    const int64_t v = static_cast<int64_t>(rng() % 1000);
    const uint64_t recno = rng() % 50 + 1;
    const std::vector<uint8_t> k = key_of(v);
    const std::string ks(k.begin(), k.end());
    bool present = false;
    auto [lo, hi] = model.equal_range(ks);
    for (auto it = lo; it != hi; ++it) present |= it->second == recno;
    if (present && rng() % 2 == 0) {
      t.remove(k, recno);
      for (auto it = lo; it != hi; ++it) {
        if (it->second == recno) {
          model.erase(it);
          break;
        }
      }
    } else if (!present) {
      t.insert(k, recno);
      model.emplace(ks, recno);
    }
  }
  // The index's order: key, then record number (the multimap keeps equal keys in insertion
  // order).
  std::vector<std::pair<std::string, uint64_t>> expected;
  for (auto it = model.begin(); it != model.end();) {
    const auto hi = model.upper_bound(it->first);
    std::vector<uint64_t> recnos;
    for (auto j = it; j != hi; ++j) recnos.push_back(j->second);
    std::sort(recnos.begin(), recnos.end());
    for (uint64_t r : recnos) expected.emplace_back(it->first, r);
    it = hi;
  }
  EXPECT_EQ(all_entries(t), expected);
  EXPECT_EQ(t.verify().entries, model.size());
}

TEST(PublicTree, FindContainsAndARangeScan) {
  TempPath tmp;
  make_file(tmp.path(), 1000);
  auto f = IndexFile::open(tmp.path());
  const Tree t = f->tree("I");
  EXPECT_EQ(t.find(key_of(500)), std::vector<uint64_t>{501});
  std::vector<uint64_t> out{9, 9};
  t.find(key_of(1000), out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(t.contains(key_of(7), 8));
  EXPECT_FALSE(t.contains(key_of(7), 9));
  ScanRange r;
  r.lower = KeyBound{key_of(10), true};
  r.upper = KeyBound{key_of(15), false};
  std::vector<uint64_t> recnos;
  for (IndexCursor c = t.scan(r); c.valid(); c.next()) recnos.push_back(c.record_number());
  EXPECT_EQ(recnos, (std::vector<uint64_t>{11, 12, 13, 14, 15}));
  EXPECT_EQ(t.definition().name, "I");
  EXPECT_EQ(t.root(), f->find_index("I")->root_page);
}

TEST(PublicTree, CopiesOfTheHandleShareOneIndex) {
  TempPath tmp;
  make_file(tmp.path(), 10);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  Tree a = f->tree("I");
  Tree b = a;
  a.insert(key_of(100), 1);
  EXPECT_EQ(b.find(key_of(100)), std::vector<uint64_t>{1});
  EXPECT_EQ(f->tree("I").find(key_of(100)), std::vector<uint64_t>{1});
}

TEST(PublicTree, InsertBatchAddsEveryEntryAndCommits) {
  TempPath tmp;
  make_file(tmp.path(), 100);
  {
    auto f = IndexFile::open(tmp.path(), {.writable = true});
    EntryBatch batch;
    for (int64_t v = 100; v < 300; ++v) batch.add(key_of(v), static_cast<uint64_t>(v) + 1, 0);
    EXPECT_EQ(f->tree("I").insert_batch(batch), 200u);
    f->commit();
  }
  auto f = IndexFile::open(tmp.path());
  EXPECT_EQ(f->tree("I").verify().entries, 300u);
}

TEST(PublicTree, ChangesOnAReadOnlyFileThrowReadOnlyError) {
  TempPath tmp;
  make_file(tmp.path(), 10);
  auto f = IndexFile::open(tmp.path());
  Tree t = f->tree("I");
  EXPECT_THROW(t.insert(key_of(50), 1), ReadOnlyError);
  EXPECT_THROW(t.remove(key_of(5), 6), ReadOnlyError);
  EntryBatch batch;
  batch.add(key_of(60), 1, 0);
  EXPECT_THROW(t.insert_batch(batch), ReadOnlyError);
  EXPECT_EQ(t.verify().entries, 10u);
}

TEST(PublicTree, UnknownIndexIsNotFoundError) {
  TempPath tmp;
  make_file(tmp.path(), 1);
  auto f = IndexFile::open(tmp.path());
  EXPECT_THROW(f->tree("J"), NotFoundError);
}

TEST(PublicOpenOptions, SecondWriterWithoutWaitingGetsLockedError) {
  TempPath tmp;
  make_file(tmp.path(), 1);
  auto w = IndexFile::open(tmp.path(), {.writable = true});
  EXPECT_THROW(IndexFile::open(tmp.path(), {.writable = true, .busy_timeout_ms = 0}), LockedError);
  EXPECT_NO_THROW(IndexFile::open(tmp.path()));  // readers are never refused
}

TEST(PublicOpenOptions, EverySystemCallGoesThroughTheGivenIo) {
  TempPath tmp;
  make_file(tmp.path(), 100);
  FaultyIo io;
  auto f = IndexFile::open(tmp.path(), {.io = &io});
  EXPECT_EQ(f->tree("I").verify().entries, 100u);
  EXPECT_GT(io.calls(FaultyIo::Op::Pread), 0u);
}

TEST(PublicOpenOptions, CacheBytesAndBuildThreadsAreSetBeforeTheFirstTree) {
  TempPath tmp;
  make_file(tmp.path(), 10);
  auto f = IndexFile::open(tmp.path(), {.cache_bytes = size_t{1} << 20, .build_threads = 1});
  EXPECT_EQ(f->tree("I").verify().entries, 10u);
  // The pool exists now: the options were applied before it, so a later change is refused.
  EXPECT_THROW(f->set_cache_bytes(size_t{2} << 20), UsageError);
}

TEST(PublicErrors, EveryKindDerivesFromPbtreeError) {
  static_assert(std::is_base_of_v<Error, IoError>);
  static_assert(std::is_base_of_v<Error, CorruptError>);
  static_assert(std::is_base_of_v<Error, UsageError>);
  static_assert(std::is_base_of_v<Error, DuplicateKeyError>);
  static_assert(std::is_base_of_v<Error, LockedError>);
  static_assert(std::is_base_of_v<Error, NotFoundError>);
  static_assert(std::is_base_of_v<Error, ReadOnlyError>);
  static_assert(std::is_base_of_v<Error, WrongTypeError>);
  static_assert(std::is_base_of_v<Error, KeyError>);
  std::string caught;
  try {
    TypeSpec::parse("bigintx");
  } catch (const Error& e) {
    caught = e.what();
  }
  EXPECT_EQ(caught,
            "unknown column type 'bigintx' (expected smallint, integer, bigint, int128, double, "
            "numeric(P,S), varchar(N))");
}

TEST(PublicErrors, AKeyTooLongIsAKeyErrorCaughtAsPbtreeError) {
  TempPath tmp;
  make_file(tmp.path(), 1);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  const std::vector<uint8_t> too_long(4096 / 4, 0x41);
  bool caught = false;
  try {
    f->tree("I").insert(too_long, 1);
  } catch (const Error& e) {
    caught = dynamic_cast<const KeyError*>(&e) != nullptr;
  }
  EXPECT_TRUE(caught);
}

TEST(PublicVersion, MacrosMatchTheProjectVersion) {
  EXPECT_STREQ(PBTREE_VERSION_STRING, "0.1.0");
  EXPECT_EQ(PBTREE_VERSION_NUMBER, 100);
}

}  // namespace
}  // namespace pbtree
