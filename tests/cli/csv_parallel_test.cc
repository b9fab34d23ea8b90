// Tests of read_entries_parallel (tools/csv_parallel.h): the same entries (key, record number,
// line tag, order) and the same errors ("<file>:<line>: <what>", first in input order) as the
// serial read_entries, at tiny chunk sizes that put chunk edges inside quoted fields with
// newlines and doubled quotes, on random CSVs, .zst input and max_rows; and last_record_end.
#include "tools/csv_parallel.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tools/loader.h"

namespace pbtree::tools {
namespace {

struct Entry {
  std::vector<uint8_t> key;
  uint64_t recno, tag;
  bool operator==(const Entry&) const = default;
};

struct Result {
  std::vector<Entry> entries;
  uint64_t rows = 0;
  std::string error;  // what() of the exception, "" if none
  bool operator==(const Result&) const = default;
};

void collect(const EntryBatch& b, std::vector<Entry>& out) {
  for (const auto& it : b.items()) {
    auto k = b.key(it);
    out.push_back(Entry{{k.begin(), k.end()}, it.recno, it.tag});
  }
}

Result serial(const std::string& text, const ColumnSource& src) {
  Result r;
  EntryBatch b;
  try {
    CsvReader reader = CsvReader::from_string(text, "in.csv");
    r.rows = read_entries(reader, src, b);
    collect(b, r.entries);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

Result parallel(const std::string& text, const ColumnSource& src, size_t chunk, uint32_t threads,
                size_t long_record = size_t{1} << 20) {
  Result r;
  ParallelCsvOptions o;
  o.chunk_bytes = chunk;
  o.long_record = long_record;
  o.threads = threads;
  std::vector<Entry> got;
  try {
    r.rows = read_entries_parallel_text(text, "in.csv", src, o,
                                        [&](EntryBatch&& b) { collect(b, got); });
    r.entries = std::move(got);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

ColumnSource varchar_source(size_t column) {
  ColumnSource s;
  s.type = TypeSpec::parse("varchar(40)");
  s.format = KeyFormat::Text;
  s.column = column;
  s.page_size = 4096;
  return s;
}

ColumnSource integer_source(size_t column) {
  ColumnSource s;
  s.type = TypeSpec::parse("integer");
  s.format = KeyFormat::Double;
  s.column = column;
  s.page_size = 4096;
  return s;
}

void expect_same(const std::string& text, const ColumnSource& src) {
  const Result want = serial(text, src);
  for (size_t chunk : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, size_t{1} << 20}) {
    for (uint32_t threads : {1u, 2u, 8u}) {
      const Result got = parallel(text, src, chunk, threads);
      EXPECT_EQ(got.error, want.error) << "chunk " << chunk << " threads " << threads;
      EXPECT_EQ(got.rows, want.rows) << "chunk " << chunk << " threads " << threads;
      EXPECT_TRUE(got.entries == want.entries) << "chunk " << chunk << " threads " << threads;
    }
    // A record longer than 4 bytes (or 2 chunks) hands the rest to one serial reader.
    const Result rest = parallel(text, src, chunk, 2, 4);
    EXPECT_EQ(rest.error, want.error) << "serial rest, chunk " << chunk;
    EXPECT_EQ(rest.rows, want.rows) << "serial rest, chunk " << chunk;
    EXPECT_TRUE(rest.entries == want.entries) << "serial rest, chunk " << chunk;
  }
}

TEST(CliCsvParallel, LastRecordEndOutsideQuotes) {
  const std::string s = "a,\"x\ny\"\nb,\"\"\"\n\"\nc";
  // Records: a,"x<nl>y"<nl> (ends at 8), b,"""<nl>"<nl> (ends at 16), c.
  EXPECT_EQ(last_record_end(s.data(), s.size()), 16u);
  EXPECT_EQ(last_record_end(s.data(), 8), 8u);
  EXPECT_EQ(last_record_end(s.data(), 7), 0u);   // inside "x<nl>y"
  EXPECT_EQ(last_record_end(s.data(), 14), 8u);  // inside """<nl>"
}

TEST(CliCsvParallel, LastRecordEndStrayQuoteDoesNotOpen) {
  const std::string s = "ab\"c\nd\n";  // a quote inside an unquoted field: no quoting
  EXPECT_EQ(last_record_end(s.data(), s.size()), 7u);
}

TEST(CliCsvParallel, ChunkEdgesInsideQuotedFieldsWithNewlines) {
  const std::string text =
      "1,\"two\nlines\"\n2,\"say "
      "\"\"hi\"\"\nand\r\nbye\"\r\n3,plain\n4,\"\"\"\n\"\"\"\n,\n5,\"x,y\"";
  expect_same(text, varchar_source(2));
  EXPECT_EQ(serial(text, varchar_source(2)).rows, 6u);
}

TEST(CliCsvParallel, HeaderAndRecordNumberColumn) {
  const std::string text = "id,rec\n5,10\n\"6\",11\n7,12\n";
  ColumnSource s = integer_source(1);
  s.header = true;
  s.recno_column = 2;
  expect_same(text, s);
  EXPECT_EQ(serial(text, s).entries.size(), 3u);
}

TEST(CliCsvParallel, MaxRowsStopsBeforeALaterError) {
  const std::string text = "1\n2\n3\nbad\n";
  ColumnSource s = integer_source(1);
  s.max_rows = 3;
  expect_same(text, s);
  EXPECT_EQ(serial(text, s).error, "");
  s.max_rows = 4;
  expect_same(text, s);
  EXPECT_EQ(serial(text, s).error.rfind("in.csv:4: column 1:", 0), 0u);
}

TEST(CliCsvParallel, FirstErrorInInputOrderWins) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += std::to_string(i) + "\n";
  text += "\"multi\nline\",x\n";
  text += "notanumber\n";
  for (int i = 0; i < 200; ++i) text += "also bad " + std::to_string(i) + "\n";
  expect_same(text, integer_source(1));
  EXPECT_EQ(serial(text, integer_source(1)).error.rfind("in.csv:201: column 1:", 0), 0u);
}

TEST(CliCsvParallel, SyntaxErrorsSameFileAndLine) {
  for (const std::string& text : {std::string("1\n2\n\"open\n3\n"), std::string("1\n\"a\"b\n"),
                                  std::string("1\n2\nx\"y\n"), std::string("1\n\"a\"\"\n")}) {
    SCOPED_TRACE(text);
    expect_same(text, integer_source(1));
    EXPECT_NE(serial(text, integer_source(1)).error, "");
  }
}

TEST(CliCsvParallel, MissingColumnSameError) {
  expect_same("1,a\n2,b\n3\n", varchar_source(2));
  EXPECT_EQ(serial("1,a\n2,b\n3\n", varchar_source(2)).error,
            "in.csv:3: missing column 2 (the record has 1 field)");
}

TEST(CliCsvParallel, FieldTooLongSameError) {
  std::string text = "1,a\n2," + std::string(2000, 'x') + "\n";
  ColumnSource s = varchar_source(2);
  s.type = TypeSpec::parse("varchar(4000)");
  s.page_size = 4096;  // keys shorter than 1024 bytes
  expect_same(text, s);
  EXPECT_EQ(serial(text, s).error.rfind("in.csv:2: column 2: field longer than 1024 bytes", 0), 0u);
}

// Random CSVs: fields quoted or not, with commas, newlines, "" and \r\n in quoted fields,
// empty lines, NULLs; column 2 read as varchar.
std::string random_csv(std::mt19937_64& rng, int records) {
  std::string out;
  const char alphabet[] = "ab,\n\"\r xy";
  for (int r = 0; r < records; ++r) {
    const int fields = static_cast<int>(rng() % 4);
    for (int f = 0; f < fields; ++f) {
      if (f > 0) out += ',';
      const int len = static_cast<int>(rng() % 6);
      if (rng() % 2 == 0) {
        out += '"';
        for (int i = 0; i < len; ++i) {
          const char c = alphabet[rng() % (sizeof alphabet - 1)];
          out += c;
          if (c == '"') out += '"';
        }
        out += '"';
      } else {
        for (int i = 0; i < len; ++i) out += static_cast<char>('a' + rng() % 3);
      }
    }
    out += rng() % 4 == 0 ? "\r\n" : "\n";
  }
  if (rng() % 2 == 0 && !out.empty()) out.pop_back();  // the last line needs no line end
  return out;
}

TEST(CliCsvParallel, RandomCsvSameEntriesAsSerial) {
  std::mt19937_64 rng(4181);
  int with_error = 0, clean = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string text = random_csv(rng, 1 + static_cast<int>(rng() % 40));
    SCOPED_TRACE(text);
    ColumnSource s = varchar_source(1 + rng() % 2);
    expect_same(text, s);
    (serial(text, s).error.empty() ? clean : with_error)++;
  }
  EXPECT_GT(clean, 0);
  EXPECT_GT(with_error, 0);
}

TEST(CliCsvParallel, ZstdFileSameEntriesAsSerial) {
  const std::string path = PBTREE_SOURCE_DIR "/data/seed/t_int.csv.zst";
  ASSERT_TRUE(std::filesystem::exists(path));
  ColumnSource s = integer_source(2);
  s.max_rows = 100000;
  Result want;
  {
    EntryBatch b;
    CsvReader reader(path);
    want.rows = read_entries(reader, s, b);
    collect(b, want.entries);
  }
  ParallelCsvOptions o;
  o.chunk_bytes = 100000;
  o.threads = 2;
  Result got;
  got.rows = read_entries_parallel(path, s, o, [&](EntryBatch&& b) { collect(b, got.entries); });
  EXPECT_EQ(got.rows, 100000u);
  EXPECT_TRUE(got == want);
}

TEST(CliCsvParallel, MissingFileSameError) {
  ParallelCsvOptions o;
  try {
    read_entries_parallel("/nonexistent/x.csv", integer_source(1), o, [](EntryBatch&&) {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.csv: cannot open: No such file or directory");
  }
}

}  // namespace
}  // namespace pbtree::tools
