// read_entries_parallel (tools/csv_parallel.h): a three-stage oneTBB pipeline. Stage 1
// (serial, in order) reads bytes, cuts a chunk at its last record end (last_record_end) and
// counts its lines; stage 2 (parallel) runs read_entries over the chunk with a CsvReader
// whose line numbers continue the input's, catching its error; stage 3 (serial, in order)
// renumbers the rows (record number = input row when no record-number column), applies
// max_rows and hands the chunk to the sink, or throws the chunk's error. Errors of stage 1
// (I/O, zstd) travel as a chunk too, so the first error in input order wins.
#include "tools/csv_parallel.h"

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

namespace pbtree::tools {

size_t last_record_end(const char* data, size_t n) {
  size_t last = 0, p = 0;
  bool at_start = true, just_closed = false;
  while (p < n) {
    const void* hit = std::memchr(data + p, '"', n - p);
    const size_t q = hit ? static_cast<size_t>(static_cast<const char*>(hit) - data) : n;
    if (q > p) {
      // [p, q) lies outside quotes: every '\n' ends a record.
      const void* nl = ::memrchr(data + p, '\n', q - p);
      if (nl) last = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
      const char c = data[q - 1];
      at_start = c == ',' || c == '\n';
      just_closed = false;
    }
    if (q == n) break;
    if (at_start || just_closed) {
      // An opening quote (or the second quote of ""): the field runs to the next quote.
      const void* close = std::memchr(data + q + 1, '"', n - q - 1);
      if (!close) return last;
      p = static_cast<size_t>(static_cast<const char*>(close) - data) + 1;
      just_closed = true;
      at_start = false;
    } else {
      // A stray quote (CsvReader reports it when parsing): no quoting.
      p = q + 1;
      at_start = false;
      just_closed = false;
    }
  }
  return last;
}

namespace {

// One chunk through the pipeline.
struct Chunk {
  std::string text;
  uint64_t first_line = 1;
  bool first = false;                // holds the input's first record (the header, if any)
  std::exception_ptr read_error;     // stage 1's error: no text beyond it
  std::unique_ptr<ByteSource> rest;  // set: the rest of the input, after text, read serially
  EntryBatch batch;
  std::exception_ptr error;  // stage 2's error, after batch's rows
};

// The rest of an input: `head` (bytes already read), then `source`, or `text` if there is
// no source.
class RestSource : public ByteSource {
 public:
  RestSource(std::string head, std::unique_ptr<ByteSource> source, std::string_view text)
      : head_(std::move(head)), source_(std::move(source)), text_(text) {}
  size_t read(char* buf, size_t n) override {
    if (pos_ < head_.size()) {
      const size_t k = std::min(n, head_.size() - pos_);
      std::memcpy(buf, head_.data() + pos_, k);
      pos_ += k;
      if (pos_ == head_.size()) {
        std::string().swap(head_);
        pos_ = 0;
      }
      return k;
    }
    if (source_) return source_->read(buf, n);
    const size_t k = std::min(n, text_.size());
    std::memcpy(buf, text_.data(), k);
    text_.remove_prefix(k);
    return k;
  }

 private:
  std::string head_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> source_;
  std::string_view text_;
};

// Stage 1: the bytes of one input as chunks ending at record ends.
class Chunker {
 public:
  Chunker(std::unique_ptr<ByteSource> source, std::string_view text, const ParallelCsvOptions& o)
      : source_(std::move(source)), text_(text), o_(o) {}

  // The next chunk, or null at the end (after an error chunk: the end).
  std::unique_ptr<Chunk> next() {
    if (done_) return nullptr;
    auto chunk = std::make_unique<Chunk>();
    chunk->first = first_;
    chunk->first_line = line_;
    size_t want = std::max<size_t>(o_.chunk_bytes, 1);
    size_t scanned_end = 0;  // no record end before this offset of buf_
    for (;;) {
      while (!eof_ && buf_.size() < want) {
        try {
          if (!read_more(want - buf_.size())) eof_ = true;
        } catch (...) {
          chunk->read_error = std::current_exception();
          eof_ = true;
          failed_ = true;
        }
      }
      size_t end = scanned_end == buf_.size() ? 0 : last_record_end(buf_.data(), buf_.size());
      if (end == 0) scanned_end = buf_.size();
      if (end != 0 && !(eof_ && !failed_)) {
        take(*chunk, end);
        return chunk;
      }
      if (eof_) {
        // The last record needs no line end; after a read error only whole records go.
        take(*chunk, failed_ ? end : buf_.size());
        done_ = true;
        if (chunk->text.empty() && !chunk->read_error) return nullptr;
        return chunk;
      }
      if (buf_.size() > std::max(o_.long_record, 2 * o_.chunk_bytes)) {
        // A long record: the rest of the input (buffered bytes first) goes to one serial
        // reader, which bounds its memory (and refuses an over-long field early) as always.
        chunk->rest = std::make_unique<RestSource>(std::move(buf_), std::move(source_),
                                                   text_.substr(text_pos_));
        done_ = true;
        return chunk;
      }
      want = buf_.size() * 2;  // a record longer than the chunk: read on
    }
  }

 private:
  bool read_more(size_t n) {
    n = std::max<size_t>(n, 1 << 16);
    if (!source_) {
      if (text_pos_ == text_.size()) return false;
      const size_t k = std::min(n, text_.size() - text_pos_);
      buf_.append(text_.data() + text_pos_, k);
      text_pos_ += k;
      return true;
    }
    const size_t old = buf_.size();
    buf_.resize(old + n);
    const size_t got = source_->read(buf_.data() + old, n);
    buf_.resize(old + got);
    return got != 0;
  }

  void take(Chunk& chunk, size_t end) {
    chunk.text.assign(buf_.data(), end);
    buf_.erase(0, end);
    line_ += static_cast<uint64_t>(std::count(chunk.text.begin(), chunk.text.end(), '\n'));
    if (!chunk.text.empty()) first_ = false;
  }

  std::unique_ptr<ByteSource> source_;
  std::string_view text_;
  size_t text_pos_ = 0;
  const ParallelCsvOptions& o_;
  std::string buf_;
  uint64_t line_ = 1;
  bool first_ = true, eof_ = false, failed_ = false, done_ = false;
};

uint64_t run(std::unique_ptr<ByteSource> source, std::string_view text, const std::string& name,
             const ColumnSource& source_in, const ParallelCsvOptions& options,
             const std::function<void(EntryBatch&&)>& sink) {
  {
    // The checks read_entries makes before the first record (columns numbered from 1, ...).
    CsvReader empty = CsvReader::from_string("", name);
    EntryBatch none;
    ColumnSource s = source_in;
    s.max_rows = 0;
    read_entries(empty, s, none);
  }
  ColumnSource chunk_source = source_in;
  chunk_source.max_rows = 0;
  chunk_source.recno_of_row = nullptr;  // rows renumbered in stage 3
  const bool renumber = source_in.recno_column == 0;
  const uint64_t max_rows = source_in.max_rows;

  // Stage 2's work on one chunk (stage 3's on the serial rest, with the rows left).
  auto parse = [&](Chunk& c, CsvReader&& reader, uint64_t rows_left) {
    try {
      reader.limit_record(options.max_record);
      reader.set_first_line(c.first_line);
      ColumnSource s = chunk_source;
      s.header = chunk_source.header && c.first;
      s.max_rows = rows_left;
      read_entries(reader, s, c.batch);
    } catch (...) {
      c.error = std::current_exception();
    }
  };
  Chunker chunker(std::move(source), text, options);
  std::atomic<bool> stop{false};
  uint64_t rows = 0;
  uint64_t text_bytes = 0;  // of the chunks handed to the sink
  std::exception_ptr failure;
  const uint32_t threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  tbb::task_arena arena(static_cast<int>(threads));
  arena.execute([&] {
    tbb::parallel_pipeline(
        threads * 2,
        tbb::make_filter<void, Chunk*>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& fc) -> Chunk* {
                                         std::unique_ptr<Chunk> c =
                                             stop.load() ? nullptr : chunker.next();
                                         if (!c) {
                                           fc.stop();
                                           return nullptr;
                                         }
                                         return c.release();
                                       }) &
            tbb::make_filter<Chunk*, Chunk*>(tbb::filter_mode::parallel,
                                             [&](Chunk* c) -> Chunk* {
                                               if (!stop.load() && !c->text.empty()) {
                                                 parse(*c, CsvReader::from_string(c->text, name),
                                                       0);
                                               }
                                               return c;
                                             }) &
            tbb::make_filter<Chunk*, void>(tbb::filter_mode::serial_in_order, [&](Chunk* raw) {
              std::unique_ptr<Chunk> c(raw);
              if (stop.load()) return;
              if (c->rest) {
                // The serial rest of the input, in order: every earlier row is counted.
                parse(*c, CsvReader::from_source(std::move(c->rest), name),
                      max_rows != 0 ? max_rows - rows : 0);
              }
              try {
                auto& items = c->batch.items();
                size_t keep = items.size();
                if (max_rows != 0 && rows + keep >= max_rows) {
                  keep = static_cast<size_t>(max_rows - rows);
                  items.resize(keep);
                  stop = true;
                }
                if (renumber) {
                  for (size_t j = 0; j < keep; ++j) {
                    const uint64_t row = rows + j;
                    const uint64_t recno =
                        source_in.recno_of_row ? source_in.recno_of_row(row) : row;
                    if (recno > kMaxRecordNumber) {
                      throw InputError(name, items[j].tag,
                                       "too many rows: record number over 2^40 - 1");
                    }
                    items[j].recno = recno;
                  }
                }
                rows += keep;
                if (!stop) {
                  if (c->error) std::rethrow_exception(c->error);
                  if (c->read_error) std::rethrow_exception(c->read_error);
                }
                if (keep != 0) sink(std::move(c->batch));
                text_bytes += c->text.size();
                if (options.on_bytes) options.on_bytes(text_bytes);
              } catch (...) {
                failure = std::current_exception();
                stop = true;
              }
            }));
  });
  if (failure) std::rethrow_exception(failure);
  return rows;
}

}  // namespace

uint64_t read_entries_parallel(const std::string& path, const ColumnSource& source,
                               const ParallelCsvOptions& options,
                               const std::function<void(EntryBatch&&)>& sink) {
  return run(open_byte_source(path), {}, path, source, options, sink);
}

uint64_t read_entries_parallel_text(std::string_view text, const std::string& name,
                                    const ColumnSource& source, const ParallelCsvOptions& options,
                                    const std::function<void(EntryBatch&&)>& sink) {
  return run(nullptr, text, name, source, options, sink);
}

}  // namespace pbtree::tools
