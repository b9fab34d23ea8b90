// BoundedLoad, CsvChunkSource, LoadProgress and --memory parsing (tools/load_pipeline.h).
#include "tools/load_pipeline.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <ostream>

#include "btree/radix_sort.h"
#include "tools/cli_errors.h"

namespace pbtree::tools {

namespace {

size_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

// "1.25 M", "830 k", "12": a rate for the progress line.
std::string short_number(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

std::string duration_text(double seconds) {
  const uint64_t s = static_cast<uint64_t>(seconds + 0.5);
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
  return fmt::format("{} h {} min", s / 3600, s / 60 % 60);
}

// The entries of a sorted batch as a stream.
class BatchEntries : public SortedEntrySource {
 public:
  explicit BatchEntries(const EntryBatch& batch) : batch_(batch) {}
  bool next(SortedEntry& e) override {
    if (at_ == batch_.size()) return false;
    // Sorted items point all over the key arena: fetch a key a few items ahead.
    if (at_ + 16 < batch_.size()) __builtin_prefetch(batch_.key(batch_.items()[at_ + 16]).data());
    const EntryBatch::Item& it = batch_.items()[at_++];
    e.key = batch_.key(it);
    e.recno = it.recno;
    e.tag = it.tag;
    return true;
  }

 private:
  const EntryBatch& batch_;
  size_t at_ = 0;
};

// Counts the entries of another stream for the progress line.
class CountedEntries : public SortedEntrySource {
 public:
  CountedEntries(SortedEntrySource& inner, LoadProgress& progress)
      : inner_(inner), progress_(progress) {}
  bool next(SortedEntry& e) override {
    if (!inner_.next(e)) return false;
    progress_.set(++count_);
    return true;
  }

 private:
  SortedEntrySource& inner_;
  LoadProgress& progress_;
  uint64_t count_ = 0;
};

// Keys of another stream re-encoded from format `from` into def's format.
class ReencodedEntries : public SortedEntrySource {
 public:
  ReencodedEntries(SortedEntrySource& inner, const IndexDefinition& def, KeyFormat from,
                   const std::string& input)
      : inner_(inner), def_(def), from_(from), input_(input) {}
  bool next(SortedEntry& e) override {
    if (!inner_.next(e)) return false;
    try {
      const Value v = key_to_value(def_.type, from_, def_.descending, e.key, storage_);
      build_key(def_.type, def_.format, v, def_.descending, key_);
    } catch (const KeyError& err) {
      throw InputError(input_, e.tag, err.what());
    }
    e.key = key_.bytes();
    return true;
  }

 private:
  SortedEntrySource& inner_;
  const IndexDefinition& def_;
  KeyFormat from_;
  const std::string& input_;
  std::string storage_;
  KeyBuffer key_;
};

}  // namespace

// A batch with room reserved for a chunk of `memory` bytes: no reallocation while it fills
// (untouched reserved pages cost no memory).
void reserve_chunk(EntryBatch& batch, size_t memory) {
  const size_t cap = std::max<size_t>(physical_memory() / 2, size_t{64} << 20);
  batch.reserve(std::min(memory, cap) / kSortBytesPerEntry + 1, std::min(memory, cap));
}

size_t default_load_memory() {
  const size_t def = size_t{256} << 20;
  const size_t ram = physical_memory();
  if (ram == 0) return def;
  return std::max(kMinLoadMemory, std::min(def, ram / 4));
}

size_t parse_memory_size(const std::string& text) {
  const std::string bad =
      fmt::format("bad memory size '{}' (want bytes, e.g. 256M or 1G)", text.substr(0, 40));
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ptr == text.data() || ec != std::errc()) throw ArgumentError(bad);
  std::string suffix(ptr, end);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!suffix.empty()) {
    const char unit = suffix[0];
    const std::string rest = suffix.substr(1);
    if (unit == 'B' && rest.empty()) {
      shift = 0;
    } else if ((unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T') &&
               (rest.empty() || rest == "B" || rest == "IB")) {
      shift = unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 40;
    } else {
      throw ArgumentError(bad);
    }
  }
  if (shift != 0 && v > (UINT64_MAX >> shift)) throw ArgumentError(bad);
  v <<= shift;
  if (v < kMinLoadMemory) {
    throw ArgumentError(fmt::format("--memory {} is below the least, 64K", text.substr(0, 40)));
  }
  return static_cast<size_t>(std::min<uint64_t>(v, SIZE_MAX / 2));
}

bool CsvChunkSource::next_chunk(EntryBatch& batch, size_t max_bytes,
                                const std::function<void(uint64_t)>& on_rows) {
  if (state_.ended) return false;
  // In steps of a few MiB, so that the progress line moves while a large buffer fills.
  constexpr size_t kStep = size_t{4} << 20;
  for (size_t limit = std::min(kStep, max_bytes);; limit = std::min(limit + kStep, max_bytes)) {
    read_entry_chunk(reader_, source_, batch, state_, limit);
    if (on_rows) on_rows(state_.rows);
    if (state_.ended || limit == max_bytes) break;
  }
  return batch.size() > 0;
}

double CsvChunkSource::fraction_read() const {
  if (input_bytes_ == 0) return -1;
  return std::min(1.0,
                  static_cast<double>(reader_.bytes_read()) / static_cast<double>(input_bytes_));
}

LoadProgress::LoadProgress(Progress* progress, std::ostream* messages, const std::string& index)
    : progress_(progress && progress->enabled() ? progress : nullptr),
      messages_(messages),
      index_(index),
      load_start_(std::chrono::steady_clock::now()) {
  if (!progress_) return;
  progress_->set_detail([this] { return detail(); });
  ticker_ = std::thread([this] { tick(); });
}

LoadProgress::~LoadProgress() {
  if (!progress_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  ticker_.join();
  progress_->set_detail({});
}

void LoadProgress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(Progress::kRedrawMs),
                         [this] { return stop_; })) {
    if (progress_->line_open()) progress_->redraw(count_.load(std::memory_order_relaxed));
  }
}

void LoadProgress::phase(const std::string& phase, uint64_t done, uint64_t total) {
  if (!progress_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = phase;
  phase_start_count_ = done;
  total_ = total;
  phase_start_ = std::chrono::steady_clock::now();
  count_.store(done, std::memory_order_relaxed);
  const std::string label = "load " + index_ + ": " + phase;
  if (progress_->line_open()) {
    progress_->restart(label, done, total, "rows");  // the next phase in place
  } else {
    progress_->start(label, total, "rows");
    if (done != 0) progress_->restart(label, done, total, "rows");
  }
}

void LoadProgress::finish() {
  if (!progress_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!progress_->line_open()) return;
  progress_->set(count_.load(std::memory_order_relaxed));
  progress_->finish();
}

void LoadProgress::message(const std::string& text) {
  finish();
  if (messages_) {
    std::lock_guard<std::mutex> lock(mutex_);
    *messages_ << text << std::flush;
  }
}

std::string LoadProgress::detail() const {
  const auto now = std::chrono::steady_clock::now();
  const uint64_t done = progress_->done();
  const double fraction = fraction_.load(std::memory_order_relaxed);
  // Parsing is timed from the load's start (the sorts of full buffers in between included),
  // so its rate and ETA are those of reading the whole input; other phases from their start.
  const bool parse = phase_ == "parse";
  const double secs =
      std::chrono::duration<double>(now - (parse ? load_start_ : phase_start_)).count();
  const uint64_t base = parse ? 0 : phase_start_count_;
  const uint64_t moved = done > base ? done - base : 0;
  if (secs < 0.05 || moved == 0) return "";
  const double rate = static_cast<double>(moved) / secs;
  std::string s = fmt::format(", {} rows/s", short_number(rate));
  if (parse && fraction > 0) {
    s += fmt::format(", {:.0f}% of input", fraction * 100);
    if (fraction < 1) s += ", ETA " + duration_text(secs * (1 - fraction) / fraction);
  } else if (!parse && total_ > done) {
    s += ", ETA " + duration_text(static_cast<double>(total_ - done) / rate);
  }
  return s;
}

BoundedLoad::BoundedLoad(const IndexDefinition& def, size_t memory, std::string temp_dir,
                         std::string input, LoadProgress& progress)
    : def_(def),
      memory_(std::max(memory, kMinLoadMemory)),
      temp_dir_(std::move(temp_dir)),
      input_(std::move(input)),
      progress_(progress) {}

BoundedLoad::~BoundedLoad() = default;

void BoundedLoad::read(EntryChunkSource& chunks) {
  progress_.phase("parse", 0, 0);
  auto on_rows = [&](uint64_t rows) {
    progress_.set_input_fraction(chunks.fraction_read());
    progress_.set(rows);
  };
  while (true) {
    EntryBatch batch;
    reserve_chunk(batch, memory_);
    if (!chunks.next_chunk(batch, memory_, on_rows)) break;
    rows_ = chunks.rows();
    if (runs_.empty() && chunks.ended()) {
      batch_ = std::move(batch);  // all of the input in one buffer: no temporary file
      break;
    }
    spill(batch);
    progress_.phase("parse", rows_, 0);
  }
  rows_ = chunks.rows();
}

void BoundedLoad::spill(EntryBatch& batch) {
  if (batch.size() == 0) return;
  progress_.phase(fmt::format("sort run {}", runs_.size() + 1), rows_, 0);
  sort_entry_batch(batch, def_.descending);
  if (!file_) file_ = std::make_unique<RunFile>(temp_dir_);
  runs_.push_back(file_->append(batch, std::min<size_t>(size_t{1} << 20, memory_ / 8)));
  batch = EntryBatch();
}

void BoundedLoad::reduce() {
  if (reduced_ || runs_.empty()) return;
  reduced_ = true;
  const size_t fan_in = merge_fan_in(memory_, file_->max_key());
  uint64_t passes = 0;
  for (size_t r = runs_.size(); r > fan_in; r = (r + fan_in - 1) / fan_in) ++passes;
  if (passes == 0) return;
  progress_.phase("merge", 0, rows_ * passes);
  uint64_t written = 0;
  runs_ = reduce_runs(*file_, std::move(runs_), def_.descending, memory_,
                      [&] { progress_.set(++written); });
}

KeyFormatChoice BoundedLoad::sample(uint32_t page_size) {
  if (runs_.empty()) {
    progress_.phase("sample", 0, 0);
    return sample_key_format(batch_, def_, page_size);
  }
  reduce();
  progress_.phase("sample", 0, rows_);
  RunMerge merge(*file_, runs_, def_.descending, memory_);
  return sample_sorted_key_format(merge, def_, page_size, [&](uint64_t n) { progress_.set(n); });
}

void BoundedLoad::switch_format(KeyFormat format) {
  const KeyFormat from = def_.format;
  if (format == from) return;
  def_.format = format;
  if (!runs_.empty()) {
    if (!reencode_from_) reencode_from_ = from;
    return;
  }
  // In memory: a new batch in the new format, entry for entry.
  EntryBatch out;
  out.reserve(batch_.size(), batch_key_bytes(batch_));
  BatchEntries in(batch_);
  ReencodedEntries re(in, def_, from, input_);
  SortedEntry e;
  while (re.next(e)) out.add(e.key, e.recno, e.tag);
  batch_ = std::move(out);
}

IndexInfo BoundedLoad::build(IndexFile& file) {
  try {
    if (runs_.empty()) {
      // Sorted (parallel radix sort) and built (parallel leaf coding) by bulk_load, on the
      // caller's oneTBB arena and the file's build threads.
      progress_.phase("sort + build", 0, rows_);
      IndexInfo info = file.bulk_load(def_, batch_);
      progress_.set(rows_);
      progress_.finish();
      return info;
    }
    reduce();
    progress_.phase("merge + build", 0, rows_);
    RunMerge merge(*file_, runs_, def_.descending, memory_);
    std::optional<ReencodedEntries> re;
    SortedEntrySource* src = &merge;
    if (reencode_from_) src = &re.emplace(merge, def_, *reencode_from_, input_);
    CountedEntries counted(*src, progress_);
    IndexInfo info = file.bulk_load_sorted(def_, counted);
    progress_.finish();
    return info;
  } catch (const DuplicateKeyError& e) {
    progress_.finish();
    const uint64_t later = std::max(e.tag_a, e.tag_b), earlier = std::min(e.tag_a, e.tag_b);
    // feed_sorted_entries (file/sorted_feed.h) names equal (key, record number) "index I:
    // entry (...)", the unique rule "unique index I: ...".
    if (std::string_view(e.what()).rfind("unique index ", 0) != 0) {
      throw InputError(input_, later,
                       fmt::format("entry ({}, {}) appears twice (same as line {})", e.value,
                                   e.record_number, earlier));
    }
    throw InputError(input_, later,
                     fmt::format("unique index {}: value {} appears twice (same as line {})",
                                 def_.name, e.value, earlier));
  }
}

}  // namespace pbtree::tools
