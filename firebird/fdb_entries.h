// The entries of a Firebird index in index order (leaf keys with prefix compression undone,
// record numbers), and the pbtree column type and key format a Firebird index segment
// corresponds to, so the keys can be decoded and re-encoded (btree/what_if.h) or imported.
#pragma once

#include <pbtree/keys.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"

namespace pbtree::firebird {

/// Calls fn(key, record number) for every leaf node of `index`, in index order: descends
/// along first nodes to the leftmost leaf, then follows right siblings. Throws CorruptError
/// ("FILE: page N (b-tree): ...") on malformed pages, loops or a level that does not end.
void for_each_fdb_entry(const FdbFile& file, const FdbIndex& index,
                        const std::function<void(std::span<const uint8_t>, uint64_t)>& fn);

/// The pbtree view of a Firebird index.
struct FdbKeyType {
  TypeSpec type;     ///< pbtree column type
  KeyFormat format;  ///< the Firebird key type as a pbtree key format
  /// A key format Firebird writes that pbtree does not allow for `type`: decimal128 keys of
  /// DECFLOAT (no pbtree column type; `type` is then only a stand-in, never decoded into)
  /// and of INT128 / NUMERIC(19..38) on ODS 13.0 (decoded to int128 values; Firebird 4.0
  /// rounded them to 34 digits). What-if predicts these keys as they are stored.
  bool as_stored = false;
  /// Set for DECFLOAT: no pbtree column type holds its values ("decfloat(34)").
  std::string decfloat = {};
};

/// The pbtree type and key format of a single-segment index on smallint, integer, bigint,
/// int128, numeric/decimal (stored as smallint, integer, bigint or int128), double
/// precision, or CHAR/VARCHAR in character set NONE or ASCII (idx_itype 0, 8, 13 = bcd
/// (ODS 13.1), 10 = decimal128 (int128 on ODS 13.0), 1); nullopt with `why` set to
/// "n/a: <reason>" for anything else (compound, expression, collated strings, date/time,
/// boolean, float, ...). DECFLOAT(16/34) (idx_decimal) comes back with `decfloat` set.
std::optional<FdbKeyType> fdb_key_type(const FdbIndex& index, std::string& why);

}  // namespace pbtree::firebird
