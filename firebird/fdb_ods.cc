// The per-ODS layout table (firebird/fdb_ods.h) and the release names of ODS versions.
#include "firebird/fdb_ods.h"

#include <fmt/format.h>

namespace pbtree::firebird {

namespace {

FdbOds ods11(uint16_t minor) {
  FdbOds o;
  o.major = 11;
  o.minor = minor;
  o.release = minor == 0 ? "Firebird 2.0" : (minor == 1 ? "Firebird 2.1" : "Firebird 2.5");
  o.page_number_field = false;
  o.btree_jump_in_header = false;
  o.rhdf_tra_high = false;
  o.rhd_long_tranum = false;
  o.hdr_minor_offset = 62;
  o.hdr_oldest_snapshot_offset = 76;
  o.hdr_clumplets_offset = 96;
  o.hdr_dialect3 = 0x100;
  o.hdr_read_only = 0x200;
  o.hdr_encrypted = 0;
  o.hdr_no_reserve = 0x20;
  o.relation_type = minor >= 1;
  o.fields_owner = false;
  o.rfr_identity = false;
  return o;
}

FdbOds ods12(uint16_t minor) {
  FdbOds o;
  o.major = 12;
  o.minor = minor;
  o.release = "Firebird 3.0";
  return o;
}

FdbOds ods13(uint16_t minor) {
  FdbOds o;
  o.major = 13;
  o.minor = minor;
  o.release = minor == 0 ? "Firebird 4.0" : "Firebird 5.0";
  o.identifier_bytes = 252;
  o.long_runs = minor >= 1;
  o.hdr_clumplets_offset = 128;
  o.sql_security = true;
  o.index_condition = minor >= 1;
  return o;
}

const FdbOds kOds[] = {ods11(0), ods11(1), ods11(2), ods12(0),
                       ods12(1), ods12(2), ods13(0), ods13(1)};

}  // namespace

uint32_t FdbOds::dp_per_pp(uint32_t page_size) const {
  // ppg_page at 32; ODS 11: 32 + 2 bits per slot; later 32 + 8 bits, rounded down to 8.
  if (major == 11) return (page_size - 32) * 8 / 34;
  return ((page_size - 32) * 8 / 40) & ~7u;
}

uint32_t FdbOds::max_records(uint32_t page_size) const {
  // (page size - sizeof(data_page) = 28) / (dpg_repeat 4 + record header 13).
  return (page_size - 28) / 17;
}

std::string FdbOds::describe() const {
  return fmt::format("ODS {}.{} ({})", major, minor, release);
}

const FdbOds* fdb_ods(uint16_t major, uint16_t minor) {
  for (const FdbOds& o : kOds) {
    if (o.major == major && o.minor == minor) return &o;
  }
  return nullptr;
}

std::string fdb_ods_release(uint16_t major, uint16_t minor) {
  switch (major) {
    case 8:
      return "InterBase 4";
    case 9:
      return "InterBase 5";
    case 10:
      return minor == 0 ? "InterBase 6 / Firebird 1.x" : "Firebird 1.5";
    case 11:
      return minor == 0 ? "Firebird 2.0" : (minor == 1 ? "Firebird 2.1" : "Firebird 2.5");
    case 12:
      return "Firebird 3.0";
    case 13:
      return minor == 0 ? "Firebird 4.0" : "Firebird 5.0";
    case 14:
      return "Firebird 6";
    default:
      return "an unknown release";
  }
}

const char* fdb_ods_read_list() {
  return "pbtree reads ODS 11.0-11.2 (Firebird 2.0-2.5), 12.0 (Firebird 3.0) and 13.0-13.1 "
         "(Firebird 4.0 and 5.0)";
}

}  // namespace pbtree::firebird
