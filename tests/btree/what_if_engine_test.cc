// What-if engine (btree/what_if.h) and the key decoder behind it (keys/key_decode.cc): exact
// values decoded from known key bytes, a random round trip per format, the auto rule, and
// predictions against real rebuilds of the demo's indexes in every format.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "btree/what_if.h"
#include "file/index_file_access.h"
#include "tools/demo.h"
#include "tools/stat_format.h"

namespace pbtree {
namespace {

std::string two(double v) {
  return fmt::format("{:.2f}", v);
}

std::vector<uint8_t> bytes(std::initializer_list<int> list) {
  std::vector<uint8_t> out;
  for (int b : list) out.push_back(static_cast<uint8_t>(b));
  return out;
}

std::string scratch(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() /
             ("pbtree-whatif-" + std::to_string(::getpid()) + "-" + tag);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(BtreeKeyToValueTest, RescaledDoubleBigint) {
  std::string storage;
  const auto key = bytes({0xC0, 0x59, 0, 0, 0, 0, 0, 0, 0x80});
  Value v = key_to_value(TypeSpec::parse("bigint"), KeyFormat::RescaledDouble, false, key, storage);
  EXPECT_EQ(v.kind, Value::Kind::Exact);
  EXPECT_EQ(static_cast<int64_t>(v.coefficient), 1000000);
  EXPECT_EQ(v.scale, 0);
}

TEST(BtreeKeyToValueTest, Decimal128Negative) {
  std::string storage;
  const auto key = bytes({0x18, 0x42, 0xE1});
  Value v = key_to_value(TypeSpec::parse("bigint"), KeyFormat::Decimal128, false, key, storage);
  EXPECT_EQ(v.kind, Value::Kind::Exact);
  EXPECT_EQ(static_cast<int64_t>(v.coefficient), -1);
  EXPECT_EQ(v.scale, 0);
}

TEST(BtreeKeyToValueTest, DescendingIntegerDouble) {
  std::string storage;
  const auto key = bytes({0x3F, 0xE3});  // 7 as a double key, inverted
  Value v = key_to_value(TypeSpec::parse("integer"), KeyFormat::Double, true, key, storage);
  EXPECT_EQ(v.kind, Value::Kind::Exact);
  EXPECT_EQ(static_cast<int64_t>(v.coefficient), 7);
}

TEST(BtreeKeyToValueTest, NumericKeepsColumnScale) {
  std::string storage;
  const TypeSpec t = TypeSpec::parse("numeric(12,2)");
  KeyBuffer kb;
  build_key(t, KeyFormat::Decimal128, Value::exact(-150, 2), true, kb);
  Value v = key_to_value(t, KeyFormat::Decimal128, true, kb.bytes(), storage);
  EXPECT_EQ(v.kind, Value::Kind::Exact);
  EXPECT_EQ(static_cast<int64_t>(v.coefficient), -150);
  EXPECT_EQ(v.scale, 2);
}

TEST(BtreeKeyToValueTest, DoubleColumn) {
  std::string storage;
  const auto key = bytes({0x3F, 0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  Value v = key_to_value(TypeSpec::parse("double"), KeyFormat::Double, false, key, storage);
  EXPECT_EQ(v.kind, Value::Kind::Double);
  EXPECT_EQ(v.dbl, -2.5);
}

TEST(BtreeKeyToValueTest, TextPointsIntoStorage) {
  std::string storage;
  const auto key = bytes({0x61, 0x62});
  Value v = key_to_value(TypeSpec::parse("varchar(10)"), KeyFormat::Text, false, key, storage);
  EXPECT_EQ(v.kind, Value::Kind::Text);
  EXPECT_EQ(v.text, "ab");
  EXPECT_EQ(v.text.data(), storage.data());
}

TEST(BtreeKeyToValueTest, NullKeys) {
  std::string storage;
  const TypeSpec t = TypeSpec::parse("bigint");
  EXPECT_EQ(key_to_value(t, KeyFormat::Decimal128, false, {}, storage).kind, Value::Kind::Null);
  const auto ff = bytes({0xFF});
  EXPECT_EQ(key_to_value(t, KeyFormat::Decimal128, true, ff, storage).kind, Value::Kind::Null);
}

TEST(BtreeKeyToValueTest, CorruptKeyIsKeyError) {
  std::string storage;
  const auto key = bytes({0x48, 0x48, 0xFF, 0xFF});  // digit group 1023 > 999
  EXPECT_THROW(key_to_value(TypeSpec::parse("bigint"), KeyFormat::Decimal128, false, key, storage),
               KeyError);
}

TEST(BtreeKeyToValueTest, RandomBigintRoundTripEveryFormat) {
  const uint64_t seed = 0x5EED6;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const TypeSpec t = TypeSpec::parse("bigint");
  std::string storage;
  int checked = 0;
  for (int i = 0; i < 600; ++i) {
    const int64_t x = static_cast<int64_t>(rng()) >> (rng() % 64);
    for (KeyFormat f : allowed_key_formats(t)) {
      for (bool desc : {false, true}) {
        KeyBuffer kb;
        build_key(t, f, Value::exact(x), desc, kb);
        Value v = key_to_value(t, f, desc, kb.bytes(), storage);
        ASSERT_EQ(v.kind, Value::Kind::Exact) << x;
        ASSERT_EQ(static_cast<int64_t>(v.coefficient), x) << key_format_name(f) << " " << desc;
        ASSERT_EQ(v.scale, 0);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3600);
}

TEST(BtreeWhatIfTest, AllowedFormatsDefaultFirst) {
  auto names = [](const std::string& type) {
    std::string s;
    for (KeyFormat f : allowed_key_formats(TypeSpec::parse(type))) {
      s += std::string(key_format_name(f)) + " ";
    }
    return s;
  };
  EXPECT_EQ(names("integer"), "double decimal128 bcd ");
  EXPECT_EQ(names("bigint"), "rescaled-double decimal128 bcd ");
  EXPECT_EQ(names("numeric(18,4)"), "rescaled-double decimal128 bcd ");
  EXPECT_EQ(names("int128"), "bcd ");
  EXPECT_EQ(names("double"), "double ");
  EXPECT_EQ(names("varchar(8)"), "text ");
}

TEST(BtreeWhatIfTest, EmptyInputGivesOneLeaf) {
  WhatIfEstimator::Options o;
  o.type = TypeSpec::parse("bigint");
  o.source = KeyFormat::RescaledDouble;
  o.layouts = {NodeLayout::Firebird};
  WhatIfEstimator e(o);
  auto rows = e.finish();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].leaf_pages, 1u);
  EXPECT_EQ(rows[0].depth, 1u);
  EXPECT_EQ(rows[0].nodes, 0u);
  EXPECT_EQ(rows[0].avg_key_length, 0.0);
}

// Dense 1..n bigint keys (rescaled-double source), record numbers 0..n-1.
std::vector<WhatIfRow> dense_rows(int n) {
  WhatIfEstimator::Options o;
  o.type = TypeSpec::parse("bigint");
  o.source = KeyFormat::RescaledDouble;
  o.layouts = {NodeLayout::Firebird};
  WhatIfEstimator e(o);
  KeyBuffer kb;
  for (int i = 1; i <= n; ++i) {
    build_key(o.type, KeyFormat::RescaledDouble, Value::exact(i), false, kb);
    e.add(kb.bytes(), static_cast<uint64_t>(i - 1));
  }
  return e.finish();
}

TEST(BtreeWhatIfTest, DenseBigintFigures) {
  auto rows = dense_rows(2000);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].format, KeyFormat::RescaledDouble);
  EXPECT_EQ(rows[0].leaf_pages, 3u);
  EXPECT_EQ(rows[0].depth, 2u);
  EXPECT_EQ(rows[1].format, KeyFormat::Decimal128);
  EXPECT_EQ(rows[1].leaf_pages, 2u);
  EXPECT_EQ(rows[1].depth, 2u);
  EXPECT_EQ(two(rows[0].avg_key_length), "10.06");
  EXPECT_EQ(two(rows[0].compression_ratio), "0.89");
  EXPECT_EQ(two(rows[1].avg_key_length), "3.75");
  EXPECT_EQ(two(rows[1].compression_ratio), "1.12");
  EXPECT_EQ(two(rows[0].used_bytes_per_entry), "11.27");
  EXPECT_EQ(two(rows[1].used_bytes_per_entry), "4.86");
}

TEST(BtreeWhatIfTest, AutoPicksDecimal128OnDenseBigint) {
  const TypeSpec t = TypeSpec::parse("bigint");
  KeyFormatChoice c = choose_key_format(t, NodeLayout::Firebird, dense_rows(2000), 2000);
  EXPECT_EQ(c.format, KeyFormat::Decimal128);
  EXPECT_EQ(c.best, KeyFormat::Decimal128);
  EXPECT_EQ(tools::describe_choice(t, c),
            "decimal128 (auto: 4.86 vs 11.27 bytes/entry on a 25% sample, 2.32x)");
}

TEST(BtreeWhatIfTest, AutoKeepsDefaultBelowGain) {
  const TypeSpec t = TypeSpec::parse("integer");
  WhatIfRow d, b;
  d.format = KeyFormat::Double;
  d.available = true;
  d.used_bytes_per_entry = 7.0;
  b.format = KeyFormat::Decimal128;
  b.available = true;
  b.used_bytes_per_entry = 6.0;  // 7 / 6 = 1.17 < 1.2
  KeyFormatChoice c = choose_key_format(t, NodeLayout::Firebird, {d, b}, 100);
  EXPECT_EQ(c.format, KeyFormat::Double);
  EXPECT_EQ(c.best, KeyFormat::Decimal128);
  EXPECT_EQ(tools::describe_choice(t, c),
            "double (auto: kept the default; decimal128 6.00 vs 7.00 bytes/entry on a 25% "
            "sample, 1.17x < 1.20x)");
}

TEST(BtreeWhatIfTest, AutoSwitchesAtExactlyTheGain) {
  const TypeSpec t = TypeSpec::parse("integer");
  WhatIfRow d, b;
  d.format = KeyFormat::Double;
  d.available = true;
  d.used_bytes_per_entry = 6.0;
  b.format = KeyFormat::Bcd;
  b.available = true;
  b.used_bytes_per_entry = 5.0;  // 1.20x
  KeyFormatChoice c = choose_key_format(t, NodeLayout::Firebird, {d, b}, 100);
  EXPECT_EQ(c.format, KeyFormat::Bcd);
  EXPECT_EQ(tools::describe_choice(t, c),
            "bcd (auto: 5.00 vs 6.00 bytes/entry on a 25% sample, 1.20x)");
}

TEST(BtreeWhatIfTest, AutoWithoutDefaultRowIsError) {
  WhatIfRow b;
  b.format = KeyFormat::Bcd;
  b.available = true;
  EXPECT_THROW(choose_key_format(TypeSpec::parse("integer"), NodeLayout::Firebird, {b}, 1),
               UsageError);
}

TEST(BtreeWhatIfTest, MissingIndexIsUsageError) {
  const std::string dir = scratch("missing");
  auto file = IndexFile::open_or_create(dir + "/m.pbt", 8192);
  try {
    what_if(*file, "I_NONE");
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/m.pbt: no index named I_NONE (the file has no index)");
  }
  file.reset();
  std::filesystem::remove_all(dir);
}

// A real rebuild of `info` in (format, layout) into a new file: its gstat figures.
IndexStats rebuild(IndexFile& src, const IndexInfo& info, KeyFormat format, NodeLayout layout,
                   const std::string& path) {
  EntryBatch batch;
  KeyBuffer kb;
  std::string storage;
  const IndexDefinition& d = info.def;
  for (Cursor c = btree_of(src, d.name).scan(); c.valid(); c.next()) {
    const Value v = key_to_value(d.type, d.format, d.descending, c.key(), storage);
    build_key(d.type, format, v, d.descending, kb);
    batch.add(kb.bytes(), c.record_number(), 0);
  }
  std::filesystem::remove(path);
  auto dst = IndexFile::open_or_create(path, src.page_size());
  IndexDefinition def = d;
  def.format = format;
  def.layout = layout;
  dst->bulk_load(def, batch);
  return dst->analyze(def.name);
}

// True if IndexFile::bulk_load builds `layout` (the compact layout reaches FastLoader, and so
// the what-if table, before the living tree and bulk_load take it).
bool file_builds(NodeLayout layout, const std::string& dir) {
  const std::string path = dir + "/probe.pbt";
  std::filesystem::remove(path);
  auto file = IndexFile::open_or_create(path, 4096);
  IndexDefinition def;
  def.name = "I_PROBE";
  def.type = TypeSpec::parse("integer");
  def.layout = layout;
  try {
    file->create_index(def);
  } catch (const UsageError&) {
    return false;
  }
  return true;
}

// Checks every available row of `r` whose layout IndexFile builds against a rebuild; returns
// the rows compared.
int compare_with_rebuilds(IndexFile& file, const IndexInfo& info, const WhatIfReport& r,
                          const std::string& path) {
  int compared = 0;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  for (const WhatIfRow& w : r.rows) {
    if (!w.available || !file_builds(w.layout, dir)) continue;
    const IndexStats s = rebuild(file, info, w.format, w.layout, path);
    const std::string what = info.def.name + " " + std::string(key_format_name(w.format)) + " " +
                             std::string(layout_name(w.layout));
    EXPECT_EQ(w.nodes, s.nodes) << what;
    EXPECT_EQ(w.depth, s.depth) << what;
    EXPECT_EQ(w.leaf_pages, s.leaf_buckets) << what;
    EXPECT_EQ(w.index_pages, s.index_pages) << what;
    EXPECT_EQ(w.total_dup, s.total_dup) << what;
    EXPECT_DOUBLE_EQ(w.avg_key_length, s.avg_key_length) << what;
    EXPECT_DOUBLE_EQ(w.compression_ratio, s.compression_ratio) << what;
    EXPECT_DOUBLE_EQ(w.avg_prefix_length, s.avg_prefix_length) << what;
    EXPECT_DOUBLE_EQ(w.avg_data_length, s.avg_data_length) << what;
    EXPECT_DOUBLE_EQ(w.bytes_per_entry, s.bytes_per_entry) << what;
    ++compared;
  }
  return compared;
}

// A descending bigint index with NULLs and duplicates (random values, fixed seed).
TEST(BtreeWhatIfTest, PredictionsEqualRebuildsOfDescendingIndex) {
  const uint64_t seed = 0xD35C;
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  const std::string dir = scratch("desc");
  auto file = IndexFile::open_or_create(dir + "/d.pbt", 4096);
  IndexDefinition def;
  def.name = "I_DESC";
  def.type = TypeSpec::parse("bigint");
  def.format = KeyFormat::RescaledDouble;
  def.descending = true;
  EntryBatch batch;
  KeyBuffer kb;
  for (uint64_t i = 0; i < 6000; ++i) {
    const uint64_t r = rng();
    const Value v =
        r % 50 == 0 ? Value::null() : Value::exact(static_cast<int64_t>(r % 4000) - 1000);
    build_key(def.type, def.format, v, true, kb);
    batch.add(kb.bytes(), i, i);
  }
  const IndexInfo info = file->bulk_load(def, batch);
  const WhatIfReport r = what_if(*file, "I_DESC");
  EXPECT_EQ(r.entries, 6000u);
  const int compared = compare_with_rebuilds(*file, info, r, dir + "/rebuild.pbt");
  const bool compact = file_builds(NodeLayout::Compact, dir);
  EXPECT_EQ(compared, 3 * (compact ? 2 : 1));
  file.reset();
  std::filesystem::remove_all(dir);
}

// Every demo index (tools/demo.cc, 3000 rows per data set): every available (format, layout)
// prediction equals the gstat figures of a real bulk build in that format and layout.
TEST(BtreeWhatIfTest, PredictionsEqualRebuildsOfDemoIndexes) {
  const std::string dir = scratch("demo");
  tools::DemoOptions o;
  o.rows = 3000;
  o.data_dir = PBTREE_SOURCE_DIR "/data";
  o.output = dir + "/demo.pbt";
  std::ostringstream out, err;
  tools::run_demo(o, out, err);
  auto file = IndexFile::open(o.output);
  int compared = 0;
  for (const IndexInfo& info : file->indexes()) {
    if (info.def.compound()) continue;  // the demo's 2 compound indexes: compound_what_if
    const WhatIfReport r = what_if(*file, info.def.name);
    compared += compare_with_rebuilds(*file, info, r, dir + "/rebuild.pbt");
  }
  // 13 single-segment indexes: integer x3 and bigint x4 have 3 formats, the other 6 one; per
  // available layout.
  const bool compact = file_builds(NodeLayout::Compact, dir);
  EXPECT_EQ(compared, (7 * 3 + 6) * (compact ? 2 : 1));
  // The seed's dense BIGINT ID, first 3000 rows: 5 leaves as rescaled-double, 3 as decimal128.
  const WhatIfReport id = what_if(*file, "I_BIGINT_ID");
  ASSERT_EQ(id.rows.size(), 6u);
  EXPECT_EQ(id.entries, 3000u);
  EXPECT_TRUE(id.rows[0].current);
  EXPECT_EQ(id.rows[0].leaf_pages, 5u);
  EXPECT_EQ(two(id.rows[0].avg_key_length), "10.05");
  EXPECT_EQ(id.rows[2].format, KeyFormat::Decimal128);
  EXPECT_EQ(id.rows[2].leaf_pages, 3u);
  EXPECT_EQ(two(id.rows[2].avg_key_length), "3.97");
  file.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pbtree
