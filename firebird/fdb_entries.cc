// for_each_fdb_entry (a leaf walk over Firebird b-tree pages with node/btree_page.h's node
// codec, which is Firebird's ODS 12 node format) and fdb_key_type (src/jrd/dfw.epp
// DFW_assign_index_type, Firebird 3: which idx_itype each column type gets).
#include "firebird/fdb_entries.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <vector>

#include "node/btree_page.h"
#include "node/node.h"

namespace pbtree::firebird {

void for_each_fdb_entry(const FdbFile& file, const FdbIndex& index,
                        const std::function<void(std::span<const uint8_t>, uint64_t)>& fn) {
  if (index.root_page == 0) return;
  const uint32_t ps = file.page_size();
  std::vector<uint8_t> page(ps);
  std::vector<bool> visited(file.page_count(), false);
  auto load = [&](uint32_t p) {
    if (p >= file.page_count())
      file.fail(p, FdbPage::Btree, "page number beyond the end of the file");
    if (visited[p]) file.fail(p, FdbPage::Btree, "reached twice (sibling or child loop)");
    visited[p] = true;
    file.read_page(p, FdbPage::Btree, page.data());
    try {
      return check_btree_header(page.data(), ps);
    } catch (const CorruptError& e) {
      throw CorruptError(fmt::format("{}: {}", file.path(), e.what()));
    }
  };
  uint32_t p = index.root_page;
  BtreeHeader h = load(p);
  try {
    while (h.level > 0) {
      const uint8_t level = h.level;
      IndexNode n = decode_node(page.data(), h.length, kBtreeHeaderSize + h.jump_size, false);
      if (n.is_marker()) file.fail(p, FdbPage::Btree, "non-leaf page without nodes");
      p = n.page_number;
      h = load(p);
      if (h.level + 1 != level) {
        file.fail(p, FdbPage::Btree, fmt::format("level {} below a level-{} page", h.level, level));
      }
    }
    std::vector<uint8_t> key;
    for (;;) {
      uint32_t pos = kBtreeHeaderSize + h.jump_size;
      bool first = true;
      IndexNode n;
      for (;;) {
        n = decode_node(page.data(), h.length, pos, true);
        if (n.is_marker()) break;
        if (first && n.prefix != 0) file.fail(p, FdbPage::Btree, "first node has a prefix");
        if (n.prefix > key.size()) {
          file.fail(p, FdbPage::Btree,
                    fmt::format("node at offset {}: prefix {} exceeds previous key length {}",
                                n.offset, n.prefix, key.size()));
        }
        key.resize(n.prefix);
        key.insert(key.end(), n.data, n.data + n.length);
        fn(key, n.recno);
        first = false;
        pos = n.end();
      }
      if (n.is_end_level()) break;
      if (h.sibling == 0)
        file.fail(p, FdbPage::Btree, "END_BUCKET on a page without right sibling");
      p = h.sibling;
      h = load(p);
      if (h.level != 0)
        file.fail(p, FdbPage::Btree, fmt::format("level {} on the leaf level", h.level));
    }
  } catch (const CorruptError& e) {
    const std::string what = e.what();
    if (what.rfind(file.path() + ":", 0) == 0) throw;
    throw CorruptError(fmt::format("{}: {}", file.path(), what));
  }
}

namespace {

// RDB$CHARACTER_SETS ids of the common character sets (src/intl/charsets.h).
std::string charset_name(int id) {
  switch (id) {
    case 0:
      return "NONE";
    case 1:
      return "OCTETS";
    case 2:
      return "ASCII";
    case 3:
      return "UNICODE_FSS";
    case 4:
      return "UTF8";
    case 21:
      return "ISO8859_1";
    case 51:
      return "WIN1250";
    case 52:
      return "WIN1251";
    case 53:
      return "WIN1252";
    default:
      return fmt::format("{}", id);
  }
}

}  // namespace

std::optional<FdbKeyType> fdb_key_type(const FdbIndex& index, std::string& why) {
  if (index.expression) {
    why = "n/a: expression index (its keys are values of the expression, not of a column)";
    return std::nullopt;
  }
  if (index.segments.size() != 1) {
    why = fmt::format("n/a: compound index ({} segments)", index.segments.size());
    return std::nullopt;
  }
  const FdbSegment& s = index.segments[0];
  const int scale = -s.scale;
  auto numeric = [&](int default_precision) {
    TypeSpec t;
    t.type = ColumnType::Numeric;
    t.precision = static_cast<uint8_t>(s.precision > 0 ? s.precision : default_precision);
    t.scale = static_cast<uint8_t>(scale);
    return t;
  };
  auto simple = [](ColumnType c) {
    TypeSpec t;
    t.type = c;
    return t;
  };
  std::optional<FdbKeyType> out;
  const bool scaled = scale > 0 || s.field_sub_type == 1 || s.field_sub_type == 2;
  // RDB$FIELD_TYPE codes (blr_*): 7 smallint, 8 integer, 16 bigint, 26 int128, 27 double,
  // 10 float, 24/25 decfloat(16/34), 12 date, 13 time, 35 timestamp, 28/29 time/timestamp
  // with time zone, 23 boolean, 14 char, 37 varchar. Key types: DFW_assign_index_type.
  switch (s.field_type) {
    case 7:
      if (s.itype == 0)
        out = FdbKeyType{scaled ? numeric(4) : simple(ColumnType::Smallint), KeyFormat::Double};
      break;
    case 8:
      if (s.itype == 0)
        out = FdbKeyType{scaled ? numeric(9) : simple(ColumnType::Integer), KeyFormat::Double};
      break;
    case 16:
      if (s.itype == 8)
        out = FdbKeyType{scaled ? numeric(18) : simple(ColumnType::Bigint),
                         KeyFormat::RescaledDouble};
      break;
    case 26:  // INT128 and NUMERIC(19..38): idx_decimal on ODS 13.0, idx_bcd on 13.1
      if (s.itype == 13)
        out = FdbKeyType{scaled ? numeric(38) : simple(ColumnType::Int128), KeyFormat::Bcd};
      if (s.itype == 10) {  // Firebird 4.0: rounded to 34 digits, decoded to int128 values
        out = FdbKeyType{scaled ? numeric(38) : simple(ColumnType::Int128), KeyFormat::Decimal128};
        out->as_stored = true;
      }
      break;
    case 27:
      if (s.itype == 0 && scale == 0)
        out = FdbKeyType{simple(ColumnType::Double), KeyFormat::Double};
      break;
    case 14:
    case 37:
      if (s.itype != 1) {
        why = s.itype >= 64
                  ? fmt::format(
                        "n/a: {} in character set {} with a collation: its keys are sort "
                        "keys that do not decode back to values",
                        s.field_type == 14 ? "CHAR" : "VARCHAR", charset_name(s.charset))
                  : fmt::format(
                        "n/a: {} in character set {} (key type {}): pbtree's varchar is "
                        "character set NONE",
                        s.field_type == 14 ? "CHAR" : "VARCHAR", charset_name(s.charset), s.itype);
        return std::nullopt;
      }
      if (s.itype == 1) {
        TypeSpec t;
        t.type = ColumnType::Varchar;
        t.length = static_cast<uint16_t>(std::max<int>(s.length, 1));
        out = FdbKeyType{t, KeyFormat::Text};
      }
      break;
    case 24:
    case 25:
      if (s.itype == 10) {  // numeric(34) only stands in for the key length (17 bytes)
        TypeSpec t;
        t.type = ColumnType::Numeric;
        t.precision = 34;
        out = FdbKeyType{t, KeyFormat::Decimal128};
        out->as_stored = true;
        out->decfloat = fmt::format("decfloat({})", s.field_type == 24 ? 16 : 34);
      }
      break;
    case 10:
    case 12:
    case 13:
    case 35:
    case 28:
    case 29:
    case 23:
      why = fmt::format("n/a: {} keys have no pbtree column type to decode them into",
                        s.field_type == 10   ? "FLOAT"
                        : s.field_type == 12 ? "DATE"
                        : s.field_type == 13 ? "TIME"
                        : s.field_type == 35 ? "TIMESTAMP"
                        : s.field_type == 28 ? "TIME WITH TIME ZONE"
                        : s.field_type == 29 ? "TIMESTAMP WITH TIME ZONE"
                                             : "BOOLEAN");
      return std::nullopt;
    default:
      break;
  }
  if (out && out->type.type == ColumnType::Numeric &&
      (out->type.precision < 1 || out->type.precision > 38 ||
       out->type.scale > out->type.precision)) {
    out.reset();
  }
  if (!out)
    why = fmt::format("n/a: column type {} with key type {} not decodable", s.field_type, s.itype);
  return out;
}

}  // namespace pbtree::firebird
