// `pbtree demo`: builds the seed experiment's eight indexes (Firebird 3's I_INT_*,
// I_BIGINT_* plus decimal128 and bcd variants) and indexes over real data sets (cities, IPv6
// ranges, e-mail domains) into one file, then prints every gstat block, a comparison table and
// the what-if table (every key format × layout) of each BIGINT index.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace pbtree::tools {

struct DemoOptions {
  uint64_t rows = 0;          ///< rows per data set; 0: all
  uint32_t page_size = 8192;  ///< bytes
  std::string data_dir;       ///< "" : $PBTREE_DATA_DIR, else <exe>/../../data, else ./data
  std::string output;         ///< "" : <temp dir>/pbtree-demo.pbt (replaced if present)
};

/// Where the shipped data sets are: `explicit_dir` if given, else $PBTREE_DATA_DIR, else
/// <directory of /proc/self/exe>/../../data, else ./data. Throws UsageError if the chosen
/// directory has no seed/t_int.csv.zst.
std::string find_data_dir(const std::string& explicit_dir);

/// Runs the demo: stat blocks, table and BIGINT what-if tables on `out`, progress on `err`. Throws
/// like the load path (InputError, UsageError, IoError, ...).
void run_demo(const DemoOptions& options, std::ostream& out, std::ostream& err);

}  // namespace pbtree::tools
