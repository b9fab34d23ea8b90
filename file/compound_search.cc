// Leading-segment search plans and the counting scan (design at the top of
// file/compound_search.h).
#include "file/compound_search.h"

#include <fmt/format.h>
#include <pbtree/errors.h>
#include <pbtree/keys.h>

namespace pbtree {

namespace {

using Bytes = std::vector<uint8_t>;

void invert(Bytes& b) {
  for (uint8_t& x : b) x = static_cast<uint8_t>(~x);
}

// Appends segment i's U-space key `seg` (already uninverted) as marker-led 4-byte chunks.
void append_chunks(Bytes& out, std::span<const uint8_t> seg, uint8_t marker) {
  for (size_t off = 0; off < seg.size(); off += 4) {
    out.push_back(marker);
    const size_t n = std::min<size_t>(4, seg.size() - off);
    out.insert(out.end(), seg.begin() + off, seg.begin() + off + n);
  }
}

void pad(Bytes& out, size_t last_len) {
  if (last_len % 4 != 0) out.insert(out.end(), 4 - last_len % 4, 0);
}

struct Composer {
  size_t n;
  bool desc;
  Bytes out;
  size_t last = 0;  // length of the last segment written
  size_t count = 0;
  // Single-segment key (index direction) -> U-space segment bytes.
  Bytes u(std::span<const uint8_t> key) const {
    Bytes b(key.begin(), key.end());
    if (desc) invert(b);
    return b;
  }
  void add(std::span<const uint8_t> key) {
    if (count > 0) pad(out, last);
    const Bytes b = u(key);
    append_chunks(out, b, static_cast<uint8_t>(n - count));
    last = b.size();
    ++count;
  }
};

// Smallest byte string greater than every string that starts with `p` (nullopt: none).
std::optional<Bytes> prefix_successor(Bytes p) {
  while (!p.empty() && p.back() == 0xFF) p.pop_back();
  if (p.empty()) return std::nullopt;
  ++p.back();
  return p;
}

}  // namespace

LeadingPlan plan_leading_search(const IndexDefinition& def, const LeadingSearch& s) {
  const size_t n = def.segment_count();
  const bool desc = def.descending;
  const size_t k = s.equal.size();
  const bool bounded = s.from || s.to || s.starting_with || s.not_null;
  if (k > n) {
    throw UsageError(fmt::format("{} values given for index {} of {} segment{}", k, def.name, n,
                                 n == 1 ? "" : "s"));
  }
  if (k == n && bounded) {
    throw UsageError(
        fmt::format("every segment of index {} has a value: no segment is left "
                    "for a bound",
                    def.name));
  }
  if (k == 0 && !bounded) {  // the whole index
    LeadingPlan plan;
    plan.backward = s.value_descending != desc;
    return plan;
  }
  // U-space range [lo, hi] (nullopt: open).
  std::optional<KeyBound> lo, hi;
  Composer c{n, desc, {}, 0, 0};
  for (const Bytes& e : s.equal) c.add(e);
  if (n == 1) {
    // One segment: U keys are the segment keys themselves.
    if (k == 1) {
      lo = KeyBound{c.u(s.equal[0]), true};
      hi = lo;
    } else {
      // Non-NULL: ascending NULL is the empty key (below every other); descending NULL is
      // 00 in U (every other key starts with a byte >= 01, the escape).
      if (desc) {
        lo = KeyBound{Bytes{0x01}, true};
      } else {
        lo = KeyBound{Bytes{0x00}, true};
      }
      if (s.from) lo = KeyBound{c.u(s.from->key), s.from->inclusive};
      if (s.to) hi = KeyBound{c.u(s.to->key), s.to->inclusive};
      if (s.starting_with) {
        Bytes p = *s.starting_with;
        if (desc && !p.empty() && p[0] <= 1) p.insert(p.begin(), 1);
        if (!p.empty()) {
          if (compare_keys(p, lo->key, false) > 0) lo = KeyBound{p, true};
          if (auto succ = prefix_successor(p)) {
            if (!hi || compare_keys(*succ, hi->key, false) <= 0) hi = KeyBound{*succ, false};
          }
        }
      }
    }
  } else if (k == n) {  // every segment: one key
    lo = KeyBound{c.out, true};
    hi = lo;
  } else {
    Bytes p = c.out;
    if (k > 0) pad(p, c.last);
    const uint8_t m = static_cast<uint8_t>(n - k);
    Bytes end = p;
    end.push_back(static_cast<uint8_t>(m + 1));
    if (k > 0) hi = KeyBound{end, false};  // k = 0: marker n + 1 bounds nothing
    lo = KeyBound{p, true};
    if (bounded) {
      Bytes first = p;
      first.push_back(m);
      if (desc) first.push_back(0x01);
      lo = KeyBound{first, true};
    }
    auto with_value = [&](std::span<const uint8_t> key, bool padded_marker) {
      Composer v = c;
      if (v.count > 0) pad(v.out, v.last);
      v.last = 0;
      const Bytes b = v.u(key);
      append_chunks(v.out, b, m);
      if (padded_marker) {
        pad(v.out, b.size());
        v.out.push_back(m);
      }
      return v.out;
    };
    auto raise_lo = [&](const KeyBound& b) {
      const int cmp = compare_keys(b.key, lo->key, false);
      if (cmp > 0 || (cmp == 0 && !b.inclusive)) lo = b;
    };
    auto lower_hi = [&](const KeyBound& b) {
      if (!hi) {
        hi = b;
        return;
      }
      const int cmp = compare_keys(b.key, hi->key, false);
      if (cmp < 0 || (cmp == 0 && !b.inclusive)) hi = b;
    };
    if (s.from) {
      raise_lo(s.from->inclusive ? KeyBound{with_value(s.from->key, false), true}
                                 : KeyBound{with_value(s.from->key, true), true});
    }
    if (s.to) {
      lower_hi(s.to->inclusive ? KeyBound{with_value(s.to->key, true), false}
                               : KeyBound{with_value(s.to->key, false), false});
    }
    if (s.starting_with && !s.starting_with->empty()) {
      Bytes pk = *s.starting_with;
      if (desc && pk[0] <= 1) pk.insert(pk.begin(), 1);
      if (desc) invert(pk);  // with_value takes the index-direction key
      const Bytes start = with_value(pk, false);
      raise_lo(KeyBound{start, true});
      if (auto succ = prefix_successor(start)) lower_hi(KeyBound{*succ, false});
    }
  }
  LeadingPlan plan;
  if (lo && hi) {
    const int cmp = compare_keys(lo->key, hi->key, false);
    if (cmp > 0 || (cmp == 0 && !(lo->inclusive && hi->inclusive))) {
      plan.empty = true;
      return plan;
    }
  }
  if (!desc) {
    plan.lower = lo;
    plan.upper = hi;
  } else {
    if (hi) {
      plan.lower = hi;
      invert(plan.lower->key);
    }
    if (lo) {
      plan.upper = lo;
      invert(plan.upper->key);
    }
  }
  plan.backward = s.value_descending != desc;
  return plan;
}

uint64_t run_leading_plan(const BTree& tree, const LeadingPlan& plan,
                          const std::function<bool(std::span<const uint8_t>, uint64_t)>& entry) {
  if (plan.empty) return 0;
  const bool desc = tree.descending();
  ScanRange range;
  range.backward = plan.backward;
  if (plan.backward) {
    range.upper = plan.upper;
  } else {
    range.lower = plan.lower;
  }
  uint64_t examined = 0;
  for (Cursor c = tree.scan(range); c.valid(); c.next()) {
    ++examined;
    const std::span<const uint8_t> key = c.key();
    if (!plan.backward && plan.upper) {
      const int cmp = compare_keys(key, plan.upper->key, desc);
      if (cmp > 0 || (cmp == 0 && !plan.upper->inclusive)) break;
    }
    if (plan.backward && plan.lower) {
      const int cmp = compare_keys(key, plan.lower->key, desc);
      if (cmp < 0 || (cmp == 0 && !plan.lower->inclusive)) break;
    }
    if (!entry(key, c.record_number())) break;
  }
  return examined;
}

}  // namespace pbtree
