// Option checks shared by the CLI's subcommands (tools/cli_checks.h).
#include "tools/cli_checks.h"

#include <fmt/format.h>
#include <pbtree/types.h>

#include <algorithm>
#include <charconv>
#include <iterator>

#include "tools/cli_errors.h"

namespace pbtree::tools {

CLI::Validator whole_number_check(uint64_t min, uint64_t max, std::string range) {
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        const bool digits =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || ec != std::errc() || ptr != end || v < min || v > max) {
          return range + ", not '" + text.substr(0, 40) + "'";
        }
        return "";
      },
      "N");
}

void check_page_size_argument(uint32_t page_size) {
  if (page_size != 0 &&
      std::find(std::begin(kPageSizes), std::end(kPageSizes), page_size) == std::end(kPageSizes)) {
    throw ArgumentError(
        fmt::format("page size {} not supported (4096, 8192, 16384 or 32768)", page_size));
  }
}

}  // namespace pbtree::tools
