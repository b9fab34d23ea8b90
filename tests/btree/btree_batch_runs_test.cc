// Tests of BTree::insert_batch's run rewrites (btree/batch_insert.cc, btree/leaf_run_builder.h):
// a small batch into a big index leaves the leaves it does not fall into byte-identical and
// commits only the rewritten pages, their parents and the log; deep trees of long keys
// (parent pages rewritten, split, new roots) against a std::multimap model with verify()
// after each batch, both layouts, ascending and descending; a failing batch rolled back
// leaves every page byte-identical.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "node/btree_page.h"
#include "node/page_image.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::TempPath;

IndexDefinition index_def(const std::string& name, const std::string& type, bool unique,
                          bool descending, NodeLayout layout) {
  IndexDefinition def;
  def.name = name;
  def.type = TypeSpec::parse(type);
  def.format = default_key_format(def.type);
  def.unique = unique;
  def.descending = descending;
  def.layout = layout;
  return def;
}

Bytes key_of(const IndexDefinition& def, const std::string& text) {
  KeyBuffer buf;
  build_key(def.type, def.format, parse_value(def.type, text), def.descending, buf);
  return Bytes(buf.data, buf.data + buf.length);
}

// Keys of the big index: 10^5, or 10^6 with PBTREE_FULL=1.
int64_t big_keys() {
  const char* v = std::getenv("PBTREE_FULL");
  return v != nullptr && std::string(v) == "1" ? 1000000 : 100000;
}

// Page bytes as the buffer pool holds them.
Bytes page_bytes(BTree& tree, uint32_t page_no) {
  PageRef ref = tree.pool().pin(page_no);
  return Bytes(ref.data(), ref.data() + tree.pool().page_size());
}

// Page numbers of one level, left to right, and of every level above it.
struct TreePages {
  std::vector<uint32_t> leaves;
  std::set<uint32_t> nonleaf;
};
TreePages tree_pages(BTree& tree) {
  TreePages out;
  const uint32_t ps = tree.pool().page_size();
  for (uint32_t first = tree.root(); first != 0;) {
    uint32_t child = 0;
    bool leaf = false;
    for (uint32_t p = first; p != 0;) {
      Bytes b = page_bytes(tree, p);
      const BtreeHeader h = read_btree_header(b.data());
      leaf = h.level == 0;
      if (leaf) {
        out.leaves.push_back(p);
      } else {
        out.nonleaf.insert(p);
        if (p == first) child = decode_page(b.data(), ps).entries.at(0).page_number;
      }
      p = h.sibling;
    }
    first = leaf ? 0 : child;
  }
  return out;
}

// What a batch of n / 1000 random keys into a bulk-built n-key index did.
struct SmallBatchOutcome {
  size_t leaves_before = 0;
  size_t touched = 0;              // leaves the batch falls into
  size_t new_leaves = 0;           // leaves allocated by the batch
  size_t relinked = 0;             // other leaves that changed, in btr_left_sibling alone
  size_t changed_beyond_link = 0;  // other leaves that changed elsewhere
  size_t leaves_written = 0, nonleaf_written = 0, pages_written = 0, nonleaf_pages = 0;
  uint32_t pages_counted = 0;  // CommitStats::pages_written
  uint64_t entries = 0, expected_entries = 0;
};

SmallBatchOutcome small_batch_outcome() {
  SmallBatchOutcome out;
  TempPath tmp;
  const IndexDefinition d = index_def("BIG", "bigint", false, false, NodeLayout::Firebird);
  const int64_t n = big_keys();
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  std::mt19937_64 rng(20261202);
  {
    EntryBatch base;
    for (int64_t i = 0; i < n; ++i) {
      base.add(key_of(d, std::to_string(static_cast<int64_t>(rng() >> 2))), uint64_t(i), 0);
    }
    f->bulk_load(d, base);
  }
  BTree& tree = btree_of(*f, "BIG");
  const uint32_t ps = f->page_size();
  const TreePages before = tree_pages(tree);
  std::map<uint32_t, Bytes> old_bytes;
  std::vector<std::pair<Bytes, uint64_t>> firsts;  // first entry of each leaf
  for (uint32_t p : before.leaves) {
    old_bytes[p] = page_bytes(tree, p);
    const PageEntry e = decode_page(old_bytes[p].data(), ps).entries.at(0);
    firsts.emplace_back(e.key, e.recno);
  }
  // The batch, and the leaves it falls into: the last leaf whose first entry is <= the entry
  // (Firebird layout: separators are the children's first entries).
  EntryBatch batch;
  std::set<uint32_t> touched;
  const int batch_keys = static_cast<int>(n / 1000);  // 10^3 into 10^6 (PBTREE_FULL=1)
  for (int i = 0; i < batch_keys; ++i) {
    Bytes k = key_of(d, std::to_string(static_cast<int64_t>(rng() >> 2)));
    const uint64_t r = uint64_t(n + i);
    auto it = std::upper_bound(firsts.begin(), firsts.end(), std::make_pair(k, r),
                               [](const auto& a, const auto& b) {
                                 const int c = compare_keys(a.first, b.first, false);
                                 return c != 0 ? c < 0 : a.second < b.second;
                               });
    touched.insert(before.leaves[std::max<size_t>(1, size_t(it - firsts.begin())) - 1]);
    batch.add(k, r, uint64_t(i));
  }
  tree.insert_batch(batch);
  f->commit();
  const TreePages after = tree_pages(btree_of(*f, "BIG"));
  // Leaves the batch does not fall into: byte-identical, or (the right neighbour of a run of
  // one leaf that grew) different in btr_left_sibling alone.
  std::set<uint32_t> relinked;
  for (uint32_t p : before.leaves) {
    if (touched.count(p) != 0) continue;
    const Bytes now = page_bytes(btree_of(*f, "BIG"), p);
    if (now == old_bytes[p]) continue;
    Bytes a = now, b = old_bytes[p];
    std::fill(a.begin() + 20, a.begin() + 24, 0);
    std::fill(b.begin() + 20, b.begin() + 24, 0);
    if (a == b) {
      relinked.insert(p);
    } else {
      ++out.changed_beyond_link;
    }
  }
  const std::set<uint32_t> old_leaves(before.leaves.begin(), before.leaves.end());
  std::set<uint32_t> new_leaves;
  for (uint32_t p : after.leaves) {
    if (old_leaves.count(p) == 0) new_leaves.insert(p);
  }
  const std::vector<uint32_t> written = f->last_checkpoint_pages();
  size_t leaves_written = 0, nonleaf_written = 0;
  for (uint32_t p : written) {
    if (std::find(after.leaves.begin(), after.leaves.end(), p) != after.leaves.end()) {
      ++leaves_written;
    } else if (after.nonleaf.count(p) != 0) {
      ++nonleaf_written;
    }
  }
  std::printf(
      "batch runs: %lld keys, %zu leaves, %d-key batch: %zu touched, %zu new, %zu relinked; "
      "commit wrote %u pages (%zu leaves, %zu parents, %zu other)\n",
      static_cast<long long>(n), before.leaves.size(), batch_keys, touched.size(),
      new_leaves.size(), relinked.size(), f->last_checkpoint().pages_written, leaves_written,
      nonleaf_written, written.size() - leaves_written - nonleaf_written);
  out.leaves_before = before.leaves.size();
  out.touched = touched.size();
  out.new_leaves = new_leaves.size();
  out.relinked = relinked.size();
  out.leaves_written = leaves_written;
  out.nonleaf_written = nonleaf_written;
  out.pages_written = written.size();
  out.nonleaf_pages = after.nonleaf.size();
  out.pages_counted = f->last_checkpoint().pages_written;
  out.entries = btree_of(*f, "BIG").verify().entries;
  out.expected_entries = uint64_t(n + batch_keys);
  return out;
}

TEST(BtreeBatchRuns, SmallBatchLeavesUntouchedLeavesByteIdentical) {
  const SmallBatchOutcome o = small_batch_outcome();
  // Byte-identical, or (right neighbour of a run of one leaf that grew) different in
  // btr_left_sibling alone.
  EXPECT_EQ(o.changed_beyond_link, 0u);
  EXPECT_LE(o.relinked, o.touched);
  EXPECT_GT(o.leaves_before, o.touched + o.relinked);  // some leaves kept every byte
  EXPECT_EQ(o.entries, o.expected_entries);
}

TEST(BtreeBatchRuns, SmallBatchCommitWritesRewrittenLeavesTheirParentsAndTheHeader) {
  const SmallBatchOutcome o = small_batch_outcome();
  EXPECT_EQ(o.leaves_written, o.touched + o.new_leaves + o.relinked);
  EXPECT_LE(o.nonleaf_written, o.nonleaf_pages);
  // Rewritten leaves + their parents + 2 (header, index root page).
  EXPECT_LE(o.pages_written, o.leaves_written + o.nonleaf_written + 2);
  EXPECT_EQ(o.pages_counted, o.pages_written);
}

// Random batches of long keys (varchar(500), 68..467 bytes: about 14 entries a page) against a
// std::multimap model: trees of 3 or 4 levels whose parents are rewritten, split and grow.
void run_deep_model(NodeLayout layout, bool descending, bool unique) {
  const uint64_t seed =
      20261203 + (layout == NodeLayout::Compact ? 10 : 0) + descending * 2 + unique;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 4096);
  const IndexDefinition def = index_def("D", "varchar(500)", unique, descending, layout);
  f->create_index(def);
  auto text_of = [](uint64_t v) {
    std::string s = fmt::format("{:08}", v);
    return s + std::string(60 + v % 400, static_cast<char>('a' + v % 26));
  };
  std::multimap<std::string, uint64_t> model;  // key bytes -> record numbers
  uint64_t next_recno = 1;
  for (int round = 0; round < 12; ++round) {
    EntryBatch batch;
    std::set<std::string> in_batch;
    const int count = 1 + static_cast<int>(rng() % (round < 4 ? 50 : 1500));
    std::vector<std::pair<Bytes, uint64_t>> added;
    for (int i = 0; i < count; ++i) {
      Bytes k = key_of(def, text_of(rng() % 40000));
      const std::string ks(k.begin(), k.end());
      if (unique && (model.count(ks) != 0 || in_batch.count(ks) != 0)) continue;
      in_batch.insert(ks);
      const uint64_t r = next_recno++;
      batch.add(k, r, uint64_t(i));
      added.emplace_back(k, r);
    }
    ASSERT_EQ(btree_of(*f, "D").insert_batch(batch), added.size()) << "round " << round;
    f->commit();
    for (auto& [k, r] : added) model.emplace(std::string(k.begin(), k.end()), r);
    std::vector<std::pair<Bytes, uint64_t>> expect;
    for (const auto& [k, r] : model) expect.emplace_back(Bytes(k.begin(), k.end()), r);
    std::sort(expect.begin(), expect.end(), [&](const auto& x, const auto& y) {
      const int c = compare_keys(x.first, y.first, descending);
      return c != 0 ? c < 0 : x.second < y.second;
    });
    std::vector<std::pair<Bytes, uint64_t>> got;
    for (Cursor c = btree_of(*f, "D").scan(); c.valid(); c.next()) {
      got.emplace_back(Bytes(c.key().begin(), c.key().end()), c.record_number());
    }
    ASSERT_EQ(got, expect) << "round " << round;
    const TreeCheck check = btree_of(*f, "D").verify();
    ASSERT_EQ(check.entries, model.size()) << "round " << round;
    if (round == 11) {
      EXPECT_GE(check.depth, 3u);  // parent levels split and a root above them
    }
  }
}

TEST(BtreeBatchRuns, DeepModelFirebirdAscending) {
  run_deep_model(NodeLayout::Firebird, false, false);
}
TEST(BtreeBatchRuns, DeepModelFirebirdDescendingUnique) {
  run_deep_model(NodeLayout::Firebird, true, true);
}
TEST(BtreeBatchRuns, DeepModelCompactAscending) {
  run_deep_model(NodeLayout::Compact, false, false);
}
TEST(BtreeBatchRuns, DeepModelCompactDescendingUnique) {
  run_deep_model(NodeLayout::Compact, true, true);
}

TEST(BtreeBatchRuns, RollbackAfterAFailingBatchLeavesEveryPageByteIdentical) {
  TempPath tmp;
  const IndexDefinition d = index_def("U", "bigint", true, false, NodeLayout::Firebird);
  auto f = IndexFile::open_or_create(tmp.path(), 4096);
  {
    EntryBatch base;
    for (int64_t i = 0; i < 20000; ++i) base.add(key_of(d, std::to_string(i * 3)), uint64_t(i), 0);
    f->bulk_load(d, base);
  }
  // A committed merge-append first, so the tree holds rewritten runs.
  EntryBatch good;
  for (int64_t i = 0; i < 3000; ++i)
    good.add(key_of(d, std::to_string(i * 6 + 1)), uint64_t(30000 + i), 0);
  btree_of(*f, "U").insert_batch(good);
  f->commit();
  const uint32_t pages = f->page_count();
  std::vector<Bytes> before;
  for (uint32_t p = 0; p < pages; ++p) {
    Bytes b(f->page_size());
    read_file_page(*f, p, b.data());
    before.push_back(b);
  }
  const uint32_t root = btree_of(*f, "U").root();
  EntryBatch bad;
  for (int64_t i = 0; i < 2000; ++i)
    bad.add(key_of(d, std::to_string(i * 9 + 2)), uint64_t(40000 + i), 0);
  bad.add(key_of(d, "300"), 50000, 7);  // 300 = 100 * 3 is stored: unique violation
  EXPECT_THROW(btree_of(*f, "U").insert_batch(bad), DuplicateKeyError);
  f->rollback();
  EXPECT_EQ(f->page_count(), pages);
  EXPECT_EQ(btree_of(*f, "U").root(), root);
  for (uint32_t p = 0; p < pages; ++p) {
    Bytes b(f->page_size());
    read_file_page(*f, p, b.data());
    EXPECT_EQ(b, before[p]) << "page " << p;
  }
  EXPECT_EQ(btree_of(*f, "U").verify().entries, 23000u);
}

TEST(BtreeBatchRuns, RunMergedIntoOnePageShrinksTheRoot) {
  TempPath tmp;
  const IndexDefinition d = index_def("S", "bigint", false, false, NodeLayout::Firebird);
  auto f = IndexFile::open_or_create(tmp.path(), 4096);
  f->create_index(d);
  BTree& tree = btree_of(*f, "S");
  std::mt19937_64 rng(99);
  std::vector<int64_t> values;
  for (int i = 0; i < 500; ++i) values.push_back(static_cast<int64_t>(rng() % 1000000) + 10);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::shuffle(values.begin(), values.end(), rng);
  for (int64_t v : values) tree.insert(key_of(d, std::to_string(v)), uint64_t(v));
  // Single removes leave two leaves that would fit one page (Firebird merges only below
  // page_size - 256 bytes).
  const size_t removes = 200;
  for (size_t i = 0; i < removes; ++i)
    tree.remove(key_of(d, std::to_string(values[i])), uint64_t(values[i]));
  f->commit();
  const TreeCheck before = tree.verify();
  EntryBatch batch;
  batch.add(key_of(d, "1"), 1, 0);
  batch.add(key_of(d, "2000000"), 2, 1);
  tree.insert_batch(batch);
  f->commit();
  const TreeCheck after = tree.verify();
  EXPECT_EQ(before.depth, 2u);
  EXPECT_EQ(before.level_pages.at(0), 2u);
  EXPECT_EQ(after.depth, 1u);
  EXPECT_EQ(after.entries, values.size() - removes + 2);
}

}  // namespace
}  // namespace pbtree
