// eval/serve_client.cpp: see serve_client.h.
#include "eval/serve_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "eval/serve_proto.h"
#include "sandbox/verdict_read.h"

namespace eval {

std::string serve_socket_from_env() {
  const char* s = std::getenv("KFORGE_SERVE");
  return s ? s : "";
}

int connect_unix(const std::string& path, std::string* err) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    *err = path + ": a socket's path must be shorter than " + std::to_string(sizeof addr.sun_path) +
           " bytes";
    return -1;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *err = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *err = path + ": " + std::strerror(errno) + " (is `kforge serve` running?)";
    close(fd);
    return -1;
  }
  return fd;
}

bool exchange(const std::string& socket, const ServeRequest& request, ServeReply* reply,
              std::string* err) {
  int fd = connect_unix(socket, err);
  if (fd < 0) return false;
  std::string line;
  bool sent = send_line(fd, nlohmann::json(request).dump(), err);
  bool got = sent && receive_line(fd, 0, &line, err);
  close(fd);
  if (!got) return (*err = socket + ": " + *err, false);
  try {
    *reply = nlohmann::json::parse(line).get<ServeReply>();
  } catch (const std::exception& e) {
    return (*err = socket + ": an answer that is not kforge serve's (" + e.what() + ")", false);
  }
  return true;
}

bool evaluate_on_server(const std::string& socket, const sandbox::EvalRequest& req,
                        const std::string& source_root, sandbox::Verdict* v, std::string* err) {
  ServeReply reply;
  if (!exchange(socket, serve_request(req, source_root), &reply, err)) return false;
  if (!reply.ok) return (*err = socket + ": " + reply.error, false);
  std::string why;
  if (!sandbox::verdict_from_json(reply.verdict, v, &why))
    return (*err = socket + ": its verdict: " + why, false);
  return true;
}

}  // namespace eval
