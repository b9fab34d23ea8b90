// TypedIndex refuses values its index's declared type cannot hold (issue 30 item 11): they
// would be stored and verify would reject them. And insert_key takes a valid compound key.
#include <gtest/gtest.h>
#include <pbtree/typed_index.h>

#include "file/index_file_access.h"
#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

std::unique_ptr<IndexFile> single(const std::string& path, const std::string& type) {
  auto f = IndexFile::open_or_create(path, 8192);
  IndexDefinition def;
  def.name = "I";
  def.type = TypeSpec::parse(type);
  def.format = default_key_format(def.type);
  f->create_index(def);
  return f;
}

// The message of what `insert` throws, which must be a WrongTypeError (a pbtree::Error).
template <typename F>
std::string wrong_type_message(F insert) {
  try {
    insert();
  } catch (const WrongTypeError& e) {
    const Error& base = e;
    return base.what();
  }
  return "nothing thrown";
}

TEST(FileTypedIndexTypeCheck, TextLongerThanTheVarcharIsRefused) {
  TempPath tmp;
  auto f = single(tmp.path(), "varchar(5)");
  TypedIndex ix(*f, "I");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::of_text("12345678"), 1); }),
            tmp.path() + ": index I (varchar(5)): value of 8 bytes is too long for varchar(5)");
  ix.insert(Value::of_text("12345"), 2);
  EXPECT_EQ(ix.find(Value::of_text("12345")), std::vector<uint64_t>{2});
  EXPECT_NO_THROW(btree_of(*f, "I").verify());
}

TEST(FileTypedIndexTypeCheck, IntegerOutsideSmallintIsRefused) {
  TempPath tmp;
  auto f = single(tmp.path(), "smallint");
  TypedIndex ix(*f, "I");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::exact(100000), 1); }),
            tmp.path() +
                ": index I (smallint): value 100000 out of range for smallint "
                "(-32768..32767)");
  ix.insert(Value::exact(-32768), 2);
  EXPECT_EQ(ix.find(Value::exact(-32768)), std::vector<uint64_t>{2});
}

TEST(FileTypedIndexTypeCheck, FractionInAnIntegerIsRefused) {
  TempPath tmp;
  auto f = single(tmp.path(), "integer");
  TypedIndex ix(*f, "I");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::exact(15, 1), 1); }),
            tmp.path() +
                ": index I (integer): value '1.5' is not an integer: integer takes "
                "whole numbers only");
  ix.insert(Value::exact(20, 1), 2);  // 2.0 is the integer 2
  EXPECT_EQ(ix.find(Value::exact(2)), std::vector<uint64_t>{2});
}

TEST(FileTypedIndexTypeCheck, NumericWithTooManyDigitsIsRefused) {
  TempPath tmp;
  auto f = single(tmp.path(), "numeric(4,2)");
  TypedIndex ix(*f, "I");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::exact(12345, 2), 1); }),
            tmp.path() +
                ": index I (numeric(4,2)): value 123.45 out of range for numeric(4,2): "
                "at most 2 digits before the decimal point");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::exact(1234, 3), 1); }),
            tmp.path() +
                ": index I (numeric(4,2)): value 1.234 has more than 2 fraction digits "
                "for numeric(4,2) (extra fraction digits must be zeros)");
  ix.insert(Value::exact(1230, 3), 2);  // 1.230 is 1.23
  EXPECT_EQ(ix.find(Value::exact(123, 2)), std::vector<uint64_t>{2});
}

TEST(FileTypedIndexTypeCheck, DoubleOutsideSmallintIsRefused) {
  TempPath tmp;
  auto f = single(tmp.path(), "smallint");
  TypedIndex ix(*f, "I");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::of_double(40000.0), 1); }),
            tmp.path() +
                ": index I (smallint): value 40000 out of range for smallint "
                "(-32768..32767)");
  EXPECT_EQ(wrong_type_message([&] { ix.insert(Value::of_double(0.5), 1); }),
            tmp.path() + ": index I (smallint): value 0.5 is not a smallint value");
  ix.insert(Value::of_double(7.0), 2);
  EXPECT_EQ(ix.find(Value::exact(7)), std::vector<uint64_t>{2});
}

TEST(FileTypedIndexTypeCheck, CompoundSegmentOutsideItsTypeIsRefused) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  IndexDefinition def;
  def.name = "C";
  for (const char* t : {"smallint", "varchar(2)"}) {
    const TypeSpec type = TypeSpec::parse(t);
    def.segments.push_back(IndexSegment{type, default_key_format(type)});
  }
  f->create_index(def);
  TypedIndex ix(*f, "C");
  EXPECT_EQ(wrong_type_message([&] {
              ix.insert(std::vector<Value>{Value::exact(1), Value::of_text("ABC")}, 1);
            }),
            tmp.path() + ": index C: segment 2: value of 3 bytes is too long for varchar(2)");
  EXPECT_EQ(wrong_type_message([&] {
              ix.insert(std::vector<Value>{Value::exact(70000), Value::of_text("A")}, 1);
            }),
            tmp.path() +
                ": index C: segment 1: value 70000 out of range for smallint "
                "(-32768..32767)");
  ix.insert(std::vector<Value>{Value::exact(1), Value::of_text("AB")}, 2);
  EXPECT_NO_THROW(btree_of(*f, "C").verify());
}

TEST(FileTypedIndexTypeCheck, InsertKeyTakesAValidCompoundKey) {
  TempPath tmp;
  auto f = IndexFile::open_or_create(tmp.path(), 8192);
  IndexDefinition def;
  def.name = "C";
  for (const char* t : {"integer", "varchar(5)"}) {
    const TypeSpec type = TypeSpec::parse(t);
    def.segments.push_back(IndexSegment{type, default_key_format(type)});
  }
  def.descending = true;
  f->create_index(def);
  TypedIndex ix(*f, "C");
  const std::vector<Value> v{Value::exact(1), Value::of_text("AB")};
  ix.insert_key(ix.key_of(v), 4);
  const std::vector<Value> n{Value::null(), Value::null()};
  ix.insert_key(ix.key_of(n), 5);
  EXPECT_EQ(ix.search(v).entries.size(), 1u);
  EXPECT_EQ(ix.search(n).entries.size(), 1u);
  // A key of another definition (ascending) is still refused.
  IndexDefinition asc = def;
  asc.descending = false;
  KeyBuffer k;
  std::vector<Segment> segs;
  for (size_t i = 0; i < 2; ++i)
    segs.push_back(Segment{&asc.segments[i].type, asc.segments[i].format, v[i]});
  build_compound_key(segs, false, k);
  EXPECT_THROW(ix.insert_key(k.bytes(), 6), WrongTypeError);
}

}  // namespace
}  // namespace pbtree
