// TypedIndex (<pbtree/typed_index.h>): keys built from typed values with the index's own type,
// format and direction; value-order scans of descending indexes; wrongly built keys and
// wrong-typed values refused (issue 9 item 6).
#include <gtest/gtest.h>
#include <pbtree/typed_index.h>

#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

std::unique_ptr<IndexFile> file_with(const std::string& path, const std::string& type,
                                     bool descending) {
  auto f = IndexFile::open_or_create(path, 8192);
  IndexDefinition def;
  def.name = "I";
  def.type = TypeSpec::parse(type);
  def.format = default_key_format(def.type);
  def.unique = true;
  def.descending = descending;
  f->create_index(def);
  return f;
}

std::vector<std::string> values_of(TypedIndex& index, std::optional<Value> from,
                                   std::optional<Value> to) {
  std::vector<std::string> out;
  for (IndexCursor c = index.scan(from, to); c.valid(); c.next())
    out.push_back(index.value_text(c.key()));
  return out;
}

TEST(FileTypedIndex, InsertAndFindByValue) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "bigint", false);
  TypedIndex index(*f, "I");
  index.insert(Value::exact(-5), 7);
  index.insert("12", 8);
  EXPECT_EQ(index.find("-5"), std::vector<uint64_t>{7});
  EXPECT_EQ(index.find(Value::exact(12)), std::vector<uint64_t>{8});
  EXPECT_EQ(index.find("13"), std::vector<uint64_t>{});
}

TEST(FileTypedIndex, DescendingIndexScansInValueOrderWithBoundsInValueOrder) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "integer", true);
  TypedIndex index(*f, "I");
  for (int v = 1; v <= 9; ++v) index.insert(Value::exact(v), static_cast<uint64_t>(v));
  EXPECT_EQ(values_of(index, Value::exact(3), Value::exact(6)),
            (std::vector<std::string>{"3", "4", "5", "6"}));
  EXPECT_EQ(values_of(index, std::nullopt, Value::exact(2)), (std::vector<std::string>{"1", "2"}));
}

TEST(FileTypedIndex, UniqueViolationShowsTheValueAsTheCliPrintsIt) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "bigint", false);
  TypedIndex index(*f, "I");
  index.insert("-5", 1000001);
  try {
    index.insert("-5", 3);
    FAIL() << "duplicate accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              tmp.path() + ": unique index I: value -5 already exists (record 1000001)");
  }
}

TEST(FileTypedIndex, WrongTypedValueIsRefused) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "bigint", false);
  TypedIndex index(*f, "I");
  EXPECT_THROW(index.insert(Value::of_double(1.5), 1), WrongTypeError);
  EXPECT_THROW(index.insert(Value::of_text("abc"), 1), WrongTypeError);
  EXPECT_THROW(index.insert("x1", 1), WrongTypeError);
  EXPECT_EQ(btree_of(*f, "I").verify().entries, 0u);
}

TEST(FileTypedIndex, RawKeyOfAnotherFormatIsRefused) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "bigint", false);
  TypedIndex index(*f, "I");
  const TypeSpec dbl = TypeSpec::parse("double");
  KeyBuffer k;
  build_key(dbl, KeyFormat::Double, Value::of_double(-500.0), false, k);
  try {
    index.insert_key(k.bytes(), 1);
    FAIL() << "key of another format accepted";
  } catch (const WrongTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("index I: key "), std::string::npos) << e.what();
  }
  EXPECT_EQ(btree_of(*f, "I").verify().entries, 0u);
}

TEST(FileTypedIndex, RawKeyWithTheWrongDescendingFlagIsRefused) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "bigint", false);
  TypedIndex index(*f, "I");
  const TypeSpec type = TypeSpec::parse("bigint");
  KeyBuffer k;
  build_key(type, default_key_format(type), Value::exact(20), true, k);
  EXPECT_THROW(index.insert_key(k.bytes(), 1), WrongTypeError);
  EXPECT_EQ(btree_of(*f, "I").verify().entries, 0u);
}

TEST(FileTypedIndex, RawKeyBuiltForTheIndexIsAccepted) {
  TempPath tmp;
  auto f = file_with(tmp.path(), "bigint", false);
  TypedIndex index(*f, "I");
  index.insert_key(index.key_of(Value::exact(20)), 4);
  EXPECT_EQ(index.find("20"), std::vector<uint64_t>{4});
}

}  // namespace
}  // namespace pbtree
