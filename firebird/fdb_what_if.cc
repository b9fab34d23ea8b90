// fdb_what_if: Firebird leaf keys -> values (key_to_value, <pbtree/keys.h>) -> WhatIfEstimator.
// Legacy rescaled-double keys are passed on as bcd keys of the smallest value that gives them.
#include "firebird/fdb_what_if.h"

#include <fmt/format.h>
#include <pbtree/errors.h>
#include <pbtree/keys.h>

#include <optional>

#include "firebird/fdb_entries.h"

namespace pbtree::firebird {

namespace {

bool same(const KeyBuffer& a, std::span<const uint8_t> b) {
  auto x = a.bytes();
  return x.size() == b.size() && std::equal(x.begin(), x.end(), b.begin());
}

/// Decimal128 keys the pbtree type does not take: the keys as stored (both layouts) and,
/// for INT128 on ODS 13.0, their values re-encoded as bcd keys (both layouts).
void predict_as_stored(const FdbFile& file, const FdbIndex& index, const FdbKeyType& kt,
                       const std::function<void(uint64_t)>& on_entries, WhatIfReport& report) {
  WhatIfEstimator::Options o;
  o.type = kt.type;
  o.source = kt.format;
  o.as_stored = true;
  o.descending = index.descending;
  o.page_size = file.page_size();
  o.current = std::make_pair(kt.format, NodeLayout::Firebird);
  WhatIfEstimator stored(o);
  std::optional<WhatIfEstimator> bcd_est;
  if (kt.decfloat.empty()) {
    WhatIfEstimator::Options b = o;
    b.as_stored = false;
    b.source = KeyFormat::Bcd;
    b.formats = {KeyFormat::Bcd};
    b.current.reset();
    bcd_est.emplace(b);
  }
  std::string storage;
  KeyBuffer bcd;
  uint64_t seen = 0;
  try {
    for_each_fdb_entry(file, index, [&](std::span<const uint8_t> key, uint64_t recno) {
      if (on_entries && ++seen % kWhatIfProgressEvery == 0) on_entries(seen);
      stored.add(key, recno);
      if (!bcd_est) return;
      const Value v = key_to_value(kt.type, kt.format, index.descending, key, storage);
      build_key(kt.type, KeyFormat::Bcd, v, index.descending, bcd);
      bcd_est->add(bcd.bytes(), recno);
    });
  } catch (const KeyError& e) {
    throw CorruptError(fmt::format("{}: index {}: {}", file.path(), index.name, e.what()));
  }
  if (on_entries) on_entries(stored.entries());
  report.entries = stored.entries();
  report.rows = stored.finish();
  if (bcd_est) {
    for (WhatIfRow& r : bcd_est->finish()) report.rows.push_back(std::move(r));
  }
}

}  // namespace

FdbWhatIf fdb_what_if(const FdbFile& file, const FdbIndex& index,
                      const std::function<void(uint64_t)>& on_entries) {
  FdbWhatIf out;
  std::optional<FdbKeyType> kt = fdb_key_type(index, out.why);
  if (!kt) return out;
  out.predicted = true;
  IndexInfo& info = out.report.info;
  info.def.name = index.name;
  info.def.type = kt->type;
  info.def.format = kt->format;
  info.def.unique = index.unique;
  info.def.descending = index.descending;
  info.def.layout = NodeLayout::Firebird;
  info.id = index.id;
  info.root_page = index.root_page;
  out.report.page_size = file.page_size();

  out.report.type_name = kt->decfloat;
  if (kt->as_stored) {
    predict_as_stored(file, index, *kt, on_entries, out.report);
    return out;
  }
  const bool rescaled = kt->format == KeyFormat::RescaledDouble;
  WhatIfEstimator::Options o;
  o.type = kt->type;
  o.source = rescaled ? KeyFormat::Bcd : kt->format;
  o.descending = index.descending;
  o.page_size = file.page_size();
  o.current = std::make_pair(kt->format, NodeLayout::Firebird);
  WhatIfEstimator est(o);
  try {
    std::string storage;
    KeyBuffer probe, bcd;
    uint64_t seen = 0;
    for_each_fdb_entry(file, index, [&](std::span<const uint8_t> key, uint64_t recno) {
      if (on_entries && ++seen % kWhatIfProgressEvery == 0) on_entries(seen);
      if (!rescaled) {
        est.add(key, recno);
        return;
      }
      Value v = key_to_value(kt->type, kt->format, index.descending, key, storage);
      if (v.kind == Value::Kind::Exact) {
        // The values mapping to one key are contiguous: step down to the smallest.
        bool shared = false;
        for (int step = 0; step < 100000; ++step) {
          Value lower = Value::exact(v.coefficient - 1, v.scale);
          try {
            build_key(kt->type, kt->format, lower, index.descending, probe);
          } catch (const KeyError&) {
            break;  // below the type's range
          }
          if (!same(probe, key)) break;
          v = lower;
          shared = true;
        }
        if (!shared) {
          Value upper = Value::exact(v.coefficient + 1, v.scale);
          try {
            build_key(kt->type, kt->format, upper, index.descending, probe);
            shared = same(probe, key);
          } catch (const KeyError&) {
          }
        }
        if (shared) ++out.shared_keys;
      }
      build_key(kt->type, KeyFormat::Bcd, v, index.descending, bcd);
      est.add(bcd.bytes(), recno);
    });
  } catch (const KeyError& e) {
    throw CorruptError(fmt::format("{}: index {}: {}", file.path(), index.name, e.what()));
  }
  if (on_entries) on_entries(est.entries());
  out.report.entries = est.entries();
  out.report.rows = est.finish();
  return out;
}

}  // namespace pbtree::firebird
