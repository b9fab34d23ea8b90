// Internals shared by the tree's files (tree.cc, cursor.cc, writer.cc, split.cc,
// split_merge.cc, verify.cc): ordering sentinels, reader restarts, page predicates, node walks and
// the writer's state (TreeWriter). Not installed.
#pragma once

#include <fmt/format.h>
#include <pbtree/keys.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "btree/btree.h"
#include "btree/latch.h"
#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/leaf_edit.h"
#include "node/node.h"
#include "node/node_quick.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "util/bytes.h"

namespace pbtree {

// Above every 40-bit record number: (key, kAfterAll) sorts after every duplicate of key.
constexpr uint64_t kAfterAll = uint64_t{1} << 40;

// Readers restart from the root when a pointer leads to a page that is not (or no longer) a
// live B-tree page of the expected level: normally one a concurrent writer just released. On a
// damaged file that would repeat forever, so after this many restarts in a row it is reported
// as corruption of the page last reached.
constexpr int kMaxReaderRestarts = 10000;
void count_restart(int& restarts, const uint8_t* page);

// True if a page reached by a pointer is a live B-tree page of `level` (any if negative).
inline bool live_btree_page(const uint8_t* page, int level) {
  return BtreePage(page).live(level);
}

// Offset of the first node of `page`.
inline uint32_t first_node(const uint8_t* page) {
  return BtreePage(page).first_node();
}

constexpr uint32_t kToEnd = UINT32_MAX;

// The node after `prev` (at `pos`) on a page of either layout: inline on Firebird pages, with
// prev's context on compact pages (no walk from the jump target).
inline IndexNode node_after(const uint8_t* page, uint32_t limit, uint32_t pos, bool leaf,
                            const IndexNode& prev) {
  const NodeContext ctx = context_after(prev);
  return decode_node_quick(page, limit, pos, leaf, &ctx);
}

// A writer's descent to the leaf of a key (TreeWriter::descend, BatchMerge::descend): from
// `root` down, each page pinned and checked live, its number recorded in path[level] (path
// sized by the root's level); on a non-leaf page `child(page)` picks the page to go to. Returns
// the leaf's number. Throws CorruptError on a page that is not a live b-tree page or of an
// unexpected level, and what `child` throws.
template <typename Child>
uint32_t descend_for_write(const BTree& tree, std::vector<uint32_t>& path, Child&& child) {
  uint32_t p = tree.root();
  path.clear();
  for (;;) {
    PageRef ref = tree.pool().pin(p);
    const uint8_t* d = ref.data();
    if (!live_btree_page(d, -1)) corrupt_page(d, "not a live b-tree page");
    const int level = BtreePage(d).level();
    if (path.empty()) path.assign(level + 1, 0);
    if (level >= static_cast<int>(path.size()) || path[level] != 0) {
      corrupt_page(d, fmt::format("unexpected level {}", level));
    }
    path[level] = p;
    if (level == 0) return p;
    p = child(d);
  }
}

// Decodes the leaf or non-leaf node at `offset` of `page` and rebuilds its full key into `key`,
// starting from the last jump node at or before it (so only one jump area is decoded).
IndexNode node_with_key(const uint8_t* page, uint32_t page_size, uint32_t offset,
                        std::vector<uint8_t>& key);

// Moves `cur` to its right sibling (coupled: the sibling is latched first). Throws
// CorruptError if there is none or it is not a live leaf.
inline void move_right(BufferPool& pool, ReadLatch& cur) {
  const uint8_t* d = cur.data();
  uint32_t right = BtreePage(d).sibling();
  if (right == 0) corrupt_page(d, "END_BUCKET on a page without a right sibling");
  ReadLatch next(pool.pin(right));
  cur = std::move(next);
  if (!live_btree_page(cur.data(), 0)) corrupt_page(cur.data(), "right sibling is not a live leaf");
}

// ------------------------------------------------------------------------------------------
// Writer

struct SplitScratch;  // btree/leaf_writer.h

// The leaf writer's append past the last entry of the rightmost leaf, which TreeWriter::store
// splits inside the leaf's frame (btree/split.cc).
struct RightmostAppend {
  PageRef* frame = nullptr;      ///< the leaf, pinned
  WriterCache* cache = nullptr;  ///< the writer's scratch
  std::span<const uint8_t> key;  ///< the new entry
  uint64_t recno = 0;
  uint32_t pn = 0;                    ///< its prefix against the old last key
  NodeContext ctx;                    ///< the old last node's context
  const LeafEdit* edit = nullptr;     ///< the append (new node, then END_LEVEL)
  std::span<const uint8_t> last_key;  ///< the old last key
};

// A page to store or split (TreeWriter::store): its header before the change and its entries
// with the change applied, in order, as views; or, from the leaf writer, the page's bytes with
// the change applied, decoded on demand.
struct SplitInput {
  BtreeHeader header;
  std::span<const EntryRef> entries;
  std::optional<EntryRef> end_bucket;  ///< nullopt: END_LEVEL
  long inserted = -1;                  ///< the just-inserted entry's index, or -1
  std::span<const uint8_t> bytes;      ///< over-full page: header, jump table, nodes (any length)
  uint32_t inserted_offset = 0;        ///< the inserted node's offset in `bytes`
  SplitScratch* scratch = nullptr;     ///< decode buffers for `bytes`
  RightmostAppend* append = nullptr;   ///< the rightmost append, split in the frame
};

// What TreeWriter::store did.
struct SplitResult {
  bool split = false;
  uint32_t new_page = 0;      ///< the right half
  uint32_t right_length = 0;  ///< its btr_length
  bool in_frame = false;      ///< the rightmost split inside the leaf's frame
};

// One insert or remove: the path taken down (path[level] = page number), pages to give back
// at the end, and the page-level operations. Pages are read without latches (the writer is
// the only thread that changes pages) and written under exclusive latches.
struct BTree::TreeWriter {
  BTree& t;
  const uint32_t ps;
  std::vector<uint32_t> path;
  std::vector<uint32_t> freed;
  std::vector<uint8_t> buf;
  std::vector<uint8_t> left_buf;  // the left half of a split (sized on first use)
  std::vector<uint8_t> scratch_key_, scratch_key2_, scratch_key3_;
  NodeContext x_prev_ctx_;  // locate_in_leaf: the context its node was decoded with

  explicit TreeWriter(BTree& tree) : t(tree), ps(tree.pool_.page_size()), buf(ps) {}

  // A dry run (issue 30: the level limit is checked before anything changes): the same
  // operation, its pages written to `shadow` instead of the pool, new pages numbered with
  // stand-ins of the longest varint (a page built never smaller than the real run's), the
  // root kept in `dry_root`. A split that would add a level beyond level_limit() throws
  // UsageError "index N: the <dry_op> would exceed L levels (nothing changed)".
  const char* dry_op = nullptr;
  std::unordered_map<uint32_t, std::vector<uint8_t>> shadow;
  uint32_t dry_root = 0;
  uint32_t next_stand_in = 0xF0000000u;
  void start_dry_run(const char* op) {
    dry_op = op;
    dry_root = t.root();
  }
  uint32_t root() const { return dry_op ? dry_root : t.root(); }
  // The bytes of page `page_no` as this operation sees them (`ref` holds the pin).
  const uint8_t* view(uint32_t page_no, PageRef& ref);
  // A dry run's writable copy of page `page_no` (from the pool the first time).
  uint8_t* shadow_page(uint32_t page_no);
  uint32_t allocate() { return dry_op ? next_stand_in++ : t.allocator_.allocate(); }

  BtreePageImage read(uint32_t page_no);

  // Encodes into buf; returns btr_length or 0 if it does not fit.
  uint32_t encode(const BtreePageImage& img) { return encode_page(img, buf.data(), ps); }

  void write_buf(uint32_t page_no);

  // In-place paths: finds the node at or after (key, recno) on leaf page `d`, leaving the
  // previous node's full key in scratch_key_ and the found node's in scratch_key2_. Returns
  // false when the position is the page's first node or past its END_BUCKET (the caller then
  // takes the page image path).
  bool locate_in_leaf(const uint8_t* d, const BtreeHeader& h, std::span<const uint8_t> key,
                      uint64_t recno, IndexNode& x);

  // Removes (key, recno) from `leaf` in place (node/leaf_edit.h) when it is not the first
  // node, the page stays at least a quarter full and the jump table can be kept. Returns false
  // to fall back. Throws NotFoundError if the pair is absent.
  bool remove_in_place(uint32_t leaf, std::span<const uint8_t> key, uint64_t recno);

  // Leaf descent for (key, recno): fills path.
  uint32_t descend(std::span<const uint8_t> key, uint64_t recno);

  // The page at level + 1 holding the pointer to `child`, and the pointer's index in it.
  // Starts at path[level + 1] and walks right, then left (splits move pointers right).
  uint32_t find_parent(int level, uint32_t child, size_t& index);

  // ---- The one split (btree/split.cc) ----
  // Index at which to split `in.entries` (1 .. n-1): the middle by bytes (leaves: before the
  // entry crossing it; non-leaf pages: the nearer boundary), moved so both halves fit. Returns
  // 0 if no split point makes both fit. The image form is the merge's redistribution.
  size_t choose_split(const SplitInput& in, int level);
  size_t choose_split(const BtreePageImage& img, int level);

  // Left part [0, s) with END_BUCKET = entries[s]; right part [s, n) with the old END.
  std::pair<BtreePageImage, BtreePageImage> halves(const BtreePageImage& img, size_t s);
  // The halves of `in` at `s` encoded under header `h`, the left one into left_buf, the right
  // one into buf (btr_length, or 0 if the half does not fit). split_point leaves the halves of
  // the split point it returns there.
  uint32_t encode_left(const SplitInput& in, size_t s, const BtreeHeader& h) {
    if (left_buf.size() < ps) left_buf.resize(ps);
    if (from_nodes(in)) return half_from_nodes(in, 0, s, true, h, left_buf.data());
    return encode_page(h, in.entries.first(s), &in.entries[s], left_buf.data(), ps);
  }
  uint32_t encode_right(const SplitInput& in, size_t s, const BtreeHeader& h) {
    if (from_nodes(in)) return half_from_nodes(in, s, in.entries.size(), false, h, buf.data());
    return encode_page(h, in.entries.subspan(s), in.end_bucket ? &*in.end_bucket : nullptr,
                       buf.data(), ps);
  }
  // Halves of a Firebird-layout page given as node bytes are copied from them
  // (half_from_nodes): the same bytes as encode_page's.
  static bool from_nodes(const SplitInput& in) {
    return in.header.layout == NodeLayout::Firebird && !in.bytes.empty();
  }
  uint32_t half_from_nodes(const SplitInput& in, size_t b, size_t e, bool left,
                           const BtreeHeader& header, uint8_t* out);

  // Whether the rightmost-split rule and the end-of-page reserve apply to `in` at `level`:
  // the inserted entry is the last, on a leaf or a rightmost page.
  bool end_split_rule(int level, const SplitInput& in) const;
  // Where split() splits `in`: the rightmost split or choose_split (0: nowhere).
  size_t split_point(int level, const SplitInput& in);
  // The separator a split sends up between the left half's last key `last` and the right
  // half's first entry `first` (page number 0: the caller's).
  PageEntry split_separator(int level, NodeLayout layout, std::span<const uint8_t> last,
                            const EntryRef& first) const;
  // Throws UsageError if splitting `page_no` at `level` would add a level past the limit.
  void check_new_level(int level, uint32_t page_no) const;
  // Decodes in.bytes (the leaf writer's over-full page) into in.entries, in.end_bucket and
  // in.inserted, through in.scratch; nothing if entries are given. Throws CorruptError.
  void decode_entries(SplitInput& in);
  // Writes `img` to `page_no`, splitting if it does not fit. `inserted` is the index of a
  // just-inserted entry (for the rightmost-split rule) or -1. Returns true if it split.
  bool store(int level, uint32_t page_no, BtreePageImage& img, long inserted);
  // The same for a page given as SplitInput: written whole when encode_page's layout of it
  // fits (with the end-of-page reserve), else split.
  SplitResult store(int level, uint32_t page_no, SplitInput& in);
  // Splits the over-full page `in` of `page_no`: right half to a new page, then the left
  // half, the old right sibling's back pointer, and the separator posted up.
  SplitResult split(int level, uint32_t page_no, SplitInput& in);
  // The rightmost split of in.append inside the leaf's frame; {} (nothing changed) when the
  // old page with the new key's END_BUCKET copy does not fit.
  SplitResult split_in_frame(uint32_t leaf, SplitInput& in);
  // Sends `sep` up from `page_no` at `level`: a new root, or an insert into the parent (with
  // `append` set, at level 0, first tried as an append in the rightmost level-1 page's frame).
  void post_separator(int level, uint32_t page_no, PageEntry sep, WriterCache* append);

  void new_root(int level, uint32_t old_root, PageEntry sep);

  // The first entry of non-leftmost `page_no` is now `first`: fix the left sibling's
  // END_BUCKET and the separator in the parent (and up, while it is a parent's first entry).
  void fix_first(int level, uint32_t page_no, uint32_t left, const PageEntry& first);

  uint32_t read_left(uint32_t page_no);

  // Moves every entry of `right` into `left` (adjacent siblings, same level) and drops
  // `right`. Without `force`, only if the result fits in page_size - 256 bytes (Firebird's
  // garbage-collection limit); returns false otherwise. With `force` (`right` is empty) a
  // result that does not fit is spread over both pages instead.
  bool merge_pair(int level, uint32_t left, BtreePageImage& limg, uint32_t right,
                  BtreePageImage& rimg, bool force);

  // `m` (left + right contents) does not fit one page: split it over `left` and `right`.
  void redistribute(int level, uint32_t left, uint32_t right, BtreePageImage& m,
                    const BtreePageImage& rimg);

  // Removes entry `i` of page `page_no` (image `img`), then repairs: empty pages leave the
  // level, a new first entry is posted to the left sibling and parent, under-filled pages
  // merge with a sibling when both fit.
  void remove_at(int level, uint32_t page_no, BtreePageImage& img, size_t i);

  // Root with a single child: the child becomes the root (repeatedly).
  void shrink_root();

  void finish();
};

}  // namespace pbtree
