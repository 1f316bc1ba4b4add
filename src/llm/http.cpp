// src/llm/http.cpp: see http.h.
#include "llm/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "kf_build_paths.h"
#include "sandbox/deadline.h"
#include "sandbox/interrupt.h"
#include "sandbox/text.h"

namespace llm {

using sandbox::trim;

namespace {

using Clock = std::chrono::steady_clock;

struct Transfer {
  const HttpRequest* req;
  HttpResponse* resp;
  Clock::time_point start, last_byte;
  bool got_byte = false;
  bool idle_hit = false;
  HttpFault stopped = HttpFault::none;  // interrupted or deadline, when that aborted it
};

// The user's interrupt wins over the budget: it is what the person asked for.
bool stop_now(Transfer* t) {
  if (sandbox::interrupted())
    t->stopped = HttpFault::interrupted;
  else if (sandbox::deadline_passed())
    t->stopped = HttpFault::deadline;
  return t->stopped != HttpFault::none;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void touch(Transfer* t) {
  t->last_byte = Clock::now();
  t->got_byte = true;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  touch(t);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line (after a 100 Continue, or a redirect) starts a new header set.
    t->resp->headers.clear();
    size_t sp = line.find(' ');
    t->resp->status = sp == std::string::npos ? 0 : std::atoi(line.c_str() + sp + 1);
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string::npos)
    t->resp->headers[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  touch(t);
  size_t len = size * n;
  t->resp->body_bytes += len;
  int st = t->resp->status;
  if (t->req->on_body && st >= 200 && st < 300)
    t->req->on_body(data, len);
  else
    t->resp->body.append(data, len);
  return len;
}

// Called often while bytes flow and about once a second when they do not (libcurl's
// documented minimum), which bounds how late an idle time-out fires.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (stop_now(t)) return 1;
  if (!t->got_byte && !t->req->idle_before_first_byte) return 0;
  double idle = std::chrono::duration<double>(Clock::now() - t->last_byte).count();
  if (t->req->idle_timeout_s > 0 && idle > t->req->idle_timeout_s) {
    t->idle_hit = true;
    return 1;
  }
  return 0;
}

long ms(double s) {
  return std::max(1L, static_cast<long>(s * 1000.0));
}

// curl_easy_perform, driven through a multi handle so that kforge wakes every 50 ms to
// ask whether it must stop: the progress callback alone may wait a second on a silent
// server. CURLE_ABORTED_BY_CALLBACK when it stopped.
CURLcode perform(CURL* h, Transfer* t) {
  CURLM* m = curl_multi_init();
  if (!m) return CURLE_OUT_OF_MEMORY;
  curl_multi_add_handle(m, h);
  CURLcode rc = CURLE_OK;
  int running = 1;
  while (running) {
    if (stop_now(t)) {
      rc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    if (curl_multi_perform(m, &running) != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      break;
    }
    if (running) curl_multi_poll(m, nullptr, 0, 50, nullptr);
  }
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(m, &left))
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) rc = msg->data.result;
  curl_multi_remove_handle(m, h);
  curl_multi_cleanup(m);
  return rc;
}

}  // namespace

bool is_loopback_url(const std::string& url) {
  size_t p = url.find("://");
  std::string rest = p == std::string::npos ? url : url.substr(p + 3);
  for (const char* host : {"127.0.0.1", "localhost", "[::1]"}) {
    std::string h = host;
    if (rest.rfind(h, 0) == 0 &&
        (rest.size() == h.size() || rest[h.size()] == ':' || rest[h.size()] == '/'))
      return true;
  }
  return false;
}

bool http_post(const HttpRequest& req, HttpResponse* resp) {
  global_init();
  *resp = HttpResponse{};
  CURL* h = curl_easy_init();
  if (!h) {
    resp->fault = HttpFault::connection;
    resp->fault_message = "curl_easy_init failed";
    return false;
  }
  Transfer t{&req, resp, Clock::now(), Clock::now()};
  curl_slist* hdrs = nullptr;
  for (const std::string& s : req.headers) hdrs = curl_slist_append(hdrs, s.c_str());
  // curl would send "Expect: 100-continue" for larger bodies and wait for a reply that
  // many servers never send.
  hdrs = curl_slist_append(hdrs, "Expect:");
  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms(req.connect_timeout_s));
  if (req.total_timeout_s > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms(req.total_timeout_s));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);         // threads: no SIGALRM for DNS time-outs
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  curl_easy_setopt(h, CURLOPT_USERAGENT, "kforge/" KF_VERSION);
  if (is_loopback_url(req.url)) curl_easy_setopt(h, CURLOPT_NOPROXY, "*");

  CURLcode rc = perform(h, &t);
  double connect_time = 0;
  curl_easy_getinfo(h, CURLINFO_CONNECT_TIME, &connect_time);
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(h);

  if (rc == CURLE_OK) return true;
  std::string what = fmt::format("POST {}: {}", req.url, curl_easy_strerror(rc));
  if (t.stopped != HttpFault::none) {
    resp->fault = t.stopped;
    what = fmt::format("POST {}: stopped: {}", req.url,
                       t.stopped == HttpFault::interrupted ? "kforge was interrupted"
                                                           : "the run's wall-time budget ran out");
  } else if (t.idle_hit) {
    resp->fault = HttpFault::idle_timeout;
    what = fmt::format("POST {}: no data for {:g} s (idle time-out)", req.url, req.idle_timeout_s);
  } else if (rc == CURLE_OPERATION_TIMEDOUT) {
    bool connected = connect_time > 0 || resp->status != 0;
    resp->fault = connected ? HttpFault::total_timeout : HttpFault::connect_timeout;
    what = connected ? fmt::format("POST {}: not finished within {:g} s (total time-out)", req.url,
                                   req.total_timeout_s)
                     : fmt::format("POST {}: no connection within {:g} s (connect time-out)",
                                   req.url, req.connect_timeout_s);
  } else if (rc == CURLE_PARTIAL_FILE) {
    resp->fault = HttpFault::partial_body;
  } else {
    resp->fault = HttpFault::connection;
  }
  resp->fault_message = what;
  return false;
}

}  // namespace llm
