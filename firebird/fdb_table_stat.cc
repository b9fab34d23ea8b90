// gstat's table figures: RDB$FORMATS lengths, the pointer-page walk, one pass over the data
// pages in file order (large reads), and the chains (versions, fragments, blob pages) that
// leave the page. Rules from src/utilities/gstat/dba.epp (Firebird 3.0 and 5.0).
#include "firebird/fdb_table_stat.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "firebird/fdb_records.h"

namespace pbtree::firebird {

namespace {

// Little-endian fields, inlined (the data pass reads millions of them).
inline uint16_t ld16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t ld32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Record header flags and sizes (fdb_records.h), data page layout (DPG_SIZE = 24).
constexpr uint16_t kChain = 2, kFragment = 4, kIncomplete = 8, kBlob = 16;
constexpr uint32_t kRhdSize = 13, kRhdfSize = 22, kBlhSize = 28;
constexpr uint32_t kDataHeader = 24, kPointerHeader = 32;
constexpr uint8_t kDpgOrphan = 1, kDpgFull = 2, kDpgSwept = 8, kDpgSecondary = 16;
constexpr uint16_t kFormatsRelation = 8;  // RDB$FORMATS
constexpr size_t kMaxFormatBlob = size_t{1} << 20;
constexpr int kBuckets = 5;

uint32_t ppg_next(const uint8_t* p) {
  return ld32(p + 20);
}
uint16_t ppg_count(const uint8_t* p) {
  return ld16(p + 24);
}
uint16_t ppg_relation(const uint8_t* p) {
  return ld16(p + 26);
}
uint32_t dpg_sequence(const uint8_t* p) {
  return ld32(p + 16);
}
uint16_t dpg_relation(const uint8_t* p) {
  return ld16(p + 20);
}
uint16_t dpg_count(const uint8_t* p) {
  return ld16(p + 22);
}
uint16_t line_offset(const uint8_t* p, uint32_t line) {
  return ld16(p + kDataHeader + 4 * line);
}
uint16_t line_length(const uint8_t* p, uint32_t line) {
  return ld16(p + kDataHeader + 4 * line + 2);
}
// Record header fields at a line's offset.
uint32_t rhd_b_page(const uint8_t* r) {
  return ld32(r + 4);
}
uint16_t rhd_b_line(const uint8_t* r) {
  return ld16(r + 8);
}
uint16_t rhd_flags(const uint8_t* r) {
  return ld16(r + 10);
}
uint8_t rhd_format(const uint8_t* r) {
  return r[12];
}
uint32_t rhdf_f_page(const uint8_t* r) {
  return ld32(r + 16);
}
uint16_t rhdf_f_line(const uint8_t* r) {
  return ld16(r + 20);
}

double ratio(uint64_t a, uint64_t b) {
  return b ? static_cast<double>(a) / b : 0.0;
}

// Line `line` of a data page: its record bytes, checked to lie inside the page after the line
// array and to hold at least `min_len` bytes. Returns nullptr for an empty line.
const uint8_t* line_record(const FdbFile& file, uint32_t page_no, const uint8_t* page,
                           uint32_t line, uint32_t min_len, uint16_t* len_out) {
  const uint32_t ps = file.page_size();
  const uint32_t count = dpg_count(page);
  const uint32_t off = line_offset(page, line), len = line_length(page, line);
  if (off == 0) return nullptr;
  if (off < kDataHeader + 4 * count || off + len > ps || len < min_len) {
    file.fail(
        page_no, FdbPage::Data,
        fmt::format("line {}: record at offset {} length {} outside the page", line, off, len));
  }
  if (len_out) *len_out = static_cast<uint16_t>(len);
  return page + off;
}

void check_line_array(const FdbFile& file, uint32_t page_no, const uint8_t* page) {
  if (kDataHeader + 4 * uint32_t{dpg_count(page)} > file.page_size()) {
    file.fail(page_no, FdbPage::Data,
              fmt::format("dpg_count {} does not fit the page", dpg_count(page)));
  }
}

// Reads pages for the chains that leave the page being analysed: from the chunk in memory
// when the page is in it, else one pread into a private buffer.
class PageSource {
 public:
  explicit PageSource(const FdbFile& file) : file_(file), one_(file.page_size()) {}
  void set_chunk(uint32_t first, uint32_t count, const uint8_t* bytes) {
    first_ = first;
    count_ = count;
    chunk_ = bytes;
  }
  // Page `n` with no type check (the callers test the type as gstat does).
  const uint8_t* page(uint32_t n) {
    if (chunk_ && n >= first_ && n - first_ < count_) {
      return chunk_ + size_t{n - first_} * file_.page_size();
    }
    if (n >= file_.page_count()) {
      file_.fail(n, FdbPage::Data,
                 fmt::format("beyond the end of the file ({} pages)", file_.page_count()));
    }
    file_.read_raw(uint64_t{n} * file_.page_size(), one_.data(), one_.size());
    return one_.data();
  }

 private:
  const FdbFile& file_;
  std::vector<uint8_t> one_;
  const uint8_t* chunk_ = nullptr;
  uint32_t first_ = 0, count_ = 0;
};

using FormatTable = std::array<int32_t, 256>;

class TableAnalyzer {
 public:
  TableAnalyzer(const FdbFile& file, PageSource& src) : file_(file), src_(src) {}

  // analyze_fragments: bytes of the fragments after `header` (their headers excluded).
  uint32_t fragments(FdbTableStats& s, uint16_t relation, const uint8_t* header) {
    uint32_t space = 0, count = 0;
    uint16_t flags = rhd_flags(header);
    uint32_t f_page = rhdf_f_page(header);
    uint16_t f_line = rhdf_f_line(header);
    std::set<std::pair<uint32_t, uint16_t>> seen;
    while (flags & kIncomplete) {
      if (!seen.insert({f_page, f_line}).second)
        file_.fail(f_page, FdbPage::Data, "fragment chain loops");
      const uint8_t* page = src_.page(f_page);
      if (page[0] != static_cast<uint8_t>(FdbPage::Data) || dpg_relation(page) != relation ||
          dpg_count(page) <= f_line) {
        break;
      }
      check_line_array(file_, f_page, page);
      if ((page[1] & (kDpgOrphan | kDpgFull)) && dpg_count(page) == 1) ++s.bigrec_pages;
      uint16_t len = 0;
      const uint8_t* r = line_record(file_, f_page, page, f_line, kRhdSize, &len);
      if (!r) break;
      space += len;
      space -= kRhdfSize;
      ++count;
      flags = rhd_flags(r);
      if (flags & kIncomplete) {
        if (len < kRhdfSize)
          file_.fail(f_page, FdbPage::Data,
                     fmt::format("line {}: fragment header cut short", f_line));
        f_page = rhdf_f_page(r);
        f_line = rhdf_f_line(r);
      }
    }
    s.fragments += count;
    s.fragment_space += space;
    s.max_fragments = std::max<uint64_t>(s.max_fragments, count);
    return space;
  }

  // analyze_versions: bytes of the back versions from (b_page, b_line) on.
  uint32_t versions(FdbTableStats& s, uint16_t relation, uint32_t b_page, uint16_t b_line) {
    uint32_t space = 0, count = 0;
    std::set<std::pair<uint32_t, uint16_t>> seen;
    while (b_page) {
      if (!seen.insert({b_page, b_line}).second)
        file_.fail(b_page, FdbPage::Data, "back version chain loops");
      const uint8_t* page = src_.page(b_page);
      if (page[0] != static_cast<uint8_t>(FdbPage::Data) || dpg_relation(page) != relation ||
          dpg_count(page) <= b_line) {
        break;
      }
      check_line_array(file_, b_page, page);
      uint16_t len = 0;
      const uint8_t* r = line_record(file_, b_page, page, b_line, kRhdSize, &len);
      if (!r) break;
      space += len;
      ++s.versions;
      ++count;
      const uint32_t next_page = rhd_b_page(r);
      const uint16_t next_line = rhd_b_line(r);
      if (rhd_flags(r) & kIncomplete) {
        if (len < kRhdfSize)
          file_.fail(b_page, FdbPage::Data,
                     fmt::format("line {}: fragment header cut short", b_line));
        uint8_t header[kRhdfSize];
        std::memcpy(header, r, kRhdfSize);  // the page buffer may be reused by fragments()
        space -= kRhdfSize;
        space += fragments(s, relation, header);
      } else {
        space -= kRhdSize;
      }
      b_page = next_page;
      b_line = next_line;
    }
    s.max_versions = std::max<uint64_t>(s.max_versions, count);
    return space;
  }

  // analyze_blob.
  void blob(FdbTableStats& s, uint32_t page_no, uint32_t line, const uint8_t* blh,
            uint16_t length) {
    if (length < kBlhSize) {
      file_.fail(page_no, FdbPage::Data, fmt::format("line {}: blob header cut short", line));
    }
    const uint8_t level = blh[12];
    if (level > 2)
      file_.fail(page_no, FdbPage::Data, fmt::format("line {}: blob level {}", line, level));
    FdbBlobLevel& b = s.blobs[level];
    ++b.count;
    b.space += ld32(blh + 20);
    if (level == 0) return;
    const uint32_t slots = (length - kBlhSize) / 4;
    uint64_t pages = slots;
    if (level == 2) {
      std::vector<uint32_t> numbers(slots);
      for (uint32_t i = 0; i < slots; ++i) numbers[i] = ld32(blh + kBlhSize + 4 * i);
      for (uint32_t n : numbers) {
        const uint8_t* bp = src_.page(n);
        if (bp[0] != static_cast<uint8_t>(FdbPage::Blob)) {
          throw CorruptError(
              fmt::format("{}: page {} ({}): expected a blob page (blob of data page {} line {})",
                          file_.path(), n, fdb_page_type_name(bp[0]), page_no, line));
        }
        pages += ld16(bp + 24) / 4;
      }
    }
    b.pages += pages;
  }

  // analyze_data_page over a copy of the page (chains may reuse the source's buffers).
  // `format_length[f]`: unpacked length of format f, -1 if RDB$FORMATS has no such row;
  // `used[f]` set for each format a record has.
  void data_page(FdbTableStats& s, uint16_t relation, const FormatTable& format_length,
                 std::array<bool, 256>& used, uint32_t page_no, const uint8_t* page) {
    file_.check_page(page_no, FdbPage::Data, page);
    if (dpg_relation(page) != relation) {
      file_.fail(page_no, FdbPage::Data,
                 fmt::format("relation {} where {} was expected", dpg_relation(page), relation));
    }
    check_line_array(file_, page_no, page);
    const uint32_t count = dpg_count(page);
    uint16_t space = static_cast<uint16_t>(count * 4);  // USHORT in dba.epp
    for (uint32_t line = 0; line < count; ++line) {
      if (line_offset(page, line) == 0 || line_length(page, line) == 0) continue;
      uint16_t len = 0;
      const uint8_t* r = line_record(file_, page_no, page, line, 0, &len);
      space = static_cast<uint16_t>(space + len);
      if (len < kRhdSize) {
        file_.fail(page_no, FdbPage::Data, fmt::format("line {}: record header cut short", line));
      }
      const uint16_t flags = rhd_flags(r);
      if (!(flags & (kBlob | kChain | kFragment))) {
        ++s.records;
        s.record_space += len;
        const int32_t flen = format_length[rhd_format(r)];
        if (flen >= 0) {
          s.format_space += static_cast<uint32_t>(flen);
          used[rhd_format(r)] = true;
        }
        const uint32_t b_page = rhd_b_page(r);
        const uint16_t b_line = rhd_b_line(r);
        if (flags & kIncomplete) {
          if (len < kRhdfSize) {
            file_.fail(page_no, FdbPage::Data,
                       fmt::format("line {}: fragment header cut short", line));
          }
          s.record_space -= kRhdfSize;
          s.record_space += fragments(s, relation, r);
        } else {
          s.record_space -= kRhdSize;
        }
        if (b_page) s.version_space += versions(s, relation, b_page, b_line);
      }
      if (flags & kBlob) blob(s, page_no, line, r, len);
    }
    s.total_space += space;
    int bucket = space * kBuckets / static_cast<int>(file_.page_size() - kDataHeader);
    if (bucket == kBuckets) --bucket;
    if (bucket > kBuckets) {
      file_.fail(page_no, FdbPage::Data,
                 fmt::format("{} bytes in use, more than the page holds", space));
    }
    ++s.fill[static_cast<size_t>(bucket)];
    if (count == 0) ++s.empty_pages;
    if (page[1] & kDpgFull) ++s.full_pages;
    if (!(page[1] & kDpgSecondary)) ++s.primary_pages;
    if (page[1] & kDpgSwept) ++s.swept_pages;
  }

 private:
  const FdbFile& file_;
  PageSource& src_;
};

}  // namespace

double FdbTableStats::average_record_length() const {
  return ratio(record_space, records);
}
double FdbTableStats::average_version_length() const {
  return ratio(version_space, versions);
}
double FdbTableStats::average_fragment_length() const {
  return ratio(fragment_space, fragments);
}
double FdbTableStats::average_unpacked_length() const {
  return ratio(format_space, records);
}
double FdbTableStats::compression_ratio() const {
  return ratio(format_space, record_space);
}
double FdbTableStats::average_fill(uint32_t page_size) const {
  return data_pages ? static_cast<double>(total_space) * 100 /
                          (static_cast<double>(data_pages) * (page_size - kDataHeader))
                    : 0.0;
}

FdbFormatLengths read_format_lengths(const FdbFile& file, const std::vector<FdbTable>& catalog) {
  FdbFormatLengths out;
  const FdbTable* formats = nullptr;
  for (const FdbTable& t : catalog) {
    if (t.id == kFormatsRelation) formats = &t;
  }
  if (!formats || formats->pointer_pages.empty()) return out;
  const uint32_t ps = file.page_size();
  const uint64_t max_records = file.ods().max_records(ps);

  // Blob header lines of RDB$FORMATS by record number.
  struct Where {
    uint32_t page;
    uint16_t line;
  };
  std::map<uint64_t, Where> blobs;
  std::vector<uint8_t> ppg(ps), dpg(ps);
  for (uint32_t pp : formats->pointer_pages) {
    file.read_page(pp, FdbPage::Pointer, ppg.data());
    const uint32_t count = ppg_count(ppg.data());
    if (kPointerHeader + 4 * count > ps) {
      file.fail(pp, FdbPage::Pointer, fmt::format("ppg_count {} does not fit the page", count));
    }
    for (uint32_t slot = 0; slot < count; ++slot) {
      const uint32_t dp = ld32(ppg.data() + kPointerHeader + 4 * slot);
      if (dp == 0) continue;
      file.read_page(dp, FdbPage::Data, dpg.data());
      check_line_array(file, dp, dpg.data());
      for (uint32_t line = 0; line < dpg_count(dpg.data()); ++line) {
        if (line_length(dpg.data(), line) == 0) continue;
        const uint8_t* r = line_record(file, dp, dpg.data(), line, kRhdSize, nullptr);
        if (r && (rhd_flags(r) & kBlob)) {
          blobs[dpg_sequence(dpg.data()) * max_records + line] = {dp, static_cast<uint16_t>(line)};
        }
      }
    }
  }

  // RDB$FORMATS: RELATION_ID smallint, FORMAT smallint, DESCRIPTOR blob.
  const RecordFormat layout =
      RecordFormat::layout({{Dtype::Short, 2}, {Dtype::Short, 2}, {Dtype::Blob, 8}});
  scan_relation(
      file, kFormatsRelation, formats->pointer_pages, 65535, [&](std::span<const uint8_t> rec) {
        RecordView v(layout, rec);
        if (v.is_null(0) || v.is_null(1) || v.is_null(2)) return;
        const uint64_t number = v.blob_id(2)->number;
        uint16_t length = 0;
        auto it = blobs.find(number);
        if (it == blobs.end()) {
          throw CorruptError(
              fmt::format("{}: RDB$FORMATS: the descriptor blob of relation {} format {} "
                          "(record number {}) is missing",
                          file.path(), v.integer(0), v.integer(1), number));
        }
        file.read_page(it->second.page, FdbPage::Data, dpg.data());
        uint16_t len = 0;
        const uint8_t* blh =
            line_record(file, it->second.page, dpg.data(), it->second.line, kBlhSize, &len);
        const std::vector<uint8_t> d =
            fdb_blob_data(file, it->second.page, it->second.line, blh, len, kMaxFormatBlob);
        if (file.ods().major <= 11) {
          // ODS 11 (met.epp MET_format of 2.x): no count; 12-byte descriptors from byte 0
          // (Ods::Descriptor, or a 32-bit dsc with the offset in dsc_address); the length is
          // the last one with a non-zero offset: offset + length.
          for (size_t at = 0; at + 12 <= d.size(); at += 12) {
            if (ld32(d.data() + at + 8) != 0) {
              length = static_cast<uint16_t>(ld32(d.data() + at + 8) + ld16(d.data() + at + 2));
            }
          }
        } else if (d.size() >= 2) {
          // ODS 12+ (dba.epp get_format_length): a 2-byte count, then the descriptors.
          const uint32_t n = ld16(d.data());
          if (n > 0 && 2 + 12 * size_t{n} <= d.size()) {
            const uint8_t* last = d.data() + 2 + 12 * (n - 1);
            length = static_cast<uint16_t>(ld32(last + 8) + ld16(last + 2));
          } else if (n > 0) {
            file.fail(it->second.page, FdbPage::Data,
                      fmt::format("format descriptor blob of {} bytes for {} fields", d.size(), n));
          }
        }
        out[static_cast<uint16_t>(v.integer(0))][static_cast<int16_t>(v.integer(1))] = length;
      });
  return out;
}

std::vector<FdbTableStats> analyze_fdb_tables(
    const FdbFile& file, const std::vector<const FdbTable*>& tables,
    const FdbFormatLengths& formats, const std::function<void(uint64_t, uint64_t)>& on_pages) {
  const uint32_t ps = file.page_size();
  std::vector<FdbTableStats> stats(tables.size());
  // Owner (index into `tables`) of each data page a pointer page lists; kNone elsewhere.
  constexpr uint16_t kNone = 0xFFFF;
  if (tables.size() >= kNone) throw UsageError("too many tables");
  std::vector<uint16_t> owner;
  uint64_t wanted = 0;
  std::vector<uint8_t> ppg(ps);
  std::vector<std::array<bool, 256>> used(tables.size());
  std::vector<FormatTable> lengths(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) {
    const FdbTable& t = *tables[i];
    FdbTableStats& s = stats[i];
    s.pointer_page = t.pointer_page;
    s.index_root = t.index_root;
    used[i].fill(false);
    lengths[i].fill(-1);
    auto f = formats.find(t.id);
    if (f != formats.end()) {
      s.total_formats = static_cast<uint32_t>(f->second.size());
      // rhd_format is one byte: formats 0..255 can match (dba.epp compares SSHORT to UCHAR).
      for (auto [number, length] : f->second) {
        if (number >= 0 && number < 256) lengths[i][static_cast<size_t>(number)] = length;
      }
    }
    std::set<uint32_t> seen;
    for (uint32_t pp = t.pointer_page; pp != 0; pp = ppg_next(ppg.data())) {
      if (!seen.insert(pp).second) file.fail(pp, FdbPage::Pointer, "pointer page chain loops");
      file.read_page(pp, FdbPage::Pointer, ppg.data());
      if (ppg_relation(ppg.data()) != t.id) {
        file.fail(pp, FdbPage::Pointer,
                  fmt::format("relation {} where {} ({}) was expected", ppg_relation(ppg.data()),
                              t.id, t.name));
      }
      ++s.pointer_pages;
      const uint32_t count = ppg_count(ppg.data());
      if (kPointerHeader + 4 * count > ps) {
        file.fail(pp, FdbPage::Pointer, fmt::format("ppg_count {} does not fit the page", count));
      }
      for (uint32_t slot = 0; slot < count; ++slot) {
        ++s.slots;
        const uint32_t dp = ld32(ppg.data() + kPointerHeader + 4 * slot);
        if (dp == 0) continue;
        if (dp >= file.page_count()) {
          file.fail(pp, FdbPage::Pointer,
                    fmt::format("slot {}: data page {} beyond the end of the file "
                                "({} pages)",
                                slot, dp, file.page_count()));
        }
        if (owner.size() <= dp) {
          owner.resize(
              std::min<size_t>(file.page_count(), std::max<size_t>(dp + 1, owner.size() * 2)),
              kNone);
        }
        if (owner[dp] != kNone) {
          file.fail(dp, FdbPage::Data, fmt::format("listed twice by pointer pages (page {})", pp));
        }
        owner[dp] = static_cast<uint16_t>(i);
        ++s.data_pages;
        ++wanted;
      }
    }
  }

  // Data pages in file order, in runs of up to kFdbChunkBytes; pages between two wanted ones
  // are read along when the gap is small (one request beats several).
  const uint32_t chunk_pages = static_cast<uint32_t>(std::max<size_t>(1, kFdbChunkBytes / ps));
  constexpr uint32_t kGap = 16;
  std::vector<uint8_t> chunk(size_t{chunk_pages} * ps);
  PageSource src(file);
  TableAnalyzer an(file, src);
  uint64_t done = 0;
  const uint32_t end = static_cast<uint32_t>(owner.size());
  for (uint32_t p = 0; p < end;) {
    if (owner[p] == kNone) {
      ++p;
      continue;
    }
    uint32_t last = p;
    for (uint32_t q = p + 1; q < end && q - p < chunk_pages && q - last <= kGap; ++q) {
      if (owner[q] != kNone) last = q;
    }
    const uint32_t n = last - p + 1;
    file.read_raw(uint64_t{p} * ps, chunk.data(), size_t{n} * ps);
    src.set_chunk(p, n, chunk.data());
    for (uint32_t q = p; q <= last; ++q) {
      if (owner[q] == kNone) continue;
      const size_t i = owner[q];
      an.data_page(stats[i], tables[i]->id, lengths[i], used[i], q,
                   chunk.data() + size_t{q - p} * ps);
      ++done;
    }
    if (on_pages) on_pages(done, wanted);
    p = last + 1;
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    stats[i].used_formats = static_cast<uint32_t>(std::count(used[i].begin(), used[i].end(), true));
  }
  return stats;
}

}  // namespace pbtree::firebird
