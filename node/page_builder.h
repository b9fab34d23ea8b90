// PageBuilder: the one assembly of a B-tree page from nodes taken one at a time, shared by the
// bulk loader (btree/bulk_build.cc, serial and parallel), the batch-insert run builder
// (btree/leaf_run_builder.cc) and the whole-page codec of the splits (encode_page,
// node/page_image.cc). It codes each node (prefix against the node before, explicit or
// relative form), records jump nodes, and closes the page: jump table in front of the nodes,
// then the header (node/btree_page.h). Two jump-node rules live here as its callers use them:
// fast_load's (place(): Firebird pages take the first node ending beyond each jump area if its
// jump node still fits below the limit; compact pages choose the target before coding it, by
// its start) and the whole-page rule of JumpPlan (node/jump_table.h), applied by encode_page
// through append(). Which rule, the fill limit and separator truncation are the callers'
// policy; the bytes of a node, a jump node and a header are written only here.
//
// A builder writes nodes into a buffer at page offsets without the jump table (the first at
// kBtreeHeaderSize), or with no buffer only measures (the same decisions from node sizes, for
// the parallel loader's page-break pass).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "node/btree_page.h"
#include "node/node.h"

namespace pbtree {

class PageBuilder {
 public:
  /// Node sizes of one entry precomputed by a caller that only measures (bytes): `prefix`
  /// against the entry before, `fit` the fit-test size, `coded` the relative form against the
  /// entry before, `expl` the explicit form, `end` the END_BUCKET rewrite with this prefix.
  struct Sizes {
    uint16_t prefix, fit, coded, expl, end;
  };

  /// The Sizes of an entry node (`key`, `recno`, `child`) placed after the node of
  /// `prev_key`, `prev_recno` (an empty key and 0 for a tree's first node).
  static Sizes sizes(NodeLayout layout, bool leaf, std::span<const uint8_t> prev_key,
                     uint64_t prev_recno, std::span<const uint8_t> key, uint64_t recno,
                     uint32_t child);

  /// `page_size` bytes; `jump_interval` jumpAreaSize (0: no jump nodes); `leaf`: level 0.
  /// The limit starts at page_size.
  PageBuilder(uint32_t page_size, uint16_t jump_interval, NodeLayout layout, bool leaf) {
    reset(page_size, jump_interval, layout, leaf);
  }
  PageBuilder() = default;
  /// Configures the builder anew (keeps its buffers' capacity).
  void reset(uint32_t page_size, uint16_t jump_interval, NodeLayout layout, bool leaf);

  /// Bytes the page may take while filling (header, jump table, nodes): fast_load's limit.
  void set_limit(uint32_t limit) { limit_ = limit; }
  uint32_t limit() const { return limit_; }

  /// Starts an empty page whose nodes go to `area` (page_size bytes, zeroed here), or, with
  /// nullptr, only measures. Forgets the nodes placed before.
  void start(uint8_t* area);
  /// Starts a page in `area` (as start) whose first node is the last node of the page before
  /// (fast_load's page break: full key, explicit form, prefix 0).
  void restart(uint8_t* area);

  /// Prefix of `key` against the last node placed (bytes).
  uint32_t prefix(std::span<const uint8_t> key) const;
  /// fast_load's fit-test size of an entry node with `prefix`: on compact pages the explicit
  /// END_BUCKET it may become, otherwise the node itself (explicit form).
  uint32_t fit_size(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                    uint32_t prefix) const;
  /// True if a node of fit size `fit` still fits below the limit.
  bool fits(uint32_t fit) const { return length_ + jump_total_ + fit <= limit_; }

  /// The first node of a page (prefix 0), explicit: a page's first node is decoded without a
  /// predecessor (put() codes every node at the page's start explicit). No jump node.
  void place_first(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                   const Sizes* sizes = nullptr);
  /// The degenerate first node of a non-leaf level (empty key, record number 0 -> `child`);
  /// the first jump area starts after it.
  void place_degenerate(uint32_t child);
  /// Places an entry node after the last one by fast_load's rules (prefix and fit from
  /// prefix() / fit_size(), or from `sizes` when measuring): on compact pages, if
  /// `may_target`, it becomes a jump target (explicit) when it starts beyond the jump area
  /// and its jump node fits; on Firebird pages when it ends beyond it and its jump node fits.
  /// `explicit_form`: code it explicit regardless.
  void place(std::span<const uint8_t> key, uint64_t recno, uint32_t child, uint32_t prefix,
             uint32_t fit, bool may_target, bool explicit_form = false,
             const Sizes* sizes = nullptr);
  /// Rewrites the last node as END_BUCKET (explicit; fast_load's page break).
  void end_bucket();
  /// Appends the END_BUCKET copy of a right neighbour's first entry (explicit; its prefix
  /// counted in btr_prefix_total if `count_prefix`). Its size: end_bucket_size().
  void append_end_bucket(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                         bool count_prefix);
  uint32_t end_bucket_size(std::span<const uint8_t> key, uint64_t recno, uint32_t child) const;
  /// Appends END_LEVEL.
  void append_end_level();

  /// Whole-page rule (encode_page): appends `kind` (Entry or EndBucket) with its prefix
  /// against the node before; compact nodes relative unless first or `jump_target`; a jump
  /// node recorded for it if `jump_target`. Returns false, writing nothing, if the node would
  /// pass page_size.
  bool append(std::span<const uint8_t> key, uint64_t recno, uint32_t child, NodeKind kind,
              bool jump_target);

  /// The separator a page break sends up: the last node's key, or on `truncate` (and two
  /// nodes or more) the shortest prefix of it above the node before (record number then 0).
  std::span<const uint8_t> separator(bool truncate, uint64_t& recno) const;

  /// Bytes of header and nodes so far (jump table excluded).
  uint32_t length() const { return length_; }
  /// Page length once closed (header, jump table, nodes).
  uint32_t closed_length() const { return length_ + jump_total_; }
  /// Writes the page into `page` (page_size bytes; may be the area given to start): jump
  /// table, nodes, then `header` with btr_length, btr_prefix_total, btr_jump_interval,
  /// btr_jump_size, btr_jump_count and layout set here (generic bytes 4..15 left alone; when
  /// `page` is not the area, it is zeroed first). Throws std::logic_error past 255 jump nodes
  /// or on a compact page whose first node is not explicit.
  /// Returns the header written.
  BtreeHeader close(uint8_t* page, BtreeHeader header) const;

  uint32_t nodes() const { return nodes_; }
  uint32_t jump_count() const { return jump_count_; }
  std::span<const uint8_t> last_key() const { return key_; }
  uint64_t last_recno() const { return last_recno_; }
  uint32_t last_child() const { return last_child_; }

 private:
  // An empty page in `area` (nodes and last-node state kept).
  void clear_page(uint8_t* area);
  // Codes `f` at the end (explicit if ctx is null) and makes it the last node.
  void put(const NodeFields& f, const NodeContext* ctx, uint32_t measured);
  void add_jump(uint32_t offset, std::span<const uint8_t> jump_key, uint32_t jp);
  void set_last(std::span<const uint8_t> key, uint64_t recno, uint32_t child, uint32_t prefix);

  struct Jump {
    uint32_t offset;       // node start, without the jump table
    uint32_t prefix;       // bytes shared with the previous jump node's key
    uint32_t begin, size;  // its key bytes after the prefix, in jump_bytes_
  };

  uint32_t page_size_ = 0;
  uint16_t interval_ = 0;
  NodeLayout layout_ = NodeLayout::Firebird;
  bool leaf_ = true;
  bool compact_ = false;
  uint32_t limit_ = 0;
  uint8_t* area_ = nullptr;
  uint32_t length_ = 0;  // header and nodes, jump table excluded
  uint32_t prefix_total_ = 0;
  uint32_t jump_total_ = 0;
  uint32_t jump_count_ = 0;
  uint32_t new_area_ = 0;
  uint32_t nodes_ = 0;
  uint32_t last_offset_ = 0;
  uint32_t last_prefix_ = 0;
  uint64_t last_recno_ = 0;
  uint32_t last_child_ = 0;
  uint32_t last_end_size_ = 0;  // measured END_BUCKET size of the last node (0: unknown)
  std::vector<uint8_t> key_, prev_key_, jump_key_;
  std::vector<Jump> jumps_;
  std::vector<uint8_t> jump_bytes_;
};

}  // namespace pbtree
