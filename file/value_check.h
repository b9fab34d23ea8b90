// The check TypedIndex makes before it stores a value (issue 30 item 11): a value the index's
// declared type cannot hold (8 bytes into varchar(5), 100000 into smallint, 1.5 into an
// integer) is refused, as load refuses its text, instead of being stored for verify to
// reject.
#pragma once

#include <pbtree/keys.h>

namespace pbtree {

/// Throws KeyError unless `value` is a value of `type`. Exact values and text are checked as
/// parse_value() checks their text ("value 100000 out of range for smallint
/// (-32768..32767)", "value of 8 bytes is too long for varchar(5)", "value '1.5' is not an
/// integer: ..."); a double given to an integer or numeric type must be one of its values
/// ("value 0.5 is not a smallint value"). NULL passes.
void check_value_of_type(const TypeSpec& type, const Value& value);

}  // namespace pbtree
