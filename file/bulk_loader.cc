// BulkLoader (<pbtree/bulk_loader.h>): the entry buffer and its spills as sorted runs
// (file/entry_runs.h), the merge of the runs into the build, the --key-format auto sample and
// the re-encoding of keys into another format.
#include <fmt/format.h>
#include <pbtree/bulk_loader.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "btree/radix_sort.h"
#include "btree/what_if.h"
#include "file/entry_runs.h"

namespace pbtree {

namespace {

size_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

// Room in `batch` (empty) for a buffer of `memory` bytes (at most half the physical memory): no
// reallocation while it fills, and reserved pages never touched cost no memory.
void reserve_buffer(EntryBatch& batch, size_t memory) {
  const size_t cap = std::max<size_t>(physical_memory() / 2, size_t{64} << 20);
  batch.reserve(std::min(memory, cap) / kBulkLoadBytesPerEntry + 1, std::min(memory, cap));
}

// The entries of a batch as a stream: in item order (a sorted batch), or through an index
// permutation sorted here into index order (key, then record number), the batch itself then not
// reordered.
class BatchEntries : public SortedEntrySource {
 public:
  explicit BatchEntries(const EntryBatch& batch) : batch_(batch) {}
  BatchEntries(const EntryBatch& batch, bool descending) : batch_(batch), permuted_(true) {
    const auto& items = batch.items();
    order_.resize(items.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<uint32_t>(i);
    std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      const int c = compare_keys(batch.key(items[a]), batch.key(items[b]), descending);
      return c != 0 ? c < 0 : items[a].recno < items[b].recno;
    });
  }
  bool next(SortedEntry& e) override {
    if (at_ == batch_.size()) return false;
    const auto& items = batch_.items();
    // Sorted items point all over the key arena: fetch a key a few items ahead.
    if (!permuted_ && at_ + 16 < batch_.size())
      __builtin_prefetch(batch_.key(items[at_ + 16]).data());
    const EntryBatch::Item& it = items[permuted_ ? order_[at_] : at_];
    ++at_;
    e.key = batch_.key(it);
    e.recno = it.recno;
    e.tag = it.tag;
    return true;
  }

 private:
  const EntryBatch& batch_;
  bool permuted_ = false;
  std::vector<uint32_t> order_;
  size_t at_ = 0;
};

// Counts the entries of another stream for the progress hook.
class CountedEntries : public SortedEntrySource {
 public:
  CountedEntries(SortedEntrySource& inner, const std::function<void(uint64_t)>& on_progress)
      : inner_(inner), on_progress_(on_progress) {}
  bool next(SortedEntry& e) override {
    if (!inner_.next(e)) return false;
    if (on_progress_) on_progress_(++count_);
    return true;
  }

 private:
  SortedEntrySource& inner_;
  const std::function<void(uint64_t)>& on_progress_;
  uint64_t count_ = 0;
};

// Keys of another stream re-encoded from format `from` into def's format.
class ReencodedEntries : public SortedEntrySource {
 public:
  ReencodedEntries(SortedEntrySource& inner, const IndexDefinition& def, KeyFormat from)
      : inner_(inner), def_(def), from_(from) {}
  bool next(SortedEntry& e) override {
    if (!inner_.next(e)) return false;
    try {
      const Value v = key_to_value(def_.type, from_, def_.descending, e.key, storage_);
      build_key(def_.type, def_.format, v, def_.descending, key_);
    } catch (const KeyError& err) {
      throw EntryKeyError(err.what(), e.tag);
    }
    e.key = key_.bytes();
    return true;
  }

 private:
  SortedEntrySource& inner_;
  const IndexDefinition& def_;
  KeyFormat from_;
  std::string storage_;
  KeyBuffer key_;
};

// choose_key_format() over every kAutoSampleEvery-th entry of `sorted` (index order).
KeyFormatChoice sample_sorted(SortedEntrySource& sorted, const IndexDefinition& def,
                              uint32_t page_size, const std::function<void(uint64_t)>& on_entry) {
  WhatIfEstimator::Options o;
  o.type = def.type;
  o.source = def.format;
  o.descending = def.descending;
  o.page_size = page_size;
  o.layouts = {def.layout};
  WhatIfEstimator estimator(o);
  SortedEntry e;
  for (uint64_t i = 0; sorted.next(e); ++i) {
    if (i % kAutoSampleEvery == 0) estimator.add(e.key, e.recno);
    if (on_entry) on_entry(i + 1);
  }
  const uint64_t sampled = estimator.entries();
  return choose_key_format(def.type, def.layout, estimator.finish(), sampled);
}

}  // namespace

size_t default_bulk_load_memory() {
  const size_t def = size_t{256} << 20;
  const size_t ram = physical_memory();
  if (ram == 0) return def;
  return std::max(kMinBulkLoadMemory, std::min(def, ram / 4));
}

struct BulkLoader::State {
  IndexDefinition def;
  BulkLoadOptions opt;
  size_t memory = 0;  // for the merge
  size_t limit = 0;   // for the buffer
  EntryBatch batch;   // entries not yet spilled
  uint64_t entries = 0;
  std::unique_ptr<RunFile> file;
  std::vector<RunFile::Run> runs;
  bool input_ended = false;
  bool reduced = false;
  bool built = false;
  std::optional<KeyFormat> reencode_from;  // runs hold keys in this format

  void phase(std::string_view name, uint64_t done, uint64_t total) const {
    if (opt.on_phase) opt.on_phase(name, done, total);
  }
  void progress(uint64_t done) const {
    if (opt.on_progress) opt.on_progress(done);
  }
  void check_open() const {
    if (built) throw UsageError("bulk load: build() already ran");
  }

  void spill() {
    if (batch.size() == 0) return;
    phase(fmt::format("sort run {}", runs.size() + 1), entries, 0);
    sort_entry_batch(batch, def.descending);
    if (!file) file = std::make_unique<RunFile>(opt.temp_dir);
    runs.push_back(file->append(batch, std::min<size_t>(size_t{1} << 20, memory / 8)));
    batch = EntryBatch();
  }

  // After the last entry: over runs, the last buffer becomes one too.
  void end_input() {
    if (input_ended) return;
    input_ended = true;
    if (!runs.empty()) spill();
  }

  void reduce() {
    if (reduced || runs.empty()) return;
    reduced = true;
    const size_t fan_in = merge_fan_in(memory, file->max_key());
    uint64_t passes = 0;
    for (size_t r = runs.size(); r > fan_in; r = (r + fan_in - 1) / fan_in) ++passes;
    if (passes == 0) return;
    phase("merge", 0, entries * passes);
    uint64_t written = 0;
    runs =
        reduce_runs(*file, std::move(runs), def.descending, memory, [&] { progress(++written); });
  }
};

BulkLoader::BulkLoader(const IndexDefinition& def, BulkLoadOptions options)
    : s_(std::make_unique<State>()) {
  if (def.name.empty()) throw UsageError("bulk load: the index has no name");
  s_->def = def;
  s_->memory = std::max(options.memory != 0 ? options.memory : default_bulk_load_memory(),
                        kMinBulkLoadMemory);
  s_->limit = options.buffer_bytes != 0 ? std::min(options.buffer_bytes, s_->memory) : s_->memory;
  if (options.temp_dir.empty()) options.temp_dir = ".";
  s_->opt = std::move(options);
  reserve_buffer(s_->batch, s_->limit);
}

BulkLoader::~BulkLoader() = default;
BulkLoader::BulkLoader(BulkLoader&&) noexcept = default;
BulkLoader& BulkLoader::operator=(BulkLoader&&) noexcept = default;

void BulkLoader::add(std::span<const uint8_t> key, uint64_t recno, uint64_t tag) {
  State& s = *s_;
  s.check_open();
  if (s.batch.size() != 0 &&
      bulk_load_bytes(s.batch.size() + 1, s.batch.key_bytes() + key.size()) > s.limit) {
    s.spill();
    reserve_buffer(s.batch, s.limit);
    s.phase("read", s.entries, 0);
  }
  s.batch.add(key, recno, tag);
  ++s.entries;
}

void BulkLoader::add(EntryBatch&& entries) {
  State& s = *s_;
  s.check_open();
  if (bulk_load_bytes(s.batch.size() + entries.size(), s.batch.key_bytes() + entries.key_bytes()) <=
      s.limit) {
    s.entries += entries.size();
    s.batch.append(std::move(entries));
    return;
  }
  // The buffer fills within these entries: one by one up to the budget.
  for (const EntryBatch::Item& it : entries.items()) add(entries.key(it), it.recno, it.tag);
  entries = EntryBatch();
}

uint64_t BulkLoader::entries() const {
  return s_->entries;
}
size_t BulkLoader::runs() const {
  return s_->runs.size();
}
const IndexDefinition& BulkLoader::definition() const {
  return s_->def;
}

KeyFormatChoice BulkLoader::choose_key_format(uint32_t page_size) {
  State& s = *s_;
  s.check_open();
  s.end_input();
  if (s.runs.empty()) {
    s.phase("sample", 0, s.entries);
    BatchEntries in_order(s.batch, s.def.descending);
    return sample_sorted(in_order, s.def, page_size, [&](uint64_t n) { s.progress(n); });
  }
  s.reduce();
  s.phase("sample", 0, s.entries);
  RunMerge merge(*s.file, s.runs, s.def.descending, s.memory);
  IndexDefinition in = s.def;
  if (s.reencode_from) in.format = *s.reencode_from;  // sampled as the runs hold them
  return sample_sorted(merge, in, page_size, [&](uint64_t n) { s.progress(n); });
}

void BulkLoader::switch_key_format(KeyFormat format) {
  State& s = *s_;
  s.check_open();
  check_key_format(s.def.type, format);
  const KeyFormat from = s.def.format;
  if (format == from) return;
  s.end_input();
  s.def.format = format;
  if (!s.runs.empty()) {
    if (!s.reencode_from) s.reencode_from = from;
    if (*s.reencode_from == format) s.reencode_from.reset();
    return;
  }
  // In memory: a new batch in the new format, entry for entry.
  EntryBatch out;
  out.reserve(s.batch.size(), s.batch.key_bytes());
  BatchEntries in(s.batch);
  ReencodedEntries re(in, s.def, from);
  SortedEntry e;
  while (re.next(e)) out.add(e.key, e.recno, e.tag);
  s.batch = std::move(out);
}

IndexInfo BulkLoader::build(IndexFile& file) {
  State& s = *s_;
  s.check_open();
  s.end_input();
  s.built = true;
  if (s.runs.empty()) {
    // Sorted (parallel radix sort) and built (parallel leaf coding) by bulk_load, on the
    // caller's oneTBB arena and the file's build threads.
    s.phase("sort + build", 0, s.entries);
    IndexInfo info = file.bulk_load(s.def, s.batch);
    s.progress(s.entries);
    s.batch = EntryBatch();
    return info;
  }
  s.reduce();
  s.phase("merge + build", 0, s.entries);
  RunMerge merge(*s.file, s.runs, s.def.descending, s.memory);
  std::optional<ReencodedEntries> re;
  SortedEntrySource* src = &merge;
  if (s.reencode_from) src = &re.emplace(merge, s.def, *s.reencode_from);
  CountedEntries counted(*src, s.opt.on_progress);
  return file.bulk_load_sorted(s.def, counted);
}

}  // namespace pbtree
