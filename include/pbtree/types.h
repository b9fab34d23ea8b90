// pbtree's shared vocabulary: node layouts, the page-size and record-number limits, and what
// one index is (IndexDefinition, IndexInfo), key_value_text. Public; includes only std and
// <pbtree/keys.h>.
#pragma once

#include <pbtree/keys.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pbtree {

/// How the nodes of a B-tree are coded. Firebird: ODS 12 nodes as above (byte-exact with
/// Firebird 3.0 .. 5.0). Compact: pbtree's own layout (docs/FORMAT.md §2.9): delta record
/// numbers, no implied length byte, suffix-truncated separators. Chosen per index.
enum class NodeLayout : uint8_t { Firebird = 0, Compact = 1 };
/// Every layout, in enum order: a new layout is added here with its enum value, and the
/// project's combination-matrix test then builds and checks every index in it too.
inline constexpr NodeLayout kNodeLayouts[] = {NodeLayout::Firebird, NodeLayout::Compact};

/// Page sizes a file may have (bytes).
inline constexpr uint32_t kPageSizes[] = {4096, 8192, 16384, 32768};
inline constexpr uint32_t kDefaultPageSize = 8192;
/// Record numbers are 40-bit (Firebird's RecordNumber): 0 .. 2^40 - 1.
inline constexpr uint64_t kMaxRecordNumber = (uint64_t{1} << 40) - 1;

/// One segment (column) of a compound index: its type and key format (TypeDefault: the
/// type's default_key_format(), resolved by create_index/bulk_load).
struct IndexSegment {
  TypeSpec type;
  KeyFormat format = KeyFormat::TypeDefault;
};

/// Most segments an index may have (Firebird's MAX_INDEX_SEGMENTS).
inline constexpr size_t kMaxIndexSegments = 16;

/// What an index is built on: one column (`type`, `format`) or, when `segments` holds 2..16
/// entries, a compound index whose keys are built by build_compound_key (docs/FORMAT.md
/// §1.4). For a compound index `type`/`format` mirror segments[0].
struct IndexDefinition {
  std::string name;  ///< 1..31 bytes, [A-Za-z0-9_$]
  TypeSpec type;
  /// TypeDefault: the type's default_key_format() (Firebird 5's choice, the CLI's default),
  /// resolved by create_index/bulk_load; an explicit format must suit the type.
  KeyFormat format = KeyFormat::TypeDefault;
  bool unique = false;
  bool descending = false;
  NodeLayout layout = NodeLayout::Firebird;  ///< node coding of every page of the tree
  bool auto_format = false;  ///< `format` was chosen by --key-format auto (slot flag 0x80)
  /// Compound indexes: every segment in order (2..16). Empty for a single-segment index.
  std::vector<IndexSegment> segments;

  /// Number of segments: 1 for a single-segment index.
  size_t segment_count() const { return segments.empty() ? 1 : segments.size(); }
  bool compound() const { return segments.size() > 1; }
  /// Segment i (0-based); segment 0 of a single-segment index is (type, format).
  IndexSegment segment(size_t i) const {
    return segments.empty() ? IndexSegment{type, format} : segments.at(i);
  }
};

/// Firebird's BTR_key_length for `def` (bytes): a single segment as max_key_length(); a
/// compound index sum over segments of ceil((len_i + desc) / 4) * 5 (IDX_create_index,
/// Firebird v5.0.4 src/jrd/idx.cpp), len_i = max_key_length of the segment without the descending
/// byte.
size_t definition_max_key_length(const IndexDefinition& def);

/// The index-creation check of src/jrd/idx.cpp for `def` at `page_size`:
/// ROUNDUP(definition_max_key_length + nullInd, 8) < page_size / 4, nullInd = 1 only for an
/// ascending single-segment index. Throws KeyError with Firebird's message "key size exceeds
/// implementation restriction ..." (and the figures). Segment formats must be resolved.
void check_definition_key_limit(const IndexDefinition& def, uint32_t page_size);

/// True if the uniqueness check skips `key` of `def`: the NULL key of a single-segment index;
/// a compound key with at least one NULL segment (entries are duplicates only when all their
/// segments are equal and non-NULL). Throws nothing (a malformed key is not exempt).
bool key_exempt_from_unique(const IndexDefinition& def, std::span<const uint8_t> key);

/// Splits the compound key `key` of `def` (as stored, inverted if descending) into each
/// segment's single-segment key as build_key() gives it (descending: escaped and inverted;
/// NULL: empty ascending, FF descending). Returns nullopt if `key` is no compound key of
/// `def` (marker out of order, padding not zero, a chunk of the wrong size).
std::optional<std::vector<std::vector<uint8_t>>> split_compound_key(const IndexDefinition& def,
                                                                    std::span<const uint8_t> key);

/// The values of the compound key `key` of `def`, one per segment (Value::null() for a NULL
/// segment), checked by re-encoding: build_compound_key of the result gives exactly `key`.
/// Text values point into `storage`. Returns nullopt if `key` is no key of `def`.
std::optional<std::vector<Value>> compound_key_values(const IndexDefinition& def,
                                                      std::span<const uint8_t> key,
                                                      std::vector<std::string>& storage);

/// Each segment's text as the CLI prints it (key_to_text; "NULL" for a NULL segment); a
/// single-segment index gives one text. Returns nullopt if `key` is no key of `def`.
std::optional<std::vector<std::string>> key_segment_texts(const IndexDefinition& def,
                                                          std::span<const uint8_t> key);

/// `key` as the CLI prints it (key_to_text under def's type, format and descending flag);
/// the key's hex bytes (hex_bytes) if it does not decode under that format.
std::string key_value_text(const IndexDefinition& def, std::span<const uint8_t> key);

/// An index as stored in the index root page.
struct IndexInfo {
  IndexDefinition def;
  uint32_t id = 0;         ///< slot in the index root page, 0-based (gstat prints it)
  uint32_t root_page = 0;  ///< page number of the B-tree root
};

}  // namespace pbtree
