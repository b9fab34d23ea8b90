// What-if on a Firebird index: its leaf keys decoded back to values and fed to pbtree's
// streaming size predictor (btree/what_if.h) in every key format the column type allows and
// both pbtree layouts, plus the count of legacy rescaled-double keys that more than one
// value maps to (each re-encoded from the smallest of them, so order is kept).
#pragma once

#include <cstdint>
#include <string>

#include "btree/what_if.h"
#include "firebird/fdb_catalog.h"
#include "firebird/fdb_file.h"

namespace pbtree::firebird {

/// The prediction for one index, or why there is none.
struct FdbWhatIf {
  bool predicted = false;
  std::string why;           ///< if not predicted: "compound index (2 segments)", ...
  WhatIfReport report;       ///< info.def: name, pbtree type, Firebird's key format, layout
  uint64_t shared_keys = 0;  ///< rescaled-double keys that several values map to
};

/// Streams the index's entries once through a WhatIfEstimator (page size = the database's).
/// The current row is (Firebird's key format, Firebird layout). Throws CorruptError on a
/// malformed page or a key no value of the column type encodes to ("FILE: index X: ...").
/// `on_entries`, if set, is called with the count of entries read so far every
/// kWhatIfProgressEvery entries and once at the end (a progress hook).
FdbWhatIf fdb_what_if(const FdbFile& file, const FdbIndex& index,
                      const std::function<void(uint64_t)>& on_entries = {});

}  // namespace pbtree::firebird
