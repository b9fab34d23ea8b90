// The parse phase of `load` knows how much of a plain input file it has read, so that its
// progress line shows "% of input, ETA" as docs/CLI.md says (issue 30): the parallel reader
// reports the bytes it handed out; a .zst input has no size to set them against.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli_test_util.h"
#include "tools/csv_parallel.h"
#include "tools/load_pipeline.h"

namespace pbtree::tools {
namespace {

using testing::ScratchDir;

IndexDefinition integer_index() {
  IndexDefinition def;
  def.name = "I";
  def.type = TypeSpec::parse("integer");
  def.format = default_key_format(def.type);
  return def;
}

ColumnSource integer_source() {
  ColumnSource s;
  s.type = TypeSpec::parse("integer");
  s.format = default_key_format(s.type);
  s.threads = 2;
  return s;
}

TEST(LoadProgressInput, ParallelReadOfAPlainFileReachesTheWholeInput) {
  ScratchDir dir("progress-input");
  const std::string csv = dir.write("v.csv", testing::numbers(1, 20000));
  LoadProgress line(nullptr, nullptr, "I");
  BoundedLoad load(integer_index(), size_t{1} << 20, dir.file(""), csv, line);
  load.read_csv(csv, integer_source(), 2);
  EXPECT_EQ(load.rows(), 20000u);
  EXPECT_EQ(line.input_fraction(), 1.0);
}

TEST(LoadProgressInput, ParallelReaderReportsBytesInInputOrder) {
  const std::string text = testing::numbers(1, 100000);  // chunks of 64 KiB or more
  ParallelCsvOptions o;
  o.threads = 2;
  o.chunk_bytes = 4096;
  std::vector<uint64_t> seen;
  o.on_bytes = [&](uint64_t b) { seen.push_back(b); };
  read_entries_parallel_text(text, "in.csv", integer_source(), o, [](EntryBatch&&) {});
  ASSERT_GE(seen.size(), 2u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1], seen[i]);
  EXPECT_EQ(seen.back(), text.size());
}

}  // namespace
}  // namespace pbtree::tools
