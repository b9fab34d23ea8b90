// CsvReader: a growing byte buffer (bounded by the record limit) refilled from a ByteSource
// (file, zstd stream or string), with per-column field limits checked while scanning,
// a quote-aware scan for the end of each record, then an in-place split of the record into
// fields ("" escapes are undone in place, which never lengthens a field).
#include "tools/csv_reader.h"

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "util/bytes.h"

namespace pbtree::tools {

namespace {

std::string format_message(const std::string& path, uint64_t line, const std::string& what) {
  const std::string file = path == "-" ? "<stdin>" : path;  // --input - (standard input)
  if (line == 0) return file + ": " + what;
  return file + ":" + std::to_string(line) + ": " + what;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class FileSource : public ByteSource {
 public:
  explicit FileSource(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr)
      throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  }
  ~FileSource() override { std::fclose(file_); }
  size_t read(char* buf, size_t n) override {
    size_t got = std::fread(buf, 1, n, file_);
    if (got == 0 && std::ferror(file_)) {
      throw InputError(path_, 0, std::string("read error: ") + std::strerror(errno));
    }
    return got;
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

class ZstdSource : public ByteSource {
 public:
  explicit ZstdSource(const std::string& path)
      : ZstdSource(std::make_unique<FileSource>(path), path) {}
  ZstdSource(std::unique_ptr<ByteSource> input, const std::string& path)
      : file_(std::move(input)), in_(ZSTD_DStreamInSize()), stream_(ZSTD_createDStream()) {
    if (stream_ == nullptr) throw InputError(path, 0, "zstd: out of memory");
    ZSTD_initDStream(stream_);
    // Decoder memory is bounded: frames needing a window over 2^27 bytes (128 MiB) are refused
    // (zstd's own default, made explicit); the output goes to the reader's bounded buffer.
    ZSTD_DCtx_setParameter(stream_, ZSTD_d_windowLogMax, 27);
    path_ = path;
  }
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }
  size_t read(char* buf, size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (in_buf_.pos == in_buf_.size && !in_eof_) {
        size_t got = file_->read(in_.data(), in_.size());
        in_buf_ = ZSTD_inBuffer{in_.data(), got, 0};
        if (got == 0) in_eof_ = true;
      }
      size_t r = ZSTD_decompressStream(stream_, &out, &in_buf_);
      if (ZSTD_isError(r)) throw InputError(path_, 0, std::string("zstd: ") + ZSTD_getErrorName(r));
      if (in_eof_ && out.pos == 0) {
        if (last_ != 0) throw InputError(path_, 0, "zstd: truncated compressed data");
        return 0;
      }
      last_ = r;
    }
    return out.pos;
  }

 private:
  std::unique_ptr<ByteSource> file_;
  std::string path_;
  std::vector<char> in_;
  ZSTD_DStream* stream_;
  ZSTD_inBuffer in_buf_{nullptr, 0, 0};
  bool in_eof_ = false;
  size_t last_ = 0;  // last ZSTD_decompressStream result: 0 at a frame end
};

// Standard input (--input -).
class StdinSource : public ByteSource {
 public:
  size_t read(char* buf, size_t n) override {
    const size_t got = std::fread(buf, 1, n, stdin);
    if (got == 0 && std::ferror(stdin)) {
      throw InputError("-", 0, std::string("read error: ") + std::strerror(errno));
    }
    return got;
  }
};

// Another source whose first `n` bytes are read ahead (fewer at the end of input), so that
// they can be looked at (a zstd frame's magic, a byte order mark) and kept or dropped; the
// bytes kept are handed out before the rest.
class PeekedSource : public ByteSource {
 public:
  PeekedSource(std::unique_ptr<ByteSource> in, size_t n) : in_(std::move(in)) {
    while (head_.size() < n) {  // reads may be short
      char c[8];
      const size_t got = in_->read(c, std::min(sizeof c, n - head_.size()));
      if (got == 0) break;
      head_.append(c, got);
    }
  }
  const std::string& head() const { return head_; }
  void drop_head() { pos_ = head_.size(); }
  size_t read(char* buf, size_t n) override {
    if (pos_ < head_.size()) {
      const size_t k = std::min(n, head_.size() - pos_);
      std::memcpy(buf, head_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return in_->read(buf, n);
  }

 private:
  std::unique_ptr<ByteSource> in_;
  std::string head_;
  size_t pos_ = 0;
};

std::unique_ptr<ByteSource> open_source(const std::string& path) {
  std::unique_ptr<ByteSource> raw;
  if (path == "-") {
    auto in = std::make_unique<PeekedSource>(std::make_unique<StdinSource>(), 4);
    const bool zstd = in->head() == std::string("\x28\xB5\x2F\xFD", 4);
    if (zstd) {
      raw = std::make_unique<ZstdSource>(std::move(in), path);
    } else {
      raw = std::move(in);
    }
  } else if (ends_with(path, ".zst")) {
    raw = std::make_unique<ZstdSource>(path);
  } else {
    raw = std::make_unique<FileSource>(path);
  }
  // A UTF-8 byte order mark (EF BB BF) at the start of the text: spreadsheet exports write
  // one, and it would otherwise become part of the first field.
  auto text = std::make_unique<PeekedSource>(std::move(raw), 3);
  if (text->head() == "\xEF\xBB\xBF") text->drop_head();
  return text;
}

class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string_view text) : text_(text) {}
  size_t read(char* buf, size_t n) override {
    size_t k = std::min(n, text_.size() - pos_);
    std::memcpy(buf, text_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string text_;
  size_t pos_ = 0;
};

constexpr size_t kInitialBuffer = size_t{1} << 20;

}  // namespace

InputError::InputError(const std::string& file, uint64_t line, const std::string& what)
    : std::runtime_error(format_message(file, line, what)), file_(file), line_(line) {}

CsvReader::CsvReader(std::unique_ptr<ByteSource> source, std::string name)
    : source_(std::move(source)), name_(std::move(name)), buf_(kInitialBuffer) {}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path) {
  return open_source(path);
}

CsvReader::CsvReader(const std::string& path) : CsvReader(open_source(path), path) {}

CsvReader CsvReader::from_source(std::unique_ptr<ByteSource> source, const std::string& name) {
  return CsvReader(std::move(source), name);
}

CsvReader CsvReader::from_string(std::string_view text, const std::string& name) {
  return CsvReader(std::make_unique<StringSource>(text), name);
}

CsvReader::CsvReader(CsvReader&&) noexcept = default;
CsvReader::~CsvReader() = default;

bool CsvReader::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == buf_.size()) {
    // One record fills the buffer: grow it, up to the record limit.
    if (end_ >= max_record_) {
      too_long("record", 0, end_, max_record_, "the longest record this reader takes");
    }
    buf_.resize(std::min(buf_.size() * 2, std::max(max_record_ + 1, buf_.size())));
  }
  size_t got = source_->read(buf_.data() + end_, buf_.size() - end_);
  if (got == 0) {
    eof_ = true;
    return false;
  }
  end_ += got;
  bytes_read_ += got;
  return true;
}

bool CsvReader::next() {
  if (pos_ == end_ && !fill()) return false;
  // Find the record end: a '\n' outside quotes. A quote opens only at a field start or right
  // after a closing quote (the "" escape); stray quotes are left for parse_record to report.
  size_t i = pos_;
  bool in_quotes = false, at_start = true, just_closed = false;
  uint64_t inner_newlines = 0;
  bool found = false;
  size_t field = 0, field_start = pos_;  // the current field and its first byte
  for (;;) {
    const char* p = buf_.data();
    for (; i < end_; ++i) {
      char c = p[i];
      if (c == '"') {
        if (in_quotes) {
          in_quotes = false;
          just_closed = true;
        } else if (at_start || just_closed) {
          in_quotes = true;
          just_closed = false;
        }
        at_start = false;
      } else if (in_quotes) {
        if (c == '\n') ++inner_newlines;
      } else {
        just_closed = false;
        if (c == '\n') {
          found = true;
          break;
        }
        at_start = c == ',';
        if (at_start) {
          check_field(field, field_start, i);
          ++field;
          field_start = i + 1;
        }
      }
    }
    if (found) break;
    check_field(field, field_start, i);  // a field still open: refused before more is read
    const size_t offset = i - pos_;
    const size_t field_offset = field_start - pos_;
    const bool more = fill();  // may move the unread data to the buffer start
    i = pos_ + offset;
    field_start = pos_ + field_offset;
    if (!more) {
      if (in_quotes) throw InputError(name_, next_line_, "unterminated quoted field");
      break;
    }
  }
  size_t record_end = i;
  check_field(
      field, field_start,
      record_end > field_start && buf_[record_end - 1] == '\r' ? record_end - 1 : record_end);
  record_line_ = next_line_;
  next_line_ += inner_newlines + 1;
  size_t content_end = record_end;
  if (content_end > pos_ && buf_[content_end - 1] == '\r') --content_end;
  parse_record(pos_, content_end);
  pos_ = found ? record_end + 1 : record_end;
  return true;
}

void CsvReader::limit_field(size_t column, size_t max_bytes, std::string why) {
  auto it = std::find_if(field_limits_.begin(), field_limits_.end(),
                         [&](const FieldLimit& l) { return l.column == column; });
  if (it == field_limits_.end()) {
    field_limits_.push_back(FieldLimit{column, max_bytes, std::move(why)});
  } else {
    *it = FieldLimit{column, max_bytes, std::move(why)};
  }
  least_limit_ = SIZE_MAX;
  for (const FieldLimit& l : field_limits_) {
    if (l.max_bytes != 0) least_limit_ = std::min(least_limit_, l.max_bytes);
  }
}

void CsvReader::check_field_slow(size_t field, size_t start, size_t end) const {
  size_t length = end - start;
  // A quoted field's limit is on its content: the two quotes do not count (an escaped ""
  // counts two).
  if (buf_[start] == '"' && length >= 2) {
    const bool closed = buf_[end - 1] == '"' && end - start >= 2;
    length -= closed ? 2 : 1;
  }
  for (const FieldLimit& l : field_limits_) {
    if (l.column == field && l.max_bytes != 0 && length > l.max_bytes) {
      too_long(("column " + std::to_string(field + 1) + ": field").c_str(), start, end - start,
               l.max_bytes, l.why);
    }
  }
}

void CsvReader::too_long(const char* what, size_t start, size_t length, size_t limit,
                         const std::string& why) const {
  const std::string shown = shown_text(std::string_view(buf_.data() + start, length), 80);
  throw InputError(name_, next_line_,
                   std::string(what) + " longer than " + std::to_string(limit) + " bytes (" + why +
                       "): starts '" + shown + "'");
}

void CsvReader::parse_record(size_t begin, size_t end) {
  fields_.clear();
  quoted_.clear();
  char* b = buf_.data();
  auto line_at = [&](size_t at) {
    return record_line_ + static_cast<uint64_t>(std::count(b + begin, b + at, '\n'));
  };
  size_t p = begin;
  for (;;) {
    if (p < end && b[p] == '"') {
      size_t w = p, r = p + 1;
      for (;;) {
        if (r >= end) throw InputError(name_, line_at(p), "unterminated quoted field");
        if (b[r] == '"') {
          if (r + 1 < end && b[r + 1] == '"') {
            b[w++] = '"';
            r += 2;
            continue;
          }
          ++r;
          break;
        }
        b[w++] = b[r++];
      }
      fields_.emplace_back(b + p, w - p);
      quoted_.push_back(1);
      if (r == end) return;
      if (b[r] != ',') {
        throw InputError(
            name_, line_at(r),
            "unexpected character after closing quote in field " + std::to_string(fields_.size()));
      }
      p = r + 1;
    } else {
      size_t q = p;
      while (q < end && b[q] != ',') {
        if (b[q] == '"') {
          throw InputError(name_, line_at(q),
                           "quote inside unquoted field " + std::to_string(fields_.size() + 1));
        }
        ++q;
      }
      fields_.emplace_back(b + p, q - p);
      quoted_.push_back(0);
      if (q == end) return;
      p = q + 1;
    }
  }
}

}  // namespace pbtree::tools
