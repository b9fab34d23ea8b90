// Helpers for the CLI tests: run run_cli() in-process with captured streams, scratch
// directories, and whole-file reads for "file unchanged" checks.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace pbtree::tools::testing {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

/// Runs `pbtree ARGS...` in-process (run_cli) and returns its exit code, stdout and stderr.
inline CliResult run_args(const std::vector<std::string>& args) {
  std::vector<std::string> storage{"pbtree"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const auto& s : storage) argv.push_back(s.c_str());
  std::ostringstream out, err;
  int code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

inline CliResult run(std::initializer_list<std::string> args) {
  return run_args(std::vector<std::string>(args));
}

/// A fresh directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("pbtree-cli-test-" + std::to_string(::getpid()) + "-" + tag);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream f(file(name), std::ios::binary);
    f << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::string numbers(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += std::to_string(i) + "\n";
  return s;
}

}  // namespace pbtree::tools::testing
