// eval/ncu_csv.cpp: see ncu_csv.h.
#include "eval/ncu_csv.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

namespace eval {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  fields.push_back(cur);
  return fields;
}

bool parse_metric_number(const std::string& text, double* out) {
  std::string digits;
  for (char ch : text)
    if (ch != ',' && ch != ' ') digits += ch;
  if (digits.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(digits.c_str(), &end);
  if (end == digits.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

double to_base_unit(double value, const std::string& unit) {
  // Time in nanoseconds, sizes in bytes, rates per second: ncu's own words for them.
  static const std::map<std::string, double> scale = {{"nsecond", 1},
                                                      {"usecond", 1e3},
                                                      {"msecond", 1e6},
                                                      {"second", 1e9},
                                                      {"byte", 1},
                                                      {"Kbyte", 1e3},
                                                      {"Mbyte", 1e6},
                                                      {"Gbyte", 1e9},
                                                      {"Tbyte", 1e12},
                                                      {"KB", 1e3},
                                                      {"MB", 1e6},
                                                      {"GB", 1e9},
                                                      {"byte/second", 1},
                                                      {"Kbyte/second", 1e3},
                                                      {"Mbyte/second", 1e6},
                                                      {"Gbyte/second", 1e9},
                                                      {"Tbyte/second", 1e12},
                                                      {"cycle/nsecond", 1},
                                                      {"cycle/usecond", 1e-3},
                                                      {"cycle/msecond", 1e-6},
                                                      {"cycle/second", 1e-9}};
  auto it = scale.find(unit);
  return it == scale.end() ? value : value * it->second;
}

namespace {

struct Columns {
  int id = -1, process = -1, kernel = -1, block = -1, grid = -1, name = -1, unit = -1, value = -1;
  bool complete() const { return id >= 0 && kernel >= 0 && name >= 0 && value >= 0; }
};

Columns find_columns(const std::vector<std::string>& header) {
  Columns c;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    const std::string& h = header[i];
    if (h == "ID") c.id = i;
    if (h == "Process Name") c.process = i;
    if (h == "Kernel Name") c.kernel = i;
    if (h == "Block Size") c.block = i;
    if (h == "Grid Size") c.grid = i;
    if (h == "Metric Name") c.name = i;
    if (h == "Metric Unit") c.unit = i;
    if (h == "Metric Value") c.value = i;
  }
  return c;
}

std::string field(const std::vector<std::string>& f, int i) {
  return i >= 0 && i < static_cast<int>(f.size()) ? f[i] : "";
}

}  // namespace

double KernelProfile::get(const std::string& name, double otherwise) const {
  auto it = metrics.find(name);
  return it == metrics.end() ? otherwise : it->second;
}

bool parse_ncu_csv(const std::string& csv, int rank, sandbox::Role judge_side,
                   std::vector<KernelProfile>* out, std::string* err) {
  std::istringstream in(csv);
  Columns col;
  std::map<int, size_t> by_id;  // ncu's ID -> index in *out
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '"') continue;  // ncu's ==PROF== lines, blank lines
    std::vector<std::string> f = split_csv_line(line);
    if (!col.complete()) {
      col = find_columns(f);
      continue;
    }
    int id = std::atoi(field(f, col.id).c_str());
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      KernelProfile k;
      k.rank = rank;
      k.id = id;
      k.process = field(f, col.process);
      k.side = k.process.find("kforge-runner") != std::string::npos ? sandbox::Role::candidate
                                                                    : judge_side;
      k.kernel = field(f, col.kernel);
      k.block = field(f, col.block);
      k.grid = field(f, col.grid);
      it = by_id.emplace(id, out->size()).first;
      out->push_back(k);
    }
    double v = 0;
    if (parse_metric_number(field(f, col.value), &v))
      (*out)[it->second].metrics[field(f, col.name)] = to_base_unit(v, field(f, col.unit));
  }
  if (!col.complete()) {
    *err =
        "no Nsight Compute CSV header (\"ID\",...,\"Kernel Name\",...,\"Metric Name\",...,"
        "\"Metric Value\") in its output";
    return false;
  }
  return true;
}

}  // namespace eval
