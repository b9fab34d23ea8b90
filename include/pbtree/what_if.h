// What-if statistics (public): the size and shape an index would have in every key format its
// column type allows × every node layout, predicted in one streaming pass over its entries
// with no file written. Each entry's normalized key is decoded back to its value
// (key_to_value, <pbtree/keys.h>), re-encoded in each candidate format (order is kept: every
// allowed format is exact and ordered) and fed to the library's bulk loader, whose pages go to
// a counting sink, so the figures are those of a real bulk build into a new file. Also the
// `--key-format auto` rule that picks a key format from such figures on a sample.
#pragma once

#include <pbtree/keys.h>
#include <pbtree/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pbtree {

class IndexFile;

/// Every key format `type` allows (key_format_allowed), default first: smallint, integer,
/// numeric(P<=9): double, decimal128, bcd; bigint, numeric(10..18): rescaled-double,
/// decimal128, bcd; int128, numeric(19..38): bcd; double: double; varchar: text.
std::vector<KeyFormat> allowed_key_formats(const TypeSpec& type);

/// "firebird" or "compact".
std::string_view layout_name(NodeLayout layout);

/// Predicted figures of one (key format, layout) after a bulk build into a new file (first
/// page 2, the jump interval bulk_load uses). Leaf figures follow gstat's (IndexStats;
/// analyze_index in Firebird's src/utilities/gstat/dba.epp); averages are 0 when nodes = 0.
struct WhatIfRow {
  KeyFormat format = KeyFormat::Double;
  NodeLayout layout = NodeLayout::Firebird;
  bool available = false;    ///< false: layout not in this build or key too long; figures 0
  std::string unavailable;   ///< why not available ("layout not implemented", ...)
  bool current = false;      ///< the index's own key format and layout
  uint64_t nodes = 0;        ///< leaf entries
  uint32_t depth = 0;        ///< levels
  uint64_t leaf_pages = 0;   ///< gstat's leaf buckets
  uint64_t index_pages = 0;  ///< pages on every level
  uint64_t total_dup = 0;
  double avg_key_length = 0;        ///< bytes: gstat's packed node size without record number
  double compression_ratio = 0;     ///< (avg prefix + avg data) / avg key length
  double avg_prefix_length = 0;     ///< bytes
  double avg_data_length = 0;       ///< bytes
  double bytes_per_entry = 0;       ///< index_pages × page_size / nodes (as IndexStats)
  double leaf_bytes_per_entry = 0;  ///< leaf_pages × page_size / nodes
  /// Bytes in use / nodes: every page counts page_size bytes except the last page of each
  /// level, which counts its btr_length. Smooth in the number of entries (no page rounding),
  /// hence the figure --key-format auto compares on a sample.
  double used_bytes_per_entry = 0;
};

/// The streaming predictor. Feed it an index's entries in index order (key in `source`
/// format, record number); finish() returns one row per (format, layout).
class WhatIfEstimator {
 public:
  struct Options {
    TypeSpec type;
    KeyFormat source = KeyFormat::Double;  ///< format of the keys given to add()
    bool descending = false;
    uint32_t page_size = kDefaultPageSize;  ///< bytes
    std::vector<KeyFormat> formats;         ///< empty: allowed_key_formats(type)
    std::vector<NodeLayout> layouts;        ///< empty: Firebird, Compact
    /// Marks the row with this format and layout as current.
    std::optional<std::pair<KeyFormat, NodeLayout>> current;
    /// Keys in a format the type does not allow, predicted as they are given (Firebird's
    /// decimal128 keys of DECFLOAT, or of INT128 on ODS 13.0): the only format is `source`
    /// (`formats` ignored), `type` sets only the longest key, no key is decoded.
    bool as_stored = false;
  };

  /// Throws KeyError if `source` or a listed format is not allowed for the type (unless
  /// `as_stored`).
  explicit WhatIfEstimator(const Options& options);
  ~WhatIfEstimator();
  WhatIfEstimator(const WhatIfEstimator&) = delete;
  WhatIfEstimator& operator=(const WhatIfEstimator&) = delete;

  /// Next entry in index order (key, then record number). Throws KeyError if `key` is not a
  /// key of the type in the source format (corrupt index), UsageError if recno >
  /// kMaxRecordNumber.
  void add(std::span<const uint8_t> key, uint64_t recno);
  /// Entries given so far.
  uint64_t entries() const { return entries_; }
  /// Closes every candidate tree; rows in options order: formats outer, layouts inner.
  /// Call once.
  std::vector<WhatIfRow> finish();

 private:
  struct Candidate;
  Options options_;
  std::vector<std::unique_ptr<Candidate>> candidates_;
  uint64_t entries_ = 0;
  std::string storage_;
};

/// What-if figures of one index of a file.
struct WhatIfReport {
  IndexInfo info;
  std::string type_name;   ///< if set, printed instead of info.def.type ("decfloat(34)")
  uint32_t page_size = 0;  ///< bytes
  uint64_t entries = 0;
  std::vector<WhatIfRow> rows;  ///< allowed_key_formats × {Firebird, Compact}
};

/// Streams the leaves of index `name` (in index order) through a WhatIfEstimator over every
/// allowed format and `layouts` (empty: Firebird and Compact); marks the index's own (format,
/// layout). `sample_every` k > 1 feeds only entries 0, k, 2k, ... (index order). Throws
/// UsageError ("<path>: no index named X", a compound index, `sample_every` 0), CorruptError,
/// IoError.
/// `on_entries`, if set, is called with the count of entries read so far every
/// kWhatIfProgressEvery entries and once at the end (a progress hook).
WhatIfReport what_if(IndexFile& file, const std::string& name, uint64_t sample_every = 1,
                     const std::vector<NodeLayout>& layouts = {},
                     const std::function<void(uint64_t)>& on_entries = {});

/// Entries between two calls of what_if()'s and fdb_what_if()'s progress hook.
inline constexpr uint64_t kWhatIfProgressEvery = 4096;

/// The outcome of --key-format auto.
struct KeyFormatChoice {
  KeyFormat format = KeyFormat::Double;          ///< the format chosen
  KeyFormat default_format = KeyFormat::Double;  ///< default_key_format(type)
  KeyFormat best = KeyFormat::Double;            ///< smallest estimate (ties: the earlier format)
  double default_bytes = 0;  ///< used_bytes_per_entry of the default format on the sample
  double best_bytes = 0;     ///< used_bytes_per_entry of `best`
  double ratio = 1;          ///< default_bytes / best_bytes (1 if best_bytes = 0)
  uint64_t sample_entries = 0;
};

/// Gain the best format must reach over the type's default to replace it.
inline constexpr double kAutoMinGain = 1.2;
/// --key-format auto samples one entry in kAutoSampleEvery (every 4th, 25%).
inline constexpr uint64_t kAutoSampleEvery = 4;

/// Applies the rule to `rows` of `layout` (rows as finish() gives them): the format with the
/// smallest used_bytes_per_entry wins if default_bytes / best_bytes >= kAutoMinGain, else the
/// type's default stays. Throws UsageError if the default's row is missing.
KeyFormatChoice choose_key_format(const TypeSpec& type, NodeLayout layout,
                                  const std::vector<WhatIfRow>& rows, uint64_t sample_entries);

/// Recomputes the choice --key-format auto made for index `name`: a what_if() of the
/// index's layout over every kAutoSampleEvery-th entry in index order (the same sample the
/// loader takes from its sorted input). Throws like what_if().
KeyFormatChoice recompute_auto_choice(IndexFile& file, const std::string& name);

}  // namespace pbtree
