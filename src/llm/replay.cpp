// llm/replay.cpp
#include "llm/replay.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "trace/run.h"

namespace llm {

namespace {

class ReplayProvider : public Provider {
 public:
  ReplayProvider(std::string path, std::vector<Reply> replies)
      : path_(std::move(path)), replies_(std::move(replies)) {}
  bool complete(const Request& req, Reply* reply, Error* err) override {
    *reply = Reply{};
    if (next_ >= replies_.size()) {
      err->kind = ErrorKind::bad_request;
      err->message = "replay: " + path_ + " has no more replies (it recorded " +
                     std::to_string(replies_.size()) +
                     "); the run asked for more than the recorded one did";
      err->http_status = 0;
      err->retryable = false;
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
  trace::Run run;
  std::string why;
  if (!trace::read_run(path, &run, &why))  // a torn last line is dropped, not an error
    return (*err = "replay: " + why + " (--model replay:FILE names a trajectory .jsonl)", nullptr);
  std::vector<Reply> replies;
  for (const trace::ReplyEvent& e : run.replies) {
    Reply r;
    r.text = e.text;
    r.thinking = e.thinking;
    r.stop_reason = e.stop_reason;
    r.model = "replay";
    r.attempts = 1;
    r.usage.input_tokens = e.input_tokens;
    r.usage.output_tokens = e.output_tokens;
    r.usage.cache_read_tokens = e.cache_read_tokens;
    r.usage.cache_write_tokens = e.cache_write_tokens;
    r.usage.reported = e.usage_reported;
    r.usage.estimated = e.usage_estimated;
    r.cost_note = "replayed: no cost";
    replies.push_back(std::move(r));
  }
  if (replies.empty()) return (*err = "replay: " + path + " records no reply", nullptr);
  return std::make_unique<ReplayProvider>(path, std::move(replies));
}

}  // namespace llm
