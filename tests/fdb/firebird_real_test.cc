// Real databases made by other people (../shared/data/firebird-real/INVENTORY.md) read by
// the Firebird reader, checked by invariants where no engine here can give the figures
// (ODS 11, 13, RedDatabase): every active index is analysed; its leaf-chain walk equals the
// walk down the tree by child pointers; keys are in order across pages; nodes equal the
// table's records when the table holds no back versions. ODS 10 and InterBase files are
// refused with a message naming them. The verbatim gstat comparisons are in
// tests/firebird/compare_real.sh (ctest firebird_real_files).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/errors.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_entries.h"
#include "firebird/fdb_file.h"
#include "firebird/fdb_records.h"
#include "firebird/fdb_stat.h"
#include "node/btree_page.h"
#include "node/node.h"
#include "tools/cmd_firebird.h"

namespace pbtree::firebird {
namespace {

// ../shared/data from the repository root (a checkout at /work/<x>); a worktree one level
// deeper (/work/wt/<x>) finds it one more level up.
std::string data_dir() {
  for (const char* d : {PBTREE_SOURCE_DIR "/../shared/data/firebird-real/",
                        PBTREE_SOURCE_DIR "/../../shared/data/firebird-real/"}) {
    if (std::filesystem::is_directory(d)) return d;
  }
  return PBTREE_SOURCE_DIR "/../shared/data/firebird-real/";
}
const std::string kDir = data_dir();

std::string error_opening(const std::string& name) {
  try {
    FdbFile::open(kDir + name);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Leaf pages in order by descending through child pointers (every node of every level).
void leaves_by_children(const FdbFile& f, uint32_t page_no, std::vector<uint32_t>& out, int depth) {
  ASSERT_LT(depth, 16);
  std::vector<uint8_t> page(f.page_size());
  f.read_page(page_no, FdbPage::Btree, page.data());
  const BtreeHeader h = check_btree_header(page.data(), f.page_size());
  if (h.level == 0) {
    out.push_back(page_no);
    return;
  }
  std::vector<uint32_t> children;
  uint32_t pos = kBtreeHeaderSize + h.jump_size;
  for (;;) {
    IndexNode n = decode_node(page.data(), h.length, pos, false);
    if (n.is_marker()) break;
    children.push_back(n.page_number);
    pos = n.end();
  }
  for (uint32_t c : children) {
    leaves_by_children(f, c, out, depth + 1);
  }
}

// Leaf pages along the sibling chain from the leftmost leaf.
std::vector<uint32_t> leaves_by_chain(const FdbFile& f, uint32_t root) {
  std::vector<uint8_t> page(f.page_size());
  uint32_t p = root;
  for (;;) {
    f.read_page(p, FdbPage::Btree, page.data());
    const BtreeHeader h = check_btree_header(page.data(), f.page_size());
    if (h.level == 0) break;
    p = decode_node(page.data(), h.length, kBtreeHeaderSize + h.jump_size, false).page_number;
  }
  std::vector<uint32_t> out;
  while (p != 0) {
    out.push_back(p);
    f.read_page(p, FdbPage::Btree, page.data());
    p = read_btree_header(page.data()).sibling;
  }
  return out;
}

struct FileCheck {
  size_t indexes = 0;        // active indexes with a root
  size_t record_checks = 0;  // indexes whose node count was compared with the records
};

FileCheck check_file(const std::string& name) {
  FileCheck fc;
  auto f = FdbFile::open(kDir + name);
  const std::vector<FdbTable> catalog = read_catalog(*f);
  EXPECT_FALSE(catalog.empty());
  for (const FdbTable& t : catalog) {
    // Primary record versions (deleted ones and back versions left out).
    uint64_t records = 0;
    if (!t.pointer_pages.empty()) {
      scan_relation(*f, t.id, t.pointer_pages, 1 << 20,
                    [&](std::span<const uint8_t>) { ++records; });
    }
    for (const FdbIndex& ix : t.indexes) {
      if (ix.inactive || ix.root_page == 0) continue;
      ++fc.indexes;
      SCOPED_TRACE(name + " " + t.name + "." + ix.name);
      const IndexStats s = analyze_fdb_index(*f, t, ix);
      std::vector<uint32_t> down;
      leaves_by_children(*f, ix.root_page, down, 0);
      EXPECT_EQ(down, leaves_by_chain(*f, ix.root_page));
      EXPECT_EQ(down.size(), s.leaf_buckets);
      uint64_t n = 0;
      std::vector<uint8_t> prev;
      uint64_t prev_recno = 0;
      bool in_order = true;
      for_each_fdb_entry(*f, ix, [&](std::span<const uint8_t> key, uint64_t recno) {
        const std::vector<uint8_t> k(key.begin(), key.end());
        // Byte order; in a descending index (complemented bytes) a key that is a proper
        // prefix of another sorts after it (btr.cpp compare_keys).
        const size_t common = std::min(k.size(), prev.size());
        const int c = common == 0 ? 0 : std::memcmp(k.data(), prev.data(), common);
        bool before = c < 0;
        if (c == 0 && k.size() != prev.size()) {
          before = ix.descending ? k.size() > prev.size() : k.size() < prev.size();
        }
        if (n > 0 && (before || (k == prev && recno < prev_recno))) in_order = false;
        prev = k;
        prev_recno = recno;
        ++n;
      });
      EXPECT_TRUE(in_order);
      EXPECT_EQ(n, s.nodes);
      if (!ix.condition) {
        // Firebird indexes NULLs too: one node per primary record; back versions and
        // deleted records not yet garbage-collected add nodes, never remove them, so
        // nodes == records exactly where the table holds neither.
        EXPECT_GE(s.nodes, records);
        if (s.nodes == records) ++fc.record_checks;
      }
    }
  }
  return fc;
}

TEST(FdbRealFiles, Ods11Firebird21Employee) {
  const FileCheck c = check_file("vdmkrchkn__Firebird-plugin__EMPLOYEE.FDB");
  EXPECT_GT(c.indexes, 10u);
  EXPECT_GT(c.record_checks, 0u);
}

TEST(FdbRealFiles, Ods11Firebird21EmployeeGdb) {
  const FileCheck c =
      check_file("noelsonneres__Exemplo-Livro-Firemonkey-FireDac-e-Firebird__EMPLOYEE.GDB");
  EXPECT_GT(c.indexes, 10u);
}

TEST(FdbRealFiles, Ods11Firebird25) {
  EXPECT_GT(check_file("Andrew-6676__chickenPrinter__DATABASE.FDB").indexes, 0u);
}

TEST(FdbRealFiles, Ods11Firebird25SixteenKiBPages) {
  EXPECT_GT(check_file("anion0278__FireBirdEmbeddedNet8Example__ExampleData.FDB").indexes, 0u);
}

TEST(FdbRealFiles, Ods12Firebird3) {
  EXPECT_GT(check_file("boriswinner__wba__BASE.FDB").indexes, 0u);
  EXPECT_GT(check_file("jvelilla__eiffel_firebird__EMPLOYEE.FDB").indexes, 10u);
}

TEST(FdbRealFiles, RedDatabaseReadAsOds12) {
  auto f = FdbFile::open(kDir + "seagirl1110__node-server-rdb__TEST.FDB");
  EXPECT_EQ(f->header().product, "RedDatabase");
  EXPECT_EQ(f->header().ods_minor, 3);
  EXPECT_EQ(f->ods().major, 12);
  EXPECT_GT(check_file("seagirl1110__node-server-rdb__TEST.FDB").indexes, 0u);
}

TEST(FdbRealFiles, Ods13Firebird4) {
  EXPECT_GT(check_file("Lurbano1995__Api__DATABASE.FDB").indexes, 0u);
  EXPECT_GT(check_file("DimitriDiciocio__Livros-2025__BANCO.FDB").indexes, 0u);
}

TEST(FdbRealFiles, Ods131Firebird5) {
  EXPECT_GT(check_file("DevRaf4elSantos__conhecendoFirebird__DATABASE.FDB").indexes, 0u);
}

TEST(FdbRealFiles, Ods10IsRefusedByName) {
  EXPECT_EQ(error_opening("luiz0067yahoo__bkp-sisbanda-delphi-6-2006__BANCO.GDB"),
            kDir +
                "luiz0067yahoo__bkp-sisbanda-delphi-6-2006__BANCO.GDB: an InterBase 6 / "
                "Firebird 1.x database (ODS 10.0); pbtree reads ODS 11.0-11.2 (Firebird "
                "2.0-2.5), 12.0 (Firebird 3.0) and 13.0-13.1 (Firebird 4.0 and 5.0)");
}

TEST(FdbRealFiles, InterBaseIsRefusedByName) {
  const std::string e = error_opening("theossistemas__teste-delphi__TESTETHEOS.FDB");
  EXPECT_NE(e.find(": an InterBase database (ODS 16); pbtree reads ODS 11.0-11.2"),
            std::string::npos)
      << e;
}

// Damaged copies of real ODS 11 and 13 files, read from memory: each gives one line that
// names the file, never a crash.
std::vector<uint8_t> file_bytes(const std::string& name) {
  std::ifstream in(kDir + name, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

std::string read_all_error(std::vector<uint8_t> img) {
  try {
    auto f = FdbFile::from_bytes("d.fdb", std::move(img));
    for (const FdbTable& t : read_catalog(*f)) {
      for (const FdbIndex& ix : t.indexes) analyze_fdb_index(*f, t, ix);
    }
  } catch (const CorruptError& e) {
    return e.what();
  }
  return "";
}

void expect_one_line(const std::string& e, const std::string& part) {
  EXPECT_NE(e.find(part), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e.rfind("d.fdb: ", 0), 0u) << e;
}

TEST(FdbRealFiles, TruncatedOds13FileIsOneLine) {
  auto img = file_bytes("Lurbano1995__Api__DATABASE.FDB");
  ASSERT_GT(img.size(), 200000u);
  img.resize(160 * 4096);
  expect_one_line(read_all_error(img), "beyond the end of the file (160 pages)");
}

TEST(FdbRealFiles, WrongPageTypeInOds11FileIsOneLine) {
  auto img = file_bytes("Andrew-6676__chickenPrinter__DATABASE.FDB");
  const uint32_t ps = 4096;
  const uint32_t pages_ppg = fdb_u32(&img[20]);
  img[uint64_t{pages_ppg} * ps] = 5;  // RDB$PAGES' pointer page now says "data page"
  expect_one_line(read_all_error(img),
                  fmt::format("page {} (data): expected a pointer page", pages_ppg));
}

TEST(FdbRealFiles, RecordThatDoesNotDecompressIsOneLine) {
  auto img = file_bytes("DevRaf4elSantos__conhecendoFirebird__DATABASE.FDB");
  const uint32_t ps = 8192;
  const uint32_t ppg = fdb_u32(&img[20]);
  const uint32_t dp = fdb_u32(&img[uint64_t{ppg} * ps + 32]);
  uint8_t* page = &img[uint64_t{dp} * ps];
  // First record of RDB$PAGES' first data page: a repeat run far beyond any record.
  const uint16_t off = fdb_u16(page + 24);
  page[off + 13] = 0xFE;  // ODS 13.1: -2, a 4-byte count follows
  const uint32_t huge = 0x7FFFFFFF;
  std::memcpy(page + off + 14, &huge, 4);
  expect_one_line(read_all_error(img),
                  fmt::format("page {} (data): line 0: record does not decompress", dp));
}

TEST(FdbRealFiles, Ods11HeaderPartHasFirebird25Lines) {
  auto f = FdbFile::open(kDir + "Andrew-6676__chickenPrinter__DATABASE.FDB");
  const std::string h = tools::format_fdb_header(*f, "a.fdb");
  const size_t from = h.find("Database header page information:");
  ASSERT_NE(from, std::string::npos);
  EXPECT_EQ(h.substr(from),
            "Database header page information:\n"
            "\tFlags\t\t\t0\n\tChecksum\t\t12345\n\tGeneration\t\t1077\n"
            "\tPage size\t\t4096\n\tODS version\t\t11.2\n\tOldest transaction\t1038\n"
            "\tOldest active\t\t1039\n\tOldest snapshot\t\t1039\n\tNext transaction\t1079\n"
            "\tBumped transaction\t1\n\tSequence number\t\t0\n\tNext attachment ID\t53\n"
            "\tImplementation ID\t26\n\tShadow count\t\t0\n\tPage buffers\t\t0\n"
            "\tNext header page\t0\n\tDatabase dialect\t3\n"
            "\tCreation date\t\tNov 26, 2019 22:38:31\n\tAttributes\t\tforce write\n\n"
            "    Variable header data:\n\t*END*\n\n\nDatabase file sequence:\n"
            "File a.fdb is the only file\n\nAnalyzing database pages ...\n");
}

}  // namespace
}  // namespace pbtree::firebird

namespace pbtree::firebird {
namespace {

// An ODS 12.0 file whose header is relabelled 13.0, copied to a temp dir: its RDB$RELATIONS
// read in the 13.0 layout lists no system relation, which is one line naming the file, not
// an empty catalog.
TEST(FdbRealFiles, Ods12RelabelledOds13IsCatalogNotFound) {
  auto img = file_bytes("boriswinner__wba__BASE.FDB");
  ASSERT_EQ(fdb_u16(&img[18]), 0x800Cu);
  img[18] = 0x0D;  // hdr_ods_version 0x800D
  img[64] = 0;     // hdr_ods_minor 0
  img[65] = 0;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("pbtree-relabel-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "relabelled.fdb").string();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(img.data()), static_cast<std::streamsize>(img.size()));
  }
  std::string e;
  try {
    auto f = FdbFile::open(path);
    read_catalog(*f);
  } catch (const CorruptError& x) {
    e = x.what();
  }
  std::filesystem::remove_all(dir);
  EXPECT_EQ(e, path +
                   ": catalog not found: RDB$RELATIONS read as ODS 13.0 does not list "
                   "RDB$PAGES (0), RDB$FIELDS (2), RDB$INDEX_SEGMENTS (3), RDB$INDICES (4), "
                   "RDB$RELATION_FIELDS (5), RDB$RELATIONS (6) (is the header's ODS version "
                   "right?)");
}

}  // namespace
}  // namespace pbtree::firebird
