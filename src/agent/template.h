// agent/template.h: the prompts are text files under prompts/ with {{name}}
// placeholders; this fills them. Strict on purpose: a placeholder the code does not fill
// or a value the template does not use is a bug in one of the two, so both are errors
// rather than silently empty text in a prompt.
#pragma once

#include <map>
#include <string>

namespace agent {

using Vars = std::map<std::string, std::string>;

// Replaces every {{name}} in `tmpl` with vars[name]. Errors: an unknown placeholder, an
// unterminated "{{", a var the template never uses (unless allow_unused). `what` names
// the template in messages (its file).
bool render_template(const std::string& tmpl, const Vars& vars, const std::string& what,
                     std::string* out, std::string* err, bool allow_unused = false);

// Reads <prompts_dir>/<name> and renders it.
bool render_prompt_file(const std::string& prompts_dir, const std::string& name, const Vars& vars,
                        std::string* out, std::string* err, bool allow_unused = false);

// The prompts folder: KFORGE_PROMPTS, else <source root>/prompts.
std::string default_prompts_dir();

// Whole-file read; false with *err naming the file.
bool read_text_file(const std::string& path, std::string* out, std::string* err);

}  // namespace agent
