// sandbox/secrets.cpp: see secrets.h.
#include "secrets.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

extern char** environ;

namespace sandbox {

namespace {
std::mutex g_mu;
std::map<std::string, std::string>& store() {
  static std::map<std::string, std::string> s;
  return s;
}
}  // namespace

bool looks_secret(const std::string& name) {
  std::string up = name;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* w : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"})
    if (up.find(w) != std::string::npos) return true;
  return false;
}

namespace {
// Moves one "NAME=value" of environ into the store and wipes its bytes. Under g_mu.
void take(char* kv) {
  const char* eq = std::strchr(kv, '=');
  std::string name(kv, eq - kv);
  store()[name] = eq + 1;
  unsetenv(name.c_str());
  std::memset(kv, 0, std::strlen(kv));
}

char* find_entry(const std::string& name) {
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, name.c_str(), name.size()) == 0 && (*e)[name.size()] == '=') return *e;
  return nullptr;
}
}  // namespace

int take_secrets_from_environment() {
  std::lock_guard<std::mutex> lock(g_mu);
  // The strings environ points at when the process starts are the ones the kernel laid
  // out and /proc/<pid>/environ reads; unsetenv only drops the pointer, so the bytes are
  // wiped by hand. (A string setenv made later lives on the heap, which /proc does not
  // show as environ; wiping it is harmless.)
  std::vector<char*> taken;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq && looks_secret(std::string(*e, eq - *e))) taken.push_back(*e);
  }
  for (char* kv : taken) take(kv);
  return static_cast<int>(taken.size());
}

std::string secret_env(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = store().find(name);
  if (it != store().end()) return it->second;
  // A key under a name that does not look like one (key_env may name any variable):
  // taken now, so that it too leaves the environment once it has been used.
  if (char* kv = find_entry(name)) {
    take(kv);
    return store()[name];
  }
  return "";
}

std::vector<std::string> taken_secret_entries() {
  std::vector<std::string> out;
  for (const auto& [name, value] : store()) out.push_back(name + "=" + value);
  return out;
}

}  // namespace sandbox
