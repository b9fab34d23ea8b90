// Option checks shared by the CLI's subcommands (tools/cli_checks.h).
#include "tools/cli_checks.h"

#include <charconv>

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

}  // namespace pbtree::tools
