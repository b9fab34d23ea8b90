// LevelRunBuilder: one level of fast_load's page filling (the PageBuilder calls of
// FastLoader::add_node, btree/bulk_build.cc), for the runs of pages BTree::insert_batch rewrites.
#include "btree/leaf_run_builder.h"

#include "btree/bulk_build.h"

namespace pbtree {

LevelRunBuilder::LevelRunBuilder(const Options& options, PageSink sink)
    : o_(options),
      truncate_(FastLoader::fill_policy(options.layout).truncate_separators && options.level == 0 &&
                !options.descending),
      sink_(std::move(sink)),
      builder_(options.page_size, options.jump_interval, options.layout, options.level == 0) {
  builder_.set_limit(FastLoader::fill_limit(options.layout, options.page_size, options.level == 0,
                                            options.nonleaf_free));
  start_page();
}

void LevelRunBuilder::start_page() {
  cur_ = Page{};
  cur_.bytes.resize(o_.page_size);
  builder_.start(cur_.bytes.data());
}

void LevelRunBuilder::close_page() {
  BtreeHeader h = cur_.header;
  h.index_id = o_.index_id;
  h.level = o_.level;
  cur_.header = builder_.close(cur_.bytes.data(), h);
  ++pages_;
  sink_(std::move(cur_));
}

void LevelRunBuilder::break_page() {
  builder_.end_bucket();
  uint64_t sep_recno = 0;
  const std::span<const uint8_t> sep = builder_.separator(truncate_, sep_recno);
  std::vector<uint8_t> sep_key(sep.begin(), sep.end());
  close_page();
  cur_ = Page{};
  cur_.bytes.resize(o_.page_size);
  builder_.restart(cur_.bytes.data());
  cur_.sep_key = std::move(sep_key);
  cur_.sep_recno = sep_recno;
}

void LevelRunBuilder::add(std::span<const uint8_t> key, uint64_t recno, uint32_t child) {
  PageBuilder& b = builder_;
  if (pages_ == 0 && b.nodes() == 0) {
    cur_.sep_key.assign(key.begin(), key.end());
    cur_.sep_recno = recno;
  }
  const uint32_t prefix = b.prefix(key);
  const uint32_t fit = b.fit_size(key, recno, child, prefix);
  const bool first = b.nodes() == 0;
  bool broke = false;
  if (!first && !b.fits(fit)) {
    break_page();
    broke = true;
  }
  // A run's first node is explicit (it follows no node of this build).
  b.place(key, recno, child, prefix, fit, !broke, first);
}

void LevelRunBuilder::finish(const PageEntry* end) {
  PageBuilder& b = builder_;
  if (end != nullptr) {
    if (b.nodes() > 1 && !b.fits(b.end_bucket_size(end->key, end->recno, end->page_number))) {
      break_page();
    }
    b.append_end_bucket(end->key, end->recno, end->page_number, false);
  } else {
    b.append_end_level();
  }
  close_page();
}

}  // namespace pbtree
