// A per-test hang guard: Watchdog w(seconds) ends the whole test process with a message naming
// the running test if the test is still inside w's scope after `seconds`, so an endless loop
// in a hostile-input test fails at once instead of waiting for ctest's global TIMEOUT. It
// measures nothing about speed (the bound is far above any run, sanitizers included).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace pbtree::testing {

class Watchdog {
 public:
  explicit Watchdog(int seconds) {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = info ? std::string(info->test_suite_name()) + "." + info->name() : "?";
    thread_ = std::thread([this, seconds] {
      std::unique_lock lock(mutex_);
      if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "watchdog: %s still running after %d s: a hang\n", name_.c_str(),
                     seconds);
        std::fflush(stderr);
        std::_Exit(3);
      }
    });
  }
  Watchdog(const Watchdog&) = delete;
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace pbtree::testing
