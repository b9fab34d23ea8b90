// The living-B-tree subcommands of `pbtree`: insert, delete (cmd_change.cc), find, scan
// (cmd_query.cc), verify (cmd_verify.cc) and `load --append` (cmd_change.cc). cli.cc
// registers each with one call and runs the chosen one with TreeCommands::run() inside its
// error handling.
#pragma once

#include <pbtree/index_file.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tools/loader.h"

namespace pbtree::tools {

/// Subcommands registered by the add_*_command functions, with what each runs.
class TreeCommands {
 public:
  using Action = std::function<void(std::ostream& out, std::ostream& err)>;
  /// Remembers `action` for subcommand `sub` (called by the add_* functions).
  void add(CLI::App* sub, Action action) { list_.emplace_back(sub, std::move(action)); }
  /// Runs the action of the subcommand that was parsed, if it is one of ours. Throws whatever
  /// the command throws (cli.cc prints it and exits 1). A command that finds problems but
  /// reports them itself (verify) throws CommandFailed.
  void run(std::ostream& out, std::ostream& err) const {
    for (const auto& [sub, action] : list_) {
      if (sub->parsed()) action(out, err);
    }
  }

 private:
  std::vector<std::pair<CLI::App*, Action>> list_;
};

/// Thrown by a command that has already printed its findings; the message is the summary.
class CommandFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `pbtree insert DB --index NAME [--null | [--] VALUE] RECNO`.
void add_insert_command(CLI::App& app, TreeCommands& commands);
/// `pbtree delete DB --index NAME [--null | [--] VALUE] RECNO`.
void add_delete_command(CLI::App& app, TreeCommands& commands);
/// `pbtree find DB --index NAME [--null | [--] VALUE]`.
void add_find_command(CLI::App& app, TreeCommands& commands);
/// `pbtree scan DB --index NAME [--from V] [--to V] ... [--limit N]`.
void add_scan_command(CLI::App& app, TreeCommands& commands);
/// `pbtree verify DB [--index NAME]`.
void add_verify_command(CLI::App& app, TreeCommands& commands);

/// `pbtree checkpoint DB [--wait MS]` (tools/cmd_share.cc).
void add_checkpoint_command(CLI::App& app, TreeCommands& commands);
/// `pbtree backup DB DEST` (tools/cmd_share.cc).
void add_backup_command(CLI::App& app, TreeCommands& commands);

/// `pbtree load --append`: reads every row of `input` as load does (value column, record
/// numbers), checks everything first (values, key lengths, duplicate pairs within the input
/// and against the index, equal non-NULL keys in a unique index), then inserts the entries
/// into the existing index `index` of `db_path` and commits (durable at return). Type, key
/// format and flags are the index's; `type_text`, if not empty, must name the index's type.
/// On any error the file is unchanged. Returns the number of entries inserted. Throws
/// UsageError (no such index, other type), InputError "<input>:<line>: ...", IoError,
/// CorruptError.
uint64_t append_to_index(const std::string& db_path, const std::string& index,
                         const std::string& input, ColumnSource source,
                         const std::string& type_text = {});

}  // namespace pbtree::tools
