// The combination matrix (issue 30): one generator builds an index for every combination of
//   type and key format (tests/support/matrix_rows.h: every (type, key format) pair that
//   key_format_allowed() accepts for smallint, integer, bigint, int128, double, numeric(9,2),
//   numeric(18,3), numeric(38,6) and varchar(12), and compound indexes of 2 and 3 segments) x
//   layout (every kNodeLayouts value) x ascending / descending x NULLs and empty strings (none,
//   first, last, all, one only: a lone NULL, and for types with a varchar segment a lone empty
//   string) x build path x page size (kPageSizes),
// build paths, each the CLI in-process (run_args) except one-by-one inserts: `load --threads 1`
// and `load --threads 2` in memory (`--memory 1M`: no spilled run, IndexFile::bulk_load; with
// 2 threads the CSV is parsed in parallel chunks), `load --memory 64K` (sorted runs spilled and
// merged), `load` then `load --append`, one-by-one BTree::insert, and `import` from a Firebird
// 3 database (tests/firebird/matrix_fb3.fdb.zst, made once by
// tests/firebird/make_matrix_fixture.sh; Firebird 3 types, single-segment only). A compound
// index is loaded from CSV as a user loads one: --type and --column once per segment, each
// segment in its type's default key format.
// Each index: `verify` exits 0, BTree::verify counts every entry, a forward and a backward
// scan equal the sorted model (a std::multimap of normalized key and record number; import:
// keys only, Firebird gives the record numbers), and a find of every distinct key gives the
// model's record numbers.
// By default a pairwise-covering subset runs (every pair of values of any two dimensions in
// at least one index); PBTREE_MATRIX=full runs every combination. A new layout joins by its
// kNodeLayouts entry, a new type by its matrix_types() entry, a new build path by its
// BuildPath value here.
// Sizes (at 92a50bb): 23 types (19 single-segment type/key format pairs, 4 compound) x 2
// layouts x 2 directions x 6 NULL patterns ("one-empty": the 5 types with a varchar segment) x
// 6 build paths (import: the 17 Firebird 3 types) x 4 page sizes = 10,896 valid cases; the
// pairwise subset is 137 of them. Release build, 2-CPU machine, scratch in /dev/shm: the
// default run (`ctest --test-dir build -R CliMatrix`) takes 0.5 s; the full matrix
// (`PBTREE_MATRIX=full build/bin/pbtree-tests
// --gtest_filter=CliMatrix.EveryIndexReadsBackAsItsModel`) took 39 s, all 10,896 passing
// (55 s while another build ran).
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <pbtree/what_if.h>
#include <unistd.h>
#include <zstd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "tests/support/cli_test_util.h"
#include "tests/support/matrix_rows.h"

namespace pbtree {
namespace {

using namespace pbtree::testing;
using tools::testing::run_args;

enum class BuildPath { Load1, Load2, Spill, Append, Insert, Import };
constexpr BuildPath kBuildPaths[] = {BuildPath::Load1,  BuildPath::Load2,  BuildPath::Spill,
                                     BuildPath::Append, BuildPath::Insert, BuildPath::Import};
const char* path_name(BuildPath p) {
  switch (p) {
    case BuildPath::Load1:
      return "load-1-thread";
    case BuildPath::Load2:
      return "load-2-threads";
    case BuildPath::Spill:
      return "load-spilled";
    case BuildPath::Append:
      return "load-append";
    case BuildPath::Insert:
      return "insert";
    case BuildPath::Import:
      return "import-firebird3";
  }
  return "?";
}

// The dimensions, each a count of values; a case is one index into each.
enum Dim { kType, kLayout, kDirection, kNulls, kPath, kPageSize, kDims };
std::vector<size_t> dim_sizes() {
  return {matrix_types().size(),    std::size(kNodeLayouts), 2,
          std::size(kNullPatterns), std::size(kBuildPaths),  std::size(kPageSizes)};
}
using Case = std::vector<size_t>;

// Import only for the types Firebird 3 has (single-segment: import copies no compound index);
// "one-empty" only for types with a varchar segment.
bool valid(const Case& c) {
  const MatrixType& t = matrix_types()[c[kType]];
  if (!null_pattern_applies(t, kNullPatterns[c[kNulls]])) return false;
  return kBuildPaths[c[kPath]] != BuildPath::Import || t.fb3 != nullptr;
}

std::string case_name(const Case& c) {
  return std::string(matrix_types()[c[kType]].name) + " " +
         std::string(layout_name(kNodeLayouts[c[kLayout]])) + " " +
         (c[kDirection] != 0 ? "desc" : "asc") +
         " nulls:" + null_pattern_name(kNullPatterns[c[kNulls]]) + " " +
         path_name(kBuildPaths[c[kPath]]) + " " + std::to_string(kPageSizes[c[kPageSize]]);
}

std::vector<Case> all_cases() {
  const auto sizes = dim_sizes();
  std::vector<Case> out;
  Case c(kDims, 0);
  for (;;) {
    if (valid(c)) out.push_back(c);
    size_t d = 0;
    while (d < kDims && ++c[d] == sizes[d]) c[d++] = 0;
    if (d == kDims) return out;
  }
}

// Pair (d1 = value a, d2 = value b), d1 < d2, as one number.
struct PairIndex {
  std::vector<size_t> sizes = dim_sizes();
  size_t id(size_t d1, size_t a, size_t d2, size_t b) const {
    return ((d1 * kDims + d2) * 64 + a) * 64 + b;
  }
};

// Every pair of values of two dimensions that some valid case holds.
std::set<size_t> valid_pairs(const std::vector<Case>& cases) {
  PairIndex px;
  std::set<size_t> pairs;
  for (const Case& c : cases) {
    for (size_t i = 0; i < kDims; ++i) {
      for (size_t j = i + 1; j < kDims; ++j) pairs.insert(px.id(i, c[i], j, c[j]));
    }
  }
  return pairs;
}

// Greedy pairwise cover: repeatedly the valid case covering the most uncovered pairs (the
// first of equals), until every valid pair is covered. Deterministic. Each case's pair ids
// are computed once and the uncovered ones kept as flags (the full matrix has over 10,000
// cases).
std::vector<Case> pairwise_cases() {
  const std::vector<Case> all = all_cases();
  PairIndex px;
  std::vector<std::vector<size_t>> ids(all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    for (size_t i = 0; i < kDims; ++i) {
      for (size_t j = i + 1; j < kDims; ++j) ids[k].push_back(px.id(i, all[k][i], j, all[k][j]));
    }
  }
  std::vector<char> uncovered(px.id(kDims, 0, 0, 0), 0);
  size_t left = 0;
  for (size_t id : valid_pairs(all)) {
    uncovered[id] = 1;
    ++left;
  }
  std::vector<Case> out;
  while (left > 0) {
    size_t best = 0, best_gain = 0;
    for (size_t k = 0; k < all.size(); ++k) {
      size_t gain = 0;
      for (size_t id : ids[k]) gain += static_cast<size_t>(uncovered[id]);
      if (gain > best_gain) {
        best_gain = gain;
        best = k;
      }
    }
    for (size_t id : ids[best]) {
      left -= static_cast<size_t>(uncovered[id]);
      uncovered[id] = 0;
    }
    out.push_back(all[best]);
  }
  return out;
}

std::string scratch_root() {
  const char* shm = "/dev/shm";
  std::error_code ec;
  const auto space = std::filesystem::space(shm, ec);
  const std::filesystem::path base =
      !ec && ::access(shm, W_OK) == 0 && space.available > (size_t{512} << 20)
          ? std::filesystem::path(shm)
          : std::filesystem::temp_directory_path();
  const auto dir = base / ("pbtree-matrix-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// The Firebird 3 fixture, decompressed into `dir` once.
std::string fixture_fdb(const std::string& dir) {
  const std::string out = dir + "/matrix_fb3.fdb";
  if (std::filesystem::exists(out)) return out;
  std::ifstream in(std::string(PBTREE_SOURCE_DIR) + "/tests/firebird/matrix_fb3.fdb.zst",
                   std::ios::binary);
  const std::string z((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const unsigned long long size = ZSTD_getFrameContentSize(z.data(), z.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    throw std::runtime_error("tests/firebird/matrix_fb3.fdb.zst: not a zstd frame with a size");
  }
  std::string fdb(size, '\0');
  if (ZSTD_decompress(fdb.data(), fdb.size(), z.data(), z.size()) != size) {
    throw std::runtime_error("tests/firebird/matrix_fb3.fdb.zst: does not decompress");
  }
  std::ofstream(out, std::ios::binary) << fdb;
  return out;
}

struct ModelLess {
  bool descending;
  bool operator()(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) const {
    return compare_keys(a, b, descending) < 0;
  }
};
using Model = std::multimap<std::vector<uint8_t>, uint64_t, ModelLess>;

// The definition of type `t`: single-segment in t.format; compound with each segment in its
// type's default key format (as `load` makes it).
IndexDefinition definition_of(const MatrixType& t, bool descending, NodeLayout layout) {
  IndexDefinition def;
  def.name = "I";
  def.type = TypeSpec::parse(t.type);
  def.format = parse_key_format(t.format);
  for (const std::string& s : t.segment_types()) {
    if (!t.compound()) break;
    const TypeSpec type = TypeSpec::parse(s);
    def.segments.push_back(IndexSegment{type, default_key_format(type)});
  }
  if (def.compound()) def.format = def.segments[0].format;
  def.descending = descending;
  def.layout = layout;
  return def;
}

// The key of `row` in `def`: build_key, or build_compound_key with one value per segment.
std::vector<uint8_t> key_of(const IndexDefinition& def, const MatrixRow& row) {
  KeyBuffer k;
  if (!def.compound()) {
    build_key(def.type, def.format, row[0] ? parse_value(def.type, *row[0]) : Value::null(),
              def.descending, k);
  } else {
    std::vector<Segment> segs;
    for (size_t j = 0; j < def.segments.size(); ++j) {
      const IndexSegment& g = def.segments[j];
      segs.push_back(
          Segment{&g.type, g.format, row[j] ? parse_value(g.type, *row[j]) : Value::null()});
    }
    build_compound_key(segs, def.descending, k);
  }
  return std::vector<uint8_t>(k.bytes().begin(), k.bytes().end());
}

// Rows [begin, end) as CSV: one column per segment (NULL: an empty field; varchar: quoted, so
// "" is the empty string), then the record number.
std::string csv_of(const MatrixType& t, const std::vector<MatrixRow>& rows, size_t begin,
                   size_t end) {
  const std::vector<std::string> types = t.segment_types();
  std::string csv;
  for (size_t i = begin; i < end; ++i) {
    for (size_t j = 0; j < types.size(); ++j) {
      if (j > 0) csv += ",";
      if (rows[i][j]) csv += is_text_type(types[j]) ? "\"" + *rows[i][j] + "\"" : *rows[i][j];
    }
    csv += "," + std::to_string(i) + "\n";
  }
  return csv;
}

// --column 1 .. --column n (one per segment) and --recno-column n + 1.
std::vector<std::string> column_args(const MatrixType& t) {
  std::vector<std::string> args;
  const size_t n = t.segment_types().size();
  for (size_t j = 1; j <= n; ++j) {
    args.push_back("--column");
    args.push_back(std::to_string(j));
  }
  args.push_back("--recno-column");
  args.push_back(std::to_string(n + 1));
  return args;
}

class MatrixRun {
 public:
  explicit MatrixRun(std::string dir) : dir_(std::move(dir)) {}

  void run(const Case& c) {
    SCOPED_TRACE(case_name(c));
    const MatrixType& t = matrix_types()[c[kType]];
    const BuildPath path = kBuildPaths[c[kPath]];
    const IndexDefinition def = definition_of(t, c[kDirection] != 0, kNodeLayouts[c[kLayout]]);
    const uint32_t page_size = kPageSizes[c[kPageSize]];
    const NullPattern nulls = kNullPatterns[c[kNulls]];
    const auto rows = path == BuildPath::Import ? matrix_rows(t, nulls, kMatrixFixtureRows, true)
                                                : matrix_rows(t, nulls, kMatrixRows);

    std::vector<std::vector<uint8_t>> keys;
    Model model(ModelLess{def.descending});
    for (size_t i = 0; i < rows.size(); ++i) {
      keys.push_back(key_of(def, rows[i]));
      model.emplace(keys.back(), i);
    }

    const std::string db = dir_ + "/m" + std::to_string(++serial_) + ".pbt";
    build(path, def, t, c, page_size, rows, keys, db);
    if (::testing::Test::HasFatalFailure()) return;
    check(db, path == BuildPath::Import, model);
    std::filesystem::remove(db);
    std::filesystem::remove(db + "-wal");
  }

 private:
  void build(BuildPath path, const IndexDefinition& def, const MatrixType& t, const Case& c,
             uint32_t page_size, const std::vector<MatrixRow>& rows,
             const std::vector<std::vector<uint8_t>>& keys, const std::string& db) {
    // `load`'s definition: --type (and --key-format) once, or --type once per segment.
    std::vector<std::string> create;
    for (const std::string& type : t.segment_types()) {
      create.push_back("--type");
      create.push_back(type);
    }
    if (!t.compound()) {
      create.push_back("--key-format");
      create.push_back(t.format);
    }
    for (const std::string& a : {std::string("--layout"), std::string(layout_name(def.layout)),
                                 std::string("--page-size"), std::to_string(page_size)}) {
      create.push_back(a);
    }
    for (const std::string& a : column_args(t)) create.push_back(a);
    if (def.descending) create.push_back("--descending");
    switch (path) {
      case BuildPath::Load1:
      case BuildPath::Load2: {
        // In memory (no spilled run: IndexFile::bulk_load), parsed in chunks of about 20 KiB and
        // built on 1 or 2 threads.
        const std::string csv = write("in.csv", csv_of(t, rows, 0, rows.size()));
        std::vector<std::string> args{
            "load",      db,         "--index", "I",         "--input",
            csv,         "--memory", "1M",      "--threads", path == BuildPath::Load1 ? "1" : "2",
            "--progress"};
        args.insert(args.end(), create.begin(), create.end());
        const auto r = run_args(args);
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_EQ(r.err.find("sort run"), std::string::npos) << "spilled runs: " << r.err;
        return;
      }
      case BuildPath::Insert: {
        auto file = IndexFile::open_or_create(db, page_size);
        file->create_index(def);
        BTree& tree = btree_of(*file, "I");
        for (size_t i = 0; i < rows.size(); ++i) tree.insert(keys[i], i);  // row order
        file->commit();
        file->close();
        return;
      }
      case BuildPath::Spill: {
        const std::string csv = write("in.csv", csv_of(t, rows, 0, rows.size()));
        std::vector<std::string> args{"load",     db,    "--index",   "I", "--input",   csv,
                                      "--memory", "64K", "--threads", "1", "--progress"};
        args.insert(args.end(), create.begin(), create.end());
        const auto r = run_args(args);
        ASSERT_EQ(r.code, 0) << r.err;
        if (rows.size() > 1) {
          EXPECT_NE(r.err.find("sort run 2"), std::string::npos) << "no spilled runs: " << r.err;
        }
        return;
      }
      case BuildPath::Append: {
        const size_t half = rows.size() / 2;
        const std::string a = write("a.csv", csv_of(t, rows, 0, half));
        const std::string b = write("b.csv", csv_of(t, rows, half, rows.size()));
        std::vector<std::string> args{"load", db, "--index", "I", "--input", a};
        args.insert(args.end(), create.begin(), create.end());
        const auto r1 = run_args(args);
        ASSERT_EQ(r1.code, 0) << r1.err;
        std::vector<std::string> append{"load", db, "--index", "I", "--append", "--input", b};
        for (const std::string& arg : column_args(t)) append.push_back(arg);
        const auto r2 = run_args(append);
        ASSERT_EQ(r2.code, 0) << r2.err;
        return;
      }
      case BuildPath::Import: {
        const std::string index = std::string("I_") + t.fb3_tag + "_" +
                                  null_pattern_tag(kNullPatterns[c[kNulls]]) +
                                  (def.descending ? "_D" : "_A");
        const auto r =
            run_args({"import", fixture_fdb(dir_), db, "--index", index, "--name", "I",
                      "--key-format", t.format, "--layout", std::string(layout_name(def.layout)),
                      "--page-size", std::to_string(page_size)});
        ASSERT_EQ(r.code, 0) << r.err;
        return;
      }
    }
  }

  void check(const std::string& db, bool keys_only, const Model& model) {
    const auto v = run_args({"verify", db});
    EXPECT_EQ(v.code, 0) << v.out << v.err;
    auto file = IndexFile::open(db);
    const BTree& tree = btree_of(*file, "I");
    EXPECT_EQ(tree.verify().entries, model.size());
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> want(model.begin(), model.end());
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> forward, backward;
    for (Cursor cur = tree.scan(); cur.valid(); cur.next()) {
      forward.emplace_back(std::vector<uint8_t>(cur.key().begin(), cur.key().end()),
                           cur.record_number());
    }
    ScanRange back;
    back.backward = true;
    for (Cursor cur = tree.scan(back); cur.valid(); cur.next()) {
      backward.emplace_back(std::vector<uint8_t>(cur.key().begin(), cur.key().end()),
                            cur.record_number());
    }
    std::vector<std::pair<std::vector<uint8_t>, uint64_t>> reversed(backward.rbegin(),
                                                                    backward.rend());
    EXPECT_EQ(reversed, forward) << "the backward scan is not the forward scan reversed";
    if (keys_only) {
      // Firebird's record numbers: the keys, and per key the record numbers ascending.
      ASSERT_EQ(forward.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(forward[i].first, want[i].first) << "entry " << i;
        if (i > 0 && forward[i].first == forward[i - 1].first) {
          EXPECT_LT(forward[i - 1].second, forward[i].second) << "entry " << i;
        }
      }
    } else {
      EXPECT_EQ(forward, want);
    }
    // find of every distinct key: the record numbers of the scan's entries with that key.
    std::map<std::vector<uint8_t>, std::vector<uint64_t>, ModelLess> scanned(ModelLess{false});
    for (const auto& [key, recno] : forward) scanned[key].push_back(recno);
    for (auto it = model.begin(); it != model.end(); it = model.upper_bound(it->first)) {
      const auto [lo, hi] = model.equal_range(it->first);
      std::vector<uint64_t> expected;
      for (auto e = lo; e != hi; ++e) expected.push_back(e->second);
      if (keys_only) expected = scanned[it->first];
      EXPECT_EQ(tree.find(it->first), expected) << "key " << ::testing::PrintToString(it->first);
    }
  }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::string dir_;
  size_t serial_ = 0;
};

TEST(CliMatrix, PairwiseSubsetCoversEveryValidPair) {
  const auto all = all_cases();
  const auto subset = pairwise_cases();
  for (size_t n : dim_sizes()) EXPECT_LE(n, 64u) << "PairIndex holds 64 values per dimension";
  EXPECT_EQ(valid_pairs(subset), valid_pairs(all));
  for (const Case& c : subset) EXPECT_TRUE(valid(c)) << case_name(c);
  // Import only for the types Firebird 3 has; "one-empty" only where "" is a value.
  for (const Case& c : all) {
    const MatrixType& t = matrix_types()[c[kType]];
    if (kBuildPaths[c[kPath]] == BuildPath::Import) {
      EXPECT_NE(t.fb3, nullptr) << case_name(c);
      EXPECT_FALSE(t.compound()) << case_name(c);
    }
    if (kNullPatterns[c[kNulls]] == NullPattern::OneEmpty) {
      EXPECT_TRUE(has_text_segment(t)) << case_name(c);
    }
  }
  EXPECT_LT(subset.size(), all.size() / 20);
}

// Every (type, key format) pair that pbtree allows for a single-segment type of the matrix is
// one of its types, and every type's pair is allowed; compound indexes are there, with and
// without a varchar segment, of 2 and 3 segments; "one-empty" is a lone empty string.
TEST(CliMatrix, TypesHoldEveryAllowedKeyFormat) {
  const KeyFormat formats[] = {KeyFormat::Double, KeyFormat::RescaledDouble, KeyFormat::Decimal128,
                               KeyFormat::Bcd, KeyFormat::Text};
  std::set<std::pair<std::string, std::string>> have;
  std::set<size_t> compound_sizes;
  bool compound_text = false, compound_no_text = false;
  for (const MatrixType& t : matrix_types()) {
    const TypeSpec type = TypeSpec::parse(t.type);
    if (t.compound()) {
      compound_sizes.insert(t.segments.size());
      (has_text_segment(t) ? compound_text : compound_no_text) = true;
      EXPECT_EQ(parse_key_format(t.format), default_key_format(type)) << t.name;
      continue;
    }
    EXPECT_TRUE(key_format_allowed(type, parse_key_format(t.format))) << t.name;
    EXPECT_TRUE(have.emplace(t.type, t.format).second) << t.name << " twice";
  }
  for (const auto& [type_text, unused] : have) {
    for (KeyFormat f : formats) {
      if (key_format_allowed(TypeSpec::parse(type_text), f)) {
        EXPECT_TRUE(have.count({type_text, std::string(key_format_name(f))}))
            << type_text << "/" << key_format_name(f) << " is allowed but not in the matrix";
      }
    }
  }
  EXPECT_TRUE(compound_text);
  EXPECT_TRUE(compound_no_text);
  EXPECT_TRUE(compound_sizes.count(2) && compound_sizes.count(3));
  for (const MatrixType& t : matrix_types()) {
    if (!has_text_segment(t)) continue;
    const auto rows = matrix_rows(t, NullPattern::OneEmpty, kMatrixRows);
    ASSERT_EQ(rows.size(), 1u) << t.name;
    const auto types = t.segment_types();
    for (size_t j = 0; j < types.size(); ++j) {
      EXPECT_EQ(rows[0][j], is_text_type(types[j]) ? MatrixValue(std::string()) : MatrixValue())
          << t.name << " segment " << j;
    }
  }
}

TEST(CliMatrix, EveryIndexReadsBackAsItsModel) {
  const char* mode = std::getenv("PBTREE_MATRIX");
  const bool full = mode != nullptr && std::string(mode) == "full";
  const auto cases = full ? all_cases() : pairwise_cases();
  const std::string dir = scratch_root();
  const auto start = std::chrono::steady_clock::now();
  MatrixRun run(dir);
  const ::testing::TestResult* result =
      ::testing::UnitTest::GetInstance()->current_test_info()->result();
  size_t failed = 0;
  for (const Case& c : cases) {
    const int before = result->total_part_count();
    run.run(c);
    if (result->total_part_count() != before) ++failed;
    if (failed >= 20) break;  // enough to read
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "combination matrix (" << (full ? "full" : "pairwise") << "): " << cases.size()
            << " indexes in " << seconds << " s\n";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pbtree
