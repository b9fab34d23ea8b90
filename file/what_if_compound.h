// What-if on a compound index (issue 12 item 4): the figures the index would have with each
// segment in each key format its type allows (one segment changed at a time), × both node
// layouts, predicted by streaming its entries through WhatIfEstimator (btree/what_if.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "btree/what_if.h"

namespace pbtree {

/// One variant of a compound index's segment formats, with its predicted rows (one per
/// layout; WhatIfRow::format is not meaningful here: `formats` is).
struct CompoundWhatIfVariant {
  std::vector<KeyFormat> formats;  ///< per segment
  size_t changed = 0;              ///< 1-based segment whose format differs; 0: the index's own
  std::vector<WhatIfRow> rows;
};

struct CompoundWhatIfReport {
  IndexInfo info;
  uint32_t page_size = 0;
  uint64_t entries = 0;
  std::vector<CompoundWhatIfVariant> variants;  ///< the current formats first
};

/// Streams index `name` (compound) once: each key split into values (compound_key_values),
/// rebuilt with every variant's formats and fed to a WhatIfEstimator that takes the
/// composed keys as they are (a text column of the composed key's length less one, so that
/// its jump interval and key-size check are the compound index's: K = ROUNDUP(L, 8)).
/// Throws UsageError (no such index / not compound), CorruptError (a key that does not
/// decode), IoError.
CompoundWhatIfReport compound_what_if(IndexFile& file, const std::string& name,
                                      const std::function<void(uint64_t)>& on_entries = {});

}  // namespace pbtree
