// cli/highlight.h: a kernel's source in colour for the terminal, by GNU Source-highlight
// (libsource-highlight, Debian's libsource-highlight-dev): its C++ grammar and its ANSI
// ("esc") output, so kforge keeps no grammar of its own.
#pragma once

#include <string>

namespace cli {

// The source with line numbers, in colour when `color`; without colour (or when
// Source-highlight's data files are missing: the text says nothing of it) the same
// numbered lines plain. The source is made printable first (term_text.h).
std::string highlighted_kernel(const std::string& source, bool color);

}  // namespace cli
