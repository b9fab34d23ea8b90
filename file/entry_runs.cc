// RunFile, RunMerge and reduce_runs (file/entry_runs.h): run records written and read through
// buffers with pwrite / pread, merged with a binary heap of run cursors.
#include "file/entry_runs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/coding.h"

namespace pbtree {

namespace {

constexpr size_t kMaxVarint = 10;
constexpr size_t kRecordOverhead = 4 * kMaxVarint;  // prefix, suffix, recno, tag
constexpr size_t kMaxRunBuffer = size_t{1} << 20;

[[noreturn]] void throw_io(const std::string& dir, const char* operation) {
  const int e = errno;
  throw IoError(fmt::format("{}: temporary file: {}: {}", dir, operation, std::strerror(e)), e,
                operation, dir);
}

// Appends records to the end of a RunFile through a buffer.
class RunWriter {
 public:
  RunWriter(RunFile& file, size_t buffer_bytes)
      : file_(file),
        buf_(std::max(buffer_bytes, run_buffer_floor(file.max_key()))),
        start_(file.size()),
        at_(file.size()) {}

  void add(std::span<const uint8_t> key, uint64_t recno, uint64_t tag) {
    const size_t prefix = first_ ? 0 : common(prev_, key);
    const size_t suffix = key.size() - prefix;
    if (used_ + kRecordOverhead + suffix > buf_.size()) flush();
    if (kRecordOverhead + suffix > buf_.size()) buf_.resize(kRecordOverhead + suffix);
    uint8_t* p = buf_.data() + used_;
    p += put_varint(prefix, p);
    p += put_varint(suffix, p);
    if (suffix != 0) std::memcpy(p, key.data() + prefix, suffix);
    p += suffix;
    p += put_varint(recno, p);
    p += put_varint(tag, p);
    used_ = static_cast<size_t>(p - buf_.data());
    prev_.assign(key.begin(), key.end());
    if (key.size() > max_key_) max_key_ = key.size();
    first_ = false;
    ++entries_;
  }

  RunFile::Run finish() {
    flush();
    return RunFile::Run{start_, at_ - start_, entries_};
  }

 private:
  static size_t common(const std::vector<uint8_t>& a, std::span<const uint8_t> b) {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
  }
  void flush() {
    if (used_ == 0) return;
    file_.write_at(at_, buf_.data(), used_);
    at_ += used_;
    file_.note_written(at_, max_key_);
    used_ = 0;
  }

  RunFile& file_;
  std::vector<uint8_t> buf_;
  size_t used_ = 0;
  const uint64_t start_;
  uint64_t at_;
  uint64_t entries_ = 0;
  std::vector<uint8_t> prev_;
  size_t max_key_ = 0;
  bool first_ = true;
};

}  // namespace

RunFile::RunFile(const std::string& dir) : dir_(dir.empty() ? "." : dir) {
#ifdef O_TMPFILE
  fd_ = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
#endif
  if (fd_ < 0) {
    // No O_TMPFILE here (or not on this file system): a named file, unlinked at once.
    std::string name = dir_ + "/pbtree-run-XXXXXX";
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0) {
      const int e = errno;
      throw IoError(fmt::format("{}: cannot create a temporary file: {}", dir_, std::strerror(e)),
                    e, "open", dir_);
    }
    ::unlink(name.c_str());
  }
}

RunFile::~RunFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RunFile::write_at(uint64_t offset, const uint8_t* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd_, data, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw_io(dir_, "write");
    }
    data += w;
    offset += static_cast<uint64_t>(w);
    n -= static_cast<size_t>(w);
  }
}

void RunFile::read_at(uint64_t offset, uint8_t* data, size_t n) const {
  while (n > 0) {
    const ssize_t r = ::pread(fd_, data, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw_io(dir_, "read");
    }
    if (r == 0) throw IoError(fmt::format("{}: temporary file: read past its end", dir_));
    data += r;
    offset += static_cast<uint64_t>(r);
    n -= static_cast<size_t>(r);
  }
}

RunFile::Run RunFile::append(const EntryBatch& batch, size_t buffer_bytes) {
  RunWriter w(*this, buffer_bytes);
  const auto& items = batch.items();
  // Sorted items point all over the key arena: fetch keys a few items ahead (each read
  // otherwise waits for memory).
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i + kAhead < items.size()) __builtin_prefetch(batch.key(items[i + kAhead]).data());
    w.add(batch.key(items[i]), items[i].recno, items[i].tag);
  }
  return w.finish();
}

void RunFile::release(const Run& run) {
#if defined(FALLOC_FL_PUNCH_HOLE) && defined(FALLOC_FL_KEEP_SIZE)
  if (run.bytes != 0) {
    (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      static_cast<off_t>(run.offset), static_cast<off_t>(run.bytes));
  }
#else
  (void)run;
#endif
}

size_t run_buffer_floor(size_t max_key) {
  return std::max<size_t>(4096, 2 * (max_key + kRecordOverhead));
}

size_t merge_fan_in(size_t memory_bytes, size_t max_key) {
  const size_t k = memory_bytes / run_buffer_floor(max_key);
  return std::clamp<size_t>(k > 0 ? k - 1 : 0, 2, 1024);
}

// One run being read: its current entry and a buffer of the bytes after it.
struct RunMerge::Cursor {
  Cursor(const RunFile& file, const RunFile::Run& run, size_t buffer_bytes)
      : file(file),
        at(run.offset),
        end(run.offset + run.bytes),
        left(run.entries),
        record_max(file.max_key() + kRecordOverhead),
        buf(std::max(buffer_bytes, run_buffer_floor(file.max_key()))) {}

  // Reads the next record into key/recno/tag; false at the end of the run.
  bool advance() {
    if (left == 0) return false;
    if (len - pos < record_max && at < end) refill();
    const uint8_t* p = buf.data() + pos;
    const uint8_t* const stop = buf.data() + len;
    uint64_t prefix = 0, suffix = 0;
    if (!varint(p, stop, prefix) || !varint(p, stop, suffix) || prefix > key.size() ||
        suffix > static_cast<size_t>(stop - p)) {
      malformed();
    }
    key.resize(prefix + suffix);
    if (suffix != 0) std::memcpy(key.data() + prefix, p, suffix);
    p += suffix;
    if (!varint(p, stop, recno) || !varint(p, stop, tag)) malformed();
    // The first 8 key bytes as a big-endian word, padded with `pad`: most comparisons of
    // the merge end on it (RunMerge::less).
    uint8_t w[8];
    std::memset(w, pad, sizeof w);
    if (!key.empty()) std::memcpy(w, key.data(), std::min<size_t>(8, key.size()));
    std::memcpy(&word, w, sizeof w);
    word = __builtin_bswap64(word);
    pos = static_cast<size_t>(p - buf.data());
    --left;
    return true;
  }

  void refill() {
    std::memmove(buf.data(), buf.data() + pos, len - pos);
    len -= pos;
    pos = 0;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size() - len, end - at));
    file.read_at(at, buf.data() + len, n);
    at += n;
    len += n;
  }

  static bool varint(const uint8_t*& p, const uint8_t* stop, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < stop; shift += 7) {
      const uint8_t b = *p++;
      v |= uint64_t{b & 0x7Fu} << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }

  [[noreturn]] void malformed() const {
    throw CorruptError(fmt::format("{}: temporary file: malformed run record", file.dir()));
  }

  const RunFile& file;
  uint64_t at, end, left;
  size_t record_max;
  std::vector<uint8_t> buf;
  size_t pos = 0, len = 0;
  std::vector<uint8_t> key;
  uint64_t recno = 0, tag = 0;
  uint8_t pad = 0;    // 00 ascending, FF descending (a shorter key sorts after its extensions)
  uint64_t word = 0;  // key's first 8 bytes, padded, big-endian
};

RunMerge::RunMerge(const RunFile& file, const std::vector<RunFile::Run>& runs, bool descending,
                   size_t memory_bytes)
    : descending_(descending) {
  const size_t each = std::min(kMaxRunBuffer, memory_bytes / std::max<size_t>(runs.size(), 1));
  for (const RunFile::Run& r : runs) {
    auto c = std::make_unique<Cursor>(file, r, each);
    c->pad = descending ? 0xFF : 0x00;
    if (c->advance()) {
      heap_.push_back(cursors_.size());
      cursors_.push_back(std::move(c));
    }
  }
  for (size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
}

RunMerge::~RunMerge() = default;

bool RunMerge::less(size_t a, size_t b) const {
  const Cursor& x = *cursors_[a];
  const Cursor& y = *cursors_[b];
  // Padded words that differ order the keys as compare_keys does (the radix sort's rule,
  // btree/radix_sort.h); equal words need the whole keys.
  if (x.word != y.word) return x.word < y.word;
  const int c = compare_keys(x.key, y.key, descending_);
  if (c != 0) return c < 0;
  if (x.recno != y.recno) return x.recno < y.recno;
  return x.tag < y.tag;
}

void RunMerge::sift_down(size_t i) {
  const size_t n = heap_.size();
  while (true) {
    const size_t l = 2 * i + 1;
    if (l >= n) return;
    size_t m = l;
    if (l + 1 < n && less(heap_[l + 1], heap_[l])) m = l + 1;
    if (!less(heap_[m], heap_[i])) return;
    std::swap(heap_[m], heap_[i]);
    i = m;
  }
}

bool RunMerge::next(SortedEntry& entry) {
  if (pending_) {
    pending_ = false;
    if (!cursors_[heap_[0]]->advance()) {
      heap_[0] = heap_.back();
      heap_.pop_back();
    }
    if (!heap_.empty()) sift_down(0);
  }
  if (heap_.empty()) return false;
  const Cursor& c = *cursors_[heap_[0]];
  entry.key = c.key;
  entry.recno = c.recno;
  entry.tag = c.tag;
  pending_ = true;
  return true;
}

std::vector<RunFile::Run> reduce_runs(RunFile& file, std::vector<RunFile::Run> runs,
                                      bool descending, size_t memory_bytes,
                                      const std::function<void()>& on_entry) {
  const size_t fan_in = merge_fan_in(memory_bytes, file.max_key());
  while (runs.size() > fan_in) {
    std::vector<RunFile::Run> next;
    for (size_t i = 0; i < runs.size(); i += fan_in) {
      const size_t n = std::min(fan_in, runs.size() - i);
      std::vector<RunFile::Run> group(runs.begin() + static_cast<ptrdiff_t>(i),
                                      runs.begin() + static_cast<ptrdiff_t>(i + n));
      if (n == 1) {
        next.push_back(group[0]);
        continue;
      }
      const size_t share = memory_bytes / (n + 1);
      RunMerge merge(file, group, descending, share * n);
      RunWriter out(file, std::min(kMaxRunBuffer, share));
      SortedEntry e;
      while (merge.next(e)) {
        out.add(e.key, e.recno, e.tag);
        if (on_entry) on_entry();
      }
      next.push_back(out.finish());
      for (const RunFile::Run& r : group) file.release(r);
    }
    runs = std::move(next);
  }
  return runs;
}

}  // namespace pbtree
