// llm/replay.cpp
#include "llm/replay.h"

#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

namespace llm {

namespace {

class ReplayProvider : public Provider {
 public:
  ReplayProvider(std::string path, std::vector<Reply> replies) : path_(std::move(path)), replies_(std::move(replies)) {}
  bool complete(const Request& req, Reply* reply, Error* err) override {
    *reply = Reply{};
    if (next_ >= replies_.size()) {
      *err = {"bad_request",
              "replay: " + path_ + " has no more replies (it recorded " + std::to_string(replies_.size()) +
                  "); the run asked for more than the recorded one did",
              0, false};
      return false;
    }
    *reply = replies_[next_++];
    if (req.on_delta) req.on_delta(reply->text);
    return true;
  }
  std::string name() const override { return "replay:" + path_; }

 private:
  std::string path_;
  std::vector<Reply> replies_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Provider> make_replay_provider(const std::string& path, std::string* err) {
  std::ifstream in(path);
  if (!in) return (*err = "replay: cannot read " + path + " (--model replay:FILE names a trajectory .jsonl)", nullptr);
  std::vector<Reply> replies;
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;  // a torn last line
    if (j.value("type", "") != "reply") continue;
    Reply r;
    r.text = j.value("text", "");
    r.thinking = j.value("thinking", "");
    r.stop_reason = j.value("stop_reason", "stop");
    r.model = "replay";
    r.attempts = 1;
    if (j.contains("usage") && j["usage"].is_object()) {
      r.usage.input_tokens = j["usage"].value("input_tokens", int64_t{0});
      r.usage.output_tokens = j["usage"].value("output_tokens", int64_t{0});
      r.usage.reported = true;
    }
    r.cost_note = "replayed: no cost";
    replies.push_back(std::move(r));
  }
  if (replies.empty()) return (*err = "replay: " + path + " records no reply", nullptr);
  return std::make_unique<ReplayProvider>(path, std::move(replies));
}

void register_replay_provider() {
  register_provider("replay", [](const ProviderConfig& cfg, std::string* err) -> std::unique_ptr<Provider> {
    if (cfg.model.empty()) return (*err = "replay needs a file: --model replay:FILE", nullptr);
    return make_replay_provider(cfg.model, err);
  });
}

}  // namespace llm
