// feed_sorted_entries (file/sorted_feed.h): the checks of IndexFile::bulk_load, one entry at a
// time against the previous one.
#include "file/sorted_feed.h"

#include <fmt/format.h>
#include <pbtree/keys.h>

#include <vector>

namespace pbtree {

void feed_sorted_entries(const IndexDefinition& def, size_t max_key, uint32_t page_size,
                         SortedEntrySource& source, FastLoader& loader) {
  const bool desc = def.descending;
  std::vector<uint8_t> prev;
  uint64_t prev_recno = 0, prev_tag = 0;
  bool first = true;
  SortedEntry e;
  while (source.next(e)) {
    try {
      check_key_length(e.key.size(), page_size);
    } catch (const KeyError& err) {
      throw KeyError(fmt::format("{} (entry {})", err.what(), e.tag));
    }
    if (e.key.size() > max_key && !def.compound()) {
      throw KeyError(fmt::format(
          "key of {} bytes is longer than any {} key in format {} can be ({} bytes) (entry {})",
          e.key.size(), def.type.name(), key_format_name(def.format), max_key, e.tag));
    }
    if (!first) {
      const int c = compare_keys(prev, e.key, desc);
      if (c > 0 ||
          (c == 0 && (prev_recno > e.recno || (prev_recno == e.recno && prev_tag > e.tag)))) {
        throw UsageError(fmt::format("bulk load: entries out of index order (entry {})", e.tag));
      }
      if (c == 0) {
        if (prev_recno == e.recno) {
          const std::string value = key_value_text(def, prev);
          throw DuplicateKeyError(
              fmt::format("index {}: entry ({}, {}) appears twice (entries {} and {})", def.name,
                          value, prev_recno, prev_tag, e.tag),
              def.name, value, prev_recno, prev_tag, e.tag);
        }
        if (def.unique && !key_exempt_from_unique(def, prev)) {
          const std::string value = key_value_text(def, prev);
          throw DuplicateKeyError(
              fmt::format("unique index {}: value {} appears twice (entries {} and {})", def.name,
                          value, prev_tag, e.tag),
              def.name, value, prev_recno, prev_tag, e.tag);
        }
      }
    }
    loader.add(e.key, e.recno);
    prev.assign(e.key.begin(), e.key.end());
    prev_recno = e.recno;
    prev_tag = e.tag;
    first = false;
  }
}

}  // namespace pbtree
