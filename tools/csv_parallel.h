// Parallel CSV input for `pbtree load`: the input (plain, .zst or standard input) is cut into
// chunks at record ends (RFC 4180 quoting as CsvReader scans it, so a chunk edge never falls
// inside a quoted field), each chunk is parsed and its keys built on its own thread by the
// serial reader's code (read_entries over the chunk, line numbers continued), and the chunks'
// entries are handed out in input order. Entries, record numbers, tags and errors are those of
// read_entries on the whole input.
#pragma once

#include <pbtree/index_file.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "tools/loader.h"

namespace pbtree::tools {

/// How read_entries_parallel cuts and parses.
struct ParallelCsvOptions {
  /// Bytes read per chunk before it is cut at its last record end (a record longer than
  /// this makes its chunk longer). Tests force tiny chunks. Never changes the entries.
  size_t chunk_bytes = size_t{4} << 20;
  /// Parsing threads; 0: std::thread::hardware_concurrency(). Never changes the entries.
  uint32_t threads = 0;
  /// The longest record (bytes), as CsvReader::limit_record.
  size_t max_record = CsvReader::kMaxRecordBytes;
  /// A record still open after this many bytes (or 2 * chunk_bytes if more) ends the
  /// chunking: the rest of the input is read by one serial CsvReader, in bounded memory as
  /// `load` always read (a field limit refuses a huge field as soon as it is seen). Tests
  /// force it small. Never changes the entries.
  size_t long_record = size_t{1} << 20;
  /// If set, called after each chunk handed to the sink (same thread, input order) with the
  /// bytes of input text in the chunks handed so far (decompressed; the serial rest after a
  /// long record is not counted): the progress line's "% of input".
  std::function<void(uint64_t)> on_bytes;
};

/// read_entries on CsvReader(`path`) ("-": standard input; ".zst": decompressed), in
/// parallel: `sink` receives the entries (key, record number, input line as tag) chunk by
/// chunk in input order, from one thread at a time (not necessarily the caller's). Returns
/// the number of data rows. Throws what read_entries throws, with the same
/// "<file>:<line>: <what>": of several bad records, the first in input order; nothing is
/// handed to `sink` after an error's chunk. Exceptions from `sink` propagate.
uint64_t read_entries_parallel(const std::string& path, const ColumnSource& source,
                               const ParallelCsvOptions& options,
                               const std::function<void(EntryBatch&&)>& sink);

/// The same over in-memory `text` named `name` in messages (tests, fuzzing).
uint64_t read_entries_parallel_text(std::string_view text, const std::string& name,
                                    const ColumnSource& source, const ParallelCsvOptions& options,
                                    const std::function<void(EntryBatch&&)>& sink);

/// Offset just past the last record end in data[0, n) (a '\n' outside quotes, CsvReader's
/// quoting: a quote opens a quoted field only at a field start or right after a closing
/// quote), data[0] being a record start; 0 if the bytes hold no record end.
size_t last_record_end(const char* data, size_t n);

}  // namespace pbtree::tools
