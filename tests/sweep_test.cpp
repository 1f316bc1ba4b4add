// tests/sweep_test.cpp: whole `kforge sweep` runs: the five collectives x 4 samples
// against the loopback LLM server playing a scripted mix of outcomes (each reply keyed to
// its problem), on the host backend; the metrics against a hand computation; kill -9 in
// the middle and the same command again; two sweeps at once into different folders.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "sandbox/process.h"
#include "sweep/ledger.h"
#include "tests/solve_harness.h"

namespace {

using solve_test::Harness;
using solve_test::json;
namespace fs = std::filesystem;

std::string example(const std::string& problem) {
  return solve_test::read_file(std::string(KF_SOURCE_ROOT) + "/problems/" + problem +
                               "/examples/host.cpp");
}
// Returns at once: its outputs keep the sandbox's poison, a mismatch on every problem.
const char* kDoesNothing =
    "#include <kf/kf.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return 0; }\n";

// One reply for `problem`'s prompt: 'r' right, 'w' wrong, 'b' does not compile.
json step(const std::string& problem, char what) {
  std::string src = what == 'r'   ? example(problem)
                    : what == 'w' ? std::string(kDoesNothing)
                                  : solve_test::broken_kernel();
  json s = solve_test::openai_ok(solve_test::fenced("cpp", src));
  s["when"] = "Problem: " + problem + " (";  // prompts/task.md's first line
  return s;
}

json script(const std::vector<std::pair<std::string, std::string>>& plan) {
  json s = json::array();
  for (const auto& [problem, whats] : plan)
    for (char w : whats) s.push_back(step(problem, w));
  return s;
}

std::vector<std::string> sweep_args(Harness& h, const fake_llm::Server& server,
                                    const std::string& out, const std::string& problems,
                                    int samples, int jobs) {
  std::string cfg = h.dir() + "/llm.json";
  std::ofstream(cfg) << json{{"stream", false}, {"timeouts", {{"total_s", 60}}}}.dump();
  return {"sweep",
          problems,
          "--samples",
          std::to_string(samples),
          "--jobs",
          std::to_string(jobs),
          "--model",
          "openai:test-model",
          "--base-url",
          server.url() + "/v1",
          "--config",
          cfg,
          "--max-turns",
          "1",
          "--backend",
          "host",
          "--world",
          "2",
          "--size",
          "small",
          "--no-time",
          "--out",
          out};
}

json status_rows(Harness& h, const std::string& out) {
  std::string text;
  CHECK(h.kforge({"sweep", "status", out, "--json"}, &text) == 0);
  size_t at = text.find('[');
  REQUIRE(at != std::string::npos);
  return json::parse(text.substr(at));
}

json row(const json& rows, const std::string& scope) {
  for (const json& r : rows)
    if (r["scope"] == scope) return r;
  FAIL("no row " << scope);
  return json();
}

int done_count(const std::string& out) {
  std::vector<sweep::Record> recs;
  int torn = 0;
  std::string err;
  sweep::read_ledgers(out, &recs, &torn, &err);
  int n = 0;
  for (const auto& r : recs) n += r.state == "done";
  return n;
}

}  // namespace

TEST_CASE("sweep: five collectives x 4 samples give the pass@k a hand computation gives" *
          doctest::timeout(900)) {
  Harness h;
  fake_llm::Server server;
  std::string err;
  // Correct samples per problem: all_reduce 4, all_gather 2, reduce_scatter 1,
  // all_to_all 0, broadcast 3.
  REQUIRE_MESSAGE(server.start(script({{"all_reduce", "rrrr"},
                                       {"all_gather", "rwrb"},
                                       {"reduce_scatter", "wwwr"},
                                       {"all_to_all", "bbbb"},
                                       {"broadcast", "rrwr"}}),
                               &err),
                  err);
  std::string out = h.dir() + "/sweep", text;
  int code = h.kforge(sweep_args(h, server, out, "all", 4, 2), &text, 800);
  INFO(text);
  REQUIRE(code == 0);
  CHECK(server.requests().size() == 20);
  json rows = status_rows(h, out);
  // pass@k per problem = 1 - C(4-c, k) / C(4, k).
  CHECK(row(rows, "all_reduce")["pass@1"].get<double>() == doctest::Approx(1.0));
  CHECK(row(rows, "all_gather")["pass@1"].get<double>() == doctest::Approx(0.5));
  CHECK(row(rows, "all_gather")["pass@2"].get<double>() == doctest::Approx(5.0 / 6.0));
  CHECK(row(rows, "reduce_scatter")["pass@2"].get<double>() == doctest::Approx(0.5));
  CHECK(row(rows, "all_to_all")["pass@4"].get<double>() == doctest::Approx(0.0));
  CHECK(row(rows, "broadcast")["pass@1"].get<double>() == doctest::Approx(0.75));
  // The model's figures: the mean over the five problems.
  json all = row(rows, "all");
  CHECK(all["samples"] == 20);
  CHECK(all["correct"] == 10);
  CHECK(all["pass@1"].get<double>() == doctest::Approx((1 + 0.5 + 0.25 + 0 + 0.75) / 5));
  CHECK(all["pass@2"].get<double>() == doctest::Approx((1 + 5.0 / 6 + 0.5 + 0 + 1) / 5));
  CHECK(all["pass@4"].get<double>() == doctest::Approx(0.8));
  CHECK(row(rows, "category:collective")["pass@1"] == all["pass@1"]);
  // The host backend measures no speed: no fast_p, said so.
  CHECK(all["speed_measured"] == false);
  CHECK_FALSE(all.contains("fast_1.0@1"));
  std::string table;
  CHECK(h.kforge({"sweep", "status", out}, &table) == 0);
  CHECK(table.find("no speed measured") != std::string::npos);
  std::string csv;
  CHECK(h.kforge({"sweep", "status", out, "--csv"}, &csv) == 0);
  CHECK(csv.rfind("model,scope,", 0) == 0);
}

TEST_CASE("sweep: kill -9 in the middle, then the same command: same numbers, nothing twice" *
          doctest::timeout(900)) {
  Harness h;
  // One outcome per problem, and a spare reply each for a sample the kill cut short.
  auto plan = std::vector<std::pair<std::string, std::string>>{{"all_reduce", "rrrrr"},
                                                               {"all_gather", "wwwww"},
                                                               {"reduce_scatter", "rrrrr"},
                                                               {"all_to_all", "bbbbb"},
                                                               {"broadcast", "rrrrr"}};
  fake_llm::Server first;
  std::string err;
  REQUIRE_MESSAGE(first.start(script(plan), &err), err);
  std::string out = h.dir() + "/sweep";
  // The sweep in the background, killed once five samples are done.
  std::vector<std::string> args = sweep_args(h, first, out, "all", 4, 2);
  args.insert(args.begin(), std::string(KF_BINARY_DIR) + "/kforge");
  std::vector<std::string> env = h.env();
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
  posix_spawn_file_actions_destroy(&fa);
  auto t0 = std::chrono::steady_clock::now();
  while (done_count(out) < 5 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(300))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  int done_at_kill = done_count(out);
  CHECK(done_at_kill >= 5);
  CHECK(done_at_kill < 20);
  // Its samples die with it (KFORGE_DIE_WITH_PARENT): nothing of the killed sweep runs on.
  CHECK(sandbox::wait_none_naming(out, 30));

  fake_llm::Server second;
  REQUIRE_MESSAGE(second.start(script(plan), &err), err);
  std::string text;
  int code = h.kforge(sweep_args(h, second, out, "all", 4, 2), &text, 800);
  INFO(text);
  REQUIRE(code == 0);
  // Only what was not finished ran again; every sample finished exactly once.
  CHECK(static_cast<int>(second.requests().size()) == 20 - done_at_kill);
  std::vector<sweep::Record> recs;
  int torn = 0;
  REQUIRE(sweep::read_ledgers(out, &recs, &torn, &err));
  std::map<std::string, int> done;
  for (const auto& r : recs)
    if (r.state == "done") ++done[sweep::sample_key(r)];
  CHECK(done.size() == 20);
  for (const auto& [key, n] : done) CHECK_MESSAGE(n == 1, key);
  // The numbers of an uninterrupted run: 12 of 20 correct, three problems at 1.
  json all = row(status_rows(h, out), "all");
  CHECK(all["samples"] == 20);
  CHECK(all["correct"] == 12);
  CHECK(all["pass@1"].get<double>() == doctest::Approx(0.6));
}

TEST_CASE("sweep: two sweeps at once into different folders do not collide" *
          doctest::timeout(900)) {
  Harness h;
  fake_llm::Server a, b;
  std::string err;
  REQUIRE_MESSAGE(a.start(script({{"all_reduce", "rr"}, {"broadcast", "ww"}}), &err), err);
  REQUIRE_MESSAGE(b.start(script({{"all_reduce", "ww"}, {"broadcast", "rr"}}), &err), err);
  std::string out_a = h.dir() + "/a", out_b = h.dir() + "/b";
  std::vector<std::string> args_a = sweep_args(h, a, out_a, "all_reduce", 2, 2);
  args_a.insert(args_a.begin() + 2, "broadcast");
  std::vector<std::string> args_b = sweep_args(h, b, out_b, "all_reduce", 2, 2);
  args_b.insert(args_b.begin() + 2, "broadcast");
  sandbox::ProcessResult ra, rb;
  auto run = [&](std::vector<std::string> args, sandbox::ProcessResult* r) {
    sandbox::ProcessSpec spec;
    spec.argv = {std::string(KF_BINARY_DIR) + "/kforge"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = h.env();
    spec.limit_s = 600;
    std::string e;
    sandbox::run_process(spec, r, &e);
  };
  std::thread ta(run, args_a, &ra), tb(run, args_b, &rb);
  ta.join();
  tb.join();
  INFO(ra.output);
  INFO(rb.output);
  REQUIRE(ra.exit_code == 0);
  REQUIRE(rb.exit_code == 0);
  json rows_a = status_rows(h, out_a), rows_b = status_rows(h, out_b);
  CHECK(row(rows_a, "all_reduce")["correct"] == 2);
  CHECK(row(rows_a, "broadcast")["correct"] == 0);
  CHECK(row(rows_b, "all_reduce")["correct"] == 0);
  CHECK(row(rows_b, "broadcast")["correct"] == 2);
}

TEST_CASE("sweep: the report is one HTML file that headless Chromium renders" *
          doctest::timeout(900)) {
  std::string chromium;
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(c)) chromium = c;
  REQUIRE_MESSAGE(!chromium.empty(), "no chromium: ./kforge-test installs Debian's chromium");
  Harness h;
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(
      server.start(script({{"all_reduce", "rrwb"}, {"broadcast", "rwww"}, {"all_gather", "bbrr"}}),
                   &err),
      err);
  std::string out = h.dir() + "/sweep", text;
  std::vector<std::string> args = sweep_args(h, server, out, "all_reduce", 4, 2);
  args.insert(args.begin() + 2, {"broadcast", "all_gather"});
  REQUIRE(h.kforge(args, &text, 800) == 0);
  REQUIRE(h.kforge({"report", out}, &text) == 0);
  std::string html = solve_test::read_file(out + "/report.html");
  // Self-contained: no script, nothing fetched.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  // Each sample's trajectory, rendered as `kforge show` does, and its links.
  CHECK(html.find("== turn 1") != std::string::npos);
  CHECK(html.find("compile_error") != std::string::npos);

  // Chromium, offline and headless: the DOM it built, and a screenshot.
  std::string png = h.dir() + "/report.png";
  sandbox::ProcessSpec spec;
  spec.env = h.env();
  spec.limit_s = 120;
  spec.argv = {chromium,
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--hide-scrollbars",
               "--window-size=1100,1400",
               "--screenshot=" + png,
               "file://" + out + "/report.html"};
  sandbox::ProcessResult r;
  REQUIRE(sandbox::run_process(spec, &r, &err));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 20000);  // a blank page is a few KB
  spec.argv = {chromium,        "--headless", "--no-sandbox",
               "--disable-gpu", "--dump-dom", "file://" + out + "/report.html"};
  REQUIRE(sandbox::run_process(spec, &r, &err));
  // The charts are in the rendered document: pass@k's lines, the verdict bars.
  CHECK(r.output.find("<polyline") != std::string::npos);
  CHECK(r.output.find("<rect") != std::string::npos);
  CHECK(r.output.find("pass@k by model") != std::string::npos);
  if (const char* keep = std::getenv("KF_KEEP_REPORT_PNG"))
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

TEST_CASE("sweep: turns and tokens to the first correct kernel come from the trajectory" *
          doctest::timeout(600)) {
  Harness h;
  fake_llm::Server server;
  std::string err;
  // A wrong kernel, then the right one: correct at turn 2, after two replies of 12 + 30
  // tokens each.
  REQUIRE_MESSAGE(server.start(script({{"all_reduce", "wr"}}), &err), err);
  std::string out = h.dir() + "/sweep", text;
  std::vector<std::string> args = sweep_args(h, server, out, "all_reduce", 1, 1);
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--max-turns") args[i + 1] = "2";
  REQUIRE(h.kforge(args, &text, 600) == 0);
  std::vector<sweep::Record> recs;
  int torn = 0;
  REQUIRE(sweep::read_ledgers(out, &recs, &torn, &err));
  REQUIRE(recs.size() == 2);  // started, done
  CHECK(recs[1].correct_turn == 2);
  CHECK(recs[1].tokens_to_correct == 84);
  json r = row(status_rows(h, out), "all_reduce");
  CHECK(r["correct"] == 1);
  CHECK(r["turns_to_correct"].get<double>() == doctest::Approx(2.0));
  CHECK(r["tokens_to_correct"].get<double>() == doctest::Approx(84.0));
}
