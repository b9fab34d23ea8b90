// Copying the pages of a file as one reader sees them (the file plus its log's committed
// frames) into a new, complete file: `pbtree backup` and IndexFile::backup.
#pragma once

#include <cstdint>
#include <string>

#include "page/page_file.h"

namespace pbtree {

/// Writes pages 0..page_count-1 of `from` (read through its log, each checked) into a new
/// file `dest`: a temporary "<dest>.tmp-XXXXXX" in dest's directory, fdatasync, then a rename
/// that never replaces an existing file (renameat2 RENAME_NOREPLACE) and a sync of the
/// directory. On any error the temporary file is removed and `dest` does not appear.
/// Throws IoError, UsageError (dest exists), CorruptError (a page fails its checks).
void copy_pages_to_new_file(const PageFile& from, uint32_t page_count, const std::string& dest);

}  // namespace pbtree
