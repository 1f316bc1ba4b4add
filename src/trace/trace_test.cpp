#include "trace/trace.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

TEST_CASE("trace: writes a header and events, reads them back, rebuilds the prompts") {
  fs::path dir = fs::temp_directory_path() / ("kf-trace-" + std::to_string(getpid()));
  std::string err;
  std::string path;
  {
    trace::Writer w;
    REQUIRE_MESSAGE(w.open(dir.string(), "all_reduce", "openai:gpt-5/x", &err), err);
    path = w.path();
    CHECK(fs::path(path).parent_path().filename() == "all_reduce");
    CHECK(fs::path(path).filename().string().find("openai-gpt-5-x") != std::string::npos);
    w.header({{"problem", "all_reduce"}});
    w.event(
        trace::EventType::prompt,
        {{"turn", 1},
         {"keep", 0},
         {"new", {{{"role", "system"}, {"content", "S"}}, {{"role", "user"}, {"content", "U1"}}}}});
    // The file holds every event as soon as it is written (a crash loses nothing).
    trace::Trajectory mid;
    REQUIRE(trace::read_trajectory(path, &mid, &err));
    CHECK(mid.events.size() == 1);
    CHECK_FALSE(mid.complete);
    w.event(trace::EventType::reply, {{"turn", 1}, {"text", std::string("bad \xff utf8")}});
    w.event(
        trace::EventType::prompt,
        {{"turn", 2},
         {"keep", 2},
         {"new",
          {{{"role", "assistant"}, {"content", "A1"}}, {{"role", "user"}, {"content", "U2"}}}}});
    w.event(
        trace::EventType::prompt,
        {{"turn", 2},
         {"keep", 2},
         {"new",
          {{{"role", "assistant"}, {"content", "A1b"}}, {{"role", "user"}, {"content", "U2"}}}}});
    w.event(trace::EventType::summary, {{"exit_reason", "target"}});
  }
  trace::Trajectory t;
  REQUIRE_MESSAGE(trace::read_trajectory(path, &t, &err), err);
  CHECK(t.complete);
  CHECK(t.header["problem"] == "all_reduce");
  CHECK(t.header["format"] == trace::kFormat);
  CHECK(t.events[0].contains("t"));
  auto prompts = trace::rebuild_prompts(t);
  REQUIRE(prompts.size() == 3);
  CHECK(prompts[1].size() == 4);
  CHECK(prompts[2].size() == 4);  // the retry replaced the assistant message
  CHECK(prompts[2][2].second == "A1b");

  // A torn last line is dropped with a warning; a bad middle line is an error.
  { std::ofstream(path, std::ios::app) << "{\"type\": \"rep"; }
  std::string warn;
  REQUIRE(trace::read_trajectory(path, &t, &err, &warn));
  CHECK(warn.find("cut off") != std::string::npos);
  { std::ofstream(path, std::ios::app) << "\n{\"type\": \"x\"}\n"; }
  CHECK_FALSE(trace::read_trajectory(path, &t, &err));
  fs::remove_all(dir);
}
