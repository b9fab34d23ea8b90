// Entry point of the `pbtree` executable; all work is in tools/cli.cc.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "tools/cli.h"

namespace {

// Descriptors 0-2 that the caller closed would be reused by the first files opened here, the
// index file among them: progress lines and errors for stderr would then be written into the
// database, and `--input -` would read the database as CSV. Each closed one gets /dev/null
// (stdin reads as empty input; output is dropped).
void keep_standard_descriptors_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd) ::close(got);  // lower descriptors are open: got == fd
  }
}

}  // namespace

int main(int argc, char** argv) {
  keep_standard_descriptors_open();
  std::ios::sync_with_stdio(false);
  const int rc = pbtree::tools::run_cli(argc, argv, std::cout, std::cerr);
  // Output that did not reach stdout (a full disk, /dev/full, a closed pipe reader without
  // SIGPIPE) makes the run a failure: `pbtree scan ... > out.tsv` must not exit 0 with half a
  // file.
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    const int e = errno;
    std::cerr << "pbtree: <stdout>: write failed" << (e != 0 ? ": " : "")
              << (e != 0 ? std::strerror(e) : "") << "\n";
    return rc != 0 ? rc : 1;
  }
  return rc;
}
