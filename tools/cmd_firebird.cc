// `pbtree stat --firebird`: the report loop of gstat (src/utilities/gstat/dba.epp) over
// pbtree's own reading of the database (firebird/fdb_catalog.h, firebird/fdb_stat.h).
#include "tools/cmd_firebird.h"

#include <fmt/format.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <future>
#include <iterator>

#include "btree/level_stats.h"
#include "firebird/fdb_entries.h"
#include "firebird/fdb_table_stat.h"
#include "firebird/fdb_what_if.h"
#include "tools/fdb_table_format.h"
#include "tools/json_out.h"
#include "tools/stat_format.h"
#include "tools/what_if_format.h"

namespace pbtree::tools {

using namespace pbtree::firebird;

namespace {

IndexInfo info_of(const FdbIndex& ix) {
  IndexInfo info;
  info.def.name = ix.name;
  info.id = ix.id;
  info.root_page = ix.root_page;
  return info;
}

// analyze_fdb_index with a progress line "stat: index NAME: P / N pages (x%)" (N: the
// database's page count, an upper bound).
IndexStats analyze_with_progress(const FdbFile& file, const FdbTable& t, const FdbIndex& ix,
                                 Progress* progress) {
  if (!progress || !progress->enabled()) return analyze_fdb_index(file, t, ix);
  progress->start("stat: index " + ix.name, file.page_count(), "pages");
  IndexStats s = analyze_fdb_index(file, t, ix, [progress](uint32_t) { progress->add(); });
  progress->finish();
  return s;
}

// What the report prints for `tables`: gstat -r's table figures (none when an index is named:
// gstat -i reads no data pages either) and each wanted index's figures (parallel to
// FdbTable::indexes; unwanted ones left zero).
struct FdbFigures {
  std::vector<FdbTableStats> tables;
  std::vector<std::vector<IndexStats>> indexes;
};

// With an index named: the index walks one by one, each with its progress line. Otherwise the
// index walks run on a second thread while this one reads the data pages in file order (the
// two take similar time on a cached file), with the progress lines "stat: data pages: P / N
// pages" and then, if the walks are still running, "stat: index pages: P".
FdbFigures gather_figures(const FdbFile& file, const std::vector<FdbTable>& catalog,
                          const std::vector<const FdbTable*>& tables, const FdbStatFilter& filter,
                          Progress* progress) {
  FdbFigures out;
  out.indexes.resize(tables.size());
  for (size_t i = 0; i < tables.size(); ++i) out.indexes[i].resize(tables[i]->indexes.size());
  if (!filter.index.empty()) {
    for (size_t i = 0; i < tables.size(); ++i) {
      for (size_t k = 0; k < tables[i]->indexes.size(); ++k) {
        const FdbIndex& ix = tables[i]->indexes[k];
        if (fdb_index_wanted(ix, filter)) {
          out.indexes[i][k] = analyze_with_progress(file, *tables[i], ix, progress);
        }
      }
    }
    return out;
  }
  const FdbFormatLengths formats = read_format_lengths(file, catalog);
  std::atomic<uint64_t> index_pages{0};
  std::atomic<bool> stop{false};
  struct Stopped {};
  auto walks = std::async(std::launch::async, [&] {
    std::vector<std::vector<IndexStats>> r = out.indexes;
    for (size_t i = 0; i < tables.size(); ++i) {
      for (size_t k = 0; k < tables[i]->indexes.size(); ++k) {
        const FdbIndex& ix = tables[i]->indexes[k];
        if (!fdb_index_wanted(ix, filter)) continue;
        r[i][k] = analyze_fdb_index(file, *tables[i], ix, [&](uint32_t) {
          if (stop.load(std::memory_order_relaxed)) throw Stopped{};
          index_pages.fetch_add(1, std::memory_order_relaxed);
        });
      }
    }
    return r;
  });
  try {
    const bool shown = progress && progress->enabled();
    bool started = false;
    std::function<void(uint64_t, uint64_t)> on_pages;
    if (shown) {
      on_pages = [&](uint64_t done, uint64_t total) {
        if (!started) progress->start("stat: data pages", total, "pages");
        started = true;
        progress->set(done);
      };
    }
    out.tables = analyze_fdb_tables(file, tables, formats, on_pages);
    if (shown) {
      progress->finish();
      progress->start("stat: index pages", 0, "pages");
      while (walks.wait_for(std::chrono::milliseconds(Progress::kRedrawMs)) !=
             std::future_status::ready) {
        progress->redraw(index_pages.load(std::memory_order_relaxed));
      }
      progress->set(index_pages.load());
      progress->finish();
    }
  } catch (...) {
    stop = true;
    try {
      walks.get();
    } catch (...) {
    }
    throw;
  }
  out.indexes = walks.get();
  return out;
}

// The source texts of an expression or partial index: "expression" and "condition", each only
// for such an index (the text "" if the blob is NULL).
void add_source_texts(Json& o, const FdbIndex& ix) {
  if (ix.expression) o["expression"] = ix.expression_source;
  if (ix.condition) o["condition"] = ix.condition_source;
}

// The same as text lines after a what-if header: "  expression: (UPPER(C_UTF8))\n" and
// "  condition: WHERE C_SMALL > 0\n", line breaks and tabs in the text shown as spaces.
std::string source_lines(const FdbIndex& ix) {
  auto line = [](const char* what, std::string text) {
    for (char& c : text) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    return fmt::format("  {}: {}\n", what, text);
  };
  std::string out;
  if (ix.expression) out += line("expression", ix.expression_source);
  if (ix.condition) out += line("condition", ix.condition_source);
  return out;
}

// isc_decode_timestamp: days since 1858-11-17 and 1/10000 s to "Mon D, YYYY H:MM:SS".
std::string creation_text(const uint32_t date[2]) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  // Civil date from days since 1970-01-01 (MJD 40587); H. Hinnant's civil_from_days.
  const int64_t e = int64_t{static_cast<int32_t>(date[0])} - 40587 + 719468;
  const int64_t era = (e >= 0 ? e : e - 146096) / 146097;
  const int64_t doe = e - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2);
  const uint32_t secs = date[1] / 10000;
  return fmt::format("{} {}, {} {}:{:02d}:{:02d}", kMonths[month - 1], day, year, secs / 3600,
                     secs / 60 % 60, secs % 60);
}

// The local time as gstat prints it: "Thu Dec  3 16:51:43 2026".
std::string gstat_time() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

std::string guid_text(const uint8_t* g) {
  // Firebird's GuidToString: Data1 (LE u32), Data2, Data3 (LE u16), then 8 bytes.
  uint32_t d1;
  uint16_t d2, d3;
  std::memcpy(&d1, g, 4);
  std::memcpy(&d2, g + 4, 2);
  std::memcpy(&d3, g + 6, 2);
  return fmt::format("{{{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}}}",
                     d1, d2, d3, g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

}  // namespace

std::string format_fdb_header(const FdbFile& file, const std::string& name) {
  const FdbHeader& h = file.header();
  const FdbOds& o = file.ods();
  std::vector<uint8_t> page(file.page_size());
  file.read_page(0, FdbPage::Header, page.data());
  std::string out = fmt::format("\nDatabase \"{}\"\n", name);
  out += fmt::format("Gstat execution time {}\n\n", gstat_time());
  out += "Database header page information:\n";
  out += fmt::format("\tFlags\t\t\t{}\n", page[1]);
  if (o.major == 11) out += fmt::format("\tChecksum\t\t{}\n", fdb_u16(page.data() + 2));
  out += fmt::format("\tGeneration\t\t{}\n", h.generation);
  if (o.major >= 12) out += fmt::format("\tSystem Change Number\t{}\n", h.scn);
  out += fmt::format("\tPage size\t\t{}\n", h.page_size);
  if (h.product == "RedDatabase") {
    out += fmt::format("\tODS version\t\t{}.{} (RedDatabase, ODS word 0x{:04x}; read as {})\n",
                       h.ods_major, h.ods_minor, h.ods_word, o.describe());
  } else {
    out += fmt::format("\tODS version\t\t{}.{}\n", h.ods_word & 0x7FFF, h.ods_minor);
  }
  // ODS 12+: the high words of the transaction counters (hdr_tra_high) at 124 / 120.
  auto tra = [&](uint32_t low, int i) {
    if (o.major < 12) return uint64_t{low};
    const uint32_t at = (o.major == 12 ? 124 : 120) + 2 * i;
    return uint64_t{low} | (uint64_t{fdb_u16(page.data() + at)} << 32);
  };
  out += fmt::format("\tOldest transaction\t{}\n", tra(h.oldest_transaction, 0));
  out += fmt::format("\tOldest active\t\t{}\n", tra(h.oldest_active, 1));
  out += fmt::format("\tOldest snapshot\t\t{}\n", tra(h.oldest_snapshot, 2));
  out += fmt::format("\tNext transaction\t{}\n", tra(h.next_transaction, 3));
  if (o.major == 11) out += fmt::format("\tBumped transaction\t{}\n", fdb_u32(page.data() + 72));
  out += fmt::format("\tSequence number\t\t{}\n", h.sequence);
  out += fmt::format("\tNext attachment ID\t{}\n", h.attachment_id);
  if (o.major == 11) {
    out += fmt::format("\tImplementation ID\t{}\n", h.implementation_id);
  } else {
    static const char* kCpu[] = {
        "Intel/i386", "AMD/Intel/x64", "UltraSparc", "PowerPC", "PowerPC64",   "MIPSEL",
        "MIPS",       "ARM",           "IA64",       "s390",    "s390x",       "SH",
        "SHEB",       "HPPA",          "Alpha",      "ARM64",   "PowerPC64el", "M68k",
        "RiscV64",    "MIPS64EL",      "LOONGARCH"};
    static const char* kOs[] = {"Windows", "Linux", "Darwin",  "Solaris", "HPUX",
                                "AIX",     "MVS",   "FreeBSD", "NetBSD"};
    static const char* kCc[] = {"MSVC", "gcc", "xlC", "aCC", "SunStudio", "icc"};
    auto pick = [](const char* const* t, size_t n, uint8_t i) {
      return i < n ? t[i] : "** Unknown **";
    };
    out += fmt::format("\tImplementation\t\tHW={} {}-endian OS={} CC={}\n",
                       pick(kCpu, std::size(kCpu), h.implementation[0]),
                       (h.implementation[3] & 1) ? "big" : "little",
                       pick(kOs, std::size(kOs), h.implementation[1]),
                       pick(kCc, std::size(kCc), h.implementation[2]));
  }
  out += fmt::format("\tShadow count\t\t{}\n", static_cast<int32_t>(h.shadow_count));
  out += fmt::format("\tPage buffers\t\t{}\n", h.page_buffers);
  out += fmt::format("\tNext header page\t{}\n", h.next_page);
  out += fmt::format("\tDatabase dialect\t{}\n", (h.flags & o.hdr_dialect3) ? 3 : 1);
  out += fmt::format("\tCreation date\t\t{}\n", creation_text(h.creation_date));
  if (h.flags != 0) {
    std::vector<std::string> a;
    if (h.flags & 0x2) a.push_back("force write");
    if (h.flags & o.hdr_no_reserve) a.push_back("no reserve");
    if (h.flags & 0x1) a.push_back("active shadow");
    if (o.hdr_encrypted && (h.flags & o.hdr_encrypted)) a.push_back("encrypted");
    switch (h.flags & 0x1080) {
      case 0:
        break;
      case 0x80:
        a.push_back("multi-user maintenance");
        break;
      case 0x1080:
        a.push_back("single-user maintenance");
        break;
      case 0x1000:
        a.push_back("full shutdown");
        break;
    }
    if (h.flags & o.hdr_read_only) a.push_back("read only");
    switch (h.flags & 0xC00) {
      case 0:
        break;
      case 0x400:
        a.push_back("backup lock");
        break;
      case 0x800:
        a.push_back("backup merge");
        break;
      default:
        a.push_back(fmt::format("wrong backup state {}", h.flags & 0xC00));
        break;
    }
    if (o.major >= 13) {
      switch (h.flags & 0x6000) {
        case 0:
          break;
        case 0x2000:
          a.push_back("read-only replica");
          break;
        case 0x4000:
          a.push_back("read-write replica");
          break;
        default:
          a.push_back(fmt::format("wrong replica state {}", h.flags & 0x6000));
          break;
      }
    }
    std::string joined;
    for (const std::string& s : a) joined += (joined.empty() ? "" : ", ") + s;
    out += fmt::format("\tAttributes\t\t{}\n", joined);
  }
  out += "\n    Variable header data:\n";
  // Clumplets (HDR_* of ods.h): type, length, data; HDR_end = 0.
  for (uint32_t p = o.hdr_clumplets_offset; p + 2 <= file.page_size() && page[p] != 0;
       p += 2 + page[p + 1]) {
    const uint8_t type = page[p], len = page[p + 1];
    if (p + 2 + len > file.page_size()) break;
    const uint8_t* d = page.data() + p + 2;
    const std::string text(reinterpret_cast<const char*>(d), len);
    // HDR_* codes: ODS 11 (B2_5 ods.h) and ODS 12/13 (v3, v5) number them differently.
    enum Kind {
      Root,
      File,
      LastPage,
      Sweep,
      LogName,
      Diff,
      BackupGuid,
      CryptChecksum,
      CryptKey,
      CryptHash,
      DbGuid,
      ReplSeq,
      Other
    };
    static const Kind kOds11[] = {Other,   Root,  Other, File,  LastPage, Other, Sweep,
                                  LogName, Other, Other, Other, Other,    Diff,  BackupGuid};
    static const Kind kOds12[] = {Other, Root,       File,     LastPage,  Sweep,  CryptChecksum,
                                  Diff,  BackupGuid, CryptKey, CryptHash, DbGuid, ReplSeq};
    const bool old = o.major == 11;
    const uint8_t max = old ? 14 : (o.major == 12 ? 10 : 11);
    Kind kind = Other;
    if (old && type < std::size(kOds11)) kind = kOds11[type];
    if (!old && type <= max && type < std::size(kOds12)) kind = kOds12[type];
    switch (kind) {
      case Root:
        out += fmt::format("\tRoot file name:\t\t{}\n", text);
        break;
      case File:
        out += fmt::format("\tContinuation file:\t\t{}\n", text);
        break;
      case LastPage:
        out += fmt::format("\tLast logical page:\t\t{}\n", static_cast<int32_t>(fdb_u32(d)));
        break;
      case Sweep:
        out += fmt::format("\tSweep interval:\t\t{}\n", static_cast<int32_t>(fdb_u32(d)));
        break;
      case LogName:
        out += fmt::format("\tReplay logging file:\t\t{}\n", text);
        break;
      case Diff:
        out += fmt::format("\tBackup difference file:\t{}\n", text);
        break;
      case BackupGuid:
        if (len >= 16) out += fmt::format("\tDatabase backup GUID:\t{}\n", guid_text(d));
        break;
      case CryptKey:
        out += fmt::format("\tEncryption key name:\t{}\n", text);
        break;
      case CryptHash:
        out += fmt::format("\tKey hash:\t{}\n", text);
        break;
      case CryptChecksum:
        out += fmt::format("\tCrypt checksum:\t{}\n", text);
        break;
      case DbGuid:
        if (len >= 16) out += fmt::format("\tDatabase GUID:\t{}\n", guid_text(d));
        break;
      case ReplSeq: {
        uint64_t seq = 0;
        std::memcpy(&seq, d, std::min<size_t>(len, 8));
        out += fmt::format("\tReplication sequence:\t{}\n", seq);
        break;
      }
      case Other:
        out += fmt::format("\t{} option {}, length {}\n", type > max ? "Unrecognized" : "Encoded",
                           type, len);
        break;
    }
  }
  out += "\t*END*\n";
  out += fmt::format("\n\nDatabase file sequence:\nFile {} is the only file\n\n", name);
  out += "Analyzing database pages ...\n";
  return out;
}

std::string format_fdb_stat(const FdbFile& file, const std::vector<FdbTable>& catalog,
                            const FdbStatFilter& filter, bool levels, Progress* progress) {
  std::string out;
  const std::vector<const FdbTable*> tables = select_tables(file.path(), catalog, filter);
  const FdbFigures figures = gather_figures(file, catalog, tables, filter, progress);
  for (size_t i = 0; i < tables.size(); ++i) {
    const FdbTable* t = tables[i];
    out += fmt::format("{} ({})\n", t->name, t->id);
    if (figures.tables.empty()) {
      out += fmt::format("    Primary pointer page: {}, Index root page: {}\n", t->pointer_page,
                         t->index_root);
    } else {
      out += format_fdb_table_lines(figures.tables[i], file.page_size(), file.ods().major);
    }
    out += "\n";
    for (size_t k = 0; k < t->indexes.size(); ++k) {
      const FdbIndex& ix = t->indexes[k];
      if (!fdb_index_wanted(ix, filter)) continue;
      out += format_gstat_block(info_of(ix), figures.indexes[i][k]);
      if (levels && ix.root_page != 0) {
        out += format_tree_shape(analyze_tree_shape(fdb_btree_reader(file, *t, ix), ix.root_page,
                                                    file.page_size(), file.page_count(),
                                                    ix.descending));
      }
    }
  }
  return out;
}

std::string format_fdb_stat_json(const FdbFile& file, const std::vector<FdbTable>& catalog,
                                 const FdbStatFilter& filter, bool levels, Progress* progress) {
  std::vector<std::string> objects;
  const std::vector<const FdbTable*> tables = select_tables(file.path(), catalog, filter);
  const FdbFigures figures = gather_figures(file, catalog, tables, filter, progress);
  for (size_t i = 0; i < tables.size(); ++i) {
    const FdbTable* t = tables[i];
    if (!figures.tables.empty()) {
      Json o;
      o["kind"] = "table";
      o["table"] = t->name;
      o["table_id"] = t->id;
      o["page_size"] = file.page_size();
      add_fdb_table_figures(o, figures.tables[i], file.page_size());
      objects.push_back(json_dump(o));
    }
    for (size_t k = 0; k < t->indexes.size(); ++k) {
      const FdbIndex& ix = t->indexes[k];
      if (!fdb_index_wanted(ix, filter)) continue;
      const IndexStats& s = figures.indexes[i][k];
      Json o;
      o["kind"] = "index";
      o["table"] = t->name;
      o["table_id"] = t->id;
      o["name"] = ix.name;
      o["id"] = ix.id;
      o["unique"] = ix.unique;
      o["descending"] = ix.descending;
      add_source_texts(o, ix);
      o["page_size"] = file.page_size();
      Json segments = Json::array();
      for (const FdbSegment& g : ix.segments) {
        segments.push_back(
            Json{{"field", g.field}, {"type", fdb_type_name(g)}, {"itype", g.itype}});
      }
      o["segments"] = std::move(segments);
      add_gstat_figures(o, s);
      if (levels && ix.root_page != 0) {
        add_tree_shape(o, analyze_tree_shape(fdb_btree_reader(file, *t, ix), ix.root_page,
                                             file.page_size(), file.page_count(), ix.descending));
      }
      objects.push_back(json_dump(o));
    }
  }
  return json_array_lines(objects);
}

void run_firebird_stat(const FirebirdStatArgs& a, std::ostream& out, Progress* progress) {
  auto file = FdbFile::open(a.db);
  const std::vector<FdbTable> catalog = read_catalog(*file);
  if (a.what_if) {
    out << format_fdb_what_if(*file, catalog, a.filter, a.json, progress);
    return;
  }
  if (a.json) {
    out << format_fdb_stat_json(*file, catalog, a.filter, a.levels, progress);
    return;
  }
  // A --table or --index that names nothing fails before the header is printed.
  select_tables(file->path(), catalog, a.filter);
  out << format_fdb_header(*file, a.db);
  out << format_fdb_stat(*file, catalog, a.filter, a.levels, progress);
  // gstat's time text ends with its own newline (ctime style), so an empty line follows.
  out << fmt::format("Gstat completion time {}\n\n", gstat_time());
}

std::string format_fdb_what_if(const FdbFile& file, const std::vector<FdbTable>& catalog,
                               const FdbStatFilter& filter, bool json, Progress* progress) {
  std::string text;
  std::vector<std::string> objects;  // json: one dumped object per index
  std::string summary;
  uint64_t before = 0, after = 0;
  for (const FdbTable* t : select_tables(file.path(), catalog, filter)) {
    for (const FdbIndex& ix : t->indexes) {
      if (!fdb_index_wanted(ix, filter)) continue;
      std::function<void(uint64_t)> on_entries;
      if (progress && progress->enabled()) {
        progress->start("what-if: index " + ix.name, 0, "entries");
        on_entries = [progress](uint64_t n) { progress->set(n); };
      }
      const FdbWhatIf w = fdb_what_if(file, ix, on_entries);
      if (progress) progress->finish();
      // Key formats Firebird writes that the column type cannot take in pbtree (decimal128
      // for int128 and numeric(19..38): 34 of 39 digits), as n/a rows.
      std::vector<std::pair<KeyFormat, std::string>> unavailable;
      if (w.predicted) {
        const TypeSpec& ty = w.report.info.def.type;
        for (KeyFormat f : {KeyFormat::Decimal128, KeyFormat::Bcd}) {
          if (ty.type == ColumnType::Double || ty.type == ColumnType::Varchar) break;
          if (!w.report.type_name.empty()) break;  // DECFLOAT: decimal128 only, as stored
          if (key_format_allowed(ty, f)) continue;
          if (std::any_of(w.report.rows.begin(), w.report.rows.end(),
                          [f](const WhatIfRow& r) { return r.format == f; })) {
            continue;  // decimal128 keys as stored (INT128 on ODS 13.0)
          }
          unavailable.push_back({f, fmt::format("cannot hold every value of {} (decimal128: 34 "
                                                "digits at most)",
                                                ty.name())});
        }
      }
      if (json) {
        Json o;
        o["table"] = t->name;
        if (!unavailable.empty()) {
          Json na = Json::array();
          for (auto& [f, why] : unavailable) {
            na.push_back(Json{{"key_format", std::string(key_format_name(f))}, {"reason", why}});
          }
          o["not_available"] = std::move(na);
        }
        if (!w.predicted) {
          o["name"] = ix.name;
          o["predicted"] = false;
          o["reason"] = w.why;
        } else {
          o["predicted"] = true;
          o["shared_rescaled_keys"] = w.shared_keys;
          o["what_if"] = what_if_json(w.report);
        }
        add_source_texts(o, ix);
        objects.push_back(json_dump(o));
        continue;
      }
      if (!w.predicted) {
        text += fmt::format("What-if for index {} ({}) of {}: {}\n{}\n", ix.name, ix.id, t->name,
                            w.why, source_lines(ix));
        continue;
      }
      std::string table = format_what_if_table(w.report);
      table.insert(table.find('\n') + 1, source_lines(ix));
      std::string na;
      for (auto& [f, why] : unavailable) {
        na += fmt::format("   {:<11} n/a: {}\n", key_format_name(f), why);
      }
      const size_t footer = table.rfind("(* current");
      table.insert(footer == std::string::npos ? table.size() : footer, na);
      text += table;
      if (w.report.info.def.format == KeyFormat::RescaledDouble) {
        text += fmt::format(
            "  rescaled-double keys that several values map to: {} (re-encoded "
            "from the smallest)\n\n",
            w.shared_keys);
      }
      const WhatIfRow* cur = nullptr;
      const WhatIfRow* best = nullptr;
      for (const WhatIfRow& r : w.report.rows) {
        if (!r.available) continue;
        if (r.current) cur = &r;
        if (!best || r.index_pages < best->index_pages) best = &r;
      }
      if (!cur || !best || best->index_pages == 0) continue;
      const double ratio = static_cast<double>(cur->index_pages) / best->index_pages;
      if (ratio >= kAutoMinGain) {
        summary += fmt::format("  {} ({}): {} -> {} pages with {}, {} layout: {:.2f}x\n", ix.name,
                               t->name, cur->index_pages, best->index_pages,
                               key_format_name(best->format), layout_name(best->layout), ratio);
        before += cur->index_pages;
        after += best->index_pages;
      }
    }
  }
  if (json) return json_array_lines(objects);
  text += fmt::format("Indexes that would shrink by >= {:.1f}x (index pages, bulk-built):\n",
                      kAutoMinGain);
  text += summary.empty() ? "  none\n" : summary;
  if (before > 0) {
    text += fmt::format("  in total: {} -> {} pages ({:.1f} MiB less, {:.2f}x)\n", before, after,
                        static_cast<double>(before - after) * file.page_size() / (1024.0 * 1024.0),
                        static_cast<double>(before) / after);
  }
  return text;
}

void run_firebird_import(const FirebirdImportArgs& a, std::ostream& out) {
  auto file = FdbFile::open(a.fdb);
  const std::vector<FdbTable> catalog = read_catalog(*file);
  const FdbIndex* index = nullptr;
  for (const FdbTable& t : catalog) {
    for (const FdbIndex& ix : t.indexes) {
      if (ix.name == a.index) index = &ix;
    }
  }
  if (!index)
    throw fdb_no_index_error(a.fdb, user_tables(catalog), a.index, "no index on a user table");
  import_fdb_index(*file, *index, a, out);
}

void import_fdb_index(const FdbFile& fdb, const FdbIndex& ix, const FirebirdImportArgs& a,
                      std::ostream& out) {
  const FdbFile* file = &fdb;
  const FdbIndex* index = &ix;
  std::string why;
  const std::optional<FdbKeyType> kt = fdb_key_type(*index, why);
  if (kt && !kt->decfloat.empty()) {
    why = fmt::format("n/a: {} has no pbtree column type to import its values into", kt->decfloat);
  }
  if (!kt || !kt->decfloat.empty()) {
    throw UsageError(fmt::format("{}: index {} cannot be imported: {}", a.fdb, a.index, why));
  }
  IndexDefinition def;
  def.name = a.name.empty() ? a.index : a.name;
  def.type = kt->type;
  // INT128 keys in decimal128 (ODS 13.0): imported as the type's own format, bcd.
  def.format = !a.key_format.empty() ? parse_key_format(a.key_format)
               : kt->as_stored       ? default_key_format(def.type)
                                     : kt->format;
  check_key_format(def.type, def.format);
  def.unique = index->unique;
  def.descending = index->descending;
  def.layout = a.layout == "compact" ? NodeLayout::Compact : NodeLayout::Firebird;
  EntryBatch batch;
  std::string storage;
  KeyBuffer buffer;
  uint64_t n = 0;
  for_each_fdb_entry(*file, *index, [&](std::span<const uint8_t> key, uint64_t recno) {
    if (def.format == kt->format) {
      batch.add(key, recno, n++);
      return;
    }
    const Value v = key_to_value(def.type, kt->format, def.descending, key, storage);
    build_key(def.type, def.format, v, def.descending, buffer);
    batch.add(buffer.bytes(), recno, n++);
  });
  auto db = IndexFile::open_or_create(a.db, a.page_size != 0 ? a.page_size : file->page_size());
  db->bulk_load(def, batch);
  out << fmt::format("imported {} entries of {} into {} (key format {}, layout {})\n", n, a.index,
                     a.db, key_format_name(def.format), layout_name(def.layout));
}

}  // namespace pbtree::tools
