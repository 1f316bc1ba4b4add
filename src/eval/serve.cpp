// eval/serve.cpp: see serve.h.
#include "eval/serve.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "eval/eval.h"
#include "eval/serve_client.h"
#include "eval/serve_proto.h"
#include "sandbox/interrupt.h"
#include "sandbox/verdict.h"
#include "sandbox/warm.h"

namespace eval {

namespace fs = std::filesystem;

namespace {

// The request's eval, on the pool's warm set for it (or cold when every set is busy).
ServeReply serve_one(const ServeRequest& r, const suite::Paths& paths, const std::string& evals_dir,
                     sandbox::WarmPool* pool, const ServeOptions& o) {
  ServeReply reply;
  if (r.protocol != kServeProtocol) {
    reply.error = fmt::format(
        "protocol {} asked, {} spoken: run a kforge serve of the same "
        "build as the command",
        r.protocol, kServeProtocol);
    return reply;
  }
  if (r.source_root != paths.source_root) {
    reply.error = fmt::format(
        "this server serves the checkout {}, not {}: start a kforge "
        "serve from that checkout, or unset KFORGE_SERVE",
        paths.source_root, r.source_root);
    return reply;
  }
  if (!r.pkb.is_null()) {
    if (o.pkb) return o.pkb(r);
    reply.error = "this server runs no ParallelKernelBench evals";
    return reply;
  }
  sandbox::EvalRequest req = eval_request(r);
  fill_toolchain(paths, &req);
  req.warm = pool->set_for(req);
  const std::string under = req.warm ? req.warm->root() : evals_dir;
  req.eval_dir = sandbox::make_eval_dir(under);
  if (req.eval_dir.empty()) {
    reply.error = "the server cannot create a run directory under " + under;
    return reply;
  }
  sandbox::Verdict v;
  if (!sandbox::evaluate(req, &v, &reply.error)) return reply;
  reply.ok = true;
  reply.verdict = sandbox::verdict_json(v);
  return reply;
}

// One connection: its request line, the eval, the answer.
void handle(int fd, const suite::Paths& paths, const std::string& evals_dir,
            sandbox::WarmPool* pool, const ServeOptions& o, std::atomic<int>* active) {
  std::string line, err;
  if (receive_line(fd, 30, &line, &err)) {
    ServeReply reply;
    try {
      reply = serve_one(nlohmann::json::parse(line).get<ServeRequest>(), paths, evals_dir, pool, o);
    } catch (const std::exception& e) {
      reply.error = std::string("a request that is not an eval: ") + e.what();
    }
    send_line(fd, nlohmann::json(reply).dump(), &err);  // a client gone is no error of ours
  }
  close(fd);
  --*active;
}

// Only this user's processes are served.
bool same_user(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.uid == getuid();
}

// Listens on path: a stale socket (no server answers it) is replaced, a live one is not.
int listen_on(const std::string& path, std::string* err) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    return (*err = fmt::format("--socket {}: a socket's path must be shorter than {} bytes: "
                               "choose a shorter one",
                               path, sizeof addr.sun_path),
            -1);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec))) {
    std::string why;
    int probe = connect_unix(path, &why);
    if (probe >= 0) {
      close(probe);
      return (*err = path + ": a kforge serve already listens there", -1);
    }
    if (!fs::is_socket(fs::symlink_status(path, ec)))
      return (*err = path + ": exists and is not a socket: choose another --socket", -1);
    fs::remove(path, ec);
  }
  fs::create_directories(fs::path(path).parent_path(), ec);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const mode_t old = umask(0177);  // the socket is born 0600: no window for another user
  bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
            listen(fd, 64) == 0;
  umask(old);
  if (!ok) {
    *err = path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

bool serve_evals(const ServeOptions& o, const suite::Paths& paths,
                 const std::function<void()>& on_ready, std::string* err) {
  int lfd = listen_on(o.socket, err);
  if (lfd < 0) return false;
  sandbox::install_interrupt_handlers();
  const std::string evals_dir = o.evals_dir.empty() ? paths.runs_dir + "/evals" : o.evals_dir;
  auto pool = std::make_unique<sandbox::WarmPool>(evals_dir, o.max_sets);
  std::atomic<int> active{0};  // connections being served
  if (on_ready) on_ready();
  while (!sandbox::interrupted() && !(o.stop && *o.stop)) {
    pollfd p{lfd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    if (!same_user(fd)) {
      close(fd);
      continue;
    }
    ++active;
    std::thread(handle, fd, std::cref(paths), std::cref(evals_dir), pool.get(), std::cref(o),
                &active)
        .detach();
  }
  close(lfd);
  std::error_code ec;
  fs::remove(o.socket, ec);
  // The evals under way end (after a signal, within moments: sandbox/process.h kills
  // their ranks) and answer before the sets go.
  while (active > 0) usleep(20000);
  pool.reset();
  return true;
}

ServeThread::~ServeThread() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool ServeThread::start(ServeOptions o, const suite::Paths& paths, std::string* err) {
  o_ = std::move(o);
  o_.stop = &stop_;
  paths_ = paths;
  thread_ = std::thread([this] {
    std::string e;
    if (!serve_evals(
            o_, paths_, [this] { state_ = 1; }, &e)) {
      why_ = e;
      state_ = 2;
    }
  });
  for (int i = 0; i < 1000 && state_ == 0; ++i) usleep(10000);
  if (state_ == 1) return true;
  stop_ = true;
  thread_.join();  // it failed, or listens too late to be of use: it ends either way
  *err = state_ == 2 ? why_ : "kforge serve did not start listening within 10 s";
  return false;
}

}  // namespace eval
