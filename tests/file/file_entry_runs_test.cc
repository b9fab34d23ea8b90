// Sorted runs in an unnamed temporary file and their k-way merge (file/entry_runs.h), against
// a std::multiset of (key, record number, tag) as the model; IndexFile::bulk_load_sorted's
// checks (order, duplicates) and its pages against bulk_load's.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "btree/radix_sort.h"
#include "file/entry_runs.h"
#include "file/file_create.h"
#include "tests/support/cli_test_util.h"

namespace pbtree {
namespace {

using Entry = std::tuple<std::vector<uint8_t>, uint64_t, uint64_t>;

struct EntryLess {
  bool descending = false;
  bool operator()(const Entry& a, const Entry& b) const {
    const int c = compare_keys(std::get<0>(a), std::get<0>(b), descending);
    if (c != 0) return c < 0;
    return std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
  }
};

// Keys of 0..40 random bytes from a small alphabet (many shared prefixes, equal keys and
// keys that extend others), record numbers 0..99, tags in input order.
std::vector<Entry> random_entries(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Entry> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint8_t> key(rng() % 41);
    for (uint8_t& b : key) b = static_cast<uint8_t>(0xFD + rng() % 5);  // FD FE FF 00 01
    out.emplace_back(std::move(key), rng() % 100, i + 1);
  }
  return out;
}

// Writes `entries` as runs of `per_run` entries, each sorted with sort_entry_batch.
std::vector<RunFile::Run> write_runs(RunFile& file, const std::vector<Entry>& entries,
                                     size_t per_run, bool descending) {
  std::vector<RunFile::Run> runs;
  for (size_t s = 0; s < entries.size(); s += per_run) {
    EntryBatch b;
    for (size_t i = s; i < std::min(entries.size(), s + per_run); ++i) {
      b.add(std::get<0>(entries[i]), std::get<1>(entries[i]), std::get<2>(entries[i]));
    }
    sort_entry_batch(b, descending);
    runs.push_back(file.append(b, 4096));
  }
  return runs;
}

std::vector<Entry> drain(SortedEntrySource& src) {
  std::vector<Entry> out;
  SortedEntry e;
  while (src.next(e))
    out.emplace_back(std::vector<uint8_t>(e.key.begin(), e.key.end()), e.recno, e.tag);
  return out;
}

std::vector<Entry> model_order(const std::vector<Entry>& entries, bool descending) {
  std::multiset<Entry, EntryLess> model(EntryLess{descending});
  model.insert(entries.begin(), entries.end());
  return {model.begin(), model.end()};
}

TEST(FileEntryRuns, MergeOfRunsIsTheModelOrder) {
  tools::testing::ScratchDir dir("runs-merge");
  const auto entries = random_entries(5000, 1);
  RunFile file(dir.file(""));
  const auto runs = write_runs(file, entries, 317, false);
  ASSERT_EQ(runs.size(), 16u);
  RunMerge merge(file, runs, false, 1 << 20);
  EXPECT_EQ(drain(merge), model_order(entries, false));
}

TEST(FileEntryRuns, DescendingMergeOfRunsIsTheModelOrder) {
  tools::testing::ScratchDir dir("runs-desc");
  const auto entries = random_entries(5000, 2);
  RunFile file(dir.file(""));
  const auto runs = write_runs(file, entries, 500, true);
  RunMerge merge(file, runs, true, 1 << 20);
  EXPECT_EQ(drain(merge), model_order(entries, true));
}

// 64 KiB allows 15 runs per merge (4 KiB buffers, one for the output): 100 runs become 7.
TEST(FileEntryRuns, ReduceMergesGroupsUntilOneMergeTakesThem) {
  tools::testing::ScratchDir dir("runs-reduce");
  const auto entries = random_entries(10000, 3);
  RunFile file(dir.file(""));
  auto runs = write_runs(file, entries, 100, false);
  ASSERT_EQ(runs.size(), 100u);
  EXPECT_EQ(merge_fan_in(64 << 10, file.max_key()), 15u);
  uint64_t written = 0;
  runs = reduce_runs(file, runs, false, 64 << 10, [&] { ++written; });
  EXPECT_EQ(runs.size(), 7u);
  EXPECT_EQ(written, 10000u);
  RunMerge merge(file, runs, false, 64 << 10);
  EXPECT_EQ(drain(merge), model_order(entries, false));
}

TEST(FileEntryRuns, TheRunFileHasNoNameInItsDirectory) {
  tools::testing::ScratchDir dir("runs-noname");
  RunFile file(dir.file(""));
  write_runs(file, random_entries(1000, 4), 100, false);
  EXPECT_GT(file.size(), 0u);
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("")));
}

TEST(FileEntryRuns, MissingDirectoryIsAnIoError) {
  tools::testing::ScratchDir dir("runs-nodir");
  try {
    RunFile file(dir.file("nope"));
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.file("nope") + ": cannot create a temporary file: No such file or directory");
  }
}

// A stream over a vector of entries.
class VectorEntries : public SortedEntrySource {
 public:
  explicit VectorEntries(const std::vector<Entry>& v) : v_(v) {}
  bool next(SortedEntry& e) override {
    if (at_ == v_.size()) return false;
    const Entry& x = v_[at_++];
    e.key = std::get<0>(x);
    e.recno = std::get<1>(x);
    e.tag = std::get<2>(x);
    return true;
  }

 private:
  const std::vector<Entry>& v_;
  size_t at_ = 0;
};

IndexDefinition integer_index(bool unique) {
  IndexDefinition d;
  d.name = "I";
  d.type = TypeSpec::parse("integer");
  d.format = KeyFormat::Double;
  d.unique = unique;
  return d;
}

std::vector<Entry> integer_entries(const std::vector<int>& values) {
  std::vector<Entry> out;
  KeyBuffer k;
  for (size_t i = 0; i < values.size(); ++i) {
    build_key(TypeSpec::parse("integer"), KeyFormat::Double,
              parse_value(TypeSpec::parse("integer"), std::to_string(values[i])), false, k);
    out.emplace_back(std::vector<uint8_t>(k.bytes().begin(), k.bytes().end()), i, i + 1);
  }
  return out;
}

TEST(FileBulkLoadSorted, BuildsTheSamePagesAsBulkLoad) {
  tools::testing::ScratchDir dir("sorted-same");
  std::vector<int> values;
  for (int i = 0; i < 30000; ++i) values.push_back(i * 3 - 40000);
  const auto entries = integer_entries(values);
  ASSERT_TRUE(create_file_with(dir.file("a.pbt"), 4096, [&](IndexFile& f) {
    EntryBatch b;
    for (const Entry& e : entries) b.add(std::get<0>(e), std::get<1>(e), std::get<2>(e));
    f.bulk_load(integer_index(false), b);
  }));
  ASSERT_TRUE(create_file_with(dir.file("b.pbt"), 4096, [&](IndexFile& f) {
    VectorEntries src(entries);
    f.bulk_load_sorted(integer_index(false), src);
  }));
  const std::string a = tools::testing::read_bytes(dir.file("a.pbt"));
  const std::string b = tools::testing::read_bytes(dir.file("b.pbt"));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.substr(4096), b.substr(4096));  // page 0 holds the random file id
}

// An existing file with index K; `entries` go to a new index I; returns (error, the file
// byte-identical afterwards).
std::pair<std::string, bool> failed_sorted_load(const std::string& db,
                                                const std::vector<Entry>& entries, bool unique) {
  create_file_with(db, 4096, [](IndexFile& f) {
    EntryBatch b;
    KeyBuffer k;
    build_key(TypeSpec::parse("integer"), KeyFormat::Double,
              parse_value(TypeSpec::parse("integer"), "5"), false, k);
    b.add(k.bytes(), 1, 1);
    IndexDefinition d = integer_index(false);
    d.name = "K";
    f.bulk_load(d, b);
  });
  const std::string before = tools::testing::read_bytes(db);
  std::string error = "no error";
  try {
    auto f = IndexFile::open(db, {.writable = true});
    VectorEntries src(entries);
    f->bulk_load_sorted(integer_index(unique), src);
  } catch (const Error& e) {
    error = e.what();
  }
  return {error, tools::testing::read_bytes(db) == before};
}

TEST(FileBulkLoadSorted, EntriesOutOfOrderAreRefusedAndTheFileKept) {
  tools::testing::ScratchDir dir("sorted-order");
  std::vector<int> values;
  for (int i = 0; i < 20000; ++i) values.push_back(i);
  values[15000] = 3;
  const auto [error, kept] = failed_sorted_load(dir.file("a.pbt"), integer_entries(values), false);
  EXPECT_EQ(error, "bulk load: entries out of index order (entry 15001)");
  EXPECT_TRUE(kept);
}

TEST(FileBulkLoadSorted, DuplicateInUniqueIndexIsBulkLoadsErrorAndTheFileKept) {
  tools::testing::ScratchDir dir("sorted-dup");
  std::vector<int> values;
  for (int i = 0; i < 20000; ++i) values.push_back(i / 2 * 2 + (i == 12001 ? 0 : i % 2));
  const auto [error, kept] = failed_sorted_load(dir.file("a.pbt"), integer_entries(values), true);
  EXPECT_EQ(error, "unique index I: value 12000 appears twice (entries 12001 and 12002)");
  EXPECT_TRUE(kept);
}

}  // namespace
}  // namespace pbtree
