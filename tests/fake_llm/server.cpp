// tests/fake_llm/server.cpp: fake_llm_server, a loopback HTTP server that speaks
// the OpenAI and Anthropic wire formats from a script, so that kforge's providers are
// tested against real sockets with exact control of faults (429s, 5xx, stalls,
// truncated bodies, SSE split anywhere). No LLM API is reachable from CI.
//
//   fake_llm_server --script S.json --log L.jsonl [--port-file P] [--idle-s 30]
//
// It listens on 127.0.0.1 on an ephemeral port, prints the port and writes it to P,
// answers request i with step i of the script (or, where steps have "when": TEXT, with
// the first unused step whose TEXT the request's body holds), logs each request as one JSON line
// (method, path, headers, body; the auth header only as present + a sha256 prefix),
// and exits when the script is spent or after idle-s seconds without a connection.
// A step with "cache": true reports the prompt-cache usage the real API would for the
// request (prompt_cache.h).
// The script format is in README.md beside this file.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "prompt_cache.h"
#include "sha256.h"

using nlohmann::json;

namespace {

struct Options {
  std::string script, log, port_file;
  double idle_s = 30;
  double stall_s = 30;           // the longest a stall step hangs if the client never gives up
  long cache_min_tokens = 1024;  // the shortest prefix the prompt cache keeps
};

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Waits until fd is readable (or closed) for up to ms milliseconds.
bool wait_readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) > 0;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct HttpReq {
  std::string method, path, body;
  json headers = json::object();
  json auth = {{"present", false}};
};

// Reads one request: the head up to the blank line, then Content-Length bytes.
bool read_request(int fd, HttpReq* r) {
  std::string buf;
  char tmp[65536];
  size_t head_end;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (!wait_readable(fd, 10000)) return false;
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
  }
  std::istringstream head(buf.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  std::istringstream first(line);
  first >> r->method >> r->path;
  size_t length = 0;
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = lower(line.substr(0, colon));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (name == "content-length") length = std::stoul(value);
    if (name == "authorization" || name == "x-api-key") {
      std::string secret = value.rfind("Bearer ", 0) == 0 ? value.substr(7) : value;
      r->auth = {{"present", true},
                 {"header", name},
                 {"sha256_prefix", sandbox::sha256_hex(secret).substr(0, 16)}};
      continue;  // never log the key itself
    }
    r->headers[name] = value;
  }
  r->body = buf.substr(head_end + 4);
  while (r->body.size() < length) {
    if (!wait_readable(fd, 10000)) return false;
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    r->body.append(tmp, static_cast<size_t>(n));
  }
  return true;
}

// {"hex": "e282"}: bytes that are not valid UTF-8 on their own (JSON strings must be).
std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 529:
      return "Overloaded";
    default:
      return "Status";
  }
}

// Hangs until the client hangs up, or stall_s passes.
void hang(int fd, double stall_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(stall_s);
  char tmp[4096];
  while (std::chrono::steady_clock::now() < end) {
    if (!wait_readable(fd, 50)) continue;
    if (::recv(fd, tmp, sizeof tmp, 0) <= 0) return;
  }
}

// Waits until path exists, or stall_s passes.
void hold_until(const std::string& path, double stall_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(stall_s);
  while (std::chrono::steady_clock::now() < end && ::access(path.c_str(), F_OK) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Answers one request as step says; `usage` (when not empty) replaces every
// "$CACHE_USAGE" (quotes included) in the stream's pieces.
void respond(int fd, const json& step, const Options& opt, const std::string& usage) {
  if (step.value("close", false)) return;  // hang up without a word
  if (int d = step.value("delay_ms", 0); d > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(d));
  int status = step.value("status", 200);
  std::vector<std::string> pieces;
  bool stream = step.contains("stream");
  if (stream) {
    for (const json& c : step["stream"])
      pieces.push_back(c.is_string() ? c.get<std::string>() : unhex(c.value("hex", "")));
    for (std::string& p : pieces)
      for (size_t at; !usage.empty() && (at = p.find("\"$CACHE_USAGE\"")) != std::string::npos;)
        p.replace(at, 14, usage);
  } else if (step.contains("body")) {
    const json& b = step["body"];
    pieces.push_back(b.is_string() ? b.get<std::string>() : b.dump());
  }
  size_t total = 0;
  for (const std::string& p : pieces) total += p.size();
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  std::string type = stream ? "text/event-stream" : "application/json";
  head += "Content-Type: " + step.value("content_type", type) + "\r\n";
  if (!stream) head += "Content-Length: " + std::to_string(total) + "\r\n";
  if (step.contains("headers"))
    for (auto& [k, v] : step["headers"].items()) head += k + ": " + v.get<std::string>() + "\r\n";
  head += "Connection: close\r\n\r\n";
  if (!send_all(fd, head)) return;
  // Limit: a stall or a truncation cuts the body after so many bytes.
  long limit = step.contains("stall_after_bytes") ? step["stall_after_bytes"].get<long>()
               : step.contains("truncate_at")     ? step["truncate_at"].get<long>()
                                                  : -1;
  int gap = step.value("delay_ms_between", 0);
  // A stall the test ends: before piece hold_before_piece, wait until the file
  // hold_until_file exists (a test creates it once it has seen what it waits for).
  long hold_at = step.value("hold_before_piece", -1L);
  std::string hold_file = step.value("hold_until_file", "");
  size_t sent = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (static_cast<long>(i) == hold_at && !hold_file.empty()) hold_until(hold_file, opt.stall_s);
    std::string p = pieces[i];
    if (limit >= 0 && sent + p.size() > static_cast<size_t>(limit)) p.resize(limit - sent);
    if (!p.empty() && !send_all(fd, p)) return;
    sent += p.size();
    if (limit >= 0 && sent >= static_cast<size_t>(limit)) break;
    if (gap > 0 && i + 1 < pieces.size())
      std::this_thread::sleep_for(std::chrono::milliseconds(gap));
  }
  if (step.contains("stall_after_bytes")) hang(fd, opt.stall_s);
}

// A "cache": true step: the usage the API's prompt cache gives the request, merged into
// the body's usage (a JSON body) and, as *usage, for the stream's "$CACHE_USAGE"; an
// invalid cache_control turns the step into the API's 400.
void cache_usage(fake_llm::PromptCache* cache, const std::string& path, const json& body,
                 json* step, std::string* usage) {
  bool anthropic = path.size() >= 9 && path.compare(path.size() - 9, 9, "/messages") == 0;
  json u;
  std::string error;
  if (!anthropic) {
    u = cache->openai_usage(body);
  } else if (!cache->anthropic_usage(body, &u, &error)) {
    *step = {
        {"status", 400},
        {"body",
         {{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", error}}}}}};
    return;
  }
  *usage = u.dump();
  json* b = step->contains("body") ? &(*step)["body"] : nullptr;
  if (!b || !b->is_object()) return;
  json& bu = (*b)["usage"];
  if (!bu.is_object()) bu = json::object();
  bu.update(u);
  if (!anthropic)
    bu["total_tokens"] = bu.value("prompt_tokens", 0) + bu.value("completion_tokens", 0);
}

bool parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--script")
      o->script = v;
    else if (a == "--log")
      o->log = v;
    else if (a == "--port-file")
      o->port_file = v;
    else if (a == "--idle-s")
      o->idle_s = std::stod(v);
    else if (a == "--stall-s")
      o->stall_s = std::stod(v);
    else if (a == "--cache-min-tokens")
      o->cache_min_tokens = std::stol(v);
    else
      return false;
  }
  return !o->script.empty() && !o->log.empty();
}

// The script's steps (a JSON array, or an object whose "steps" is one); false where the
// file is missing or not that.
bool read_script(const std::string& path, json* steps) {
  std::ifstream sin(path);
  *steps = json::parse(sin, nullptr, false);
  if (steps->is_object() && steps->contains("steps")) *steps = (*steps)["steps"];
  return sin && !steps->is_discarded() && steps->is_array();
}

// A listening socket on a free loopback port; -1 where none could be had.
int listen_loopback(int* port) {
  int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(ls, 16) != 0 ||
      ::getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return -1;
  *port = ntohs(addr.sin_port);
  return ls;
}

// The first unused step that fits the request: no "when", or a "when" its body holds (a
// list: every text of it); script.size() where none does.
size_t pick_step(const json& script, const std::vector<bool>& used, const std::string& body) {
  auto fits = [&](const json& st) {
    if (!st.contains("when")) return true;
    json texts = st["when"].is_array() ? st["when"] : json::array({st["when"]});
    for (const json& t : texts)
      if (body.find(t.get<std::string>()) == std::string::npos) return false;
    return true;
  };
  for (size_t j = 0; j < script.size(); ++j)
    if (!used[j] && fits(script[j])) return j;
  return script.size();
}
}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse_args(argc, argv, &opt)) {
    std::fprintf(stderr,
                 "usage: fake_llm_server --script S.json --log L.jsonl "
                 "[--port-file P] [--idle-s 30] [--stall-s 30] [--cache-min-tokens 1024]\n");
    return 2;
  }
  json script;
  if (!read_script(opt.script, &script)) {
    std::fprintf(stderr, "fake_llm_server: %s: expected a JSON array of steps\n",
                 opt.script.c_str());
    return 2;
  }
  int port = 0;
  int ls = listen_loopback(&port);
  if (ls < 0) {
    std::perror("fake_llm_server: bind");
    return 1;
  }
  std::ofstream log(opt.log, std::ios::app);
  if (!opt.port_file.empty()) {
    // Written whole and renamed, so a reader never sees half a number.
    std::string tmp = opt.port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::rename(tmp.c_str(), opt.port_file.c_str());
  }
  std::printf("%d\n", port);
  std::fflush(stdout);
  std::vector<bool> used(script.size(), false);
  fake_llm::PromptCache cache(opt.cache_min_tokens);
  for (size_t i = 0; i < script.size(); ++i) {
    if (!wait_readable(ls, static_cast<int>(opt.idle_s * 1000))) {
      std::fprintf(stderr, "fake_llm_server: idle for %g s, %zu of %zu steps left\n", opt.idle_s,
                   script.size() - i, script.size());
      return 3;
    }
    int fd = ::accept(ls, nullptr, nullptr);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    HttpReq r;
    if (!read_request(fd, &r)) {
      ::close(fd);
      --i;  // a connection that sent no request uses no step
      continue;
    }
    json body = json::parse(r.body, nullptr, false);
    size_t step = pick_step(script, used, r.body);
    if (step == script.size()) {
      std::fprintf(stderr, "fake_llm_server: no step left for request %zu\n", i);
      ::close(fd);
      return 4;
    }
    used[step] = true;
    log << json{{"step", step},   {"method", r.method},
                {"path", r.path}, {"headers", r.headers},
                {"auth", r.auth}, {"body", body.is_discarded() ? json(r.body) : body}}
               .dump()
        << "\n"
        << std::flush;
    json answer = script[step];
    std::string usage;
    if (answer.value("cache", false)) cache_usage(&cache, r.path, body, &answer, &usage);
    respond(fd, answer, opt, usage);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
  }
  return 0;
}
