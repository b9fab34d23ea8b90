// Turning CSV input into index entries and index files: the shared core of `pbtree load`
// and `pbtree demo`. All input is parsed and encoded before the index file is touched, so a
// bad row leaves the file exactly as it was (duplicates, found while the sorted entries are
// built, make the build cut its new pages off again: IndexFile::bulk_load_sorted).
#pragma once

#include <pbtree/bulk_loader.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/csv_reader.h"

namespace pbtree::tools {

/// How to read one index's entries from a CSV input.
struct ColumnSource {
  TypeSpec type;
  KeyFormat format = KeyFormat::Double;
  bool descending = false;
  uint32_t page_size = kDefaultPageSize;  ///< bytes; keys must be shorter than page_size / 4
  bool header = false;                    ///< skip the first record
  size_t column = 1;                      ///< 1-based column holding the value
  size_t recno_column = 0;                ///< 1-based column holding the record number; 0: none
  uint64_t max_rows = 0;                  ///< stop after this many data rows; 0: all
  /// Compound indexes: the segments (type, resolved format) and their 1-based columns, in
  /// segment order; empty for a single-segment index (type, format, column).
  std::vector<IndexSegment> segments;
  std::vector<size_t> columns;
  /// Record number of the 0-based data row `row` when recno_column is 0; nullptr: row itself.
  uint64_t (*recno_of_row)(uint64_t row) = nullptr;
  /// Threads of load_index_file's parsing (tools/csv_parallel.h) and leaf building
  /// (IndexFile::set_build_threads); 0: std::thread::hardware_concurrency(). Never changes
  /// the result.
  uint32_t threads = 0;
};

/// Reads every data record of `reader` (the one CSV row loop of the CLI): parses the value of
/// `column` (an empty unquoted field is NULL), or for a compound index one value per segment
/// from `columns`, builds its normalized key (build_key, build_compound_key), and appends (key,
/// record number, input line as tag) to `batch`. Returns the number of rows read. Throws
/// InputError "<file>:<line>: <what>" on a missing column, a malformed or out-of-range value
/// ("column 3: ..."), a key of page_size / 4 bytes or more, or a bad record number (not an
/// integer in 0 .. 2^40 - 1).
uint64_t read_entries(CsvReader& reader, const ColumnSource& source, EntryBatch& batch);

/// A record-number field of the current record of `reader` (1-based `column`, named in the
/// error): decimal digits only, 0 .. kMaxRecordNumber. Throws InputError "<file>:<line>: bad
/// record number 'x' in column 2 (want an integer 0..1099511627775)".
uint64_t parse_csv_recno(std::string_view text, const CsvReader& reader, size_t column);

/// Bulk-builds `def` in `file` from `batch`, turning DuplicateKeyError into an InputError on
/// the later of the two input lines ("<input>:<line>: <what> (same key as line <n>)").
IndexInfo bulk_load_from(IndexFile& file, const IndexDefinition& def, EntryBatch& batch,
                         const std::string& input_name);

class Progress;

/// Memory, temporary files and progress line of load_index_file (tools/load_pipeline.h).
struct LoadLimits {
  size_t memory = 0;             ///< bytes for entry buffers; 0: default_bulk_load_memory()
  std::string temp_dir;          ///< where sorted runs spill; empty: the database's directory
  Progress* progress = nullptr;  ///< the progress line (phase, rows, rate, ETA); nullptr: none
};

/// `pbtree load` as a function: opens or creates `db_path` and builds one new index from the
/// CSV file `input` ("-": standard input), read once. page_size 0 means the file's (existing)
/// or kDefaultPageSize (new). Entries are held in buffers of limits.memory bytes
/// (bulk_load_bytes); beyond one buffer they are sorted and spilled as runs to an unnamed
/// temporary file in limits.temp_dir and merged into the build (tools/load_pipeline.h). With
/// def.auto_format, def.format is ignored: the input is read in the type's default format,
/// BulkLoader::choose_key_format() picks the format on the entries read (written to `*choice` if
/// given), and the keys are re-encoded into it if it differs; the slot records the auto flag. On
/// any error the file is left as it was, and a file this call created is removed. Throws
/// InputError, UsageError, KeyError, IoError, CorruptError. `progress`: optional stream for
/// progress messages (the auto choice included).
IndexInfo load_index_file(const std::string& db_path, const IndexDefinition& def,
                          uint32_t page_size, const std::string& input, ColumnSource source,
                          std::ostream* progress, KeyFormatChoice* choice = nullptr,
                          const LoadLimits& limits = {});

}  // namespace pbtree::tools
