// pbtree-rss-child OUT PROGRAM [ARG...]: runs PROGRAM as its child and writes "<exit code>
// <peak RSS in KiB>\n" to OUT (-1 as the code if it did not exit normally); exit 0, or 2 on a
// usage or system error. For tests/cli/csv_limits_test.cc: a child forked straight from the
// test process starts with a copy of the test process's pages, and Linux counts them in the
// child's peak RSS (ru_maxrss) even after exec, so a test process grown large by earlier
// tests (one gtest process running many tests) would be measured instead of PROGRAM. This
// small process forks PROGRAM from its own few pages.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pbtree-rss-child OUT PROGRAM [ARG...]\n");
    return 2;
  }
  const pid_t pid = ::fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    ::execv(argv[2], argv + 2);
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return 2;
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) return 2;
  std::fprintf(out, "%d %ld\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss);
  return std::fclose(out) == 0 ? 0 : 2;
}
