// Creating a pbtree file so that its path holds either no file or a valid one, whatever the
// moment of a crash, and a second creator never replaces the first's file (docs/FORMAT.md
// 2.8): the file is written, filled and synced under a unique temporary name in the same
// directory, then moved to its path by a rename that never replaces (renameat2
// RENAME_NOREPLACE; link + unlink where the file system lacks it), and the directory synced.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace pbtree {

class IndexFile;

/// Creates `path` as a new pbtree file of `page_size` (one of kPageSizes) whose contents are
/// what `fill` puts into it (called with the file open writable under its temporary name; may
/// be empty: the file then has no index). `fill` runs to its end, the file is closed (its log
/// applied and removed), then published. Returns true if `path` now holds this file; false
/// if a file appeared at `path` meanwhile (it is left untouched, the temporary removed). On
/// any error the temporary and its log are removed and the error rethrown; `path` is
/// untouched. A crash leaves at most the temporary "<path>.new-<pid>-<16 hex digits>" (and
/// its "-wal"), never a partial file at `path`. Throws IoError, or what `fill` throws.
bool create_file_with(const std::string& path, uint32_t page_size,
                      const std::function<void(IndexFile&)>& fill);

/// The prefix of the temporary names create_file_with uses for `path`: "<path>.new-".
std::string temporary_prefix(const std::string& path);

}  // namespace pbtree
