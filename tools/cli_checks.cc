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

namespace {

// The option `name` ("--type", "-o") of `app` or, as CLI11's fallthrough finds it, of a
// parent; nullptr if none.
const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* o : app->get_options()) {
      if (!o->get_positional() && o->check_name(name)) return o;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> keep_end_of_options(const CLI::App& app,
                                             const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  const CLI::App* current = &app;
  bool eats_mark = false;  // the last words were an option CLI11 lets take more values
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      if (eats_mark) out.push_back("--");  // the one CLI11 drops
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      return out;
    }
    out.push_back(a);
    if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.') {
      const size_t eq = a.find('=');
      const std::string name = a.substr(0, eq);
      const CLI::Option* o = find_option(current, name);
      const bool takes_value = o != nullptr && o->get_items_expected_max() != 0;
      // CLI11 drops a "--" after an option that could take more values (a vector: --type,
      // --column), not after a flag or an option of one value.
      eats_mark =
          takes_value && (o->get_allow_extra_args() || o->get_items_expected_max() > 1);
      // A value in a following word: an option that takes one, written without "=value".
      if (takes_value && eq == std::string::npos && i + 1 < args.size() && args[i + 1] != "--") {
        out.push_back(args[++i]);
      }
      continue;
    }
    eats_mark = false;
    if (current == &app) {
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->check_name(a)) {
          current = sub;
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace pbtree::tools
