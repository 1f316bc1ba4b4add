// eval/serve_proto.cpp: see serve_proto.h.
#include "eval/serve_proto.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "sandbox/deadline.h"

namespace eval {

namespace {
constexpr size_t kMaxLine = 64u << 20;
}  // namespace

ServeRequest serve_request(const sandbox::EvalRequest& req, const std::string& source_root) {
  ServeRequest r;
  r.source_root = source_root;
  r.settings = req.settings;
  r.role = req.candidate_role;
  r.candidate = req.candidate_path;
  r.baseline = req.baseline_path;
  r.problem_dir = req.problem_dir;
  r.cache_dir = req.toolchain.cache_dir;
  r.instances = req.instances;
  return r;
}

sandbox::EvalRequest eval_request(const ServeRequest& r) {
  sandbox::EvalRequest req;
  req.settings = r.settings;
  req.candidate_role = r.role;
  req.candidate_path = r.candidate;
  req.baseline_path = r.baseline;
  req.problem_dir = r.problem_dir;
  req.toolchain.backend = r.settings.backend;
  req.toolchain.cache_dir = r.cache_dir;
  req.instances = r.instances;
  return req;
}

bool send_line(int fd, const std::string& line, std::string* err) {
  std::string out = line + "\n";
  for (size_t at = 0; at < out.size();) {
    ssize_t n = send(fd, out.data() + at, out.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return (*err = std::string("the connection broke: ") + std::strerror(errno), false);
    at += static_cast<size_t>(n);
  }
  return true;
}

bool receive_line(int fd, double timeout_s, std::string* line, std::string* err) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  line->clear();
  char buf[65536];
  for (;;) {
    size_t nl = line->find('\n');
    if (nl != std::string::npos) {
      line->resize(nl);
      return true;
    }
    if (line->size() > kMaxLine) return (*err = "a line of more than 64 MiB", false);
    if (sandbox::stop_requested()) return (*err = "stopped (a signal or the deadline)", false);
    const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    if (timeout_s > 0 && waited > timeout_s)
      return (*err = "no answer within " + std::to_string(static_cast<int>(timeout_s)) + " s",
              false);
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, 100);  // a tenth of a second: a signal or the deadline is seen soon
    if (r < 0 && errno != EINTR) return (*err = std::strerror(errno), false);
    if (r <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return (*err = std::strerror(errno), false);
    if (n == 0) return (*err = "the connection closed before a whole line", false);
    line->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace eval
