// pbtree's shared vocabulary: node layouts, the page-size and record-number limits, and what
// one index is (IndexDefinition, IndexInfo), key_value_text. Public; includes only std and
// <pbtree/keys.h>.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <pbtree/keys.h>

namespace pbtree {

/// How the nodes of a B-tree are coded. Firebird: ODS 12 nodes as above (byte-exact with
/// Firebird 3.0 .. 5.0). Compact: pbtree's own layout (docs/FORMAT.md §2.9): delta record
/// numbers, no implied length byte, suffix-truncated separators. Chosen per index.
enum class NodeLayout : uint8_t { Firebird = 0, Compact = 1 };

/// Page sizes a file may have (bytes).
inline constexpr uint32_t kPageSizes[] = {4096, 8192, 16384, 32768};
inline constexpr uint32_t kDefaultPageSize = 8192;
/// Record numbers are 40-bit (Firebird's RecordNumber): 0 .. 2^40 - 1.
inline constexpr uint64_t kMaxRecordNumber = (uint64_t{1} << 40) - 1;

/// What an index is built on. Single-segment.
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
};

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
