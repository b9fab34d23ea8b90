// Pieces of the in-page search shared by node/page_search.cc (jump-table search) and
// node/page_directory.cc (in-memory directory search). Not included outside node/.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "node/node.h"
#include "node/page_search.h"

namespace pbtree::node_detail {

/// Compares the key a[0, na) + b[0, nb) with `key` in index order (compare_keys with
/// `descending`); `common` gets the bytes they share. Returns <0, 0, >0.
int compare_two_part(const uint8_t* a, uint32_t na, const uint8_t* b, uint32_t nb,
                     std::span<const uint8_t> key, bool descending, uint32_t& common);

/// Where the linear scan starts: the node at `pos`, after the node at `prev` (if have_prev)
/// that lies below the target and shares `matched` bytes with it; `ctx` is the context after
/// `prev`, `ctx_before_prev` the one `prev` is decoded with (if have_ctx_before_prev).
struct ScanStart {
  uint32_t pos = 0;
  uint32_t prev = 0;
  bool have_prev = false;
  NodeContext ctx, ctx_before_prev;
  bool have_ctx_before_prev = false;
  uint32_t matched = 0;
  /// `matched` is exactly the bytes prev's key shares with the target (a directory group's
  /// key was compared whole): the result's prev_known may be set for prev.
  bool prev_exact = false;
};

/// find_node_start_point: the linear scan with the prefix trick from `st` to the first node
/// not below the target (find_in_page's modes). Throws CorruptError.
PageFind scan_nodes(const uint8_t* page, uint32_t limit, bool leaf, std::span<const uint8_t> key,
                    bool descending, std::optional<uint64_t> recno, FindMode mode,
                    const ScanStart& st);

}  // namespace pbtree::node_detail
