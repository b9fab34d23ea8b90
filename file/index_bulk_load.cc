// IndexFile::bulk_load and create_index: checks a new index's definition and entries before
// the file is touched (name, slot room, key lengths, duplicates and the unique rule after the
// radix sort), builds the tree with the FastLoader (btree/bulk_build.h) into new pages past
// the header's page count, then commits the index root page and header by a checkpoint; on
// failure the file is put back as it was (docs/FORMAT.md 2.7).
#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <string>
#include <vector>

#include "btree/bulk_build.h"
#include "btree/radix_sort.h"
#include "file/entry_sort.h"
#include "file/index_file_impl.h"
#include "file/sorted_feed.h"
#include "node/jump_table.h"

namespace pbtree {

namespace {

// bulk_load and bulk_load_sorted: `entries` (sorted and checked here) or, if `sorted` is
// set, an empty batch and the entries from `sorted` (checked as they stream, file/sorted_feed.h).
IndexInfo bulk_load_from(IndexFile& self, IndexFileAccess::Impl& im, const IndexDefinition& given,
                         EntryBatch& entries, SortedEntrySource* sorted) {
  IndexDefinition def = given;
  if (def.segments.size() == 1) {  // one segment given as a list: today's single-segment index
    def.type = def.segments[0].type;
    def.format = def.segments[0].format;
    def.segments.clear();
  }
  for (IndexSegment& g : def.segments) g.format = resolve_key_format(g.type, g.format);
  if (def.compound()) {
    def.type = def.segments[0].type;
    def.format = def.segments[0].format;
  }
  def.format = resolve_key_format(def.type, def.format);
  const std::string& path = im.file.path();
  const uint32_t ps = im.page_size();
  // 1. Everything that can be checked before the file is touched.
  if (!im.writable) throw ReadOnlyError(fmt::format("{}: opened read-only", path));
  if (!valid_index_name(def.name)) {
    throw UsageError(
        fmt::format("bad index name '{}': 1 to 31 characters of A-Z a-z 0-9 _ $", def.name));
  }
  if (im.find(def.name)) {
    throw UsageError(fmt::format("{}: index {} already exists", path, def.name));
  }
  if (def.segments.size() > kMaxIndexSegments) {
    throw UsageError(fmt::format("an index has at most {} segments, not {}", kMaxIndexSegments,
                                 def.segments.size()));
  }
  try {
    check_key_format(def.type, def.format);
    for (const IndexSegment& g : def.segments) check_key_format(g.type, g.format);
  } catch (const KeyError& e) {
    throw UsageError(e.what());
  }
  check_definition_key_limit(def, ps);  // keys/compound.cc; single segment: check_index_key_limit
  uint32_t slot = 0;
  while (slot < im.slots.size() && im.slots[slot].root_page != 0) ++slot;
  if (slot >= max_index_slots(ps)) {
    throw UsageError(
        fmt::format("{}: the index root page is full ({} indexes)", path, max_index_slots(ps)));
  }
  const size_t max_key = definition_max_key_length(def);
  {
    std::vector<IndexInfo> trial = im.slots;
    if (slot == trial.size()) trial.emplace_back();
    trial[slot].root_page = 2;
    trial[slot].def.segments = def.segments;
    if (!index_root_fits(trial, ps)) {
      throw UsageError(
          fmt::format("{}: the index root page has no room for index {}", path, def.name));
    }
  }
  auto& items = entries.items();
  for (const EntryBatch::Item& it : items) {
    try {
      check_key_length(it.length, ps);
    } catch (const KeyError& e) {
      throw KeyError(fmt::format("{} (entry {})", e.what(), it.tag));
    }
    if (it.length > max_key && !def.compound()) {
      throw KeyError(fmt::format(
          "key of {} bytes is longer than any {} key in format {} can be ({} bytes) (entry {})",
          it.length, def.type.name(), key_format_name(def.format), max_key, it.tag));
    }
  }
  const bool desc = def.descending;
  sort_entry_batch(entries, desc);  // btree/radix_sort.h (radix)
  for (size_t i = 1; i < items.size(); ++i) {
    const auto& a = items[i - 1];
    const auto& b = items[i];
    if (compare_keys(entries.key(a), entries.key(b), desc) != 0) continue;
    if (a.recno == b.recno) {
      const std::string value = key_value_text(def, entries.key(a));
      throw DuplicateKeyError(
          fmt::format("index {}: entry ({}, {}) appears twice (entries {} and {})", def.name, value,
                      a.recno, a.tag, b.tag),
          def.name, value, a.recno, a.tag, b.tag);
    }
    if (def.unique && !key_exempt_from_unique(def, entries.key(a))) {
      const std::string value = key_value_text(def, entries.key(a));
      throw DuplicateKeyError(
          fmt::format("unique index {}: value {} appears twice (entries {} and {})", def.name,
                      value, a.tag, b.tag),
          def.name, value, a.recno, a.tag, b.tag);
    }
  }

  // 2. New pages after the header's page count (the living trees' pages made durable first).
  // Pages past the count are left by a load that never committed: unreferenced, so they are
  // overwritten or, on an error here, cut off with the rest (docs/FORMAT.md 2.7).
  if (im.pool) self.commit();
  const uint32_t first = im.header.page_count;
  bool touched_fixed_pages = false;
  try {
    FastLoader::Options opt;
    opt.page_size = ps;
    opt.first_page = first;
    // Firebird's K adds the 1-byte NULL indicator only for a single-segment ascending
    // index; jump_area_size leaves it out when told "descending", so a compound index asks so.
    opt.jump_interval = layout_jump_interval(max_key, desc || def.compound(), def.layout);
    opt.index_id = static_cast<uint8_t>(slot % 256);
    opt.layout = def.layout;
    opt.descending = desc;
    opt.threads = im.build_threads;
    // Straight into the file: no committed page refers to pages beyond the bound yet.
    // Page number and checksum stamped on the coding threads (FastLoader::build).
    opt.prepare = [&](uint32_t page_no, uint8_t* page) { im.file.stamp(page_no, page); };
    FastLoader loader(
        opt, [&](uint32_t page_no, uint8_t* page) { im.file.write_direct_stamped(page_no, page); });
    uint32_t root = 0;
    if (sorted) {  // a stream in index order (bounded-memory load): the serial path
      for (const auto& it : items) loader.add(entries.key(it), it.recno);
      feed_sorted_entries(def, max_key, ps, *sorted, loader);
      root = loader.finish();
    } else {
      root = loader.build(entries);  // btree/bulk_build_parallel.cc
    }
    im.file.sync();

    // 3. Commit: index root page, then header.
    std::vector<IndexInfo> slots = im.slots;
    if (slot == slots.size()) slots.emplace_back();
    IndexInfo& s = slots[slot];
    s.def = def;
    s.root_page = root;
    s.id = slot;
    FileHeader h = im.header;
    h.page_count = first + loader.pages_allocated();
    std::vector<uint8_t> page(ps);
    encode_index_root_page(slots, page.data(), ps);
    touched_fixed_pages = true;
    im.file.write(kIndexRootPage, page.data());
    im.checkpoint(h, loader.pages_allocated());
    im.slots = std::move(slots);
    return im.slots[slot];
  } catch (...) {
    // Put the file back as it was (best effort; the original error is what matters). Once
    // the checkpoint has begun, the log decides (a committed batch is replayed at the next
    // open, so the new pages must stay); before it, the new pages are cut off again.
    try {
      if (!touched_fixed_pages) {
        // Ignored if it fails: the pages beyond the header's page count are unreferenced, and
        // the next writer cuts them off.
        im.file.truncate(first);
        im.file.sync();
      } else if (im.file.wal() && !im.file.wal()->failed()) {
        im.file.wal()->rollback();
      }
    } catch (...) {
    }
    throw;
  }
}

}  // namespace

IndexInfo IndexFile::bulk_load(const IndexDefinition& given, EntryBatch& entries) {
  return bulk_load_from(*this, *impl_, given, entries, nullptr);
}

IndexInfo IndexFile::bulk_load_sorted(const IndexDefinition& given, SortedEntrySource& source) {
  EntryBatch none;
  return bulk_load_from(*this, *impl_, given, none, &source);
}

IndexInfo IndexFile::create_index(const IndexDefinition& def) {
  EntryBatch none;
  return bulk_load(def, none);
}
}  // namespace pbtree
