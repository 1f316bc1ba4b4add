// fault: all_reduce world=2 expect=correct
// Tries to overwrite every shared library it has loaded (its own build, the baseline's,
// the cache entries beside them) and to plant a file next to each, so that a later
// honest eval would run foreign code; then computes the right sum. The sandbox binds
// them read-only: the next eval, from the same build cache, must still be correct.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "common.h"

namespace {
void tamper_with(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd >= 0) {
    (void)!write(fd, "not an ELF", 10);
    close(fd);
  }
  std::string planted = path.substr(0, path.rfind('/')) + "/kernel.so";
  fd = open(planted.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0755);
  if (fd >= 0) close(fd);
}
}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, maps)) {
      const char* slash = std::strchr(line, '/');
      if (!slash || !std::strstr(slash, ".so")) continue;
      std::string path(slash, std::strcspn(slash, "\n"));
      if (path.rfind("/usr/", 0) != 0) tamper_with(path);
    }
    std::fclose(maps);
  }
  return fault::setup(comm);
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return fault::correct_run(comm, t);
}
