// CsvReader: RFC 4180 quoting, NULL vs empty string, CRLF, line numbers, .zst input and the
// errors for malformed input.
#include "tools/csv_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace pbtree::tools {
namespace {

struct Rec {
  uint64_t line;
  std::vector<std::string> fields;  // NULL fields read as "<NULL>"
  bool operator==(const Rec&) const = default;
};

std::vector<Rec> read_all(CsvReader& r) {
  std::vector<Rec> out;
  while (r.next()) {
    Rec rec{r.line(), {}};
    for (size_t i = 0; i < r.field_count(); ++i) {
      rec.fields.push_back(r.is_null(i) ? "<NULL>" : std::string(r.field(i)));
    }
    out.push_back(rec);
  }
  return out;
}

std::vector<Rec> read_text(std::string_view text) {
  CsvReader r = CsvReader::from_string(text, "in.csv");
  return read_all(r);
}

void PrintTo(const Rec& r, std::ostream* os) {
  *os << "line " << r.line << ":";
  for (const auto& f : r.fields) *os << " [" << f << "]";
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("pbtree-csv-test-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

TEST(CliCsvReaderTest, PlainFieldsAndLineNumbers) {
  EXPECT_EQ(read_text("1,2\n30,abc\n"), (std::vector<Rec>{{1, {"1", "2"}}, {2, {"30", "abc"}}}));
}

TEST(CliCsvReaderTest, LastLineWithoutNewline) {
  EXPECT_EQ(read_text("a\nb"), (std::vector<Rec>{{1, {"a"}}, {2, {"b"}}}));
}

TEST(CliCsvReaderTest, CrLfLineEnds) {
  EXPECT_EQ(read_text("a,b\r\nc,\r\n"), (std::vector<Rec>{{1, {"a", "b"}}, {2, {"c", "<NULL>"}}}));
}

TEST(CliCsvReaderTest, EmptyUnquotedIsNullQuotedEmptyIsEmptyString) {
  EXPECT_EQ(read_text(",\"\",x\n"), (std::vector<Rec>{{1, {"<NULL>", "", "x"}}}));
}

TEST(CliCsvReaderTest, EmptyLineIsOneNullField) {
  EXPECT_EQ(read_text("a\n\nb\n"), (std::vector<Rec>{{1, {"a"}}, {2, {"<NULL>"}}, {3, {"b"}}}));
}

TEST(CliCsvReaderTest, QuotedCommaAndEscapedQuote) {
  EXPECT_EQ(read_text("\"a,b\",\"say \"\"hi\"\"\",\"\"\"\"\n"),
            (std::vector<Rec>{{1, {"a,b", "say \"hi\"", "\""}}}));
}

TEST(CliCsvReaderTest, QuotedNewlineKeepsLineNumbering) {
  EXPECT_EQ(read_text("\"x\ny\",1\r\n\"p\r\nq\",2\nlast,3\n"),
            (std::vector<Rec>{{1, {"x\ny", "1"}}, {3, {"p\r\nq", "2"}}, {5, {"last", "3"}}}));
}

TEST(CliCsvReaderTest, QuotedFieldThenCrLf) {
  EXPECT_EQ(read_text("\"a\"\r\n\"b\"\r\n"), (std::vector<Rec>{{1, {"a"}}, {2, {"b"}}}));
}

TEST(CliCsvReaderTest, RecordLongerThanInitialBuffer) {
  std::string big(3 << 20, 'z');
  auto recs = read_text("1," + big + "\n2,x\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].fields[1].size(), big.size());
  EXPECT_EQ(recs[1], (Rec{2, {"2", "x"}}));
}

TEST(CliCsvReaderTest, UnterminatedQuoteNamesStartLine) {
  try {
    read_text("ok\n\"abc\ndef\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "in.csv:2: unterminated quoted field");
    EXPECT_EQ(e.line(), 2u);
  }
}

TEST(CliCsvReaderTest, TextAfterClosingQuoteIsError) {
  try {
    read_text("a\nb,\"x\"y\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "in.csv:2: unexpected character after closing quote in field 2");
  }
}

TEST(CliCsvReaderTest, QuoteInsideUnquotedFieldIsError) {
  try {
    read_text("ab\"c,d\n");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "in.csv:1: quote inside unquoted field 1");
  }
}

TEST(CliCsvReaderTest, MissingFileIsError) {
  try {
    CsvReader r("/nonexistent/pbtree/none.csv");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/pbtree/none.csv: cannot open: No such file or directory");
  }
}

TEST(CliCsvReaderTest, ReadsPlainFile) {
  const std::string path = temp_path("plain.csv");
  {
    std::ofstream f(path, std::ios::binary);
    f << "h1,h2\n\"q,1\",2\n";
  }
  CsvReader r(path);
  EXPECT_EQ(read_all(r), (std::vector<Rec>{{1, {"h1", "h2"}}, {2, {"q,1", "2"}}}));
  std::filesystem::remove(path);
}

TEST(CliCsvReaderTest, ReadsZstdFile) {
  const std::string plain = temp_path("z.csv");
  {
    std::ofstream f(plain, std::ios::binary);
    for (int i = 0; i < 100000; ++i) f << i << ",\"v" << i << "\"\n";
  }
  const std::string cmd = "zstd -q -f " + plain + " -o " + plain + ".zst";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  CsvReader r(plain + ".zst");
  auto recs = read_all(r);
  ASSERT_EQ(recs.size(), 100000u);
  EXPECT_EQ(recs[0], (Rec{1, {"0", "v0"}}));
  EXPECT_EQ(recs[99999], (Rec{100000, {"99999", "v99999"}}));
  std::filesystem::remove(plain);
  std::filesystem::remove(plain + ".zst");
}

TEST(CliCsvReaderTest, TruncatedZstdIsError) {
  const std::string plain = temp_path("t.csv");
  {
    std::ofstream f(plain, std::ios::binary);
    for (int i = 0; i < 100000; ++i) f << i << "\n";
  }
  const std::string cmd = "zstd -q -f " + plain + " -o " + plain + ".zst";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::filesystem::resize_file(plain + ".zst", std::filesystem::file_size(plain + ".zst") / 2);
  try {
    CsvReader r(plain + ".zst");
    while (r.next()) {
    }
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), plain + ".zst: zstd: truncated compressed data");
  }
  std::filesystem::remove(plain);
  std::filesystem::remove(plain + ".zst");
}

}  // namespace
}  // namespace pbtree::tools
