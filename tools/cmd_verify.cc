// `pbtree verify`: structural check of a pbtree file in the spirit of gfix -v. Per index:
// BTree::verify (key order in and across pages, sibling links both ways, levels,
// separators, END_BUCKET, jump nodes, btr_length) plus a walk of its own that survives
// corrupt pages: every page of the tree read with its checksum and page type checked, no
// page reachable twice, (key, record number) strictly ascending along the whole leaf level
// (so record numbers are unique per key and ascending within a run of duplicates), no two
// equal keys in a unique index (NULL keys and keys with a NULL segment are exempt), every
// key decoded under the slot's (valid) type and key format and re-encoded to the same bytes
// (tools/verify_keys.h). Over the whole file: every page is the header, the index root page,
// a page of exactly one index, or a free page (type 9, or a released b-tree page); the free
// list is walked to its end and holds no page of an index. Pages past the header's page
// count (an uncommitted load's) are reported in a note.
#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "btree/btree.h"
#include "btree/tree_walk.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "page/buffer_pool.h"
#include "page/file_header.h"
#include "page/page_file.h"
#include "tools/progress.h"
#include "tools/tree_commands.h"
#include "tools/verify_keys.h"

namespace pbtree::tools {

namespace {

struct VerifyArgs {
  std::string db, index;
  bool progress = false;  // --progress: tools/progress.h even off a terminal
};

struct IndexFigures {
  uint64_t pages = 0;
  uint64_t entries = 0;
};

// The walk of one index; records owners of pages in `owner` (index id + 1; 0 = none).
IndexFigures walk_index(const std::string& db, const IndexInfo& info, const IndexFile& file,
                        uint32_t page_count, std::vector<uint32_t>& owner,
                        const std::vector<IndexInfo>& all, std::vector<std::string>& violations,
                        Progress& progress) {
  const uint32_t ps = file.page_size();
  const bool desc = info.def.descending;
  auto report = [&](uint32_t page, const std::string& what) {
    violations.push_back(fmt::format("index {}: page {}: {}", info.def.name, page, what));
  };
  IndexFigures fig;
  std::vector<uint8_t> buf(ps);
  // Keys are decoded only under a valid slot type and key format (else that is the finding).
  bool decode_keys = check_slot_type(info).empty();
  try {
    check_key_format(info.def.type, info.def.format);
  } catch (const std::exception&) {
    decode_keys = false;
  }
  std::optional<PageEntry> prev;  // previous leaf entry along the level
  int expected_level = -1;
  uint32_t depth = 0;
  // The pages in the order their parents list them (TreeWalk::by_children): a page that
  // cannot be read lists no children, and the walk goes on with the next.
  TreeWalk::by_children(info.root_page, [&](const TreeWalk::Step& s, std::vector<uint32_t>& next) {
    const uint32_t p = s.page_no;
    if (s.depth != depth) {
      depth = s.depth;
      --expected_level;
    }
    if (p < 2 || p >= page_count) {
      report(p, fmt::format("page number outside the file's b-tree pages 2..{}", page_count - 1));
      return;
    }
    if (owner[p] != 0) {
      const IndexInfo* other = nullptr;
      for (const IndexInfo& i : all) {
        if (i.id + 1 == owner[p]) other = &i;
      }
      report(p, fmt::format("reachable twice (also from index {})",
                            other ? other->def.name : std::string("?")));
      return;
    }
    owner[p] = info.id + 1;
    ++fig.pages;
    progress.add();
    BtreePageImage img;
    try {
      read_file_page(file, p, buf.data(), static_cast<uint8_t>(PageType::Btree));
      img = decode_page(buf.data(), ps);
    } catch (const std::exception& e) {
      violations.push_back(fmt::format("index {}: {}", info.def.name, e.what()));
      return;
    }
    if (img.header.index_id != static_cast<uint8_t>(info.id % 256)) {
      report(p, fmt::format("btr_id {} but the index id is {}", img.header.index_id, info.id));
    }
    if (expected_level < 0) expected_level = img.header.level;
    if (img.header.level != expected_level) {
      report(p, fmt::format("level {} where {} expected", img.header.level, expected_level));
    }
    if (BtreePage(buf.data()).released()) report(p, "released page still in the tree");
    if (img.header.level > 0) {
      for (const PageEntry& e : img.entries) next.push_back(e.page_number);
      return;
    }
    if (decode_keys) check_leaf_keys(db, info, buf.data(), ps, violations);
    for (size_t i = 0; i < img.entries.size(); ++i) {
      const PageEntry& e = img.entries[i];
      ++fig.entries;
      if (prev) {
        int c = compare_keys(prev->key, e.key, desc);
        if (c > 0) {
          report(p, fmt::format("entry {}: key out of order", i));
        } else if (c == 0 && e.recno == prev->recno) {
          report(p, fmt::format("entry {}: duplicate entry (record number {} twice for one key)", i,
                                e.recno));
        } else if (c == 0 && e.recno < prev->recno) {
          report(p,
                 fmt::format("entry {}: record numbers of equal keys not ascending ({} after {})",
                             i, e.recno, prev->recno));
        } else if (c == 0 && info.def.unique && !key_exempt_from_unique(info.def, e.key)) {
          // NULL keys, and compound keys with any NULL segment, may repeat (docs/CLI.md).
          report(p, fmt::format("entry {}: unique index holds an equal key twice (records {} "
                                "and {})",
                                i, prev->recno, e.recno));
        }
      }
      prev = e;
    }
  });
  return fig;
}

void run_verify(const VerifyArgs& a, std::ostream& out, std::ostream& err) {
  Progress progress(err, a.progress);
  std::vector<std::string> violations;
  std::unique_ptr<IndexFile> index_file;
  try {
    index_file = IndexFile::open(a.db);
  } catch (const CorruptError& e) {
    out << "violation: " << e.what() << "\n";
    throw CommandFailed(fmt::format("verify: {}: 1 violation", a.db));
  }
  std::vector<IndexInfo> indexes = index_file->indexes();
  if (!a.index.empty()) {
    auto info = index_file->find_index(a.index);
    if (!info) throw index_file->no_index_error(a.index);
    indexes = {*info};
  }
  const uint32_t ps = index_file->page_size();
  // Every read below goes through index_file: one snapshot (file plus committed log frames as
  // of the open). A second open would take a newer snapshot while writers commit, and its
  // pages would point past this snapshot's page count.
  const uint32_t page_count = index_file->page_count();
  const IndexFile& file = *index_file;
  const std::vector<IndexInfo> all = index_file->indexes();

  std::vector<uint32_t> owner(page_count, 0);
  uint64_t btree_pages = 0, entries = 0;
  for (const IndexInfo& info : indexes) {
    // The slot's type and key format: a pair load would refuse cannot be read back.
    for (std::string& v : check_slot_type(info)) violations.push_back(std::move(v));
    try {
      check_key_format(info.def.type, info.def.format);
    } catch (const std::exception& e) {
      violations.push_back(fmt::format("index {}: {}", info.def.name, e.what()));
    }
    // BTree::verify stops at the first problem; the walk below goes on past corrupt pages.
    try {
      index_file->tree(info.def.name).verify();
    } catch (const std::exception& e) {
      violations.push_back(fmt::format("index {}: {}", info.def.name, e.what()));
    }
    // The index's page count is known only after its walk: the file's bounds it until then,
    // and the line ends at the pages walked (100%).
    const std::string label = "verify: index " + info.def.name;
    progress.start(label, page_count, "pages");
    IndexFigures f = walk_index(a.db, info, file, page_count, owner, all, violations, progress);
    progress.complete();
    btree_pages += f.pages;
    entries += f.entries;
  }
  uint64_t free_pages = 0;
  if (a.index.empty()) {
    // The free list (header bytes 40..47, docs/FORMAT.md 2.6): IndexFile::free_list checks its
    // length against the header's count (so a cycle is caught) and each page's type and link;
    // here, no page on it may belong to an index.
    try {
      for (uint32_t p : index_file->free_list()) {
        if (p < page_count && owner[p] != 0) {
          std::string name = "?";
          for (const IndexInfo& i : all) {
            if (i.id + 1 == owner[p]) name = i.def.name;
          }
          violations.push_back(
              fmt::format("page {}: on the free list but a page of index {}", p, name));
        }
      }
    } catch (const std::exception& e) {
      violations.push_back(e.what());
    }
    std::vector<uint8_t> buf(ps);
    progress.start("verify: other pages", page_count, "pages");
    for (uint32_t p = 2; p < page_count; ++p) {
      progress.set(p + 1);
      if (owner[p] != 0) continue;
      try {
        read_file_page(file, p, buf.data(), 0);
      } catch (const std::exception& e) {
        violations.push_back(e.what());
        continue;
      }
      // Free pages: type 9, or b-tree pages the tree released (btr_released) and nothing
      // reused yet.
      const uint8_t type = page_type_of(buf.data());
      if (type == static_cast<uint8_t>(PageType::Free) ||
          (type == static_cast<uint8_t>(PageType::Btree) && BtreePage(buf.data()).released())) {
        ++free_pages;
      } else {
        violations.push_back(fmt::format("page {} ({}): not reachable from any index and not free",
                                         p, page_type_name(type)));
      }
    }
    progress.set(page_count);
    progress.finish();
  }
  // BTree::verify and the walk may both see the same corrupt page.
  std::vector<std::string> unique;
  for (std::string& v : violations) {
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(std::move(v));
  }
  violations = std::move(unique);
  if (!violations.empty()) {
    std::string text;
    for (const std::string& v : violations) text += "violation: " + v + "\n";
    out << text;
    throw CommandFailed(fmt::format("verify: {}: {} violation{}", a.db, violations.size(),
                                    violations.size() == 1 ? "" : "s"));
  }
  if (const uint32_t frames = index_file->log_committed_frames(); frames != 0) {
    // Verify reads, never writes: the log is read through, not checkpointed.
    out << fmt::format(
        "log: {} holds {} committed frame{} up to commit {}, not yet checkpointed: verified "
        "through the log (pbtree checkpoint folds it into the file)\n",
        index_file->log_path(), frames, frames == 1 ? "" : "s",
        index_file->log_recovery().checkpoint);
  }
  if (a.index.empty()) {
    // Pages past the header's page count: a bulk load that never committed (killed, or failed
    // without cutting them off) wrote them and nothing refers to them (the walk above reports
    // any pointer past the count). Not a violation: the next writer cuts them off
    // (docs/FORMAT.md 2.7).
    const uint64_t file_pages = std::filesystem::file_size(a.db) / ps;
    if (file_pages > page_count) {
      out << fmt::format(
          "note: {}: {} page{} past the header's page count {} (pages {}..{}), left by a load "
          "that did not commit: unreferenced; the next writer cuts them off\n",
          a.db, file_pages - page_count, file_pages - page_count == 1 ? "" : "s", page_count,
          page_count, file_pages - 1);
    }
    out << fmt::format("OK: {}: {} index{}, {} pages (2 fixed, {} b-tree, {} free), {} entries\n",
                       a.db, indexes.size(), indexes.size() == 1 ? "" : "es", page_count,
                       btree_pages, free_pages, entries);
  } else {
    out << fmt::format("OK: {}: index {}: {} pages, {} entries\n", a.db, a.index, btree_pages,
                       entries);
  }
}

}  // namespace

void add_verify_command(CLI::App& app, TreeCommands& commands) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Check every structural invariant of a file (or one index); exit 1 on violations");
  sub->add_option("db", args->db, "Index file")->required();
  sub->add_option("--index", args->index, "Only this index (skips the whole-file page check)");
  sub->add_flag("--progress", args->progress,
                "Progress lines on stderr even when it is not a terminal (shown on a terminal "
                "anyway)");
  sub->footer(
      "Prints one 'violation: ...' line per problem, naming the page, and exits 1; otherwise\n"
      "prints one 'OK: ...' summary line.");
  commands.add(sub, [args](std::ostream& out, std::ostream& err) { run_verify(*args, out, err); });
}

}  // namespace pbtree::tools
