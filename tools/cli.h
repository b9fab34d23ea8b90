// The `pbtree` command line: subcommands key, load, stat, demo (and, as they land, find,
// scan, insert, delete, verify, checkpoint). run_cli() is main() minus the process, so tests
// can drive it with captured streams.
#pragma once

#include <ostream>

namespace pbtree::tools {

/// Runs `pbtree` with argv[0..argc) writing normal output to `out` and messages/progress to
/// `err`. Returns the process exit code: 0 success, 1 error (message on `err`), 2 usage.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace pbtree::tools
