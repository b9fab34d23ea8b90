// `pbtree checkpoint` and `pbtree backup`: folding the log into the file, and a consistent
// copy of a live file (design: docs/FORMAT.md §3, docs/LIBRARY.md).
#include <fmt/format.h>
#include <pbtree/index_file.h>

#include <cerrno>
#include <filesystem>
#include <memory>

#include "tools/cli_checks.h"
#include "tools/tree_commands.h"

namespace pbtree::tools {

namespace {

struct CheckpointArgs {
  std::string db;
  int wait_ms = 5000;
};

struct BackupArgs {
  std::string db, dest;
};

}  // namespace

void add_checkpoint_command(CLI::App& app, TreeCommands& commands) {
  auto args = std::make_shared<CheckpointArgs>();
  CLI::App* sub = app.add_subcommand(
      "checkpoint",
      "Copy the committed log into the file and empty it (the file alone is then "
      "complete)");
  sub->add_option("db", args->db, "Index file")->required();
  sub->add_option("--wait", args->wait_ms,
                  "Milliseconds to wait for readers holding older snapshots (default 5000)")
      ->check(wait_ms_check());
  sub->footer(
      "Exit 0 when done; exit 3 when another writer holds the file or readers still hold\n"
      "snapshots after --wait.");
  commands.add(sub, [args](std::ostream& out, std::ostream&) {
    std::unique_ptr<IndexFile> file;
    try {
      file = IndexFile::open(args->db, {.writable = true});
    } catch (const IoError& e) {
      // A log that cannot be created (a read-only directory) did not exist: the file alone is
      // already complete, which is what a checkpoint leaves.
      const bool refused =
          e.error_number == EACCES || e.error_number == EROFS || e.error_number == EPERM;
      if (!refused || e.operation != "open" || !e.file.ends_with("-wal") ||
          std::filesystem::exists(e.file))
        throw;
      out << fmt::format("checkpoint: {}: 0 committed frames copied into the file; no log\n",
                         args->db);
      return;
    }
    // Frames folded in at open (a log left by a writer) count as copied by this command.
    const WalRecovery folded = file->log_recovery();
    const uint32_t frames = (folded.replayed ? folded.frames : 0) + file->log_committed_frames();
    if (!file->checkpoint(args->wait_ms)) {
      throw LockedError(fmt::format("{}: checkpoint deferred: readers still hold snapshots after "
                                    "{} ms",
                                    args->db, args->wait_ms),
                        args->db);
    }
    file->close();
    out << fmt::format("checkpoint: {}: {} committed frame{} copied into the file; no log\n",
                       args->db, frames, frames == 1 ? "" : "s");
  });
}

void add_backup_command(CLI::App& app, TreeCommands& commands) {
  auto args = std::make_shared<BackupArgs>();
  CLI::App* sub = app.add_subcommand(
      "backup", "Write a consistent copy of the last commit to a new file (no log needed)");
  sub->add_option("db", args->db, "Index file")->required();
  sub->add_option("dest", args->dest, "New file (must not exist)")->required();
  commands.add(sub, [args](std::ostream& out, std::ostream&) {
    auto file = IndexFile::open(args->db);
    file->backup(args->dest);
    out << fmt::format("backup: {} -> {}: {} pages\n", args->db, args->dest, file->page_count());
  });
}

}  // namespace pbtree::tools
