// suite/spec_json.cpp: strict JSON for the problem folders' specs (see spec_json.h).
#include "suite/spec_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace suite {

namespace {

const char* const kDocs = "see problems/README.md";

// Line and column (1-based) of a byte offset, for JSON syntax errors.
void line_col(const std::string& text, size_t byte, size_t* line, size_t* col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < text.size() && i + 1 < byte; ++i) {
    if (text[i] == '\n')
      ++*line, *col = 1;
    else
      ++*col;
  }
}

}  // namespace

std::string spec_sub(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string spec_idx(const std::string& path, size_t i) {
  return fmt::format("{}[{}]", path, i);
}

std::string spec_join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool read_spec_json(const std::string& file, ojson* out, std::string* err) {
  std::ifstream in(file);
  if (!in) {
    *err = file + ": cannot open (see problems/README.md)";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // nlohmann keeps the last of two equal keys without a word; a duplicate is as silent
  // a mistake as a typo, so the parser's callback records the first one.
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  auto track = [&](int, nlohmann::json::parse_event_t ev, ojson& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start)
      open_objects.emplace_back();
    else if (ev == E::object_end && !open_objects.empty())
      open_objects.pop_back();
    else if (ev == E::key && !open_objects.empty() && duplicate.empty() &&
             !open_objects.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  try {
    *out = ojson::parse(text, track);
  } catch (const ojson::parse_error& e) {
    size_t line, col;
    line_col(text, e.byte, &line, &col);
    std::string what = e.what();
    if (auto pos = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && pos != std::string::npos)
      what = what.substr(pos + 2);
    *err = fmt::format("{}:{}:{}: not valid JSON: {}", file, line, col, what);
    return false;
  }
  if (!duplicate.empty()) {
    *err = fmt::format("{}: the key '{}' appears twice in one object; keep one", file, duplicate);
    return false;
  }
  return true;
}

bool SpecReader::fail(const std::string& path, const std::string& msg) {
  *err_ = file_ + ": " + (path.empty() ? "" : path + ": ") + msg;
  return false;
}

bool SpecReader::keys(const ojson& j, const std::string& path,
                      const std::vector<std::string>& allowed,
                      const std::vector<std::string>& required) {
  if (!j.is_object()) return fail(path, fmt::format("expected an object, got {}", j.type_name()));
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      return fail(
          spec_sub(path, it.key()),
          fmt::format("unknown key '{}'; the keys allowed {} are: {} ({})", it.key(),
                      path.empty() ? "at the top level" : "in " + path, spec_join(allowed), kDocs));
  for (const std::string& k : required)
    if (!j.contains(k))
      return fail(path, fmt::format("missing required key '{}'; add it ({})", k, kDocs));
  return true;
}

bool SpecReader::string_at(const ojson& j, const std::string& key, const std::string& path,
                           std::string* out, bool nonempty) {
  const ojson& v = j.at(key);
  std::string p = spec_sub(path, key);
  if (!v.is_string()) return fail(p, fmt::format("expected a string, got {}", v.type_name()));
  *out = v.get<std::string>();
  if (nonempty && out->empty()) return fail(p, "must not be empty");
  return true;
}

bool SpecReader::number_at(const ojson& v, const std::string& path, double* out) {
  if (!v.is_number()) return fail(path, fmt::format("expected a number, got {}", v.type_name()));
  *out = v.get<double>();
  return true;
}

bool SpecReader::int_at(const ojson& v, const std::string& path, int* out) {
  int64_t x;
  if (!int64_at(v, path, &x)) return false;
  *out = static_cast<int>(x);
  return true;
}

bool SpecReader::int64_at(const ojson& v, const std::string& path, int64_t* out) {
  if (!v.is_number_integer())
    return fail(
        path, fmt::format("expected an integer, got {}", v.is_number() ? v.dump() : v.type_name()));
  *out = v.get<int64_t>();
  return true;
}

bool SpecReader::expr_at(const ojson& v, const std::string& path, Expr* out) {
  std::string text;
  if (v.is_number())
    text = format_number(v.get<double>());
  else if (v.is_string())
    text = v.get<std::string>();
  else
    return fail(path, fmt::format("expected an expression (a string such as \"2 * n\") or a "
                                  "number, got {}",
                                  v.type_name()));
  std::string e;
  if (!out->parse(text, &e))
    return fail(path, e + "; fix the expression (grammar: problems/README.md, Expressions)");
  return true;
}

bool SpecReader::names_known(const Expr& e, const std::string& path,
                             const std::set<std::string>& known, const char* where,
                             const std::function<std::string(const std::string&)>& why) {
  std::set<std::string> used;
  e.names(&used);
  for (const std::string& n : used) {
    if (known.count(n)) continue;
    return fail(path, fmt::format("\"{}\" uses unknown name '{}'{} (known in {}: {})", e.text(), n,
                                  why ? why(n) : "", where,
                                  spec_join(std::vector<std::string>(known.begin(), known.end()))));
  }
  return true;
}

}  // namespace suite
