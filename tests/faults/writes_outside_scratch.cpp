// fault: all_reduce world=2 expect=correct
// Tries to create a file everywhere it should not: its run's folder (its working
// directory is <run>/scratch; the run's folder holds the reports and status files), the
// folders above that up to the runs root, /root, /tmp and /var/tmp as the machine sees
// them, /usr, /etc. The candidate's process may write beneath <run>/scratch only (and in
// its private /dev), so every try must fail: it computes the right sum and returns 0
// only then (3 if any file was made, which the verdict shows).
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "common.h"

namespace {
bool made_one = false;

void try_create(const std::string& dir) {
  std::string path = dir + "/kforge-fault-outside";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    made_one = true;
    close(fd);
    unlink(path.c_str());
  }
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  char cwd[4096] = "";
  if (getcwd(cwd, sizeof cwd)) {
    std::string up = cwd;
    for (int i = 0; i < 5 && up.size() > 1; ++i) {
      up = up.substr(0, up.rfind('/'));
      if (up.empty()) up = "/";
      try_create(up);
    }
  }
  for (const char* dir : {"/root", "/tmp", "/var/tmp", "/usr", "/etc"}) try_create(dir);
  fault::correct_run(comm, t);
  return made_one ? 3 : 0;
}
