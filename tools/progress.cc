// Progress: carriage-return progress lines on stderr (tools/progress.h).
#include "tools/progress.h"

#include <fmt/format.h>
#include <unistd.h>

namespace pbtree::tools {

std::string group_digits(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

Progress::Progress(std::ostream& err, bool forced)
    : err_(err), enabled_(forced || ::isatty(2) == 1) {}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {
  }
}

void Progress::start(const std::string& label, uint64_t total, const std::string& unit) {
  if (!enabled_) return;
  finish();
  label_ = label;
  unit_ = unit;
  total_ = total;
  done_ = 0;
  since_check_ = 0;
  last_width_ = 0;
  open_ = true;
  draw(true);
}

void Progress::check() {
  since_check_ = 0;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ >= std::chrono::milliseconds(kRedrawMs)) draw(false);
}

void Progress::draw(bool first) {
  std::string text;
  if (total_ == 0) {
    text = fmt::format("{}: {} {}", label_, group_digits(done_), unit_);
  } else {
    const uint64_t pct = done_ >= total_ ? 100 : done_ * 100 / total_;
    text = fmt::format("{}: {} / {} {} ({}%)", label_, group_digits(done_), group_digits(total_),
                       unit_, pct);
  }
  if (detail_) text += detail_();
  const size_t width = text.size();
  if (width < last_width_) text.append(last_width_ - width, ' ');
  last_width_ = width;
  err_ << (first ? "" : "\r") << text << std::flush;
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::restart(const std::string& label, uint64_t done, uint64_t total,
                       const std::string& unit) {
  if (!enabled_ || !open_) return;
  label_ = label;
  unit_ = unit;
  total_ = total;
  done_ = done;
  since_check_ = 0;
  draw(false);
}

void Progress::redraw(uint64_t done) {
  if (!enabled_ || !open_) return;
  done_ = done;
  since_check_ = 0;
  draw(false);
}

void Progress::complete() {
  if (!enabled_ || !open_) return;
  total_ = done_;
  finish();
}

void Progress::finish() {
  if (!enabled_ || !open_) return;
  draw(false);
  err_ << "\n" << std::flush;
  open_ = false;
}

}  // namespace pbtree::tools
