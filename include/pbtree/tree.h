// The public tree: TypedIndex, one index of an IndexFile driven with typed values (insert,
// remove, find, value-order scans, compound searches), with IndexCursor (<pbtree/cursor.h>)
// for its scans. The living B-tree behind it stays inside the library.
#pragma once

#include <pbtree/cursor.h>
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace pbtree {

/// A value outside its index's type (wrong kind, out of range, malformed text), or a raw key
/// that is not a key of the index's format. The message names the index and shows the value
/// as the CLI prints it, or the key in hex.
class WrongTypeError : public UsageError {
 public:
  using UsageError::UsageError;
};

/// Bounds on the segment after the equal ones of TypedIndex::search, in value order.
struct SegmentRange {
  std::optional<Value> from, to;  ///< nullopt: open; a bound excludes a NULL segment
  bool from_exclusive = false, to_exclusive = false;
  std::optional<std::string> starting_with;  ///< varchar segment: raw prefix bytes
  bool not_null = false;                     ///< IS NOT NULL (implied by any bound above)
};

/// What TypedIndex::search returns: the entries (key, record number) in ascending value
/// order, and the leaf entries the scan examined (the entries plus the one that ended the
/// range, if any): the cost a test can assert.
struct SearchResult {
  std::vector<std::pair<std::vector<uint8_t>, uint64_t>> entries;
  uint64_t examined = 0;
};

/// Index `name` of `file` (which must outlive the handle). Thread and process rules: those of
/// Tree and IndexFile (docs/LIBRARY.md).
class TypedIndex {
 public:
  /// Throws UsageError ("<path>: no index named X").
  TypedIndex(IndexFile& file, const std::string& name);

  const IndexInfo& info() const { return info_; }

  /// Inserts (value, recno). Throws WrongTypeError (also for a value the declared type cannot
  /// hold, as load refuses its text: "<file>: index I (smallint): value 100000 out of range
  /// for smallint (-32768..32767)"), DuplicateKeyError (duplicate pair, unique violation:
  /// "<file>: unique index I: value -5 already exists (record 7)"), ReadOnlyError.
  void insert(const Value& value, uint64_t recno);
  void insert(std::string_view text, uint64_t recno) { insert(parse(text), recno); }
  /// Removes exactly (value, recno). Throws UsageError if absent, WrongTypeError.
  void remove(const Value& value, uint64_t recno);
  void remove(std::string_view text, uint64_t recno) { remove(parse(text), recno); }
  /// Record numbers of every entry equal to `value`, ascending.
  std::vector<uint64_t> find(const Value& value) const;
  std::vector<uint64_t> find(std::string_view text) const { return find(parse(text)); }
  /// A cursor over values in [from, to] (either open), in ascending value order whatever the
  /// index's direction (a descending index is walked backward). IndexCursor::key() gives key
  /// bytes; value_text() turns them back into the CLI's text.
  IndexCursor scan(std::optional<Value> from = std::nullopt,
                   std::optional<Value> to = std::nullopt) const;
  /// The CLI's text of a key of this index ("NULL" for the NULL key).
  std::string value_text(std::span<const uint8_t> key) const;
  /// Inserts a key built elsewhere, after checking that it decodes under the index's type and
  /// format (a compound index: splits into its segments' values) and re-encodes to exactly
  /// these bytes. Throws WrongTypeError, as insert().
  void insert_key(std::span<const uint8_t> key, uint64_t recno);
  /// The key of `value` (throws WrongTypeError).
  std::vector<uint8_t> key_of(const Value& value) const;
  /// parse_value() under the index's type (throws WrongTypeError).
  Value parse(std::string_view text) const;

  // Compound indexes. One Value per segment, in segment
  // order (Value::null() for a NULL segment); also accepted on a single-segment index (one
  // value). Throw WrongTypeError on a wrong count or a value outside its segment's type
  // (insert: "<file>: index C: segment 2: value of 3 bytes is too long for varchar(2)").
  /// The compound key of `values` (build_compound_key).
  std::vector<uint8_t> key_of(std::span<const Value> values) const;
  void insert(std::span<const Value> values, uint64_t recno);
  void remove(std::span<const Value> values, uint64_t recno);
  /// Entries whose first equal.size() segments equal `equal` (a NULL value: IS NULL) and
  /// whose next segment lies in `next`, as one key range with exact segment boundaries
  /// Values are taken exactly (parse_value rules). Throws
  /// WrongTypeError, UsageError (more values than segments; a bound with every segment equal).
  SearchResult search(std::span<const Value> equal, const SegmentRange& next = {}) const;
  /// Tuple form: search(std::tuple{Value::of_text("US"), Value::exact(5)}).
  template <typename... V>
  SearchResult search(const std::tuple<V...>& equal, const SegmentRange& next = {}) const {
    std::vector<Value> v;
    std::apply([&](const auto&... x) { (v.push_back(Value(x)), ...); }, equal);
    return search(std::span<const Value>(v), next);
  }

 private:
  IndexFile& file_;
  IndexInfo info_;
  Tree::Body* tree_;  // the B-tree behind file_.tree(info_.def.name)
};

}  // namespace pbtree
