// check_slot_type / check_leaf_keys (tools/verify_keys.h): keys decoded node by node with their
// offsets (the jump table is not needed: nodes are walked from the first one).
#include "tools/verify_keys.h"

#include <fmt/format.h>
#include <pbtree/keys.h>

#include <cstring>

#include "node/btree_page.h"
#include "node/node.h"
#include "page/page_file.h"
#include "util/bytes.h"

namespace pbtree::tools {

std::vector<std::string> check_slot_type(const IndexInfo& info) {
  std::vector<std::string> out;
  if (info.def.compound()) {  // every segment's type (file/index_root.h descriptors)
    for (size_t i = 0; i < info.def.segments.size(); ++i) {
      const std::string name = info.def.segments[i].type.name();
      try {
        if (!(TypeSpec::parse(name) == info.def.segments[i].type)) {
          out.push_back(fmt::format("index {}: segment {} type {}: not a canonical type",
                                    info.def.name, i + 1, name));
        }
      } catch (const std::exception& e) {
        out.push_back(
            fmt::format("index {}: segment {} type {}: {}", info.def.name, i + 1, name, e.what()));
      }
    }
    return out;
  }
  const std::string name = info.def.type.name();
  try {
    if (!(TypeSpec::parse(name) == info.def.type)) {
      out.push_back(
          fmt::format("index {}: slot type {}: not a canonical type", info.def.name, name));
    }
  } catch (const std::exception& e) {
    out.push_back(fmt::format("index {}: slot type {}: {}", info.def.name, name, e.what()));
  }
  return out;
}

void check_leaf_keys(const std::string& db, const IndexInfo& info, const uint8_t* page,
                     uint32_t page_size, std::vector<std::string>& violations) {
  (void)page_size;
  const IndexDefinition& def = info.def;
  const BtreePage view(page);
  const uint16_t length = view.length();
  uint32_t pos = view.first_node();
  std::vector<uint8_t> key;
  std::string storage;
  KeyBuffer rebuilt;
  NodeContext ctx;
  bool have_ctx = false;
  try {
    for (;;) {
      IndexNode n = decode_node(page, length, pos, true, have_ctx ? &ctx : nullptr);
      ctx = context_after(n);
      have_ctx = true;
      if (n.is_marker()) return;
      if (n.prefix > key.size()) return;  // reported by the structural checks
      key.resize(size_t{n.prefix} + n.length);
      if (n.length != 0) std::memcpy(key.data() + n.prefix, n.data, n.length);
      std::string problem;
      if (def.compound()) {  // split, decoded and re-encoded (keys/compound.cc)
        std::vector<std::string> parts;
        if (!compound_key_values(def, key, parts)) {
          problem = fmt::format("key {} is not a compound key of the index's {} segments",
                                hex_bytes(key), def.segments.size());
        }
      } else
        try {
          const Value v = key_to_value(def.type, def.format, def.descending, key, storage);
          build_key(def.type, def.format, v, def.descending, rebuilt);
          if (rebuilt.bytes().size() != key.size() ||
              !std::equal(key.begin(), key.end(), rebuilt.bytes().begin())) {
            problem = fmt::format("key {} is not the key of its value (that is {})", hex_bytes(key),
                                  hex_bytes(rebuilt.bytes()));
          }
        } catch (const KeyError& e) {
          problem = e.what();
        }
      if (!problem.empty()) {
        violations.push_back(fmt::format("{}: index {}: page {}, node at offset {}: {}", db,
                                         def.name, page_number_of(page), pos, problem));
      }
      pos = n.end();
    }
  } catch (const CorruptError&) {
    // A malformed node: the structural checks report it.
  }
}

}  // namespace pbtree::tools
