// BoundedLoad over the library's BulkLoader, LoadProgress and --memory parsing
// (tools/load_pipeline.h).
#include "tools/load_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ostream>

#include "tools/cli_errors.h"

namespace pbtree::tools {

namespace {

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

}  // namespace

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
  if (v < kMinBulkLoadMemory) {
    throw ArgumentError(fmt::format("--memory {} is below the least, 64K", text.substr(0, 40)));
  }
  return static_cast<size_t>(std::min<uint64_t>(v, SIZE_MAX / 2));
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

namespace {

// The library's options for a load with `memory` bytes whose sort buffer gets the three
// quarters that read_csv leaves after its chunks in flight; phases and counts go to `progress`
// ("read", the library's name for taking entries again after a spill, is the parse here).
BulkLoadOptions bulk_options(size_t memory, std::string temp_dir, LoadProgress& progress) {
  BulkLoadOptions o;
  o.memory = std::max(memory, kMinBulkLoadMemory);
  o.buffer_bytes = o.memory - o.memory / 4;
  o.temp_dir = std::move(temp_dir);
  o.on_phase = [&progress](std::string_view phase, uint64_t done, uint64_t total) {
    progress.phase(phase == "read" ? std::string("parse") : std::string(phase), done, total);
  };
  o.on_progress = [&progress](uint64_t done) { progress.set(done); };
  return o;
}

}  // namespace

BoundedLoad::BoundedLoad(const IndexDefinition& def, size_t memory, std::string temp_dir,
                         std::string input, LoadProgress& progress)
    : memory_(std::max(memory, kMinBulkLoadMemory)),
      input_(std::move(input)),
      progress_(progress),
      loader_(def, bulk_options(memory, std::move(temp_dir), progress)) {}

BoundedLoad::~BoundedLoad() = default;

KeyFormatChoice BoundedLoad::sample(uint32_t page_size) {
  return loader_.choose_key_format(page_size);
}

void BoundedLoad::switch_format(KeyFormat format) {
  try {
    loader_.switch_key_format(format);
  } catch (const EntryKeyError& e) {
    throw InputError(input_, e.tag, e.what());
  }
}

IndexInfo BoundedLoad::build(IndexFile& file) {
  const IndexDefinition def = loader_.definition();
  try {
    IndexInfo info = loader_.build(file);
    progress_.finish();
    return info;
  } catch (const EntryKeyError& e) {
    progress_.finish();
    throw InputError(input_, e.tag, e.what());
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
                                 def.name, e.value, earlier));
  }
}

}  // namespace pbtree::tools
