// agent/reply.cpp
#include "agent/reply.h"

#include <algorithm>
#include <vector>

namespace agent {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A closing fence: only backticks (three or more), trailing spaces allowed.
bool is_close(std::string t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.pop_back();
  return t.size() >= 3 && t.find_first_not_of('`') == std::string::npos;
}

bool is_kernel_tag(const std::string& t) {
  return t.empty() || t == "cuda" || t == "cu" || t == "cpp" || t == "c++" || t == "c" ||
         t == "cxx" || t == "cc";
}

std::string direct_format(sandbox::Backend backend) {
  bool host = backend == sandbox::Backend::host;
  std::string tag = host ? "cpp" : "cuda";
  return "Answer with the complete kernel source in one fenced code block tagged " + tag +
         (host ? " (this run is on the host backend: plain C++, no CUDA)" : "") + ", e.g.\n```" +
         tag + "\n#include <kf/" + (host ? "kf.h" : "kf.cuh") +
         ">\n...\nextern \"C\" int kf_run(kf::Comm& comm, kf::Tensors& t) { ... }\n```\nThe "
         "last such block in your reply is taken as the whole file.";
}

std::string agent_format(sandbox::Backend backend) {
  std::string kernel = backend == sandbox::Backend::host ? "kernel.cpp" : "kernel.cu";
  return "Answer with exactly one fenced code block tagged bash holding the one command to run "
         "next, e.g.\n```bash\nkforge eval $KF_PROBLEM " +
         kernel +
         "\n```\nTo submit, write the kernel to the workspace and run a command whose first "
         "output line is COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT (e.g. `echo "
         "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`).";
}

}  // namespace

std::vector<Block> fenced_blocks(const std::string& text, bool* unclosed) {
  std::vector<Block> out;
  *unclosed = false;
  size_t pos = 0;
  bool in = false;
  Block cur;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t s = line.find_first_not_of(" \t");
    std::string t = s == std::string::npos ? "" : line.substr(s);
    if (!in && t.rfind("```", 0) == 0) {
      std::string info = t.substr(3);
      size_t a = info.find_first_not_of(" \t");
      info = a == std::string::npos ? "" : info.substr(a);
      size_t b = info.find_first_of(" \t{");
      cur = {lower(info.substr(0, b)), ""};
      in = true;
    } else if (in && is_close(t)) {
      out.push_back(cur);
      in = false;
    } else if (in) {
      cur.body += line + "\n";
    }
    if (end == text.size()) break;
    pos = end + 1;
  }
  if (in) *unclosed = true;
  return out;
}

ParsedReply parse_direct_reply(const std::string& text, sandbox::Backend backend) {
  ParsedReply r;
  bool unclosed = false;
  std::vector<Block> blocks = fenced_blocks(text, &unclosed);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    if (is_kernel_tag(it->tag) && it->body.find("kf_run") != std::string::npos) {
      r.ok = true;
      r.code = it->body;
      return r;
    }
  if (unclosed)
    r.error =
        "Your reply has a code block that is never closed with ``` (was it cut off at the "
        "output limit? Then write a shorter kernel). ";
  else if (blocks.empty())
    r.error = "Your reply has no fenced code block. ";
  else {
    bool any_kernel_tag = false;
    for (auto& b : blocks) any_kernel_tag |= is_kernel_tag(b.tag);
    r.error = any_kernel_tag ? "No code block in your reply defines kf_run. "
                             : "No code block in your reply is tagged cuda or cpp. ";
  }
  r.error += direct_format(backend);
  return r;
}

ParsedReply parse_agent_reply(const std::string& text, sandbox::Backend backend) {
  ParsedReply r;
  bool unclosed = false;
  std::vector<Block> blocks = fenced_blocks(text, &unclosed);
  std::vector<const Block*> bash;
  for (auto& b : blocks)
    if (b.tag == "bash" || b.tag == "sh" || b.tag == "shell") bash.push_back(&b);
  if (bash.size() == 1 && !unclosed) {
    r.code = bash[0]->body;
    while (!r.code.empty() && (r.code.back() == '\n' || r.code.back() == ' ')) r.code.pop_back();
    if (!r.code.empty()) {
      r.ok = true;
      return r;
    }
    r.error = "Your bash block is empty. ";
  } else if (unclosed) {
    r.error = "Your reply has a code block that is never closed with ```. ";
  } else if (bash.empty()) {
    r.error = "Your reply has no ```bash block. ";
  } else {
    r.error = "Your reply has " + std::to_string(bash.size()) +
              " bash blocks; one command per turn, so exactly one. ";
  }
  r.error += agent_format(backend);
  return r;
}

}  // namespace agent
