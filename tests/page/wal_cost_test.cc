// Checkpoints cost what changed (page/wal.h): after a bulk build, one insert makes the next
// checkpoint write a handful of pages, and keys appended after the largest one touch at most
// two leaves. The counters are also kept in the header page.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "page/file_header.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

IndexDefinition bigint_index() {
  IndexDefinition d;
  d.name = "BY_ID";
  d.type = TypeSpec::parse("bigint");
  d.format = default_key_format(d.type);
  d.unique = true;
  return d;
}

std::vector<uint8_t> key_of(const IndexDefinition& d, int64_t v) {
  KeyBuffer kb;
  build_key(d.type, d.format, Value::exact(v), d.descending, kb);
  return std::vector<uint8_t>(kb.data, kb.data + kb.length);
}

// Keys of the big index: 10^6, or PBTREE_WAL_COST_KEYS.
int64_t env_keys() {
  const char* v = std::getenv("PBTREE_WAL_COST_KEYS");
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : 1000000;
}

// An 8 KiB file with index BY_ID holding the even numbers 0, 2, .. 2(n-1), bulk-built.
void build(const std::string& path, int64_t n) {
  IndexDefinition d = bigint_index();
  auto f = IndexFile::open_or_create(path, 8192);
  EntryBatch batch;
  batch.reserve(static_cast<size_t>(n), static_cast<size_t>(n) * 10);
  for (int64_t i = 0; i < n; ++i) batch.add(key_of(d, 2 * i), static_cast<uint64_t>(i), i);
  f->bulk_load(d, batch);
}

// Leaves (level 0 b-tree pages) among `pages`.
int leaves_among(const IndexFile& f, const std::vector<uint32_t>& pages) {
  std::vector<uint8_t> page(f.page_size());
  int n = 0;
  for (uint32_t p : pages) {
    read_file_page(f, p, page.data());
    if (page[0] == static_cast<uint8_t>(PageType::Btree) &&
        read_btree_header(page.data()).level == 0)
      ++n;
  }
  return n;
}

// "level L" of each page (b-tree), or its type name.
std::string describe(const IndexFile& f, const std::vector<uint32_t>& pages) {
  std::vector<uint8_t> page(f.page_size());
  std::string out;
  for (uint32_t p : pages) {
    read_file_page(f, p, page.data());
    out += " " + std::to_string(p) + ":";
    out += page[0] == static_cast<uint8_t>(PageType::Btree)
               ? "level " + std::to_string(read_btree_header(page.data()).level)
               : page_type_name(page[0]);
  }
  return out;
}

TEST(PageWalCost, OneInsertIntoABigIndexWritesAFewPages) {
  TempPath tmp;
  const int64_t n = env_keys();
  build(tmp.path(), n);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  const CommitStats bulk = f->last_checkpoint();
  EXPECT_EQ(bulk.pages_written, f->page_count());  // every page: new ones, root page, header
  IndexDefinition d = bigint_index();
  std::vector<uint8_t> root(f->page_size());
  read_file_page(*f, f->find_index("BY_ID")->root_page, root.data());
  const uint32_t depth = read_btree_header(root.data()).level + 1u;
  const int64_t middle = (n & ~int64_t{1}) + 1;  // odd: not in the index
  // First insert: the bulk build left every leaf full but room on the non-leaf pages
  // (btree/bulk_build.h), so the leaf splits and its parent takes the separator: the leaf,
  // its new right half, the old right sibling (left link), the parent, and the header.
  btree_of(*f, "BY_ID").insert(key_of(d, middle), 5000000);
  f->commit();
  CommitStats s = f->last_checkpoint();
  std::vector<uint32_t> pages = f->last_checkpoint_pages();
  std::printf(
      "wal cost: %lld keys, %u pages, depth %u; first insert: checkpoint %llu wrote %u "
      "pages (%s), %llu bytes, synced %llu\n",
      static_cast<long long>(n), f->page_count(), depth,
      static_cast<unsigned long long>(s.checkpoint), s.pages_written, describe(*f, pages).c_str(),
      static_cast<unsigned long long>(s.bytes_written),
      static_cast<unsigned long long>(s.bytes_synced));
  EXPECT_EQ(s.checkpoint, bulk.checkpoint + 1);
  EXPECT_LE(s.pages_written, 4u + 1u);  // <= 4 pages + the header
  EXPECT_EQ(leaves_among(*f, pages), 3);
  if (n == 1000000) {
    EXPECT_EQ(depth, 3u);
    EXPECT_EQ(s.pages_written, 5u);
  }
  EXPECT_EQ(s.pages_written, pages.size());
  EXPECT_EQ(pages.front(), 0u);  // the header
  EXPECT_EQ(s.bytes_written, uint64_t{s.pages_written} * 8192);
  EXPECT_EQ(s.bytes_synced, uint64_t{s.pages_written} * (24 + 8192) + 40);
  // Second insert next to it: the half-full leaf takes it; one leaf and the header.
  btree_of(*f, "BY_ID").insert(key_of(d, middle + 2), 5000001);
  f->commit();
  s = f->last_checkpoint();
  pages = f->last_checkpoint_pages();
  std::printf(
      "wal cost: second insert: checkpoint %llu wrote %u pages (%s), %llu bytes, synced "
      "%llu\n",
      static_cast<unsigned long long>(s.checkpoint), s.pages_written, describe(*f, pages).c_str(),
      static_cast<unsigned long long>(s.bytes_written),
      static_cast<unsigned long long>(s.bytes_synced));
  EXPECT_EQ(s.pages_written, 2u);
  EXPECT_EQ(leaves_among(*f, pages), 1);
  EXPECT_EQ(s.bytes_synced, 2u * (24 + 8192) + 40);
}

TEST(PageWalCost, AppendedKeysTouchAtMostTwoLeaves) {
  TempPath tmp;
  build(tmp.path(), 20000);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  IndexDefinition d = bigint_index();
  BTree& t = btree_of(*f, "BY_ID");
  for (int64_t i = 0; i < 100; ++i) t.insert(key_of(d, 40000 + i), 20000 + i);
  f->commit();
  CommitStats s = f->last_checkpoint();
  std::vector<uint32_t> pages = f->last_checkpoint_pages();
  int leaves = leaves_among(*f, pages);
  std::printf("wal cost: 100 appended keys: %u pages written, %d leaves\n", s.pages_written,
              leaves);
  EXPECT_GE(leaves, 1);
  EXPECT_LE(leaves, 2);
  EXPECT_LE(s.pages_written, 5u);
}

TEST(PageWalCost, HeaderKeepsTheLastCheckpointCounters) {
  TempPath tmp;
  build(tmp.path(), 1000);
  CommitStats s;
  {
    auto f = IndexFile::open(tmp.path(), {.writable = true});
    btree_of(*f, "BY_ID").insert(key_of(bigint_index(), 1), 7);
    f->commit();
    s = f->last_checkpoint();
  }
  auto f = IndexFile::open(tmp.path());
  CommitStats r = f->last_checkpoint();
  EXPECT_EQ(r.checkpoint, s.checkpoint);
  EXPECT_EQ(r.pages_written, s.pages_written);
  EXPECT_EQ(r.bytes_written, s.bytes_written);
  EXPECT_EQ(r.bytes_synced, s.bytes_synced);
  std::vector<uint8_t> page(f->page_size());
  read_file_page(*f, 0, page.data());
  EXPECT_EQ(get_u32(page.data() + 56), s.pages_written);
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "-wal"));
}

TEST(PageWalCost, FlushWithoutChangesWritesNothing) {
  TempPath tmp;
  build(tmp.path(), 1000);
  auto f = IndexFile::open(tmp.path(), {.writable = true});
  const uint64_t before = f->last_checkpoint().checkpoint;
  (void)btree_of(*f, "BY_ID").find(key_of(bigint_index(), 2));
  f->commit();
  EXPECT_EQ(f->last_checkpoint().checkpoint, before);
}

}  // namespace
}  // namespace pbtree
