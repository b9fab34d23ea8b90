// Pointer-page and data-page walk, record headers, fragments and RLE decompression of
// Firebird records, and blobs by their ids (src/jrd/dpm.epp, src/jrd/sqz.cpp, src/jrd/blb.cpp,
// src/jrd/ods.h).
#include "firebird/fdb_records.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <set>

namespace pbtree::firebird {

namespace {

constexpr uint16_t kDeleted = 1, kChain = 2, kFragment = 4, kIncomplete = 8, kBlob = 16,
                   kStreamBlob = 32, kLongTranum = 1024, kNotPacked = 2048;
constexpr uint32_t kRhdSize = 13, kRhdeSize = 16, kRhdfSize = 22;
constexpr uint32_t kPointerHeader = 32, kDataHeader = 24, kBlhSize = 28, kBlpSize = 28;

// The pointer and data page header fields read here, by name (byte table in fdb_records.h).
uint32_t ppg_next(const uint8_t* page) {
  return fdb_u32(page + 20);
}
uint16_t ppg_count(const uint8_t* page) {
  return fdb_u16(page + 24);
}
uint16_t ppg_relation(const uint8_t* page) {
  return fdb_u16(page + 26);
}
uint32_t dpg_sequence(const uint8_t* page) {
  return fdb_u32(page + 16);
}
uint16_t dpg_relation(const uint8_t* page) {
  return fdb_u16(page + 20);
}
uint16_t dpg_count(const uint8_t* page) {
  return fdb_u16(page + 22);
}

uint32_t align(uint32_t v, uint32_t a) {
  return a <= 1 ? v : (v + a - 1) / a * a;
}

}  // namespace

bool rle_unpack(std::span<const uint8_t> in, std::vector<uint8_t>& out, size_t max_out,
                bool long_runs) {
  size_t i = 0;
  while (i < in.size()) {
    const int len = static_cast<int8_t>(in[i++]);
    if (len < 0) {
      size_t run = static_cast<size_t>(-len);
      if (long_runs && (len == -1 || len == -2)) {
        const size_t width = len == -1 ? 2 : 4;
        if (i + width > in.size()) return false;
        run = len == -1 ? fdb_u16(&in[i]) : fdb_u32(&in[i]);
        i += width;
      }
      if (i >= in.size() || out.size() + run > max_out) return false;
      out.insert(out.end(), run, in[i++]);
    } else {
      if (i + static_cast<size_t>(len) > in.size() ||
          out.size() + static_cast<size_t>(len) > max_out)
        return false;
      out.insert(out.end(), in.begin() + static_cast<ptrdiff_t>(i),
                 in.begin() + static_cast<ptrdiff_t>(i + static_cast<size_t>(len)));
      i += static_cast<size_t>(len);
    }
  }
  return true;
}

RecordFormat RecordFormat::layout(std::vector<FieldDesc> fields) {
  RecordFormat f;
  const uint32_t n = static_cast<uint32_t>(fields.size());
  uint32_t offset = ((n + 32) & ~31u) >> 3;  // FLAG_BYTES
  for (FieldDesc& d : fields) {
    uint32_t a = d.dtype == Dtype::Text
                     ? 1
                     : (d.dtype == Dtype::Varying ? 2 : std::min<uint32_t>(d.length, 8));
    offset = align(offset, a);
    d.offset = offset;
    offset += d.length;
  }
  f.fields = std::move(fields);
  f.length = offset;
  return f;
}

const FieldDesc* RecordView::present(size_t field) const {
  if (field >= format_.fields.size()) return nullptr;
  const FieldDesc& d = format_.fields[field];
  if (d.offset + d.length > data_.size()) return nullptr;
  if ((field >> 3) >= data_.size() || (data_[field >> 3] >> (field & 7)) & 1) return nullptr;
  return &d;
}

bool RecordView::is_null(size_t field) const {
  return present(field) == nullptr;
}

int64_t RecordView::integer(size_t field) const {
  const FieldDesc* d = present(field);
  if (!d) return 0;
  const uint8_t* p = data_.data() + d->offset;
  switch (d->dtype) {
    case Dtype::Short:
      return static_cast<int16_t>(fdb_u16(p));
    case Dtype::Long:
      return static_cast<int32_t>(fdb_u32(p));
    default:
      return 0;
  }
}

std::string RecordView::text(size_t field) const {
  const FieldDesc* d = present(field);
  if (!d) return "";
  const uint8_t* p = data_.data() + d->offset;
  std::string s;
  if (d->dtype == Dtype::Text) {
    s.assign(reinterpret_cast<const char*>(p), d->length);
  } else if (d->dtype == Dtype::Varying) {
    uint16_t n = std::min<uint16_t>(fdb_u16(p), static_cast<uint16_t>(d->length - 2));
    s.assign(reinterpret_cast<const char*>(p + 2), n);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

std::optional<FdbBlobId> RecordView::blob_id(size_t field) const {
  const FieldDesc* d = present(field);
  if (!d || d->dtype != Dtype::Blob) return std::nullopt;
  const uint8_t* p = data_.data() + d->offset;
  return FdbBlobId{fdb_u16(p), (uint64_t{p[3]} << 32) | fdb_u32(p + 4)};
}

std::vector<uint8_t> fdb_blob_data(const FdbFile& file, uint32_t page_no, uint32_t line,
                                   const uint8_t* blh, uint32_t length, size_t max_bytes) {
  auto fail = [&](const std::string& what) {
    file.fail(page_no, FdbPage::Data, fmt::format("line {}: {}", line, what));
  };
  if (length < kBlhSize) fail(fmt::format("blob header cut short ({} bytes)", length));
  const uint32_t ps = file.page_size();
  const uint8_t level = blh[12];
  const uint32_t slots = (length - kBlhSize) / 4;
  const std::string too_long = fmt::format("blob longer than {} bytes", max_bytes);
  std::vector<uint8_t> raw;
  if (level == 0) {
    if (length - kBlhSize > max_bytes) fail(too_long);
    raw.assign(blh + kBlhSize, blh + length);
  } else if (level <= 2) {
    // Data pages visited: a blob's pages are full but for the last, so a longer list is
    // refused before it is read (a damaged level-2 list could name millions of pages).
    const uint64_t max_pages = max_bytes / (ps - kBlpSize) + 1;
    uint64_t pages = 0;
    std::vector<uint8_t> bp(ps), list(ps);
    auto append = [&](uint32_t n) {
      if (++pages > max_pages) fail(too_long);
      file.read_page(n, FdbPage::Blob, bp.data());
      const uint32_t used = fdb_u16(bp.data() + 24);
      if (kBlpSize + used > ps) {
        file.fail(n, FdbPage::Blob, fmt::format("blp_length {} passes the end of the page", used));
      }
      if (raw.size() + used > max_bytes) fail(too_long);
      raw.insert(raw.end(), bp.begin() + kBlpSize, bp.begin() + kBlpSize + used);
    };
    for (uint32_t i = 0; i < slots; ++i) {
      const uint32_t n = fdb_u32(blh + kBlhSize + 4 * i);
      if (level == 1) {
        append(n);
        continue;
      }
      file.read_page(n, FdbPage::Blob, list.data());
      const uint32_t used = fdb_u16(list.data() + 24);
      if (kBlpSize + used > ps) {
        file.fail(n, FdbPage::Blob, fmt::format("blp_length {} passes the end of the page", used));
      }
      for (uint32_t k = 0; k < used / 4; ++k) append(fdb_u32(list.data() + kBlpSize + 4 * k));
    }
  } else {
    fail(fmt::format("blob level {} (0, 1 or 2 expected)", level));
  }
  if (fdb_u16(blh + 10) & kStreamBlob) return raw;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < raw.size();) {
    if (i + 2 > raw.size()) fail("blob segment length cut short");
    const size_t n = fdb_u16(raw.data() + i);
    if (i + 2 + n > raw.size()) {
      fail(
          fmt::format("blob segment of {} bytes at offset {} passes the end of the blob ({} "
                      "bytes)",
                      n, i, raw.size()));
    }
    out.insert(out.end(), raw.begin() + static_cast<ptrdiff_t>(i + 2),
               raw.begin() + static_cast<ptrdiff_t>(i + 2 + n));
    i += 2 + n;
  }
  return out;
}

std::vector<uint8_t> read_fdb_blob(const FdbFile& file, const std::vector<uint32_t>& pointer_pages,
                                   FdbBlobId id, size_t max_bytes) {
  const uint32_t ps = file.page_size();
  const uint64_t max_records = file.ods().max_records(ps);
  const uint64_t per_pp = file.ods().dp_per_pp(ps);
  const uint64_t sequence = id.number / max_records;
  const uint32_t line = static_cast<uint32_t>(id.number % max_records);
  const uint64_t pp_index = sequence / per_pp;
  const uint32_t slot = static_cast<uint32_t>(sequence % per_pp);
  if (pp_index >= pointer_pages.size()) {
    throw CorruptError(fmt::format(
        "{}: blob {} of relation {}: data page sequence {} lies beyond the relation's {} "
        "pointer pages",
        file.path(), id.number, id.relation, sequence, pointer_pages.size()));
  }
  const uint32_t pp = pointer_pages[pp_index];
  std::vector<uint8_t> page(ps);
  file.read_page(pp, FdbPage::Pointer, page.data());
  if (ppg_relation(page.data()) != id.relation) {
    file.fail(pp, FdbPage::Pointer,
              fmt::format("relation {} where the blob's relation {} was expected",
                          ppg_relation(page.data()), id.relation));
  }
  const uint32_t dp = slot < ppg_count(page.data()) && kPointerHeader + 4 * (slot + 1) <= ps
                          ? fdb_u32(page.data() + kPointerHeader + 4 * slot)
                          : 0;
  if (dp == 0) {
    file.fail(pp, FdbPage::Pointer,
              fmt::format("slot {} (blob {}) lists no data page", slot, id.number));
  }
  file.read_page(dp, FdbPage::Data, page.data());
  if (dpg_relation(page.data()) != id.relation || dpg_sequence(page.data()) != sequence) {
    file.fail(dp, FdbPage::Data,
              fmt::format("relation {} sequence {} where blob {} needs relation {} sequence {}",
                          dpg_relation(page.data()), dpg_sequence(page.data()), id.number,
                          id.relation, sequence));
  }
  const uint32_t count = dpg_count(page.data());
  if (kDataHeader + 4 * count > ps) {
    file.fail(dp, FdbPage::Data, fmt::format("dpg_count {} does not fit the page", count));
  }
  const uint32_t off = line < count ? fdb_u16(page.data() + kDataHeader + 4 * line) : 0;
  const uint32_t len = line < count ? fdb_u16(page.data() + kDataHeader + 4 * line + 2) : 0;
  if (off == 0 || len == 0) {
    file.fail(dp, FdbPage::Data, fmt::format("line {} (blob {}) is empty", line, id.number));
  }
  if (off < kDataHeader + 4 * count || off + len > ps || len < kRhdSize) {
    file.fail(
        dp, FdbPage::Data,
        fmt::format("line {}: record at offset {} length {} outside the page", line, off, len));
  }
  const uint16_t flags = fdb_u16(page.data() + off + 10);
  if (!(flags & kBlob) || (flags & (kDeleted | kChain | kFragment))) {
    file.fail(dp, FdbPage::Data,
              fmt::format("line {} (blob {}) is not a blob header (rhd_flags 0x{:04x})", line,
                          id.number, flags));
  }
  return fdb_blob_data(file, dp, line, page.data() + off, len, max_bytes);
}

std::vector<uint32_t> pages_relation_pointer_pages(const FdbFile& file) {
  std::vector<uint32_t> out;
  std::set<uint32_t> seen;
  std::vector<uint8_t> page(file.page_size());
  for (uint32_t p = file.header().pages_pointer_page; p != 0;) {
    if (!seen.insert(p).second) file.fail(p, FdbPage::Pointer, "pointer page chain loops");
    file.read_page(p, FdbPage::Pointer, page.data());
    if (ppg_relation(page.data()) != 0) {
      file.fail(
          p, FdbPage::Pointer,
          fmt::format("relation {} where RDB$PAGES (0) was expected", ppg_relation(page.data())));
    }
    out.push_back(p);
    p = ppg_next(page.data());
  }
  return out;
}

void scan_relation(const FdbFile& file, uint16_t relation_id,
                   const std::vector<uint32_t>& pointer_pages, size_t max_record,
                   const std::function<void(std::span<const uint8_t>)>& fn) {
  const uint32_t ps = file.page_size();
  std::vector<uint8_t> ppg(ps), dpg(ps), frag(ps);
  std::vector<uint8_t> packed, record;

  // Record `line` of data page `page` (already in `buf`): header flags and data span.
  struct Line {
    uint16_t flags;
    uint32_t f_page;
    uint16_t f_line;
    std::span<const uint8_t> data;
  };
  auto line_at = [&](const std::vector<uint8_t>& buf, uint32_t page,
                     uint32_t line) -> std::optional<Line> {
    const uint32_t count = dpg_count(buf.data());
    if (kDataHeader + 4 * count > ps) {
      file.fail(page, FdbPage::Data, fmt::format("dpg_count {} does not fit the page", count));
    }
    if (line >= count) return std::nullopt;
    const uint32_t off = fdb_u16(buf.data() + kDataHeader + 4 * line);
    const uint32_t len = fdb_u16(buf.data() + kDataHeader + 4 * line + 2);
    if (off == 0 || len == 0) return std::nullopt;
    if (off < kDataHeader + 4 * count || off + len > ps || len < kRhdSize) {
      file.fail(
          page, FdbPage::Data,
          fmt::format("line {}: record at offset {} length {} outside the page", line, off, len));
    }
    const uint8_t* r = buf.data() + off;
    Line l{fdb_u16(r + 10), 0, 0, {}};
    uint32_t hsize = kRhdSize;
    if (l.flags & kIncomplete) {
      hsize = kRhdfSize;
      if (len < hsize)
        file.fail(page, FdbPage::Data, fmt::format("line {}: fragment header cut short", line));
      l.f_page = fdb_u32(r + 16);
      l.f_line = fdb_u16(r + 20);
    } else if ((l.flags & kLongTranum) && file.ods().rhd_long_tranum) {
      hsize = kRhdeSize;
      if (len < hsize)
        file.fail(page, FdbPage::Data, fmt::format("line {}: record header cut short", line));
    }
    l.data = std::span<const uint8_t>(r + hsize, len - hsize);
    return l;
  };

  for (uint32_t pp : pointer_pages) {
    file.read_page(pp, FdbPage::Pointer, ppg.data());
    if (ppg_relation(ppg.data()) != relation_id) {
      file.fail(
          pp, FdbPage::Pointer,
          fmt::format("relation {} where {} was expected", ppg_relation(ppg.data()), relation_id));
    }
    const uint32_t count = ppg_count(ppg.data());
    if (kPointerHeader + 4 * count > ps) {
      file.fail(pp, FdbPage::Pointer, fmt::format("ppg_count {} does not fit the page", count));
    }
    for (uint32_t slot = 0; slot < count; ++slot) {
      const uint32_t dp = fdb_u32(ppg.data() + kPointerHeader + 4 * slot);
      if (dp == 0) continue;
      file.read_page(dp, FdbPage::Data, dpg.data());
      if (dpg_relation(dpg.data()) != relation_id) {
        file.fail(dp, FdbPage::Data,
                  fmt::format("relation {} where {} was expected", dpg_relation(dpg.data()),
                              relation_id));
      }
      const uint32_t lines = dpg_count(dpg.data());
      for (uint32_t line = 0; line < lines; ++line) {
        std::optional<Line> l = line_at(dpg, dp, line);
        if (!l) continue;
        if (l->flags & (kDeleted | kChain | kFragment | kBlob)) continue;
        packed.assign(l->data.begin(), l->data.end());
        uint32_t fp = l->f_page, fl = l->f_line;
        bool more = (l->flags & kIncomplete) != 0;
        std::set<std::pair<uint32_t, uint32_t>> seen;
        while (more) {
          if (!seen.insert({fp, fl}).second) file.fail(fp, FdbPage::Data, "fragment chain loops");
          file.read_page(fp, FdbPage::Data, frag.data());
          std::optional<Line> f = line_at(frag, fp, fl);
          if (!f || !(f->flags & kFragment)) {
            file.fail(fp, FdbPage::Data, fmt::format("line {}: record fragment expected", fl));
          }
          packed.insert(packed.end(), f->data.begin(), f->data.end());
          if (packed.size() > 2 * max_record + 64)
            file.fail(fp, FdbPage::Data, "record fragments too long");
          more = (f->flags & kIncomplete) != 0;
          fp = f->f_page;
          fl = f->f_line;
        }
        record.clear();
        if (file.ods().long_runs && (l->flags & kNotPacked)) {
          if (packed.size() > max_record) {
            file.fail(dp, FdbPage::Data,
                      fmt::format("line {}: unpacked record longer than {} "
                                  "bytes",
                                  line, max_record));
          }
          record = packed;
        } else if (!rle_unpack(packed, record, max_record, file.ods().long_runs)) {
          file.fail(
              dp, FdbPage::Data,
              fmt::format("line {}: record does not decompress within {} bytes", line, max_record));
        }
        fn(record);
      }
    }
  }
}

}  // namespace pbtree::firebird
