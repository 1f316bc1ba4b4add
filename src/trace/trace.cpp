// trace/trace.cpp
#include "trace/trace.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>

namespace trace {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string utc_now(const char* fmtstr) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmtstr, &tm);
  return buf;
}

// "openai:gpt-5.1" -> "openai-gpt-5.1"; "together:org/m" -> "together-org-m";
// "replay:/a/b.jsonl" -> "replay-b".
std::string file_safe(const std::string& model) {
  std::string m = model;
  if (m.rfind("replay:", 0) == 0) m = "replay:" + fs::path(m.substr(7)).stem().string();
  std::string out;
  for (char c : m)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '-';
  if (out.size() > 60) out.resize(60);
  return out.empty() ? "model" : out;
}

}  // namespace

Writer::~Writer() {
  close();
}

bool Writer::open(const std::string& runs_dir, const std::string& problem, const std::string& model,
                  std::string* err) {
  fs::path dir = fs::path(runs_dir) / problem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return (*err = "cannot create " + dir.string() + ": " + ec.message(), false);
  std::random_device rd;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string name = fmt::format("{}-{}-{:06x}.jsonl", utc_now("%Y%m%d-%H%M%S"), file_safe(model),
                                   rd() & 0xffffff);
    std::string p = (dir / name).string();
    // O_EXCL: two runs started in the same second never share a file.
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) continue;
    f_ = fdopen(fd, "w");
    path_ = p;
    start_ = std::chrono::steady_clock::now();
    return f_ != nullptr || (*err = "fdopen failed for " + p, false);
  }
  *err = "cannot create a trajectory file in " + dir.string();
  return false;
}

bool Writer::open_path(const std::string& path, std::string* err) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) return (*err = "cannot create " + path, false);
  path_ = path;
  start_ = std::chrono::steady_clock::now();
  return true;
}

bool Writer::open_append(const std::string& path, double prior_seconds, std::string* err) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return (*err = "cannot read " + path + ": " + ec.message(), false);
  {
    // A line cut off by a kill has no '\n': the appended events start on a line of their own.
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t keep = text.rfind('\n');
    keep = keep == std::string::npos ? 0 : keep + 1;
    if (keep < size) fs::resize_file(path, keep, ec);
    if (ec) return (*err = "cannot cut the unfinished last line of " + path, false);
  }
  f_ = std::fopen(path.c_str(), "ae");  // e: O_CLOEXEC, no candidate inherits it
  if (!f_) return (*err = "cannot append to " + path, false);
  path_ = path;
  start_ = std::chrono::steady_clock::now() -
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(prior_seconds));
  return true;
}

double Writer::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool Writer::write_line(const json& j) {
  if (!f_) return false;
  // Invalid UTF-8 in a model's reply must not make the line unwritable: replace it.
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    failed_ = true;
  return !failed_;
}

bool Writer::header(json fields) {
  fields["type"] = "header";
  fields["format"] = kFormat;
  fields["started"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
  return write_line(fields);
}

bool Writer::event(EventType type, json fields) {
  fields["type"] = event_type_name(type);
  fields["t"] = std::round(elapsed() * 1000) / 1000;
  bool ok = write_line(fields);
  // The summary is the line a reader checks for: make it reach the disk.
  if (type == EventType::summary && f_) fdatasync(fileno(f_));
  return ok;
}

void Writer::close() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
}

const json* Trajectory::summary() const {
  return complete ? &events.back() : nullptr;
}

std::vector<const json*> Trajectory::of_type(EventType type) const {
  std::vector<const json*> out;
  for (auto& e : events)
    if (event_type(e) == type) out.push_back(&e);
  return out;
}

bool read_trajectory(const std::string& path, Trajectory* out, std::string* err,
                     std::string* warning) {
  std::ifstream in(path);
  if (!in) return (*err = path + ": cannot read the trajectory", false);
  *out = Trajectory{};
  out->path = path;
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  for (size_t i = 0; i < lines.size(); ++i) {
    json j;
    try {
      j = json::parse(lines[i]);
    } catch (const std::exception& e) {
      if (i + 1 == lines.size()) {
        if (warning)
          *warning = fmt::format(
              "{}: line {} is cut off (the run did not finish writing it); ignored", path, i + 1);
        break;
      }
      return (*err = fmt::format("{}:{}: not JSON: {}", path, i + 1, e.what()), false);
    }
    if (!j.is_object() || !j.contains("type"))
      return (*err = fmt::format("{}:{}: not a trajectory event (no \"type\")", path, i + 1),
              false);
    if (i == 0) {
      if (event_type(j) != EventType::header || j.value("format", "") != kFormat)
        return (*err = fmt::format("{}: line 1 is not a {} header", path, kFormat), false);
      out->header = j;
    } else {
      out->events.push_back(j);
    }
  }
  if (out->header.is_null()) return (*err = path + ": empty trajectory (no header)", false);
  out->complete = !out->events.empty() && event_type(out->events.back()) == EventType::summary;
  return true;
}

std::vector<std::vector<std::pair<std::string, std::string>>> rebuild_prompts(const Trajectory& t) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  std::vector<std::pair<std::string, std::string>> cur;
  for (auto* e : t.of_type(EventType::prompt)) {
    size_t keep = e->value("keep", size_t{0});
    if (keep < cur.size()) cur.resize(keep);
    for (auto& m : (*e)["new"]) cur.emplace_back(m.value("role", ""), m.value("content", ""));
    out.push_back(cur);
  }
  return out;
}

}  // namespace trace
