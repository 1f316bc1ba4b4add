// sandbox/job_enums_test.cpp: the typed words of the job and verdict contracts read and
// write the strings they always were, refuse unknown ones by name, and rank statuses
// in one severity order.
#include <doctest/doctest.h>

#include "job.h"
#include "verdict.h"

using namespace sandbox;
using nlohmann::json;

TEST_CASE("enums: every name round-trips through JSON as the same string") {
  for (int i = 0; i <= static_cast<int>(Status::correct); ++i) {
    Status s = static_cast<Status>(i);
    json j = s;
    CHECK(j.get<std::string>() == status_name(s));
    CHECK(j.get<Status>() == s);
  }
  CHECK(json(Backend::host) == "host");
  CHECK(json(Role::baseline) == "baseline");
  CHECK(json(Reference::none) == "none");
  CHECK(json(Timing::batched) == "batched");
  Backend b = Backend::cuda;
  CHECK(parse_enum("host", &b));
  CHECK(b == Backend::host);
  CHECK_FALSE(parse_enum("gpu", &b));
}

TEST_CASE("enums: an unknown string is an error naming it and the accepted ones") {
  try {
    json("gpu").get<Backend>();
    FAIL("an unknown backend read");
  } catch (const std::exception& e) {
    std::string what = e.what();
    CHECK(what.find("unknown backend \"gpu\"") != std::string::npos);
    CHECK(what.find("cuda | host") != std::string::npos);
  }
  Job job;
  CHECK_THROWS(from_json(json{{"settings", {{"timing", "fast"}}}}, job));
}

TEST_CASE("enums: one severity order, the stages' own") {
  CHECK(more_severe(Status::load_error, Status::setup_error));
  CHECK(more_severe(Status::setup_error, Status::crash));
  CHECK(more_severe(Status::crash, Status::mismatch));
  CHECK(more_severe(Status::mismatch, Status::unstable));
  CHECK_FALSE(more_severe(Status::unstable, Status::mismatch));
  CHECK_FALSE(more_severe(Status::crash, Status::crash));
}

TEST_CASE("enums: a failure and a job written before the types read the same") {
  json old = {{"kind", "unstable"}, {"who", "baseline"}, {"message", "m"}, {"phase", "chained"}};
  Failure f = old.get<Failure>();
  CHECK(f.kind == Status::unstable);
  CHECK(f.who == Role::baseline);
  json back = f;
  CHECK(back["kind"] == "unstable");
  CHECK(back["who"] == "baseline");
  Job j =
      json{{"settings", {{"backend", "host"}, {"timing", "batched"}}}, {"reference", "baseline"}}
          .get<Job>();
  CHECK(j.settings.backend == Backend::host);
  CHECK(j.reference == Reference::baseline);
  CHECK(j.settings.timing == Timing::batched);
  json jj = j;
  CHECK(jj["settings"]["backend"] == "host");
  CHECK(jj["reference"] == "baseline");
  CHECK(jj["settings"]["timing"] == "batched");
}
