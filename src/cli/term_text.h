// cli/term_text.h: text for a terminal of a given width. Widths are display columns
// (libunistring's uc_width: a CJK character takes two, a combining accent none), and
// breaks are where Unicode allows a line break (libunistring's line breaking, UAX #14),
// so a line kforge rewrites in place never wraps and a long reason is wrapped, not cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/text.h"

namespace cli {

// Text from a model, a command or a kernel made safe to print: invalid UTF-8 becomes
// U+FFFD, tabs become spaces to the next multiple of 4 (of the line), and every other
// control character (an escape sequence a reply could use to rewrite the screen)
// becomes '?'. Newlines stay.
std::string printable(const std::string& s);

// Display columns of one line of printable text.
size_t display_width(const std::string& s);

// The line cut to at most `cols` columns, ending in "…" when something was cut.
std::string fit_width(const std::string& s, size_t cols);

// The text's lines wrapped to `cols` columns where Unicode allows a break (a word longer
// than the line is cut hard); lines after the first of each paragraph start with
// `indent`, which counts against the width.
std::vector<std::string> wrap_text(const std::string& s, size_t cols,
                                   const std::string& indent = "");

// Lines that may carry SGR escape codes (a highlighted kernel) wrapped as wrap_text
// wraps them, the codes counting no width and never split; a line that fits is kept as is.
std::string wrap_styled(const std::string& text, size_t cols, const std::string& indent = "");

// A path (or any word without spaces) wrapped to `cols` columns after a '/' (a part
// longer than the line is cut hard): a header's value column stays a column. Lines after
// the first start with `indent`, which counts against the width.
std::vector<std::string> wrap_path(const std::string& path, size_t cols,
                                   const std::string& indent = "");

// The terminal's columns and rows (80 x 24 when fd is not a terminal or says 0).
size_t terminal_cols(int fd);
size_t terminal_rows(int fd);

// The first line, printable and trimmed, at most `width` columns (a log line, one per
// event).
std::string one_line(const std::string& s, size_t width = 110);

using sandbox::group_digits;  // "1,234,567"

}  // namespace cli
