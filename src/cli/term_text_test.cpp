// cli/term_text_test.cpp: widths, cuts and wraps in display columns.
#include "cli/term_text.h"

#include <doctest/doctest.h>

#include <string>

TEST_CASE("term_text: printable keeps text and newlines, defuses control characters") {
  CHECK(cli::printable("a\nb") == "a\nb");
  CHECK(cli::printable("a\r\nb") == "a\nb");
  CHECK(cli::printable("x\033[2Jy") == "x?[2Jy");  // an escape sequence is shown, not run
  CHECK(cli::printable("x\xC2\x9B"
                       "2Jy") ==
        "x\xEF\xBF\xBD"
        "2Jy");  // C1 CSI
  CHECK(cli::printable("bad \xFF byte") == "bad \xEF\xBF\xBD byte");
  CHECK(cli::printable("\tx") == "    x");
  CHECK(cli::printable("ab\tx") == "ab  x");
}

TEST_CASE("term_text: display width, fit and wrap") {
  CHECK(cli::display_width("abc") == 3);
  CHECK(cli::display_width("turn 1 · →") == 10);
  CHECK(cli::display_width("漢字") == 4);  // wide characters take two columns
  CHECK(cli::fit_width("abcdef", 6) == "abcdef");
  CHECK(cli::fit_width("abcdefg", 6) == "abcde…");
  CHECK(cli::display_width(cli::fit_width("漢字漢字漢字", 7)) <= 7);
  std::string reason =
      "mismatch: rank 0, tensor y, 4099 of 4099 elements wrong; first bad: y[0] = 1.08 (want "
      "0.122), y[1] = -1.89 (want -1.34); max abs err 1 (tolerance atol 1e-05 rtol 1e-05)";
  auto lines = cli::wrap_text(reason, 60, "  ");
  REQUIRE(lines.size() > 2);
  std::string joined;
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    CHECK(cli::display_width(lines[i]) <= 60);
    if (i > 0) CHECK(lines[i].rfind("  ", 0) == 0);
    joined += (i ? " " : "") + lines[i].substr(i ? 2 : 0);
  }
  CHECK(joined == reason);  // nothing cut: every word is there, in order
  // A word longer than the line is cut hard rather than overflowing it.
  for (auto& l : cli::wrap_text(std::string(150, 'x'), 60)) CHECK(cli::display_width(l) <= 60);
  CHECK(cli::wrap_text("a\n\nb", 60) == std::vector<std::string>{"a", "", "b"});
}
