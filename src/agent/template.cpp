// agent/template.cpp
#include "agent/template.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "suite/paths.h"

namespace agent {

bool read_text_file(const std::string& path, std::string* out, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = path + ": cannot read it";
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

std::string default_prompts_dir() {
  if (const char* p = std::getenv("KFORGE_PROMPTS"); p && *p) return p;
  return suite::default_paths().source_root + "/prompts";
}

static bool valid_name(const std::string& n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool render_template(const std::string& tmpl, const Vars& vars, const std::string& what,
                     std::string* out, std::string* err, bool allow_unused) {
  std::string r;
  std::set<std::string> used;
  size_t pos = 0;
  while (true) {
    size_t open = tmpl.find("{{", pos);
    if (open == std::string::npos) {
      r += tmpl.substr(pos);
      break;
    }
    r += tmpl.substr(pos, open - pos);
    size_t close = tmpl.find("}}", open + 2);
    if (close == std::string::npos) {
      *err = what + ": unterminated '{{' at offset " + std::to_string(open);
      return false;
    }
    std::string name = tmpl.substr(open + 2, close - open - 2);
    // Trim spaces: {{ name }} is the same placeholder.
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!valid_name(name)) {
      *err = what + ": '{{" + name + "}}' is not a placeholder name (letters, digits, _)";
      return false;
    }
    auto it = vars.find(name);
    if (it == vars.end()) {
      std::string known;
      for (auto& [k, v] : vars) known += (known.empty() ? "" : ", ") + k;
      *err = what + ": unknown placeholder {{" + name + "}} (filled: " + known + ")";
      return false;
    }
    used.insert(name);
    r += it->second;
    pos = close + 2;
  }
  if (!allow_unused)
    for (auto& [k, v] : vars)
      if (!used.count(k)) {
        *err = what + ": the value {{" + k + "}} is filled but the template never uses it";
        return false;
      }
  *out = std::move(r);
  return true;
}

bool render_prompt_file(const std::string& prompts_dir, const std::string& name, const Vars& vars,
                        std::string* out, std::string* err, bool allow_unused) {
  std::string path = prompts_dir + "/" + name, text;
  if (!read_text_file(path, &text, err)) return false;
  return render_template(text, vars, path, out, err, allow_unused);
}

}  // namespace agent
