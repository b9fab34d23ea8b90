// check_value_of_type (file/value_check.h): a Value checked against a declared column type
// through parse_value's rules, on the value's exact text.
#include "file/value_check.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace pbtree {

namespace {

// The decimal text of coefficient * 10^-scale ("-1.230" for (-1230, 3)).
std::string exact_text(__int128 coefficient, unsigned scale) {
  const bool negative = coefficient < 0;
  unsigned __int128 m =
      negative ? static_cast<unsigned __int128>(0) - static_cast<unsigned __int128>(coefficient)
               : static_cast<unsigned __int128>(coefficient);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  if (scale > 0) {
    if (digits.size() <= scale) digits.insert(0, scale + 1 - digits.size(), '0');
    digits.insert(digits.size() - scale, 1, '.');
  }
  return negative ? "-" + digits : digits;
}

bool integral_type(const TypeSpec& type) {
  return type.type == ColumnType::Smallint || type.type == ColumnType::Integer ||
         type.type == ColumnType::Bigint || type.type == ColumnType::Int128;
}

}  // namespace

void check_value_of_type(const TypeSpec& type, const Value& value) {
  switch (value.kind) {
    case Value::Kind::Null:
      return;
    case Value::Kind::Text:
      (void)parse_value(type, value.text);  // varchar: the length; other types: its syntax
      return;
    case Value::Kind::Exact: {
      std::string text = exact_text(value.coefficient, value.scale);
      if (integral_type(type) && value.scale > 0) {
        // 2.00 is the integer 2: only a fraction that is not zero is refused.
        const size_t dot = text.find('.');
        if (text.find_first_not_of('0', dot + 1) == std::string::npos) text.resize(dot);
      }
      if (type.type != ColumnType::Double) (void)parse_value(type, text);
      return;
    }
    case Value::Kind::Double: {
      const double d = value.dbl;
      if (type.type == ColumnType::Double || type.type == ColumnType::Varchar) return;
      if (!std::isfinite(d)) {
        throw KeyError(fmt::format("value {} is not a {} value", d, type.name()));
      }
      // The double must be the one nearest to a value of the type (12.55 for numeric(9,2),
      // whose key is that double's): the nearest decimal of the type's scale, read back.
      const int scale = type.type == ColumnType::Numeric ? type.scale : 0;
      const double scaled = std::nearbyint(d * std::pow(10.0, scale));
      if (std::fabs(scaled) >= 0x1p126) {
        throw KeyError(fmt::format("value {} out of range for {}", d, type.name()));
      }
      const std::string text =
          exact_text(static_cast<__int128>(scaled), static_cast<unsigned>(scale));
      if (std::strtod(text.c_str(), nullptr) != d) {
        throw KeyError(fmt::format("value {} is not a {} value", d, type.name()));
      }
      (void)parse_value(type, text);
      return;
    }
  }
}

}  // namespace pbtree
