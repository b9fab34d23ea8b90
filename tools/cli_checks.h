// Checks of the CLI's option texts shared by the subcommands (CLI11 validators): they run on
// the text before CLI11 converts it, so a value out of range is refused before anything is
// sized by it, with the range said in words.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <utility>

namespace pbtree::tools {

/// A whole number from `min` to `max`: decimal digits only (no sign, fraction or exponent).
/// Otherwise the message is "<range>, not '<the text, at most 40 bytes>'", e.g. for
/// --busy-timeout "whole milliseconds from 0 to 86400000 (one day), not '-1'".
CLI::Validator whole_number_check(uint64_t min, uint64_t max, std::string range);

/// The bound of --busy-timeout and --wait (milliseconds): one day.
inline constexpr uint64_t kMaxWaitMs = 86'400'000;

/// --busy-timeout and --wait: whole milliseconds from 0 to kMaxWaitMs.
inline CLI::Validator wait_ms_check() {
  return whole_number_check(0, kMaxWaitMs, "whole milliseconds from 0 to 86400000 (one day)");
}

/// --page-size: a whole number that fits 32 bits (the page sizes themselves, 4096, 8192,
/// 16384 and 32768, are checked where the page size is used).
inline CLI::Validator page_size_check() {
  return whole_number_check(0, UINT32_MAX, "a page size: 4096, 8192, 16384 or 32768");
}

/// --page-size of load, import and demo once parsed: 0 (not given) or one of kPageSizes.
/// Throws ArgumentError (exit status 2) "page size 1000 not supported (4096, 8192, 16384 or
/// 32768)", the same for every command.
void check_page_size_argument(uint32_t page_size);

/// A count of rows or entries: 0 to 2^64 - 1.
inline CLI::Validator count_check(std::string range) {
  return whole_number_check(0, UINT64_MAX, std::move(range));
}

}  // namespace pbtree::tools
