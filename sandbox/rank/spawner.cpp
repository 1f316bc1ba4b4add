// sandbox/rank/spawner.cpp: see spawner.h. One request, one reply, over a SOCK_SEQPACKET
// pair: {"op":"spawn","argv":[..],"env":[..],"child_fd":N} -> {"pid":P} and the judge's
// end of the runner's socket; {"op":"reap","pid":P,"wait_ms":N} -> {"state":S,"status":W}.
#include "spawner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

namespace sandbox::rank {

namespace {

int g_fd = -1;  // the judge's end of the helper's socket
pid_t g_pid = -1;

bool send_msg(int fd, const nlohmann::json& j, int pass_fd) {
  std::string text = j.dump();
  iovec iov{text.data(), text.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))] = {};
  if (pass_fd >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
  }
  ssize_t n;
  while ((n = sendmsg(fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(text.size());
}

// One message into *j (and a passed descriptor into *got_fd, when asked); false at the
// end of the connection or on a message that does not parse.
bool recv_msg(int fd, nlohmann::json* j, int* got_fd) {
  static char buf[1 << 16];
  iovec iov{buf, sizeof buf};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  char control[CMSG_SPACE(sizeof(int))] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  if (got_fd) *got_fd = -1;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      int passed = -1;
      std::memcpy(&passed, CMSG_DATA(cm), sizeof(int));
      if (got_fd)
        *got_fd = passed;
      else
        close(passed);
    }
  *j = nlohmann::json::parse(std::string(buf, static_cast<size_t>(n)), nullptr, false);
  return !j->is_discarded();
}

// Starts one runner; its socket's other end goes back to the judge.
void serve_spawn(int fd, const nlohmann::json& q, std::set<pid_t>* kids) {
  pid_t pid = -1;
  int judge_end = -1;
  std::string err;
  if (!spawn_with_socket(q.value("argv", std::vector<std::string>{}),
                         q.value("env", std::vector<std::string>{}), q.value("child_fd", 3), &pid,
                         &judge_end, &err)) {
    send_msg(fd, {{"error", err}}, -1);
    return;
  }
  kids->insert(pid);
  send_msg(fd, {{"pid", pid}}, judge_end);
  close(judge_end);
}

void serve_reap(int fd, const nlohmann::json& q, std::set<pid_t>* kids) {
  const pid_t pid = q.value("pid", -1);
  int st = 0, state = -1;
  if (kids->count(pid)) {
    pid_t r = wait_or_kill(pid, q.value("wait_ms", 0), &st);
    state = r == pid ? 1 : r == 0 ? 0 : -1;
    if (state != 0) kids->erase(pid);
  }
  send_msg(fd, {{"state", state}, {"status", st}}, -1);
}

[[noreturn]] void helper_main(int fd, pid_t judge) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != judge) _exit(0);
  // Not dumpable: no process of the same user may read this one's memory.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  std::set<pid_t> kids;
  for (;;) {
    nlohmann::json q;
    if (!recv_msg(fd, &q, nullptr)) break;  // the judge is gone, or quit
    const std::string op = q.is_object() ? q.value("op", "") : "";
    if (op == "spawn")
      serve_spawn(fd, q, &kids);
    else if (op == "reap")
      serve_reap(fd, q, &kids);
    else
      send_msg(fd, {{"error", "unknown request"}}, -1);
  }
  for (pid_t k : kids) kill(k, SIGKILL);
  for (pid_t k : kids) waitpid(k, nullptr, 0);
  _exit(0);
}

}  // namespace

bool spawn_with_socket(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       int child_fd, pid_t* pid, int* fd, std::string* err) {
  if (args.empty()) return (*err = "nothing to start", false);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    *err = std::string("socketpair: ") + strerror(errno);
    return false;
  }
  // dup2 onto itself would keep close-on-exec: move the child's end out of the way.
  if (sv[1] == child_fd) {
    int moved = fcntl(sv[1], F_DUPFD_CLOEXEC, child_fd + 1);
    close(sv[1]);
    sv[1] = moved;
  }
  std::vector<std::string> a = args, e = env;
  std::vector<char*> argv, envp;
  for (auto& s : a) argv.push_back(s.data());
  for (auto& s : e) envp.push_back(s.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], child_fd);
  int rc = posix_spawn(pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    *err = "cannot start " + args[0] + ": " + strerror(rc);
    return false;
  }
  *fd = sv[0];
  return true;
}

pid_t wait_or_kill(pid_t pid, int wait_ms, int* status) {
  auto poll_end = [&](int ms) {
    pid_t r = 0;
    for (int waited = 0; (r = waitpid(pid, status, WNOHANG)) == 0 && waited < ms; waited += 5)
      usleep(5000);
    return r;
  };
  pid_t r = poll_end(wait_ms);
  if (r == 0 && kill(pid, SIGKILL) == 0) r = poll_end(1000);
  return r;
}

bool start_spawner(std::string* err) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    *err = std::string("socketpair: ") + strerror(errno);
    return false;
  }
  const pid_t judge = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    *err = std::string("fork: ") + strerror(errno);
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    helper_main(sv[1], judge);
  }
  close(sv[1]);
  g_fd = sv[0];
  g_pid = pid;
  return true;
}

bool spawner_active() {
  return g_fd >= 0;
}

pid_t spawner_pid() {
  return g_pid;
}

bool spawner_spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   int child_fd, pid_t* pid, int* fd, std::string* err) {
  nlohmann::json reply;
  int got = -1;
  if (!send_msg(g_fd, {{"op", "spawn"}, {"argv", argv}, {"env", env}, {"child_fd", child_fd}},
                -1) ||
      !recv_msg(g_fd, &reply, &got)) {
    *err = "the runners' helper process is gone";
    return false;
  }
  if (reply.contains("error") || got < 0) {
    if (got >= 0) close(got);
    *err = reply.value("error", std::string("the helper passed no socket"));
    return false;
  }
  *pid = reply.value("pid", -1);
  *fd = got;
  return true;
}

int spawner_reap(pid_t pid, int wait_ms, int* status) {
  nlohmann::json reply;
  if (!send_msg(g_fd, {{"op", "reap"}, {"pid", pid}, {"wait_ms", wait_ms}}, -1) ||
      !recv_msg(g_fd, &reply, nullptr))
    return -1;
  *status = reply.value("status", 0);
  return reply.value("state", -1);
}

}  // namespace sandbox::rank
