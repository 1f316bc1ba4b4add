// cli/line_diff.h: a unified diff of two texts by lines (longest common subsequence),
// for the live view's "diff to last" (no diff binary needed on the machine).
#pragma once

#include <string>
#include <vector>

namespace cli {

// Lines without their '\n'; a final line without one counts as a line.
std::vector<std::string> split_lines(const std::string& text);

// `diff -u`-style output: "--- a_name", "+++ b_name", then hunks "@@ -l,n +l,n @@" with
// `context` unchanged lines around each change. "" when the texts are equal. With color,
// removed lines are red, added green, hunk headers cyan.
std::string unified_diff(const std::string& a, const std::string& b, const std::string& a_name,
                         const std::string& b_name, int context = 3, bool color = false);

}  // namespace cli
