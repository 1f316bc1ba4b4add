// src/sweep/ledger.cpp: see ledger.h.
#include "ledger.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace sweep {

namespace fs = std::filesystem;

std::string sample_key(const Record& r) {
  return r.problem + "/" + r.model + "/" + std::to_string(r.index);
}

bool append_record(const std::string& path, const Record& r, std::string* err) {
  std::string line = nlohmann::json(r).dump() + "\n";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = path + ": cannot open the ledger: " + std::strerror(errno);
    return false;
  }
  // One write: an appended line is whole or, if the process dies inside it, the last.
  ssize_t n = write(fd, line.data(), line.size());
  int e = errno;
  bool ok = n == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
  if (!ok) e = n < 0 ? e : errno;
  close(fd);
  if (!ok) *err = path + ": cannot write the ledger: " + std::strerror(e);
  return ok;
}

bool read_ledgers(const std::string& dir, std::vector<Record>* out, int* torn, std::string* err) {
  out->clear();
  *torn = 0;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("ledger", 0) == 0 && e.path().extension() == ".jsonl") files.push_back(e.path());
  }
  if (ec) {
    *err = dir + ": " + ec.message() + " (is it a sweep's folder?)";
    return false;
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        ++*torn;
        continue;
      }
      try {
        out->push_back(j.get<Record>());
      } catch (const std::exception&) {
        ++*torn;
      }
    }
  }
  return true;
}

std::map<std::string, Record> latest(const std::vector<Record>& records) {
  std::map<std::string, Record> now;
  for (const Record& r : records) {
    // A "done" is final: a record after it can only come from a second writer that
    // raced for the same sample (two sweeps in one folder), and changes nothing.
    auto it = now.find(sample_key(r));
    if (it == now.end() || it->second.state != SampleState::done) now[sample_key(r)] = r;
  }
  return now;
}

std::map<std::string, Record> finished(const std::vector<Record>& records) {
  std::map<std::string, Record> done;
  for (const Record& r : records)
    if (r.state == SampleState::done && !done.count(sample_key(r))) done[sample_key(r)] = r;
  return done;
}

}  // namespace sweep
