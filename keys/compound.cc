// Compound-index rules on top of the key codecs: the definition-time key-size limit of a
// multi-segment index (IDX_create_index, src/jrd/idx.cpp), splitting a stored compound key
// (docs/FORMAT.md §1.4) back into its segments, the uniqueness exemption of keys with a NULL
// segment, and the compound form of key_value_text.
#include <fmt/format.h>
#include <pbtree/keys.h>
#include <pbtree/types.h>

#include "util/bytes.h"

namespace pbtree {

namespace {

std::vector<IndexSegment> all_segments(const IndexDefinition& def) {
  if (!def.segments.empty()) return def.segments;
  return {IndexSegment{def.type, def.format}};
}

std::string segment_type_list(const IndexDefinition& def) {
  std::string s;
  for (const IndexSegment& g : all_segments(def)) {
    if (!s.empty()) s += ", ";
    s += g.type.name();
  }
  return s;
}

bool segment_is_null(std::span<const uint8_t> k, bool descending) {
  return is_null_key(k, descending);
}

}  // namespace

size_t definition_max_key_length(const IndexDefinition& def) {
  if (!def.compound()) {
    return max_key_length(def.type, resolve_key_format(def.type, def.format), def.descending);
  }
  size_t total = 0;
  const size_t desc = def.descending ? 1 : 0;
  for (const IndexSegment& g : def.segments) {
    const size_t len = max_key_length(g.type, resolve_key_format(g.type, g.format), false);
    total += (len + desc + 3) / 4 * 5;
  }
  return total;
}

void check_definition_key_limit(const IndexDefinition& def, uint32_t page_size) {
  if (def.segments.size() > kMaxIndexSegments) {
    throw KeyError(fmt::format("an index has at most {} segments, not {}", kMaxIndexSegments,
                               def.segments.size()));
  }
  if (!def.compound()) {
    check_index_key_limit(def.type, resolve_key_format(def.type, def.format), def.descending,
                          page_size);
    return;
  }
  const size_t max_len = definition_max_key_length(def);  // nullInd = 0: compound
  const size_t rounded = (max_len + 7) / 8 * 8;
  if (rounded >= page_size / 4) {
    throw KeyError(fmt::format(
        "key size exceeds implementation restriction for a{} index on ({}): keys up to {} "
        "bytes, rounded up to {}, must be below page_size/4 = {} bytes (page size {})",
        def.descending ? " descending" : "n ascending", segment_type_list(def), max_len, rounded,
        page_size / 4, page_size));
  }
}

// Layout (docs/FORMAT.md §1.4): for segment i of N, 4-byte chunks each behind the marker N - i;
// every segment but the last zero-padded to a full chunk; an ascending NULL segment writes nothing;
// the whole key inverted if descending. A segment's own key never ends in 00 (trailing zeros /
// spaces are stripped), so the zeros at the end of its last chunk are padding; the descending NULL
// segment (00 before inversion) loses all of them.
std::optional<std::vector<std::vector<uint8_t>>> split_compound_key(const IndexDefinition& def,
                                                                    std::span<const uint8_t> key) {
  const size_t n = def.segment_count();
  const bool desc = def.descending;
  if (n == 1) return std::vector<std::vector<uint8_t>>{{key.begin(), key.end()}};
  std::vector<uint8_t> k(key.begin(), key.end());
  if (desc) {
    for (uint8_t& b : k) b = static_cast<uint8_t>(~b);
  }
  std::vector<std::vector<uint8_t>> out(n);
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t marker = static_cast<uint8_t>(n - i);
    std::vector<uint8_t>& seg = out[i];
    bool present = false;
    size_t last_chunk = 0;
    while (pos < k.size() && k[pos] == marker) {
      present = true;
      const size_t chunk = std::min<size_t>(4, k.size() - pos - 1);
      if (chunk == 0) return std::nullopt;
      last_chunk = seg.size();
      seg.insert(seg.end(), k.begin() + pos + 1, k.begin() + pos + 1 + chunk);
      pos += 1 + chunk;
      if (chunk < 4 && pos != k.size()) return std::nullopt;
    }
    if (pos < k.size() && k[pos] > marker) return std::nullopt;
    if (present) {
      while (seg.size() > last_chunk && seg.back() == 0) seg.pop_back();
    }
    if (desc) {
      if (!present) return std::nullopt;  // a descending segment always writes a chunk
      if (seg.empty()) seg.push_back(0);  // the descending NULL segment
      for (uint8_t& b : seg) b = static_cast<uint8_t>(~b);
    }
  }
  if (pos != k.size()) return std::nullopt;
  return out;
}

bool key_exempt_from_unique(const IndexDefinition& def, std::span<const uint8_t> key) {
  if (!def.compound()) return is_null_key(key, def.descending);
  const auto parts = split_compound_key(def, key);
  if (!parts) return false;
  for (const auto& p : *parts) {
    if (segment_is_null(p, def.descending)) return true;
  }
  return false;
}

std::optional<std::vector<Value>> compound_key_values(const IndexDefinition& def,
                                                      std::span<const uint8_t> key,
                                                      std::vector<std::string>& storage) {
  const auto parts = split_compound_key(def, key);
  if (!parts) return std::nullopt;
  const std::vector<IndexSegment> segs = all_segments(def);
  storage.assign(segs.size(), std::string());
  std::vector<Value> values(segs.size());
  try {
    std::vector<Segment> build(segs.size());
    for (size_t i = 0; i < segs.size(); ++i) {
      const KeyFormat f = resolve_key_format(segs[i].type, segs[i].format);
      values[i] = key_to_value(segs[i].type, f, def.descending, (*parts)[i], storage[i]);
      build[i] = Segment{&segs[i].type, f, values[i]};
    }
    KeyBuffer kb;
    build_compound_key(build, def.descending, kb);
    if (!std::equal(key.begin(), key.end(), kb.data, kb.data + kb.length) ||
        kb.length != key.size()) {
      return std::nullopt;
    }
  } catch (const KeyError&) {
    return std::nullopt;
  }
  return values;
}

std::optional<std::vector<std::string>> key_segment_texts(const IndexDefinition& def,
                                                          std::span<const uint8_t> key) {
  const std::vector<IndexSegment> segs = all_segments(def);
  std::vector<std::string> storage;
  if (def.compound() && !compound_key_values(def, key, storage)) return std::nullopt;
  const auto parts = split_compound_key(def, key);
  if (!parts) return std::nullopt;
  std::vector<std::string> texts;
  try {
    for (size_t i = 0; i < segs.size(); ++i) {
      texts.push_back(key_to_text(segs[i].type, resolve_key_format(segs[i].type, segs[i].format),
                                  def.descending, (*parts)[i]));
    }
  } catch (const KeyError&) {
    return std::nullopt;
  }
  return texts;
}

}  // namespace pbtree
