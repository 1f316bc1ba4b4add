// sandbox/oracle.cpp: the registry the problems' oracles add themselves to.
#include "oracle.h"

namespace sandbox {

namespace {
std::map<std::string, OracleFn>& registry() {
  static std::map<std::string, OracleFn> r;  // built before main by static initializers
  return r;
}
}  // namespace

bool register_oracle(const char* problem, OracleFn fn) {
  registry()[problem] = fn;
  return true;
}

OracleFn find_oracle(const std::string& problem) {
  auto it = registry().find(problem);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> oracle_names() {
  std::vector<std::string> names;
  for (auto& [n, f] : registry()) names.push_back(n);
  return names;
}

}  // namespace sandbox
