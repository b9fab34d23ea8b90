// TypedIndex: keys from typed values under one index's type, format and direction (see
// <pbtree/typed_index.h>).
#include <fmt/format.h>
#include <pbtree/typed_index.h>

#include <algorithm>

#include "btree/btree.h"
#include "file/index_cursor_state.h"
#include "file/index_file_access.h"
#include "file/value_check.h"
#include "util/bytes.h"

namespace pbtree {

IndexCursor::IndexCursor(std::unique_ptr<State> state) : state_(std::move(state)) {}
IndexCursor::IndexCursor(IndexCursor&&) noexcept = default;
IndexCursor& IndexCursor::operator=(IndexCursor&&) noexcept = default;
IndexCursor::~IndexCursor() = default;
bool IndexCursor::valid() const {
  return state_ && state_->cursor.valid();
}
std::span<const uint8_t> IndexCursor::key() const {
  return state_->cursor.key();
}
uint64_t IndexCursor::record_number() const {
  return state_->cursor.record_number();
}
uint32_t IndexCursor::page_number() const {
  return state_->cursor.page_number();
}
uint32_t IndexCursor::node_offset() const {
  return state_->cursor.node_offset();
}
void IndexCursor::next() {
  state_->cursor.next();
}

TypedIndex::TypedIndex(IndexFile& file, const std::string& name) : file_(file) {
  auto info = file.find_index(name);
  if (!info) throw file.no_index_error(name);
  info_ = *info;
  tree_ = IndexFileAccess::body(file.tree(name));
}

Value TypedIndex::parse(std::string_view text) const {
  try {
    return parse_value(info_.def.type, text);
  } catch (const KeyError& e) {
    throw WrongTypeError(fmt::format("{}: index {} ({}): {}", file_.path(), info_.def.name,
                                     info_.def.type.name(), e.what()));
  }
}

std::vector<uint8_t> TypedIndex::key_of(const Value& value) const {
  if (info_.def.compound()) return key_of(std::span<const Value>(&value, 1));  // count error
  KeyBuffer k;
  try {
    if (value.kind == Value::Kind::Text && info_.def.type.type != ColumnType::Varchar) {
      throw KeyError(
          fmt::format("text value '{}' for a {} index", value.text, info_.def.type.name()));
    }
    if (value.kind != Value::Kind::Text && value.kind != Value::Kind::Null &&
        info_.def.type.type == ColumnType::Varchar) {
      throw KeyError("a number for a varchar index");
    }
    build_key(info_.def.type, info_.def.format, value, info_.def.descending, k);
  } catch (const KeyError& e) {
    throw WrongTypeError(fmt::format("{}: index {} ({}): {}", file_.path(), info_.def.name,
                                     info_.def.type.name(), e.what()));
  }
  return {k.bytes().begin(), k.bytes().end()};
}

std::string TypedIndex::value_text(std::span<const uint8_t> key) const {
  if (info_.def.compound()) return key_value_text(info_.def, key);  // "(v1, v2)"
  return key_to_text(info_.def.type, info_.def.format, info_.def.descending, key);
}

void TypedIndex::insert(const Value& value, uint64_t recno) {
  const std::vector<uint8_t> key = key_of(value);
  try {
    check_value_of_type(info_.def.type, value);  // what verify would reject is not stored
  } catch (const KeyError& e) {
    throw WrongTypeError(fmt::format("{}: index {} ({}): {}", file_.path(), info_.def.name,
                                     info_.def.type.name(), e.what()));
  }
  try {
    tree_->insert(key, recno);
  } catch (const DuplicateKeyError& e) {
    // The tree shows the value as the CLI does; add the file.
    throw DuplicateKeyError(fmt::format("{}: {}", file_.path(), e.what()), e.index, e.value,
                            e.record_number, e.tag_a, e.tag_b);
  }
}

void TypedIndex::remove(const Value& value, uint64_t recno) {
  tree_->remove(key_of(value), recno);
}

std::vector<uint64_t> TypedIndex::find(const Value& value) const {
  return tree_->find(key_of(value));
}

IndexCursor TypedIndex::scan(std::optional<Value> from, std::optional<Value> to) const {
  ScanRange range;
  std::optional<KeyBound> low, high;
  if (from) low = KeyBound{key_of(*from), true};
  if (to) high = KeyBound{key_of(*to), true};
  if (info_.def.descending) {
    // Index order is descending value order: ascending values means walking backward, and
    // the low value bounds the upper end.
    range.lower = high;
    range.upper = low;
    range.backward = true;
  } else {
    range.lower = low;
    range.upper = high;
  }
  return IndexCursor(
      std::make_unique<IndexCursor::State>(IndexCursor::State{tree_->scan(std::move(range))}));
}

void TypedIndex::insert_key(std::span<const uint8_t> key, uint64_t recno) {
  if (info_.def.compound()) {
    // Split into one value per segment and rebuilt: the same bytes, or refused.
    std::vector<std::string> storage;
    std::optional<std::vector<Value>> values;
    try {
      values = compound_key_values(info_.def, key, storage);
    } catch (const KeyError&) {
      values.reset();
    }
    const std::vector<uint8_t> again = values ? key_of(*values) : std::vector<uint8_t>{};
    if (!values || !std::equal(again.begin(), again.end(), key.begin(), key.end())) {
      throw WrongTypeError(
          fmt::format("{}: index {}: key {} is not a key of this index's segments and direction",
                      file_.path(), info_.def.name, hex_bytes(key)));
    }
    insert(*values, recno);
    return;
  }
  std::string text;
  try {
    text = value_text(key);
  } catch (const KeyError& e) {
    throw WrongTypeError(fmt::format(
        "{}: index {}: key {} is not a {} key in format {}: {}", file_.path(), info_.def.name,
        hex_bytes(key), info_.def.type.name(), key_format_name(info_.def.format), e.what()));
  }
  const std::vector<uint8_t> again = text == "NULL" ? key_of(Value::null()) : key_of(parse(text));
  if (!std::equal(again.begin(), again.end(), key.begin(), key.end())) {
    throw WrongTypeError(fmt::format(
        "{}: index {}: key {} decodes to {} but that value's key is {} (another type, format "
        "or direction)",
        file_.path(), info_.def.name, hex_bytes(key), text, hex_bytes(again)));
  }
  tree_->insert(key, recno);
}

}  // namespace pbtree
