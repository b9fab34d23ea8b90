// Search plans on the leading segments of an index (issue 12 item 3): equality on the first
// k segments (NULL = IS NULL), optionally a range or a STARTING WITH prefix on segment k+1,
// turned into key ranges whose ends are exact segment boundaries (docs/FORMAT.md §1.4),
// and a scan that counts the leaf entries it examines. Works for single-segment indexes too.
//
// Plans are made in the "uninverted" key space U: a stored key, inverted back if the index is
// descending. U order is ascending value order for both directions (a descending segment key
// is the ascending one plus the escape byte), and a descending tree's order is U reversed, so
// a U range [L, H] is the stored range [~H, ~L] of a descending index. With P the equality
// prefix (the first k segments, the last one zero-padded to a chunk) and m = N - k the marker
// of segment k+1 of N:
//   equality only        [P, P|m+1)       (a stored key continuing segment k has marker m+1)
//   any non-NULL value   [P|m, P|m+1)     (descending: [P|m|01, ..): NULL is m|00 00 00 00)
//   value >= x / > x     P|chunks(x)   /  P|chunks(x)|pad|m
//   value <= x / < x     < P|chunks(x)|pad|m   /  < P|chunks(x)
//   STARTING WITH s      keys starting with P|chunks(s)
//   all N segments equal the one full key.
#pragma once

#include <pbtree/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "btree/btree.h"

namespace pbtree {

/// A search on the leading segments, every key given as build_key() builds the segment's
/// single-segment key (in the index's direction; NULL: null_key()).
struct LeadingSearch {
  std::vector<std::vector<uint8_t>> equal;  ///< keys of segments 0..k-1, k <= segment count
  /// Bounds on segment k (k < segment count); nullopt: unbounded. Any bound, or
  /// `starting_with`, or `not_null`, excludes a NULL segment k.
  std::optional<KeyBound> from, to;
  /// STARTING WITH on segment k: the prefix's raw key bytes (ascending form: the text bytes).
  std::optional<std::vector<uint8_t>> starting_with;
  bool not_null = false;
  bool value_descending = false;  ///< deliver entries in descending value order
};

/// One run of a plan: a stored-key range in index order.
struct LeadingPlan {
  bool empty = false;
  std::optional<KeyBound> lower, upper;  ///< index order (compare_keys, index direction)
  bool backward = false;                 ///< walk from `upper` down
};

/// Turns `search` into a range of stored keys of `def`. Throws UsageError on more values than
/// segments or a bound with all segments given.
LeadingPlan plan_leading_search(const IndexDefinition& def, const LeadingSearch& search);

/// Runs `plan` on `tree`, calling `entry(key, recno)` for each entry in the range in plan
/// order until it returns false. The cursor starts at the plan's first end; the other end is
/// checked here, so the count returned, the leaf entries examined, is the entries delivered
/// plus the one that ended the walk (none at the end of the index or when `entry` stopped).
uint64_t run_leading_plan(const BTree& tree, const LeadingPlan& plan,
                          const std::function<bool(std::span<const uint8_t>, uint64_t)>& entry);

}  // namespace pbtree
