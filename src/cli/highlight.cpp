// cli/highlight.cpp: see highlight.h.
#include "cli/highlight.h"

#include <srchilite/sourcehighlight.h>

#include <sstream>

#include "cli/live.h"
#include "cli/term_text.h"

namespace cli {

std::string highlighted_kernel(const std::string& source, bool color) {
  std::string text = printable(source);
  while (!text.empty() && text.back() == '\n') text.pop_back();  // no numbered empty last line
  if (!color) return number_lines(text + "\n");
  try {
    srchilite::SourceHighlight sh("esc.outlang");
    sh.setStyleFile("esc.style");  // its terminal colours (the default is HTML's, for white)
    sh.setGenerateLineNumbers(true);
    sh.setLineNumberPad(' ');
    std::istringstream in(text);
    std::ostringstream out;
    sh.highlight(in, out, "cpp.lang");  // CUDA and host C++ both read as C++
    return out.str() + "\n";
  } catch (const std::exception&) {
    return number_lines(text + "\n");  // no data files (/usr/share/source-highlight): plain
  }
}

}  // namespace cli
