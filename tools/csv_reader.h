// Streaming RFC 4180 CSV reader for the command-line tools: plain files, `.zst` files
// (stream-decompressed with libzstd) and in-memory text. Records come one at a time with
// their fields as string_views into an internal buffer, plus the line number where the
// record starts; no allocation per record once the buffers have grown.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pbtree::tools {

/// Bad input or an unreadable input file. what() is the complete user message, in the form
/// "<file>:<line>: <what>" (or "<file>: <what>" when there is no line, e.g. a missing file).
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, uint64_t line, const std::string& what);
  const std::string& file() const { return file_; }
  /// 1-based line number, 0 if none.
  uint64_t line() const { return line_; }

 private:
  std::string file_;
  uint64_t line_;
};

/// Source of raw bytes for CsvReader.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads up to `n` bytes into `buf`; returns 0 only at the end. Throws InputError.
  virtual size_t read(char* buf, size_t n) = 0;
};

/// The ByteSource CsvReader(path) reads: standard input for "-" (zstd-compressed if it
/// starts with a zstd frame), a ".zst" file decompressed, else the file; a UTF-8 byte order
/// mark (EF BB BF) at the start of the (decompressed) bytes is dropped. Throws InputError.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path);

/// Reads CSV records. Rules (RFC 4180): fields separated by ',', records by "\n" or "\r\n";
/// a field starting with '"' is quoted: it may hold commas, newlines and "" (one quote), and
/// must be followed by ',' or the record end. An empty unquoted field is NULL; a quoted empty
/// field "" is the empty string. An empty line is a record of one NULL field. A '"' inside an
/// unquoted field is an error. The final line needs no line end.
class CsvReader {
 public:
  /// Opens `path`; a name ending in ".zst" is decompressed while reading. "-" reads standard
  /// input (zstd-compressed if it starts with a zstd frame; messages name it "<stdin>").
  /// Throws InputError ("<path>: cannot open: <strerror>").
  explicit CsvReader(const std::string& path);
  /// Reads from `source`; `name` is the file name used in messages.
  static CsvReader from_source(std::unique_ptr<ByteSource> source, const std::string& name);
  /// Reads from `text` (copied); `name` is the file name used in messages.
  static CsvReader from_string(std::string_view text, const std::string& name);
  CsvReader(CsvReader&&) noexcept;
  ~CsvReader();

  /// Advances to the next record. Returns false at the end of input. Throws InputError
  /// (unterminated quoted field, stray quote, zstd data error) naming file and line.
  bool next();
  /// Fields of the current record (valid until the next call of next()).
  size_t field_count() const { return fields_.size(); }
  std::string_view field(size_t i) const { return fields_[i]; }
  /// True if field i is empty and unquoted (SQL NULL).
  bool is_null(size_t i) const { return fields_[i].empty() && !quoted_[i]; }
  /// 1-based line on which the current record starts.
  uint64_t line() const { return record_line_; }
  /// The name given at construction (for messages).
  const std::string& name() const { return name_; }
  /// Bytes taken from the input so far (decompressed, for .zst), read ahead of the records.
  uint64_t bytes_read() const { return bytes_read_; }

  /// Longest record by default (bytes, quotes and separators included): the buffer never
  /// grows past it.
  static constexpr size_t kMaxRecordBytes = size_t{64} << 20;
  /// Refuses, with an InputError as soon as the reader sees it, a field `column` (0-based)
  /// longer than `max_bytes` (unquoted, or quoted without its two quotes): "<file>:<line>:
  /// column <column + 1>: field longer than <max_bytes> bytes (<why>): starts '<its first
  /// 80 bytes, non-printable ones as \xNN>'". Other columns are bounded by the record limit.
  void limit_field(size_t column, size_t max_bytes, std::string why);
  /// Numbers the input's first line `line` instead of 1 (a chunk of a larger input,
  /// tools/csv_parallel.h). Only before the first next().
  void set_first_line(uint64_t line) { next_line_ = line; }
  /// Refuses a record longer than `max_bytes` (default kMaxRecordBytes) the same way.
  void limit_record(size_t max_bytes) { max_record_ = max_bytes; }

 private:
  // Throws the InputError of a field or record that is too long, starting at buf_[start].
  [[noreturn]] void too_long(const char* what, size_t start, size_t length, size_t limit,
                             const std::string& why) const;
  // At the end of field `field` (raw bytes [start, end)): its limit. One compare per field
  // (the least limit); the column's own limit only for a field longer than that.
  void check_field(size_t field, size_t start, size_t end) const {
    if (end - start > least_limit_) check_field_slow(field, start, end);
  }
  void check_field_slow(size_t field, size_t start, size_t end) const;
  CsvReader(std::unique_ptr<ByteSource> source, std::string name);
  bool fill();  // reads more bytes to the buffer end; false at EOF
  void parse_record(size_t begin, size_t end);

  std::unique_ptr<ByteSource> source_;
  std::string name_;
  std::vector<char> buf_;
  size_t pos_ = 0;  // start of unread data in buf_
  size_t end_ = 0;  // end of valid data in buf_
  bool eof_ = false;
  uint64_t next_line_ = 1;
  uint64_t record_line_ = 0;
  std::vector<std::string_view> fields_;
  std::vector<uint8_t> quoted_;
  // One entry per limited column (a few), whatever the column's number: nothing is sized by
  // it (`--column 4294967297` costs nothing).
  struct FieldLimit {
    size_t column;
    size_t max_bytes;
    std::string why;
  };
  std::vector<FieldLimit> field_limits_;
  size_t least_limit_ = SIZE_MAX;  // the least max_bytes of field_limits_
  size_t max_record_ = kMaxRecordBytes;
  uint64_t bytes_read_ = 0;
};

}  // namespace pbtree::tools
