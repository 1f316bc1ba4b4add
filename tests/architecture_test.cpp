// tests/architecture_test.cpp: docs/architecture.md stays true. Every path it names in
// backquotes exists, and every include from one room of kforge into another is an arrow
// the page draws.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "kf_build_paths.h"
#include "sandbox/text.h"
#include "tests/kforge_run.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::kRoot;

std::string doc() {
  return sandbox::read_text(kRoot + "/docs/architecture.md");
}

// The room of a source path relative to the root: "src/agent", "sandbox/rank", "sandbox".
std::string room_of(const std::string& rel) {
  std::vector<std::string> parts;
  std::istringstream in(rel);
  for (std::string p; std::getline(in, p, '/');) parts.push_back(p);
  if (parts.size() < 2) return "";
  if (parts[0] == "src") return "src/" + parts[1];
  if (parts[0] == "sandbox")
    return parts.size() > 2 && (parts[1] == "rank" || parts[1] == "runner") ? "sandbox/" + parts[1]
                                                                            : "sandbox";
  if (parts[0] == "primitives") return "primitives";
  return "";
}

// The page's name of a room ("cli", "sandbox/rank") as a room_of name.
std::string room_named(std::string word) {
  while (!word.empty() && (word.back() == ',' || word.back() == ' ')) word.pop_back();
  if (word == "sandbox" || word == "primitives" || word.rfind("sandbox/", 0) == 0) return word;
  return "src/" + word;
}

// The arrows of the page's indented block: "a -> b, c" and chains "a -> b -> c"; a group
// "a, b -> c" draws an arrow from each.
std::set<std::pair<std::string, std::string>> drawn_arrows(const std::string& text) {
  std::set<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("    ", 0) != 0 || line.find("->") == std::string::npos) continue;
    line = std::regex_replace(line, std::regex(R"(\([^)]*\))"), "");  // remarks
    std::vector<std::vector<std::string>> stages;
    size_t at = 0;
    while (true) {
      size_t arrow = line.find("->", at);
      std::string part =
          line.substr(at, arrow == std::string::npos ? std::string::npos : arrow - at);
      std::vector<std::string> names;
      std::istringstream words(part);
      for (std::string w; std::getline(words, w, ',');) {
        w = sandbox::trim(w);
        if (!w.empty()) names.push_back(room_named(w));
      }
      stages.push_back(names);
      if (arrow == std::string::npos) break;
      at = arrow + 2;
    }
    for (size_t k = 0; k + 1 < stages.size(); ++k) {
      // A chain's middle stage is one room; a list's first stage may be several.
      for (const std::string& from : stages[k])
        for (const std::string& to :
             (k + 2 < stages.size() ? std::vector<std::string>{stages[k + 1].front()}
                                    : stages[k + 1]))
          out.insert({from, to});
    }
  }
  return out;
}

// Where #include "name" in `file` resolves, relative to the root; "" when nowhere here.
std::string resolve(const fs::path& file, const std::string& name) {
  const fs::path root(kRoot);
  for (const fs::path& base : {file.parent_path(), root / "src", root, root / "sandbox",
                               root / "sandbox/rank", root / "primitives/include"}) {
    fs::path p = base / name;
    if (fs::exists(p)) return fs::relative(fs::weakly_canonical(p), root).string();
  }
  return "";
}

}  // namespace

TEST_CASE("architecture: every path the page names exists") {
  const std::string text = doc();
  REQUIRE(!text.empty());
  std::regex quoted("`([^`]+)`");
  int checked = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), quoted);
       it != std::sregex_iterator(); ++it) {
    std::string p = (*it)[1];
    // A path: a folder or file under one of the tree's top folders, not a placeholder.
    bool path_like = std::regex_match(
        p, std::regex(R"((src|sandbox|primitives|problems|docs|tests)/[A-Za-z0-9_./]*)"));
    if (!path_like || p.find("NAME") != std::string::npos) continue;
    CHECK_MESSAGE(fs::exists(kRoot + "/" + p),
                  "docs/architecture.md names " << p << ", which does not exist: fix the page");
    ++checked;
  }
  CHECK(checked > 30);
}

TEST_CASE("architecture: every include across rooms is an arrow the page draws") {
  const auto arrows = drawn_arrows(doc());
  REQUIRE(arrows.size() > 15);
  std::set<std::string> bad;
  std::regex include(R"re(^#include "([^"]+)")re");
  for (const char* top : {"src", "sandbox"})
    for (auto& e : fs::recursive_directory_iterator(kRoot + "/" + top)) {
      const std::string ext = e.path().extension().string();
      const std::string stem = e.path().stem().string();
      const bool test = stem.size() > 5 && stem.substr(stem.size() - 5) == "_test";
      if ((ext != ".cpp" && ext != ".h" && ext != ".cu") || test) continue;
      const std::string from = room_of(fs::relative(e.path(), kRoot).string());
      std::istringstream in(sandbox::read_text(e.path().string()));
      for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const std::string to = room_of(resolve(e.path(), m[1]));
        if (to.empty() || to == from || arrows.count({from, to})) continue;
        bad.insert(from + " -> " + to + " (" + fs::relative(e.path(), kRoot).string() + ")");
      }
    }
  for (const std::string& b : bad)
    FAIL_CHECK("an include the page does not draw: "
               << b << "; draw it in docs/architecture.md or take the include out");
  CHECK(bad.empty());
}
