// Copying the pages of a file as one reader sees them (the file plus its log's committed
// frames) into a new, complete file: `pbtree backup` and IndexFile::backup.
#pragma once

#include <cstdint>
#include <string>

#include "page/page_file.h"

namespace pbtree {

/// Writes pages 0..page_count-1 of `from` (read through its log, each checked) into a new
/// file `dest`: an unnamed file in dest's directory (O_TMPFILE; where refused, a temporary
/// "<dest>.tmp-XXXXXX"), fdatasync, then a link (or rename) that never replaces an existing
/// file, and a sync of the directory. On any error, or if the process dies, no file is left
/// and `dest` does not appear. Throws IoError, UsageError (dest exists; dest is a log name,
/// Wal::is_log_name: "<dest>: a name ending in -wal is where pbtree keeps the log of a file:
/// choose another destination"), CorruptError (a page fails its checks).
void copy_pages_to_new_file(const PageFile& from, uint32_t page_count, const std::string& dest);

}  // namespace pbtree
