// cli/line_diff_test.cpp: the live view's line diff.
#include "cli/line_diff.h"

#include <doctest/doctest.h>

using cli::split_lines;
using cli::unified_diff;

TEST_CASE("line_diff: split_lines") {
  CHECK(split_lines("") == std::vector<std::string>{});
  CHECK(split_lines("a\nb\n") == std::vector<std::string>{"a", "b"});
  CHECK(split_lines("a\n\nb") == std::vector<std::string>{"a", "", "b"});
}

TEST_CASE("line_diff: equal texts give nothing") {
  CHECK(unified_diff("x\ny\n", "x\ny\n", "a", "b") == "");
  CHECK(unified_diff("", "", "a", "b") == "");
}

TEST_CASE("line_diff: one changed line with context") {
  std::string a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string b = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
  CHECK(unified_diff(a, b, "previous", "current", 3) ==
        "--- previous\n+++ current\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
  CHECK(unified_diff(a, b, "p", "c", 0) == "--- p\n+++ c\n@@ -5 +5 @@\n-5\n+FIVE\n");
}

TEST_CASE("line_diff: insertions and deletions at the edges, empty sides") {
  CHECK(unified_diff("", "x\n", "a", "b") == "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
  CHECK(unified_diff("x\n", "", "a", "b") == "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n");
  CHECK(unified_diff("a\nb\n", "a\nb\nc\n", "p", "q", 1) ==
        "--- p\n+++ q\n@@ -2 +2,2 @@\n b\n+c\n");
  CHECK(unified_diff("a\nb\nc\n", "a\nc\n", "p", "q", 0) == "--- p\n+++ q\n@@ -2 +1,0 @@\n-b\n");
}

TEST_CASE("line_diff: far-apart changes make two hunks, near ones one") {
  std::string a, b;
  for (int i = 0; i < 20; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 2 || i == 17 ? "x" : std::to_string(i)) + "\n";
  }
  std::string d = unified_diff(a, b, "a", "b", 2);
  CHECK(d ==
        "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 0\n 1\n-2\n+x\n 3\n 4\n"
        "@@ -16,5 +16,5 @@\n 15\n 16\n-17\n+x\n 18\n 19\n");
  std::string c;
  for (int i = 0; i < 20; ++i) c += (i == 2 || i == 6 ? "x" : std::to_string(i)) + "\n";
  d = unified_diff(a, c, "a", "c", 2);
  CHECK(d.find("@@ -1,9 +1,9 @@") != std::string::npos);
  CHECK(d.find("@@ -", d.find("@@ -1,9") + 1) == std::string::npos);  // just the one hunk
}

TEST_CASE("line_diff: the LCS keeps moved-around common lines") {
  // b inserts a block before the common tail: only the block is added.
  std::string a = "head\nmid\ntail\n", b = "head\nnew1\nnew2\nmid\ntail\n";
  CHECK(unified_diff(a, b, "a", "b", 0) == "--- a\n+++ b\n@@ -1,0 +2,2 @@\n+new1\n+new2\n");
  // A swap of two lines: one kept, the other removed and added.
  std::string d = unified_diff("p\nq\n", "q\np\n", "a", "b", 0);
  int minus = 0, plus = 0;
  for (auto& l : split_lines(d)) {
    if (l.rfind("-", 0) == 0 && l.rfind("---", 0) != 0) ++minus;
    if (l.rfind("+", 0) == 0 && l.rfind("+++", 0) != 0) ++plus;
  }
  CHECK(minus == 1);
  CHECK(plus == 1);
}

TEST_CASE("line_diff: color marks removed and added lines") {
  std::string d = unified_diff("a\n", "b\n", "p", "q", 3, true);
  CHECK(d.find("\033[31m-a\033[0m") != std::string::npos);
  CHECK(d.find("\033[32m+b\033[0m") != std::string::npos);
}
