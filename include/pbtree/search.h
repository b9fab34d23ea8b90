// SQL search semantics: the search keys of
// `pbtree find` and `pbtree scan`. Turns the text of a search value into normalized keys of an
// index, following SQL comparison semantics rather than the strict
// parsing of stored values (as BTR_make_key in Firebird v5.0.4 src/jrd/btr.cpp):
//
//  * On numeric indexes the text is read as a general number (exact decimal of any size and
//    exponent, or inf) and converted to the column's type. A value the type cannot hold
//    exactly is rounded toward the inside of the range it bounds (integer index, from 1.5 ->
//    from 2 inclusive; to 1.5 -> to 1 inclusive), so an exclusive bound never becomes an
//    inclusive one on the same value. Out of the column's range: a lower bound above the
//    maximum or an upper bound below the minimum matches nothing; the other ends drop the
//    bound. Equality with an unrepresentable value matches nothing. Double indexes read the
//    text as the nearest double (as `load` does); overflow to +-inf is clamped to +-DBL_MAX
//    on the side that keeps the comparison true.
//  * NULL as a range bound matches nothing (x >= NULL is never true); NULLs are never in a
//    bounded or prefix scan. An unbounded scan returns every entry, NULLs included (first in
//    ascending value order, last in descending value order, as Firebird sorts them).
//  * Bounds are given in value order whatever the index direction; plan_scan() turns them
//    into a ScanRange in index order (a descending index swaps them).
//  * STARTING WITH on varchar indexes: stored keys lose trailing spaces (PAD SPACE), so a
//    stored value matches when the value padded with spaces starts with the prefix: keys
//    starting with the prefix's raw bytes, plus (if the prefix ends with spaces) the key of
//    the prefix with its trailing spaces cut.
#pragma once

#include <pbtree/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pbtree {

/// A key bound of a scan: normalized key bytes, inclusive or exclusive.
struct KeyBound {
  std::vector<uint8_t> key;
  bool inclusive = true;
};

/// What a cursor walks. Bounds are in index order (compare_keys with the index's
/// descending flag): lower <= upper. `prefix` keeps only keys starting with those bytes
/// (STARTING WITH); it combines with the bounds. `backward` walks from the upper end down.
struct ScanRange {
  std::optional<KeyBound> lower;
  std::optional<KeyBound> upper;
  std::optional<std::vector<uint8_t>> prefix;
  bool backward = false;
};

/// One end of a value range after conversion to the index's type.
struct ValueBound {
  enum class Kind : uint8_t {
    Unbounded,  ///< no constraint on this side (NULLs still excluded)
    Empty,      ///< no value of the column satisfies it
    At,         ///< `key`, inclusive or not
  };
  Kind kind = Kind::Unbounded;
  std::vector<uint8_t> key;  ///< normalized key in the index's format and direction
  bool inclusive = true;
};

/// Which end of a value range.
enum class BoundSide : uint8_t { From, To };

/// The key to look up `text` by equality in `def` (find), or nullopt if no value of the
/// column can equal it (integer index and 1.5, smallint index and 40000, text longer than
/// varchar(N) after cutting trailing spaces). Throws KeyError on text that is no number
/// (numeric indexes: "malformed number 'x'") or on NaN.
std::optional<std::vector<uint8_t>> equality_key(const IndexDefinition& def, std::string_view text);

/// The key bound for `text` as the From (value >= / >) or To (value <= / <) end of a range,
/// `exclusive` for > / <. Throws KeyError as equality_key().
ValueBound bound_key(const IndexDefinition& def, std::string_view text, BoundSide side,
                     bool exclusive);

/// A scan request in value order, as the `scan` options give it.
struct ScanRequest {
  std::optional<std::string> from, to;      ///< value text
  bool from_null = false, to_null = false;  ///< the bound is SQL NULL (matches nothing)
  bool from_exclusive = false, to_exclusive = false;
  bool descending = false;                   ///< descending value order
  std::optional<std::string> starting_with;  ///< varchar indexes only
};

/// How to run a ScanRequest on a tree.
struct ScanPlan {
  bool empty = false;       ///< nothing can match: do not scan
  ScanRange range;          ///< index order; backward = descending XOR index descending
  bool skip_nulls = false;  ///< drop the NULL key from the output
  /// STARTING WITH a prefix ending in spaces: this key (the prefix, trailing spaces cut)
  /// also matches; its entries come before the prefix range in ascending value order.
  std::optional<std::vector<uint8_t>> padded_equal;
};

/// Plans `request` on `def`. Throws UsageError (--starting-with on a non-varchar index),
/// KeyError (malformed value).
ScanPlan plan_scan(const IndexDefinition& def, const ScanRequest& request);

/// True if `key` lies within the bounds of `range` (index order, `descending` index).
bool key_in_range(std::span<const uint8_t> key, const ScanRange& range, bool descending);

/// Compound keys (docs/FORMAT.md §1.4): a search on the first `search_segments` of `index_segments`
/// segments uses the key `search` built by build_compound_key (for_search, not
/// starting_with) as a prefix. A stored key with that prefix may still continue the last
/// searched segment (its next byte is that segment's marker, index_segments -
/// search_segments + 1; inverted on descending indexes): such a key holds a longer value and
/// is not equal. Returns true if `key` starts with `search` and does not continue it so.
bool compound_leading_equal(std::span<const uint8_t> key, std::span<const uint8_t> search,
                            size_t index_segments, size_t search_segments, bool descending);

}  // namespace pbtree
