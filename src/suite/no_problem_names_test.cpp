// suite/no_problem_names_test.cpp: a problem is its folder. What is particular to one
// (its cost terms, knobs, advice, defaults) lives in problems/<name>/, so no source of
// kforge or of the sandbox switches on a problem's name: none of them may contain one as
// a whole word. Tests (*_test.cpp, *_test.cu, test_util.h) may use problems as fixtures.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kf_build_paths.h"

namespace {

namespace fs = std::filesystem;

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Every whole-word occurrence of `word` in `line` (a word: letters, digits, underscores).
bool has_word(const std::string& line, const std::string& word) {
  for (size_t at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !word_char(line[at - 1])) && (end == line.size() || !word_char(line[end])))
      return true;
  }
  return false;
}

bool is_test_file(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string stem = p.stem().string();
  return name == "test_util.h" ||
         (stem.size() > 5 && stem.compare(stem.size() - 5, 5, "_test") == 0);
}

// "FILE:LINE: names the problem NAME" for every hit under `root`.
std::vector<std::string> hits(const fs::path& root, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu")) continue;
    if (is_test_file(e.path())) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (const std::string& name : names)
        if (has_word(line, name))
          out.push_back(fs::relative(e.path(), KF_SOURCE_ROOT).string() + ":" + std::to_string(n) +
                        ": names the problem " + name);
  }
  return out;
}

}  // namespace

TEST_CASE("suite: has_word matches whole words only") {
  CHECK(has_word("if (p == x_problem) {", "x_problem"));
  CHECK(has_word("x_problem", "x_problem"));
  CHECK(has_word("// x_problem.", "x_problem"));
  CHECK_FALSE(has_word("x_problem_json()", "x_problem"));
  CHECK_FALSE(has_word("kf::ax_problem", "x_problem"));
  CHECK_FALSE(has_word("x_problems", "x_problem"));
}

TEST_CASE(
    "suite: no source under src/ or sandbox/ names a problem (problems/<name>/ says it all)") {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(KF_SOURCE_ROOT "/problems"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  REQUIRE(names.size() >= 5);
  for (const char* dir : {"src", "sandbox"}) {
    const std::vector<std::string> found = hits(fs::path(KF_SOURCE_ROOT) / dir, names);
    std::string all;
    for (const std::string& h : found) all += "\n  " + h;
    CHECK_MESSAGE(found.empty(),
                  "move what is particular to a problem into its folder "
                  "(problems/README.md):"
                      << all);
  }
}
