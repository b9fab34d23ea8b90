// The CLI's side of compound indexes (issue 12): reading several CSV columns into compound
// keys, the positional value tokens of find / scan / insert / delete (NULL is IS NULL, a
// leading '=' is dropped once so '=NULL' is the text NULL), and the leading-segment search
// they make (file/compound_search.h).
#pragma once

#include <pbtree/index_file.h>
#include <pbtree/search.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "file/compound_search.h"
#include "tools/csv_reader.h"
#include "tools/loader.h"

namespace pbtree::tools {

/// A positional value token: nullopt for the token NULL; else the text, one leading '='
/// removed.
std::optional<std::string> value_token(const std::string& token);

/// The single-segment definition of segment `i` of `def` (its type and format, def's
/// direction), for <pbtree/search.h>'s conversions.
IndexDefinition segment_definition(const IndexDefinition& def, size_t i);

/// The full key of an entry: exactly one token per segment (parse_value, strict: as `load`
/// reads values). Throws ArgumentError on a wrong count, KeyError on a bad value.
std::vector<uint8_t> entry_key_of_tokens(const IndexDefinition& def,
                                         const std::vector<std::string>& tokens);

/// The search of `find` / `scan`: equality on one leading segment per token (converted as
/// equality_key() does; nullopt if a value no segment value can equal makes it empty), the
/// scan bounds of `request` on the next segment. Throws ArgumentError (too many values, a
/// bound with every segment given, --starting-with on a segment that is not varchar).
std::optional<LeadingSearch> leading_search_of(const IndexDefinition& def,
                                               const std::vector<std::string>& tokens,
                                               const ScanRequest* request);

/// Each segment's text of a stored key (key_segment_texts; the hex bytes if it does not
/// decode).
std::vector<std::string> segment_texts(const IndexDefinition& def, std::span<const uint8_t> key);

/// `--explain`: the plan's ends in hex and the entries examined, as lines for stderr:
///   plan: lower 02 55 53 00 00 (inclusive), upper 02 55 53 00 00 02 (exclusive), forward
///   examined: 12 entries
std::string explain_text(const LeadingPlan& plan, uint64_t examined);

}  // namespace pbtree::tools
