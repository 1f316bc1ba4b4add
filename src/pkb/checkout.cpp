// pkb/checkout.cpp: listing and selecting a PKB checkout's problems (checkout.h).
#include "pkb/checkout.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "sandbox/text.h"

namespace pkb {

using sandbox::trim;

namespace fs = std::filesystem;

const char* const kRequiredFiles[] = {"run_local.py", "scripts/worker.py",
                                      "utils/input_output_tensors.py", nullptr};

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); });
}

// The leading number of a stem ("16_gemm" -> 16), or -1 when it has none.
int leading_number(const std::string& stem) {
  size_t n = 0;
  while (n < stem.size() && std::isdigit(static_cast<unsigned char>(stem[n]))) ++n;
  if (n == 0 || n > 6 || n >= stem.size() || stem[n] != '_') return -1;
  return std::stoi(stem.substr(0, n));
}

// The indices of c.problems one part names (a number, a stem, a range).
bool select_part(const Checkout& c, const std::string& part, std::vector<size_t>* idx,
                 std::string* err) {
  std::string p = part;
  if (p.size() > 3 && p.compare(p.size() - 3, 3, ".py") == 0) p.resize(p.size() - 3);
  size_t dash = p.find('-');
  if (dash != std::string::npos && all_digits(p.substr(0, dash)) &&
      all_digits(p.substr(dash + 1))) {
    int lo = std::stoi(p.substr(0, dash)), hi = std::stoi(p.substr(dash + 1));
    if (lo > hi) {
      *err = "the range '" + part + "' runs backwards: write the smaller number first";
      return false;
    }
    size_t before = idx->size();
    for (size_t i = 0; i < c.problems.size(); ++i)
      if (c.problems[i].number >= lo && c.problems[i].number <= hi) idx->push_back(i);
    if (idx->size() > before) return true;
    *err = "no PKB problem numbered " + part + " in " + c.root + "/reference";
    return false;
  }
  for (size_t i = 0; i < c.problems.size(); ++i) {
    const Problem& q = c.problems[i];
    if ((all_digits(p) && q.number == std::stoi(p)) || q.name == p) {
      idx->push_back(i);
      return true;
    }
  }
  *err = "no PKB problem '" + part + "' in " + c.root +
         "/reference: give a number (16), a name (16_gemm_reducescatter), a range (1-5) or all";
  return false;
}

}  // namespace

bool open_checkout(const std::string& path, Checkout* out, std::string* err) {
  std::error_code ec;
  if (path.empty() || !fs::is_directory(path, ec)) {
    *err = "PKB checkout '" + path +
           "' is not a directory: give the folder of a ParallelKernelBench clone";
    return false;
  }
  std::string root = fs::absolute(path, ec).lexically_normal().string();
  if (root.size() > 1 && root.back() == '/') root.pop_back();
  for (int i = 0; kRequiredFiles[i]; ++i) {
    if (!fs::is_regular_file(root + "/" + kRequiredFiles[i], ec)) {
      *err = "'" + path + "' is not a PKB checkout: expected " + root + "/" + kRequiredFiles[i] +
             " (give the root of a ParallelKernelBench clone)";
      return false;
    }
  }
  std::string ref = root + "/reference";
  if (!fs::is_directory(ref, ec)) {
    *err = "'" + path + "' is not a PKB checkout: expected the folder " + ref;
    return false;
  }
  Checkout c;
  c.root = root;
  for (auto& e : fs::directory_iterator(ref, ec)) {
    if (!e.is_regular_file() || e.path().extension() != ".py") continue;
    std::string stem = e.path().stem().string();
    int n = leading_number(stem);
    if (n < 0) continue;  // helpers beside the problems
    c.problems.push_back({n, stem, e.path().string()});
  }
  std::sort(c.problems.begin(), c.problems.end(), [](const Problem& a, const Problem& b) {
    return a.number != b.number ? a.number < b.number : a.name < b.name;
  });
  if (c.problems.empty()) {
    *err = "'" + path + "' is not a PKB checkout: expected files like " + ref + "/1_allreduce.py";
    return false;
  }
  *out = std::move(c);
  return true;
}

bool select_problems(const Checkout& c, const std::string& spec, std::vector<Problem>* out,
                     std::string* err) {
  std::string s = trim(spec);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  std::vector<size_t> idx;
  if (s == "all" || s == "ALL" || s == "All") {
    for (size_t i = 0; i < c.problems.size(); ++i) idx.push_back(i);
  } else {
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      std::string part =
          trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (part.empty()) {
        *err =
            "empty problem in '" + spec + "': separate numbers, names and ranges by single commas";
        return false;
      }
      if (!select_part(c, part, &idx, err)) return false;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  out->clear();
  for (size_t i : idx) out->push_back(c.problems[i]);
  return true;
}

bool find_problem(const Checkout& c, const std::string& spec, Problem* out, std::string* err) {
  std::vector<Problem> ps;
  if (!select_problems(c, spec, &ps, err)) return false;
  if (ps.size() != 1) {
    *err = "'" + spec + "' names " + std::to_string(ps.size()) +
           " PKB problems: name one (a number or a name)";
    return false;
  }
  *out = ps[0];
  return true;
}

}  // namespace pkb
