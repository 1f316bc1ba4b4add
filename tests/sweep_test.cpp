// tests/sweep_test.cpp: whole `kforge sweep` runs: the five collectives x 4 samples
// against the loopback LLM server playing a scripted mix of outcomes (each reply keyed to
// its problem and its sample's seed, so a sample gets the same reply whenever it runs),
// on the host backend; the metrics against a hand computation; kill -9 in the middle and
// the same command again; a failed sample retried; two sweeps at once.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "kf_build_paths.h"
#include "sandbox/process.h"
#include "sweep/ledger.h"
#include "tests/solve_harness.h"
#include "tests/sweep_script.h"

namespace {

using namespace sweep_script;
using solve_test::Harness;
using solve_test::json;
namespace fs = std::filesystem;

// Chromium, offline and headless, on a report: it renders (a screenshot that is not a
// blank page) and the document it built holds the charts. KF_KEEP_REPORT_PNG=FILE keeps
// the screenshot (the README's).
void check_in_chromium(Harness& h, const std::string& report) {
  std::string chromium, err;
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (fs::exists(c)) chromium = c;
  REQUIRE_MESSAGE(!chromium.empty(), "no chromium: ./kforge-test installs Debian's chromium");
  std::string png = h.dir() + "/report.png";
  sandbox::ProcessSpec spec;
  spec.env = h.env();
  spec.limit_s = 120;
  spec.argv = {chromium,
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--hide-scrollbars",
               "--window-size=1200,1700",
               "--screenshot=" + png,
               "file://" + report};
  sandbox::ProcessResult r;
  REQUIRE(sandbox::run_process(spec, &r, &err));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 20000);  // a blank page is a few KB
  spec.argv = {chromium,        "--headless", "--no-sandbox",
               "--disable-gpu", "--dump-dom", "file://" + report};
  REQUIRE(sandbox::run_process(spec, &r, &err));
  // The charts are in the rendered document: pass@k's line, the verdict bars.
  CHECK(r.output.find("<polyline") != std::string::npos);
  CHECK(r.output.find("<rect class=\"bar\"") != std::string::npos);
  CHECK(r.output.find("aria-label=\"pass@k\"") != std::string::npos);
  if (const char* keep = std::getenv("KF_KEEP_REPORT_PNG"))
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

}  // namespace

TEST_CASE("sweep: five collectives x 4 samples give the pass@k a hand computation gives" *
          doctest::timeout(900)) {
  Harness h;
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script(kMix), &err), err);
  std::string out = h.dir() + "/sweep", text;
  int code = h.kforge(sweep_args(h, server, out, kCollectives, 4, 2), &text, 800);
  INFO(text);
  REQUIRE(code == 0);
  // One request per sample, each with its own seed.
  std::multiset<std::string> seen = asked(server);
  CHECK(seen.size() == 20);
  for (const auto& [problem, whats] : kMix)
    for (int i = 0; i < 4; ++i) CHECK(seen.count(problem + "/" + std::to_string(i)) == 1);
  // Off a terminal: plain lines, one per finished sample, no escape codes.
  CHECK(text.find("sweep: 20/20 done, 0 running, 0 left") != std::string::npos);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.find('\033') == std::string::npos);
  check_mix_numbers(status(h, out));
  std::string table, csv;
  CHECK(h.kforge({"sweep", "status", out}, &table) == 0);
  CHECK(table.find("no speed measured") != std::string::npos);
  CHECK(table.find("20 done of 20 planned, 0 pending") != std::string::npos);
  CHECK(h.kforge({"sweep", "status", out, "--csv"}, &csv) == 0);
  CHECK(csv.rfind("model,scope,problems,samples,correct,speed_measured,pass@1,pass@2,pass@4", 0) ==
        0);
  CHECK(csv.find("\nopenai:test-model,all_gather,1,4,2,false,0.5,0.833333,1,") !=
        std::string::npos);
  // The report: one file, every sample in it with its trajectory rendered, nothing fetched.
  std::string said;
  REQUIRE(h.kforge({"report", out}, &said) == 0);
  std::string html = solve_test::read_file(out + "/report.html");
  size_t samples = 0;
  for (size_t at = 0;
       (at = html.find("<details id=\"s-openai_test-model-", at)) != std::string::npos; ++at)
    ++samples;
  CHECK(samples == 20);
  CHECK(html.find("== turn 1") != std::string::npos);  // as `kforge show` renders it
  CHECK(html.find("No speed was measured") != std::string::npos);
  CHECK(html.find("<td>5</td>") != std::string::npos);  // 5 compile errors in the breakdown
  CHECK(html.find("http") == std::string::npos);        // nothing to fetch when viewed
  CHECK(html.find("<script") == std::string::npos);
  check_in_chromium(h, out + "/report.html");
}

TEST_CASE("sweep: kill -9 in the middle, then the same command: same numbers, nothing twice" *
          doctest::timeout(900)) {
  Harness h;
  fake_llm::Server first;
  std::string err;
  REQUIRE_MESSAGE(first.start(script(kMix), &err), err);
  std::string out = h.dir() + "/sweep";
  // The sweep in the background, killed once five samples are done.
  std::vector<std::string> args = sweep_args(h, first, out, kCollectives, 4, 2);
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
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  std::vector<sweep::Record> before;
  int torn = 0;
  REQUIRE(sweep::read_ledgers(out, &before, &torn, &err));
  std::map<std::string, sweep::Record> done_before = sweep::finished(before);
  int done_at_kill = static_cast<int>(done_before.size());
  CHECK(done_at_kill >= 5);
  CHECK(done_at_kill < 20);
  // Its samples die with it (KFORGE_DIE_WITH_PARENT): nothing of the killed sweep runs on.
  CHECK(sandbox::wait_none_naming(out, 30));

  fake_llm::Server second;
  REQUIRE_MESSAGE(second.start(script(kMix), &err), err);
  std::string text;
  int code = h.kforge(sweep_args(h, second, out, kCollectives, 4, 2), &text, 800);
  INFO(text);
  REQUIRE(code == 0);
  // Only what was not finished ran again, each once: the second server was asked for
  // exactly the samples the ledger had not finished.
  std::multiset<std::string> again = asked(second);
  CHECK(static_cast<int>(again.size()) == 20 - done_at_kill);
  for (const auto& [key, r] : done_before)
    CHECK_MESSAGE(again.count(r.problem + "/" + std::to_string(r.index)) == 0, key);
  std::vector<sweep::Record> recs;
  REQUIRE(sweep::read_ledgers(out, &recs, &torn, &err));
  std::map<std::string, int> done;
  for (const auto& r : recs)
    if (r.state == sweep::SampleState::done) ++done[sweep::sample_key(r)];
  CHECK(done.size() == 20);
  for (const auto& [key, n] : done) CHECK_MESSAGE(n == 1, key);
  // The numbers of an uninterrupted run.
  check_mix_numbers(status(h, out));

  // The same folder with other solve options is another sweep: refused before any work.
  std::vector<std::string> other = sweep_args(h, second, out, kCollectives, 4, 2);
  other.insert(other.end(), {"--max-tokens", "5000"});
  CHECK(h.kforge(other, &text) == 2);
  CHECK(text.find("holds another sweep") != std::string::npos);
  CHECK(text.find("--max-tokens 5000") != std::string::npos);
}

TEST_CASE("sweep: a sample the provider failed is not counted, and the next run retries it" *
          doctest::timeout(600)) {
  Harness h;
  fake_llm::Server first, second;
  std::string err;
  REQUIRE_MESSAGE(first.start(script({{"all_reduce", "er"}}), &err), err);
  std::string out = h.dir() + "/sweep", text;
  CHECK(h.kforge(sweep_args(h, first, out, {"all_reduce"}, 2, 1), &text, 600) == 3);
  CHECK(text.find("1 samples failed") != std::string::npos);
  json st = status(h, out);
  CHECK(st["done"] == 1);
  CHECK(st["failed"] == 1);
  CHECK(row(st, "all")["n"] == 1);  // the failure says nothing of the model
  REQUIRE_MESSAGE(second.start(script({{"all_reduce", "rr"}}), &err), err);
  CHECK(h.kforge(sweep_args(h, second, out, {"all_reduce"}, 2, 1), &text, 600) == 0);
  CHECK(asked(second) == std::multiset<std::string>{"all_reduce/0"});
  st = status(h, out);
  CHECK(st["failed"] == 0);
  CHECK(row(st, "all")["n"] == 2);
  CHECK(row(st, "all")["correct"] == 2);
}

TEST_CASE("sweep: two sweeps at once into different folders do not collide" *
          doctest::timeout(900)) {
  Harness h;
  fake_llm::Server a, b;
  std::string err;
  REQUIRE_MESSAGE(a.start(script({{"all_reduce", "rr"}, {"broadcast", "ww"}}), &err), err);
  REQUIRE_MESSAGE(b.start(script({{"all_reduce", "ww"}, {"broadcast", "rr"}}), &err), err);
  std::string out_a = h.dir() + "/a", out_b = h.dir() + "/b";
  std::vector<std::string> args_a = sweep_args(h, a, out_a, {"all_reduce", "broadcast"}, 2, 2);
  std::vector<std::string> args_b = sweep_args(h, b, out_b, {"all_reduce", "broadcast"}, 2, 2);
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
  json st_a = status(h, out_a), st_b = status(h, out_b);
  CHECK(row(st_a, "all_reduce")["correct"] == 2);
  CHECK(row(st_a, "broadcast")["correct"] == 0);
  CHECK(row(st_b, "all_reduce")["correct"] == 0);
  CHECK(row(st_b, "broadcast")["correct"] == 2);
  CHECK(st_a["done"] == 4);
  CHECK(st_b["done"] == 4);
}

TEST_CASE("sweep: turns and tokens to the first correct kernel come from the trajectory" *
          doctest::timeout(600)) {
  Harness h;
  fake_llm::Server server;
  std::string err;
  // Sample 0 gets a wrong kernel, then the right one: correct at turn 2, after two
  // replies of 12 + 30 tokens each.
  REQUIRE_MESSAGE(
      server.start(json::array({step("all_reduce", 0, 'w'), step("all_reduce", 0, 'r')}), &err),
      err);
  std::string out = h.dir() + "/sweep", text;
  std::vector<std::string> args = sweep_args(h, server, out, {"all_reduce"}, 1, 1);
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--max-turns") args[i + 1] = "2";
  REQUIRE(h.kforge(args, &text, 600) == 0);
  std::vector<sweep::Record> recs;
  int torn = 0;
  REQUIRE(sweep::read_ledgers(out, &recs, &torn, &err));
  REQUIRE(recs.size() == 2);  // running, done
  CHECK(recs[1].first_correct_turn == 2);
  CHECK(recs[1].tokens_to_correct == 84);
  json r = row(status(h, out), "all_reduce");
  CHECK(r["correct"] == 1);
  CHECK(r["turns_to_correct"].get<double>() == doctest::Approx(2.0));
  CHECK(r["tokens_to_correct"].get<double>() == doctest::Approx(84.0));
}
