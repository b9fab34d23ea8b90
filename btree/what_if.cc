// WhatIfEstimator: one FastLoader per (key format, layout) fed from a single stream of
// entries, pages counted and dropped by the sink; gstat's leaf figures (analyze_index,
// dba.epp) follow the stream, with the first node of every leaf page at prefix 0 (a leaf split
// moves the last node written to the new page, fast_load's rule, which the loader's page count
// reveals).
#include "btree/what_if.h"

#include <fmt/format.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <stdexcept>

#include "btree/btree.h"
#include "btree/bulk_build.h"
#include "btree/stats.h"
#include "util/bytes.h"

namespace pbtree {

namespace {

constexpr KeyFormat kAllFormats[] = {KeyFormat::Double, KeyFormat::RescaledDouble,
                                     KeyFormat::Decimal128, KeyFormat::Bcd, KeyFormat::Text};

}  // namespace

std::vector<KeyFormat> allowed_key_formats(const TypeSpec& type) {
  std::vector<KeyFormat> out{default_key_format(type)};
  for (KeyFormat f : kAllFormats) {
    if (f != out.front() && key_format_allowed(type, f)) out.push_back(f);
  }
  return out;
}

std::string_view layout_name(NodeLayout layout) {
  return layout == NodeLayout::Compact ? "compact" : "firebird";
}

struct WhatIfEstimator::Candidate {
  WhatIfRow row;
  uint32_t page_size = 0;
  std::unique_ptr<FastLoader> loader;
  uint64_t used_bytes = 0;
  uint64_t leaf_splits = 0;
  // The last entry given: its key and its (prefix, length) unless a split resets them.
  std::vector<uint8_t> prev;
  bool pending = false;
  uint32_t pending_prefix = 0, pending_length = 0;
  uint64_t run = 0;
  uint64_t sum_prefix = 0, sum_length = 0, sum_packed = 0;

  void commit() {
    if (!pending) return;
    sum_prefix += pending_prefix;
    sum_length += pending_length;
    sum_packed += packed_size(pending_prefix, pending_length);
    pending = false;
  }

  void add(std::span<const uint8_t> key, uint64_t recno, bool first) {
    const uint32_t prefix = first ? 0 : common_prefix(prev, key);
    if (!first && prefix == prev.size() && key.size() == prev.size()) {
      ++row.total_dup;
    }
    const uint32_t before = loader->pages_allocated();
    loader->add(key, recno);
    if (loader->pages_allocated() != before) {
      // A leaf split: the previous entry now opens the new leaf with prefix 0.
      ++leaf_splits;
      pending_length += pending_prefix;
      pending_prefix = 0;
    }
    commit();
    pending = true;
    pending_prefix = prefix;
    pending_length = static_cast<uint32_t>(key.size()) - prefix;
    prev.assign(key.begin(), key.end());
  }

  void finish(uint64_t nodes) {
    commit();
    loader->finish();
    row.nodes = nodes;
    row.depth = loader->depth();
    row.index_pages = loader->pages_allocated();
    row.leaf_pages = leaf_splits + 1;
    if (nodes > 0) {
      const double n = static_cast<double>(nodes);
      row.avg_prefix_length = sum_prefix / n;
      row.avg_data_length = sum_length / n;
      row.avg_key_length = sum_packed / n;
      row.compression_ratio =
          sum_packed == 0 ? 0 : static_cast<double>(sum_prefix + sum_length) / sum_packed;
      row.bytes_per_entry = static_cast<double>(row.index_pages) * page_size / n;
      row.leaf_bytes_per_entry = static_cast<double>(row.leaf_pages) * page_size / n;
      row.used_bytes_per_entry = used_bytes / n;
    }
    loader.reset();
  }
};

WhatIfEstimator::WhatIfEstimator(const Options& options) : options_(options) {
  if (options_.as_stored) {
    options_.formats = {options_.source};
  } else {
    check_key_format(options_.type, options_.source);
  }
  if (options_.formats.empty()) options_.formats = allowed_key_formats(options_.type);
  if (options_.layouts.empty()) options_.layouts = {NodeLayout::Firebird, NodeLayout::Compact};
  for (KeyFormat f : options_.formats) {
    if (!options_.as_stored) check_key_format(options_.type, f);
    std::string too_long;
    try {
      check_index_key_limit(options_.type, f, options_.descending, options_.page_size);
    } catch (const KeyError& e) {
      too_long = e.what();
    }
    for (NodeLayout l : options_.layouts) {
      auto c = std::make_unique<Candidate>();
      c->row.format = f;
      c->row.layout = l;
      c->row.current =
          options_.current && options_.current->first == f && options_.current->second == l;
      c->page_size = options_.page_size;
      if (!too_long.empty()) {
        c->row.unavailable = too_long;
      } else {
        c->row.available = true;
        FastLoader::Options o;
        o.page_size = options_.page_size;
        o.first_page = 2;  // a new file: header, index root page, then the tree
        o.jump_interval = layout_jump_interval(
            max_key_length(options_.type, f, options_.descending), options_.descending, l);
        o.layout = l;
        o.descending = options_.descending;
        Candidate* raw = c.get();
        const uint32_t page_size = options_.page_size;
        c->loader = std::make_unique<FastLoader>(o, [raw, page_size](uint32_t, uint8_t* page) {
          const BtreeHeader h = read_btree_header(page);
          raw->used_bytes += h.sibling == 0 ? h.length : page_size;
        });
      }
      candidates_.push_back(std::move(c));
    }
  }
}

WhatIfEstimator::~WhatIfEstimator() = default;

void WhatIfEstimator::add(std::span<const uint8_t> key, uint64_t recno) {
  if (recno > kMaxRecordNumber) {
    throw UsageError(fmt::format("record number {} over 2^40 - 1", recno));
  }
  const bool first = entries_ == 0;
  bool decoded = false;
  Value value;
  KeyBuffer buffer;
  // Candidates come grouped by format: encode once per format.
  KeyFormat encoded_format = options_.source;
  std::span<const uint8_t> encoded;
  bool have_encoded = false;
  for (auto& c : candidates_) {
    if (!c->row.available) continue;
    const KeyFormat f = c->row.format;
    if (!have_encoded || encoded_format != f) {
      if (f == options_.source) {
        encoded = key;
      } else {
        if (!decoded) {
          value = key_to_value(options_.type, options_.source, options_.descending, key, storage_);
          decoded = true;
        }
        build_key(options_.type, f, value, options_.descending, buffer);
        encoded = buffer.bytes();
      }
      encoded_format = f;
      have_encoded = true;
    }
    c->add(encoded, recno, first);
  }
  ++entries_;
}

std::vector<WhatIfRow> WhatIfEstimator::finish() {
  std::vector<WhatIfRow> rows;
  for (auto& c : candidates_) {
    if (c->row.available) c->finish(entries_);
    rows.push_back(c->row);
  }
  return rows;
}

KeyFormatChoice choose_key_format(const TypeSpec& type, NodeLayout layout,
                                  const std::vector<WhatIfRow>& rows, uint64_t sample_entries) {
  KeyFormatChoice choice;
  choice.default_format = default_key_format(type);
  choice.sample_entries = sample_entries;
  const WhatIfRow* def = nullptr;
  const WhatIfRow* best = nullptr;
  for (const WhatIfRow& r : rows) {
    if (r.layout != layout || !r.available) continue;
    if (r.format == choice.default_format) def = &r;
    if (best == nullptr || r.used_bytes_per_entry < best->used_bytes_per_entry) best = &r;
  }
  if (def == nullptr) {
    throw UsageError(fmt::format("choose_key_format: no {} row for the default format {}",
                                 layout_name(layout), key_format_name(choice.default_format)));
  }
  choice.best = best->format;
  choice.default_bytes = def->used_bytes_per_entry;
  choice.best_bytes = best->used_bytes_per_entry;
  choice.ratio = choice.best_bytes > 0 ? choice.default_bytes / choice.best_bytes : 1.0;
  choice.format = choice.ratio >= kAutoMinGain ? choice.best : choice.default_format;
  return choice;
}

}  // namespace pbtree
