// Figures pbtree reports: gstat statistics of an index, the structural check of a tree, the
// cost of a checkpoint and what opening recovered from the log. Plain structs; public.
#pragma once

#include <cstdint>
#include <vector>

namespace pbtree {

/// Firebird 3's gstat figures for one index (analyze_index in src/utilities/gstat/dba.epp), plus
/// ours.
struct IndexStats {
  uint32_t root_page = 0;
  uint32_t depth = 0;          ///< root level + 1
  uint64_t leaf_buckets = 0;   ///< leaf pages
  uint64_t nodes = 0;          ///< leaf nodes, END markers excluded
  double avg_node_length = 0;  ///< bytes, full encoded node incl. record number
  uint64_t total_dup = 0;
  uint64_t max_dup = 0;
  double avg_key_length = 0;  ///< bytes: flag + prefix/length bytes (gstat's approximation) + data
  double compression_ratio = 0;  ///< (avg prefix + avg data) / avg key length
  double avg_prefix_length = 0;
  double avg_data_length = 0;
  uint64_t clustering_factor = 0;
  double clustering_ratio = 0;
  uint64_t fill_distribution[5] = {0, 0, 0, 0, 0};  ///< leaves per 20% fill band
  uint64_t index_pages = 0;                         ///< all levels
  double bytes_per_entry = 0;                       ///< index_pages × page_size / nodes
  double avg_leaf_fill = 0;  ///< mean over leaves of (btr_length − h) / (page_size − h), 0..1
};

/// Figures of verify().
struct TreeCheck {
  uint32_t depth = 0;                 ///< levels
  uint64_t entries = 0;               ///< leaf entries
  std::vector<uint64_t> level_pages;  ///< pages per level, [0] = leaves
  double avg_leaf_fill = 0;           ///< mean (btr_length - 39) / (page_size - 39), 0..1
};

/// What one commit cost. Also kept in the file's header page (docs/FORMAT.md "Header page").
struct CommitStats {
  uint64_t checkpoint = 0;     ///< commit number (the header's counter)
  uint32_t pages_written = 0;  ///< pages of the batch, header included: logged at the commit,
                               ///< written in place when the log is checkpointed
  uint64_t bytes_written = 0;  ///< bytes those pages take in place: pages_written × page_size
  uint64_t bytes_synced = 0;   ///< bytes of the batch in the log made durable by fdatasync:
                               ///< frames × (24 + page_size) + 40
};

/// What opening found in the log.
struct WalRecovery {
  bool log_found = false;   ///< "<db>-wal" existed
  bool replayed = false;    ///< committed batches were checkpointed into the db file
  bool deferred = false;    ///< committed batches stay in the log (a reader holds a snapshot)
  uint32_t pages = 0;       ///< pages of those batches
  uint32_t frames = 0;      ///< frames of those batches (a page once per batch)
  uint64_t checkpoint = 0;  ///< their last commit number
  uint32_t discarded = 0;   ///< uncommitted frames dropped
  bool stale = false;       ///< a committed log that may not be used was dropped
};

}  // namespace pbtree
