// Unit tests of gstat's table figures (firebird/fdb_table_stat.h) and their text
// (tools/fdb_table_format.h): a hand-built database image with records, a back version, a
// fragment and blobs of levels 0 and 1; damaged images give one-line errors; a real Firebird 3
// database from ../shared/data/firebird-real gives fbstat -r's lines. Whole reports are compared
// with fbstat by tests/firebird/compare_tables.sh and compare_stat.sh.
#include <gtest/gtest.h>
#include <pbtree/errors.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"
#include "firebird/fdb_records.h"
#include "firebird/fdb_stat.h"
#include "firebird/fdb_table_stat.h"
#include "tools/fdb_table_format.h"

namespace pbtree::firebird {
namespace {

constexpr uint32_t kPs = 4096;

// ../shared/data/firebird-real from the repository root (a checkout at /work/<x>), or one
// level more up from a worktree (/work/wt/<x>).
std::string real_dir() {
  for (const char* d : {PBTREE_SOURCE_DIR "/../shared/data/firebird-real/",
                        PBTREE_SOURCE_DIR "/../../shared/data/firebird-real/"}) {
    if (std::filesystem::is_directory(d)) return d;
  }
  return PBTREE_SOURCE_DIR "/../shared/data/firebird-real/";
}

void put16(std::vector<uint8_t>& img, uint64_t at, uint16_t v) {
  std::memcpy(&img[at], &v, 2);
}
void put32(std::vector<uint8_t>& img, uint64_t at, uint32_t v) {
  std::memcpy(&img[at], &v, 4);
}

// Page `p` gets type `type` and its own number.
void page_header(std::vector<uint8_t>& img, uint32_t p, uint8_t type, uint8_t flags = 0) {
  img[uint64_t{p} * kPs] = type;
  img[uint64_t{p} * kPs + 1] = flags;
  put32(img, uint64_t{p} * kPs + 12, p);
}

// Line `line` of data page `p`: `len` bytes at `off`, rhd_flags `flags`, back pointer.
uint64_t line(std::vector<uint8_t>& img, uint32_t p, uint32_t line, uint16_t off, uint16_t len,
              uint16_t flags, uint32_t b_page = 0, uint16_t b_line = 0) {
  const uint64_t base = uint64_t{p} * kPs;
  put16(img, base + 24 + 4 * line, off);
  put16(img, base + 24 + 4 * line + 2, len);
  put32(img, base + off + 4, b_page);
  put16(img, base + off + 8, b_line);
  put16(img, base + off + 10, flags);
  img[base + off + 12] = 1;  // format
  return base + off;
}

// Pages: 0 header, 1 RDB$PAGES pointer page (empty), 2 pointer page of relation 128 listing
// data pages 3, (a released slot), 4; 3 primary page (swept) with three records, one with a
// back version on page 4 and one continued by a fragment on page 4, a level-0 and a level-1
// blob; 4 a secondary, full page with the back version and the fragment; 5, 6 blob pages.
std::vector<uint8_t> table_image() {
  std::vector<uint8_t> img(uint64_t{kPs} * 7, 0);
  img[0] = 1;
  put16(img, 16, kPs);
  put16(img, 18, 0x800C);
  put32(img, 20, 1);
  page_header(img, 1, 4);
  page_header(img, 2, 4);
  put16(img, 2 * kPs + 24, 3);    // ppg_count
  put16(img, 2 * kPs + 26, 128);  // ppg_relation
  put32(img, 2 * kPs + 32, 3);
  put32(img, 2 * kPs + 40, 4);
  page_header(img, 3, 5, 0x08);
  put16(img, 3 * kPs + 20, 128);
  put16(img, 3 * kPs + 22, 5);
  line(img, 3, 0, 4000, 33, 0);
  line(img, 3, 1, 3900, 23, 0, 4, 0);
  const uint64_t r2 = line(img, 3, 2, 3800, 52, 8);
  put32(img, r2 + 16, 4);  // rhdf_f_page
  put16(img, r2 + 20, 1);  // rhdf_f_line
  const uint64_t b0 = line(img, 3, 3, 3700, 33, 16);
  img[b0 + 12] = 0;        // blh_level
  put32(img, b0 + 20, 5);  // blh_length
  const uint64_t b1 = line(img, 3, 4, 3600, 36, 16);
  img[b1 + 12] = 1;
  put32(img, b1 + 20, 9000);
  put32(img, b1 + 28, 5);
  put32(img, b1 + 32, 6);
  page_header(img, 4, 5, 0x02 | 0x10);
  put32(img, 4 * kPs + 16, 1);
  put16(img, 4 * kPs + 20, 128);
  put16(img, 4 * kPs + 22, 2);
  line(img, 4, 0, 4000, 20, 2);
  line(img, 4, 1, 3900, 62, 4);
  page_header(img, 5, 8);
  page_header(img, 6, 8);
  return img;
}

FdbTable table_128() {
  FdbTable t;
  t.name = "T";
  t.id = 128;
  t.pointer_page = 2;
  t.index_root = 0;
  return t;
}

std::string error_of(std::vector<uint8_t> img) {
  auto f = FdbFile::from_bytes("x.fdb", std::move(img));
  const FdbTable t = table_128();
  try {
    analyze_fdb_tables(*f, {&t}, {});
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(FdbTableStat, FiguresOfAHandBuiltTable) {
  auto f = FdbFile::from_bytes("x.fdb", table_image());
  const FdbTable t = table_128();
  const FdbFormatLengths formats = {{128, {{1, 40}, {2, 44}}}};
  const std::vector<FdbTableStats> v = analyze_fdb_tables(*f, {&t}, formats);
  ASSERT_EQ(v.size(), 1u);
  const FdbTableStats& s = v[0];
  EXPECT_EQ(s.records, 3u);
  EXPECT_EQ(s.record_space, 20u + 10u + 30u + 40u);
  EXPECT_EQ(s.versions, 1u);
  EXPECT_EQ(s.version_space, 7u);
  EXPECT_EQ(s.max_versions, 1u);
  EXPECT_EQ(s.fragments, 1u);
  EXPECT_EQ(s.fragment_space, 40u);
  EXPECT_EQ(s.max_fragments, 1u);
  EXPECT_EQ(s.total_formats, 2u);
  EXPECT_EQ(s.used_formats, 1u);
  EXPECT_EQ(s.format_space, 120u);
  EXPECT_EQ(s.pointer_pages, 1u);
  EXPECT_EQ(s.slots, 3u);
  EXPECT_EQ(s.data_pages, 2u);
  EXPECT_EQ(s.primary_pages, 1u);
  EXPECT_EQ(s.swept_pages, 1u);
  EXPECT_EQ(s.full_pages, 1u);
  EXPECT_EQ(s.empty_pages, 0u);
  EXPECT_EQ(s.total_space, 20u + 177u + 8u + 82u);
  EXPECT_EQ(s.blobs[0].count, 1u);
  EXPECT_EQ(s.blobs[0].space, 5u);
  EXPECT_EQ(s.blobs[1].count, 1u);
  EXPECT_EQ(s.blobs[1].space, 9000u);
  EXPECT_EQ(s.blobs[1].pages, 2u);
  EXPECT_EQ(s.table_size(kPs), 5u * kPs);
}

TEST(FdbTableStat, Firebird3Lines) {
  auto f = FdbFile::from_bytes("x.fdb", table_image());
  const FdbTable t = table_128();
  const FdbTableStats s = analyze_fdb_tables(*f, {&t}, {{128, {{1, 40}}}})[0];
  EXPECT_EQ(tools::format_fdb_table_lines(s, kPs, 12),
            "    Primary pointer page: 2, Index root page: 0\n"
            "    Total formats: 1, used formats: 1\n"
            "    Average record length: 33.33, total records: 3\n"
            "    Average version length: 7.00, total versions: 1, max versions: 1\n"
            "    Average fragment length: 40.00, total fragments: 1, max fragments: 1\n"
            "    Average unpacked length: 40.00, compression ratio: 1.20\n"
            "    Pointer pages: 1, data page slots: 3\n"
            "    Data pages: 2, average fill: 4%\n"
            "    Primary pages: 1, secondary pages: 1, swept pages: 1\n"
            "    Empty pages: 0, full pages: 1\n"
            "    Blobs: 2, total length: 9005, blob pages: 2\n"
            "        Level 0: 1, Level 1: 1, Level 2: 0\n"
            "    Fill distribution:\n"
            "\t 0 - 19% = 2\n"
            "\t20 - 39% = 0\n"
            "\t40 - 59% = 0\n"
            "\t60 - 79% = 0\n"
            "\t80 - 99% = 0\n");
}

TEST(FdbTableStat, Firebird5BlobLevelsAndTableSize) {
  auto f = FdbFile::from_bytes("x.fdb", table_image());
  const FdbTable t = table_128();
  const FdbTableStats s = analyze_fdb_tables(*f, {&t}, {})[0];
  const std::string text = tools::format_fdb_table_lines(s, kPs, 13);
  EXPECT_NE(text.find("    Empty pages: 0, full pages: 1\n"
                      "    Blobs: 2, total length: 9005, blob pages: 2\n"
                      "        Level 0: 1, total length: 5, blob pages: 0\n"
                      "        Level 1: 1, total length: 9000, blob pages: 2\n"
                      "    Table size: 20480 bytes\n"
                      "    Fill distribution:\n"),
            std::string::npos)
      << text;
}

TEST(FdbTableStat, JsonCarriesTheFigures) {
  auto f = FdbFile::from_bytes("x.fdb", table_image());
  const FdbTable t = table_128();
  const FdbTableStats s = analyze_fdb_tables(*f, {&t}, {{128, {{1, 40}}}})[0];
  tools::Json o;
  tools::add_fdb_table_figures(o, s, kPs);
  EXPECT_EQ(
      tools::json_dump(o),
      "{\"pointer_page\":2,\"index_root\":0,\"total_formats\":1,\"used_formats\":1,"
      "\"avg_record_length\":33.333333333333336,\"total_records\":3,\"avg_version_length\":7.0,"
      "\"total_versions\":1,\"max_versions\":1,\"avg_fragment_length\":40.0,"
      "\"total_fragments\":1,\"max_fragments\":1,\"avg_unpacked_length\":40.0,"
      "\"compression_ratio\":1.2,\"pointer_pages\":1,\"data_page_slots\":3,\"data_pages\":2,"
      "\"avg_fill\":3.524066797642436,\"primary_pages\":1,\"secondary_pages\":1,\"swept_pages\":1,"
      "\"empty_pages\":0,\"full_pages\":1,\"big_record_pages\":0,\"blobs\":{\"count\":2,"
      "\"total_length\":9005,\"pages\":2,\"levels\":[{\"level\":0,\"count\":1,"
      "\"total_length\":5,\"pages\":0},{\"level\":1,\"count\":1,\"total_length\":9000,"
      "\"pages\":2},{\"level\":2,\"count\":0,\"total_length\":0,\"pages\":0}]},"
      "\"table_size\":20480,\"fill_distribution\":[2,0,0,0,0]}");
}

TEST(FdbTableStat, ProgressCountsDataPages) {
  auto f = FdbFile::from_bytes("x.fdb", table_image());
  const FdbTable t = table_128();
  uint64_t last_done = 0, last_total = 0;
  analyze_fdb_tables(*f, {&t}, {}, [&](uint64_t d, uint64_t n) {
    last_done = d;
    last_total = n;
  });
  EXPECT_EQ(last_done, 2u);
  EXPECT_EQ(last_total, 2u);
}

TEST(FdbTableStat, ListedPageOfTheWrongTypeIsCorrupt) {
  auto img = table_image();
  img[4 * kPs] = 7;
  EXPECT_EQ(error_of(img), "x.fdb: page 4 (b-tree): expected a data page");
}

TEST(FdbTableStat, DataPageOfAnotherRelationIsCorrupt) {
  auto img = table_image();
  put16(img, 4 * kPs + 20, 129);
  EXPECT_EQ(error_of(img), "x.fdb: page 4 (data): relation 129 where 128 was expected");
}

TEST(FdbTableStat, DataPageListedTwiceIsCorrupt) {
  auto img = table_image();
  put32(img, 2 * kPs + 36, 3);
  EXPECT_EQ(error_of(img), "x.fdb: page 3 (data): listed twice by pointer pages (page 2)");
}

TEST(FdbTableStat, LineOutsideThePageIsCorrupt) {
  auto img = table_image();
  put16(img, 3 * kPs + 24, 4090);  // line 0 at 4090, 33 bytes
  EXPECT_EQ(error_of(img),
            "x.fdb: page 3 (data): line 0: record at offset 4090 length 33 outside the page");
}

TEST(FdbTableStat, PointerChainThatLoopsIsCorrupt) {
  auto img = table_image();
  put32(img, 2 * kPs + 20, 2);  // ppg_next = itself
  EXPECT_EQ(error_of(img), "x.fdb: page 2 (pointer): pointer page chain loops");
}

TEST(FdbTableStat, BackVersionChainThatLoopsIsCorrupt) {
  auto img = table_image();
  put32(img, 4 * kPs + 4000 + 4, 4);  // the back version points to itself
  EXPECT_EQ(error_of(img), "x.fdb: page 4 (data): back version chain loops");
}

TEST(FdbTableStat, TruncatedFileIsAOneLineError) {
  auto img = table_image();
  img.resize(uint64_t{kPs} * 4);  // page 4 and the blob pages cut off
  const std::string e = error_of(img);
  EXPECT_EQ(e, "x.fdb: page 2 (pointer): slot 2: data page 4 beyond the end of the file (4 pages)");
}

TEST(FdbTableStat, RecordThatDoesNotDecompressIsAOneLineError) {
  auto img = table_image();
  // Page 3 line 0: a repeat run of 100 bytes where the record may hold 50.
  img[3 * kPs + 4000 + 13] = static_cast<uint8_t>(-100);
  img[3 * kPs + 4000 + 14] = 'x';
  put16(img, 3 * kPs + 22, 1);  // one line
  auto f = FdbFile::from_bytes("x.fdb", img);
  try {
    scan_relation(*f, 128, {2}, 50, [](std::span<const uint8_t>) {});
    FAIL() << "no error";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(),
                 "x.fdb: page 3 (data): line 0: record does not decompress within 50 bytes");
  }
}

// EMPLOYEE.FDB of jvelilla/eiffel_firebird (ODS 12.0, 8 KiB pages): COUNTRY as Debian's
// Firebird 3.0.11 `fbstat -r` prints it.
TEST(FdbTableStat, RealDatabaseTableEqualsFbstat) {
  const std::string path = real_dir() + "jvelilla__eiffel_firebird__EMPLOYEE.FDB";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto f = FdbFile::open(path);
  const std::vector<FdbTable> catalog = read_catalog(*f);
  const FdbTable* country = nullptr;
  for (const FdbTable& t : catalog) {
    if (t.name == "COUNTRY") country = &t;
  }
  ASSERT_NE(country, nullptr);
  const FdbTableStats s = analyze_fdb_tables(*f, {country}, read_format_lengths(*f, catalog))[0];
  EXPECT_EQ(tools::format_fdb_table_lines(s, f->page_size(), 12),
            "    Primary pointer page: 182, Index root page: 183\n"
            "    Total formats: 1, used formats: 1\n"
            "    Average record length: 25.94, total records: 16\n"
            "    Average version length: 0.00, total versions: 0, max versions: 0\n"
            "    Average fragment length: 0.00, total fragments: 0, max fragments: 0\n"
            "    Average unpacked length: 34.00, compression ratio: 1.31\n"
            "    Pointer pages: 1, data page slots: 1\n"
            "    Data pages: 1, average fill: 8%\n"
            "    Primary pages: 1, secondary pages: 0, swept pages: 0\n"
            "    Empty pages: 0, full pages: 0\n"
            "    Fill distribution:\n"
            "\t 0 - 19% = 1\n"
            "\t20 - 39% = 0\n"
            "\t40 - 59% = 0\n"
            "\t60 - 79% = 0\n"
            "\t80 - 99% = 0\n");
}

// Invariants on every readable file of ../shared/data/firebird-real (ODS 11.1, 11.2, 12.0,
// 13.0, 13.1, RedDatabase): no engine opens ODS 11 here, so its table figures are checked
// against the index walk. A table with no back versions has as many primary records as each
// of its unique indexes has nodes (Firebird indexes NULLs too); its slots cover its data pages,
// the fill bands add up to its data pages, and the formats used are among those defined.
struct RealFile {
  const char* name;
  uint64_t tables_checked;  // tables (system ones too) with a unique index, no back versions
};
void PrintTo(const RealFile& f, std::ostream* os) {
  *os << f.name;
}

class FdbTableStatReal : public ::testing::TestWithParam<RealFile> {};

TEST_P(FdbTableStatReal, RecordsEqualUniqueIndexNodes) {
  const std::string path = real_dir() + GetParam().name;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  auto f = FdbFile::open(path);
  const std::vector<FdbTable> catalog = read_catalog(*f);
  std::vector<const FdbTable*> tables;
  for (const FdbTable& t : catalog) {
    if (t.listed) tables.push_back(&t);
  }
  const std::vector<FdbTableStats> stats =
      analyze_fdb_tables(*f, tables, read_format_lengths(*f, catalog));
  uint64_t checked = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    const FdbTableStats& s = stats[i];
    SCOPED_TRACE(tables[i]->name);
    EXPECT_GE(s.slots, s.data_pages);
    EXPECT_EQ(s.fill[0] + s.fill[1] + s.fill[2] + s.fill[3] + s.fill[4], s.data_pages);
    EXPECT_LE(s.used_formats, s.total_formats);
    if (s.records > 0 && !tables[i]->system) {  // system formats live in the engine
      EXPECT_GE(s.used_formats, 1u);
    }
    if (s.versions != 0) continue;
    bool unique = false;
    for (const FdbIndex& ix : tables[i]->indexes) {
      if (!ix.unique || ix.inactive || ix.root_page == 0) continue;
      EXPECT_EQ(analyze_fdb_index(*f, *tables[i], ix).nodes, s.records) << ix.name;
      unique = true;
    }
    checked += unique;
  }
  EXPECT_EQ(checked, GetParam().tables_checked);
}

INSTANTIATE_TEST_SUITE_P(
    Files, FdbTableStatReal,
    ::testing::Values(
        RealFile{"vdmkrchkn__Firebird-plugin__EMPLOYEE.FDB", 29},
        RealFile{"noelsonneres__Exemplo-Livro-Firemonkey-FireDac-e-Firebird__EMPLOYEE.GDB", 29},
        RealFile{"Andrew-6676__chickenPrinter__DATABASE.FDB", 27},
        RealFile{"anion0278__FireBirdEmbeddedNet8Example__ExampleData.FDB", 21},
        RealFile{"boriswinner__wba__BASE.FDB", 30},
        RealFile{"jvelilla__eiffel_firebird__EMPLOYEE.FDB", 27},
        RealFile{"seagirl1110__node-server-rdb__TEST.FDB", 23},
        RealFile{"Lurbano1995__Api__DATABASE.FDB", 24},
        RealFile{"DimitriDiciocio__Livros-2025__BANCO.FDB", 22},
        RealFile{"DevRaf4elSantos__conhecendoFirebird__DATABASE.FDB", 26}),
    [](const ::testing::TestParamInfo<RealFile>& info) {
      std::string n = info.param.name;
      n = n.substr(0, n.find("__"));
      for (char& c : n) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return n + "_" + std::to_string(info.index);
    });

}  // namespace
}  // namespace pbtree::firebird
