// Normalized index keys: column types, key formats, values, and the byte strings whose
// memcmp order is the value order (Firebird's `compress()` in src/jrd/btr.cpp, v3.0.14 ..
// v5.0.4; see docs/FORMAT.md "Normalized keys").
//
// This header is the whole public surface of the keys layer. Nothing here allocates while
// building a key: callers pass a KeyBuffer (fixed 8192-byte array, Firebird 4+'s MAX_KEY).
#pragma once

#include <pbtree/errors.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pbtree {

/// Every error from the keys layer: malformed value text, a value out of the type's range,
/// a key format the type may not use, a key over the length limit. The message is complete
/// and meant for the user (no file or line; callers add those).
class KeyError : public Error {
 public:
  using Error::Error;
};

/// Column types an index can be built on.
enum class ColumnType : uint8_t {
  Smallint = 1,  ///< int16
  Integer = 2,   ///< int32
  Bigint = 3,    ///< int64
  Int128 = 4,    ///< signed 128-bit
  Double = 5,    ///< IEEE-754 binary64
  Numeric = 6,   ///< NUMERIC(P,S): exact decimal, stored as int16/32/64/128 by precision
  Varchar = 7,   ///< VARCHAR(N), character set NONE: bytes, pad = space
};

/// A column type with its parameters. `precision`/`scale` only for Numeric (1 <= P <= 38,
/// 0 <= S <= P); `length` (bytes, 1..32765) only for Varchar.
struct TypeSpec {
  ColumnType type = ColumnType::Integer;
  uint8_t precision = 0;
  uint8_t scale = 0;
  uint16_t length = 0;

  /// Parses `smallint integer bigint int128 double numeric(P,S) varchar(N)` (case-insensitive,
  /// `numeric(P)` means S = 0, `decimal` is a synonym of `numeric`). Throws KeyError.
  static TypeSpec parse(std::string_view text);
  /// The canonical spelling, e.g. "numeric(12,2)", "varchar(40)", "bigint".
  std::string name() const;
  /// Bits of the integer that stores an exact value: 16, 32, 64 or 128; 0 for double/varchar.
  /// NUMERIC(P,S): P <= 4 -> 16, P <= 9 -> 32, P <= 18 -> 64, else 128 (as Firebird).
  int storage_bits() const;
  bool operator==(const TypeSpec&) const = default;
};

/// Key formats. The numeric values are Firebird's `idx_itype` codes (src/jrd/btr.h).
enum class KeyFormat : uint8_t {
  Double = 0,          ///< idx_numeric: value as IEEE double, 1..8 bytes (docs/FORMAT.md §1.1)
  Text = 1,            ///< idx_string: bytes, trailing spaces cut (§1.1)
  RescaledDouble = 8,  ///< idx_numeric2: legacy int64 key, double + 16-bit part, 1..10 bytes (§1.2)
  Decimal128 = 10,     ///< idx_decimal: Decimal128 key, bias 6176, pMax 34, 2..17 bytes (§1.3)
  Bcd = 13,  ///< idx_bcd: Int128 key, bias 128, pMax 39 (little-endian build), 2..19 bytes (§1.3)
  /// Not a key format: "the type's default_key_format()", IndexDefinition's default.
  /// IndexFile::create_index/bulk_load and Tree resolve it (resolve_key_format); it is
  /// never stored, and build_key refuses it with a KeyError.
  TypeDefault = 255,
};

/// "double", "rescaled-double", "decimal128", "bcd", "text". Throws KeyError on anything else.
KeyFormat parse_key_format(std::string_view name);
/// The name parse_key_format() reads.
std::string_view key_format_name(KeyFormat format);
/// Firebird 5's choice (DFW_assign_index_type, src/jrd/dfw.epp v5.0.4): smallint, integer,
/// double, numeric(P<=9) -> Double; bigint, numeric(10..18) -> RescaledDouble; int128,
/// numeric(19..38) -> Bcd; varchar -> Text.
KeyFormat default_key_format(const TypeSpec& type);
/// `format`, or default_key_format(type) when it is KeyFormat::TypeDefault.
inline KeyFormat resolve_key_format(const TypeSpec& type, KeyFormat format) {
  return format == KeyFormat::TypeDefault ? default_key_format(type) : format;
}
/// True if `format` keeps every value of `type` exact and ordered: smallint/integer/
/// numeric(<=9): Double, Decimal128, Bcd; bigint/numeric(10..18): RescaledDouble, Decimal128,
/// Bcd; int128/numeric(19..38): Bcd; double: Double; varchar: Text.
bool key_format_allowed(const TypeSpec& type, KeyFormat format);
/// Throws KeyError ("key format decimal128 cannot hold every value of int128; allowed: bcd")
/// unless key_format_allowed().
void check_key_format(const TypeSpec& type, KeyFormat format);

/// Largest key one value of `type` can give in `format` (Firebird's BTR_key_length):
/// Double 8, RescaledDouble 10, Decimal128 17, Bcd 19, Text = declared length; +1 if descending.
size_t max_key_length(const TypeSpec& type, KeyFormat format, bool descending);
/// The hard limit: a key must be shorter than page_size / 4 bytes (src/jrd/Database.h,
/// getMaxIndexKeyLength). Returns page_size / 4 - 1.
constexpr size_t key_length_limit(uint32_t page_size) {
  return page_size / 4 - 1;
}
/// Throws KeyError("key size N exceeds implementation restriction: keys must be shorter than
/// page_size/4 = M bytes (page size P)") if length >= page_size / 4.
void check_key_length(size_t length, uint32_t page_size);
/// The index-creation check of src/jrd/idx.cpp: ROUNDUP(max_key_length + nullInd, 8) <
/// page_size / 4 (nullInd = 1 for ascending single-segment indexes). Throws KeyError.
void check_index_key_limit(const TypeSpec& type, KeyFormat format, bool descending,
                           uint32_t page_size);

/// One column value. Exact numbers (integers, NUMERIC) are coefficient × 10^-scale; doubles
/// are `dbl`; text points at caller-owned bytes (not copied).
struct Value {
  enum class Kind : uint8_t { Null, Exact, Double, Text };
  Kind kind = Kind::Null;
  uint8_t scale = 0;         ///< Exact: digits after the decimal point (0..38)
  __int128 coefficient = 0;  ///< Exact
  double dbl = 0;            ///< Double
  std::string_view text;     ///< Text

  static Value null() { return Value{}; }
  static Value exact(__int128 c, uint8_t scale = 0) {
    Value v;
    v.kind = Kind::Exact;
    v.coefficient = c;
    v.scale = scale;
    return v;
  }
  static Value of_double(double d) {
    Value v;
    v.kind = Kind::Double;
    v.dbl = d;
    return v;
  }
  static Value of_text(std::string_view s) {
    Value v;
    v.kind = Kind::Text;
    v.text = s;
    return v;
  }
};

/// Parses the text form of one value of `type` (never NULL: callers decide what NULL is).
/// Integers: optional sign, decimal digits. Numeric(P,S): optional sign, digits, optional
/// '.' and fraction; fewer than S fraction digits are padded, extra digits must be zeros
/// (1.230 is 1.23 in numeric(9,2)); at most P significant digits. Double: strtod syntax,
/// "inf"/"-inf" accepted, NaN refused. Varchar: the bytes, at most `length` of them.
/// Throws KeyError ("malformed integer 'x1'", "value 40000 out of range for smallint", ...).
/// The returned Text value points into `text`.
Value parse_value(const TypeSpec& type, std::string_view text);

/// Room for any key: Firebird 4+'s MAX_KEY (8192 bytes). Keys are built in place; no heap.
struct KeyBuffer {
  static constexpr size_t kCapacity = 8192;
  uint8_t data[kCapacity];
  size_t length = 0;
  std::span<const uint8_t> bytes() const { return {data, length}; }
};

/// Builds the full single-segment key of `value` (NULL included: empty key ascending, FF
/// descending) in `format`, with suffix compression, the descending escape and inversion.
/// Exact values of a narrower or wider numeric type are accepted as long as they fit `type`
/// (bounds checks are the caller's via parse_value). Double values given to an exact format
/// must be integral and in range. Throws KeyError on a value the format cannot hold
/// (NaN, an int128 beyond 39 digits, text longer than the buffer). Returns out.length.
size_t build_key(const TypeSpec& type, KeyFormat format, const Value& value, bool descending,
                 KeyBuffer& out);

/// One segment of a compound key.
struct Segment {
  const TypeSpec* type;
  KeyFormat format;
  Value value;
};

/// Compound key with Firebird's segment-marker scheme (docs/FORMAT.md §1.4): 4-byte chunks, each
/// preceded by marker N - i; previous segment zero-padded to a chunk boundary; whole key inverted
/// if descending. `for_search` with fewer segments than the index: the last given segment is
/// zero-padded to a full chunk unless `starting_with`. Throws KeyError. Returns out.length.
size_t build_compound_key(std::span<const Segment> segments, bool descending, KeyBuffer& out,
                          size_t index_segments = 0, bool starting_with = false);

/// The order of two keys of which one is a prefix of the other, from their lengths (bytes)
/// alone: the shorter sorts first ascending and last descending (docs/FORMAT.md §1.1). Returns
/// -1, 0 or 1 for a key of `a_length` bytes against one of `b_length`. The one home of that
/// rule: compare_keys and every in-page search use it.
inline constexpr int prefix_order(size_t a_length, size_t b_length, bool descending) {
  if (a_length == b_length) return 0;
  return ((a_length < b_length) != descending) ? -1 : 1;
}

/// Key order: unsigned bytewise; on a common prefix, prefix_order (docs/FORMAT.md §1.1).
/// Returns <0, 0, >0.
inline int compare_keys(std::span<const uint8_t> a, std::span<const uint8_t> b, bool descending) {
  const size_t n = std::min(a.size(), b.size());
  const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c < 0 ? -1 : 1;
  return prefix_order(a.size(), b.size(), descending);
}

/// The NULL key of a single-segment index: empty ascending, the single byte FF descending.
inline std::vector<uint8_t> null_key(bool descending) {
  return descending ? std::vector<uint8_t>{0xFF} : std::vector<uint8_t>{};
}
/// True if `key` is the NULL key (see null_key).
inline bool is_null_key(std::span<const uint8_t> key, bool descending) {
  return descending ? (key.size() == 1 && key[0] == 0xFF) : key.empty();
}

/// Entry order of an index: compare_keys, then the record number as the tie-break.
inline int compare_entry(std::span<const uint8_t> a, uint64_t ra, std::span<const uint8_t> b,
                         uint64_t rb, bool descending) {
  const int c = compare_keys(a, b, descending);
  if (c != 0) return c;
  return ra < rb ? -1 : (ra > rb ? 1 : 0);
}

/// Decodes a stored single-segment key back to the text parse_value() reads ("NULL" for the
/// NULL key). Exact formats give exact text (numeric keeps S fraction digits); Double gives
/// the shortest round-trip text; Text gives the bytes with trailing spaces cut.
/// Throws KeyError on bytes that no value encodes to (corrupt key).
std::string key_to_text(const TypeSpec& type, KeyFormat format, bool descending,
                        std::span<const uint8_t> key);

/// Decodes the single-segment key `key` of `type` in `format` (descending as stored) into
/// the Value build_key() turns back into exactly these bytes: NULL for the NULL key (empty
/// ascending, FF descending), Exact (coefficient, scale = the column scale) for smallint,
/// integer, bigint, int128 and numeric, Double for double, Text for varchar. A Text value
/// points into `storage`, which must outlive it (other kinds leave `storage` unspecified).
/// Throws KeyError on bytes that no value of `type` encodes to (a corrupt key).
Value key_to_value(const TypeSpec& type, KeyFormat format, bool descending,
                   std::span<const uint8_t> key, std::string& storage);

}  // namespace pbtree
