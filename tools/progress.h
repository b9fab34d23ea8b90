// Progress lines on stderr for long reads and builds (`stat`, `verify`, `--what-if`, `load`,
// whose phases relabel one line in place, tools/load_pipeline.h): one line per item,
// redrawn in place with carriage returns at most a few times a second, ended with a newline.
// Shown when stderr is a terminal or when --progress forces it; otherwise every call is a
// no-op, so piped or captured stderr stays exactly as it was.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace pbtree::tools {

/// One progress reporter. Lines look like "stat: index I_X: 12,345 / 67,890 pages (18%)"
/// (or "what-if: index I: 12,345 entries" when the total is unknown, total = 0).
/// start() prints the line with a count of 0 at once; add()/set() check the clock only every
/// kCheckEvery counts and redraw when kRedrawMs have passed; finish() redraws with the final
/// count and ends the line with '\n'. Lines are padded with spaces to cover a longer previous
/// text. Not thread-safe.
class Progress {
 public:
  static constexpr uint64_t kCheckEvery = 256;  ///< counts between two clock reads
  static constexpr int kRedrawMs = 250;         ///< least time between two redraws

  /// `err`: where lines go (the CLI's stderr stream). Enabled if `forced` (--progress) or if
  /// file descriptor 2 is a terminal (isatty).
  Progress(std::ostream& err, bool forced);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  /// True between start() and finish().
  bool line_open() const { return open_; }

  /// Begins a line: `label` (e.g. "stat: index I"), the expected `total` (0: unknown) in
  /// `unit` ("pages", "entries"). Finishes a line still open.
  void start(const std::string& label, uint64_t total, const std::string& unit);
  /// Adds `n` to the count.
  void add(uint64_t n = 1) {
    if (!enabled_ || !open_) return;
    done_ += n;
    since_check_ += n;
    if (since_check_ >= kCheckEvery) check();
  }
  /// Sets the count to `done`.
  void set(uint64_t done) {
    if (!enabled_ || !open_) return;
    since_check_ += done > done_ ? done - done_ : 0;
    done_ = done;
    if (since_check_ >= kCheckEvery) check();
  }
  /// Redraws with the final count and ends the line (no-op if no line is open).
  void finish();
  /// finish() for work that turned out smaller than the total it was started with (a walk
  /// bounded by the file's page count): the total becomes the count, so the line ends at
  /// 100%.
  void complete();
  /// The open line gets a new label, count, `total` and `unit` (e.g. the next phase of a
  /// `load`) and is redrawn at once in place (no new line). No-op if no line is open.
  void restart(const std::string& label, uint64_t done, uint64_t total, const std::string& unit);
  /// Text appended to every later draw of the line (e.g. ", 1.2 M rows/s, ETA 5 s"); an empty
  /// function: none. Called only when a line is drawn.
  void set_detail(std::function<std::string()> detail) { detail_ = std::move(detail); }
  /// Sets the count to `done` and redraws the open line now (a timer's tick: also when the
  /// count stands still). No-op if no line is open.
  void redraw(uint64_t done);
  /// Count of the open line.
  uint64_t done() const { return done_; }

 private:
  void check();
  void draw(bool first);

  std::ostream& err_;
  bool enabled_ = false;
  bool open_ = false;
  std::string label_, unit_;
  uint64_t total_ = 0, done_ = 0, since_check_ = 0;
  size_t last_width_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
  std::function<std::string()> detail_;
};

/// `n` with a comma every three digits ("12,345").
std::string group_digits(uint64_t n);

}  // namespace pbtree::tools
