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

#include "sandbox/process.h"
#include "sweep/ledger.h"
#include "tests/solve_harness.h"

namespace {

using solve_test::Harness;
using solve_test::json;
namespace fs = std::filesystem;
using Plan = std::vector<std::pair<std::string, std::string>>;

std::string example(const std::string& problem) {
  return solve_test::read_file(std::string(KF_SOURCE_ROOT) + "/problems/" + problem +
                               "/examples/host.cpp");
}
// Returns at once: its outputs keep the sandbox's poison, a mismatch on every problem.
const char* kDoesNothing =
    "#include <kf/kf.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return 0; }\n";

// The reply for sample `seed` of `problem`: 'r' right, 'w' wrong, 'b' does not compile,
// 'e' an HTTP 400 (the provider fails: the sample fails, and is retried).
json step(const std::string& problem, int seed, char what) {
  json s;
  if (what == 'e') {
    s = {{"status", 400}, {"body", fake_llm::openai_error("invalid_request_error", "scripted")}};
  } else {
    std::string src = what == 'r'   ? example(problem)
                      : what == 'w' ? std::string(kDoesNothing)
                                    : solve_test::broken_kernel();
    s = solve_test::openai_ok(solve_test::fenced("cpp", src));
  }
  // prompts/task.md's first line, and the sample's seed (the body's keys are sorted).
  s["when"] = {"Problem: " + problem + " (", "\"seed\":" + std::to_string(seed)};
  return s;
}

// One step per sample: whats[i] is sample i's reply.
json script(const Plan& plan) {
  json s = json::array();
  for (const auto& [problem, whats] : plan)
    for (size_t i = 0; i < whats.size(); ++i) s.push_back(step(problem, int(i), whats[i]));
  return s;
}

// The sweeps here cover the five collectives (kMix scripts replies for those alone; the
// suite's other categories, such as the fused GEMMs, would get none).
const char* const kCollectives = "category:collective";

// Correct samples: all_reduce 4, all_gather 2, reduce_scatter 1, all_to_all 0,
// broadcast 3; wrong 5, not compiling 5.
const Plan kMix = {{"all_reduce", "rrrr"},
                   {"all_gather", "rwrb"},
                   {"reduce_scatter", "wwwr"},
                   {"all_to_all", "bbbb"},
                   {"broadcast", "rrwr"}};

std::vector<std::string> sweep_args(Harness& h, const fake_llm::Server& server,
                                    const std::string& out, std::vector<std::string> problems,
                                    int samples, int jobs) {
  std::string cfg = h.dir() + "/llm.json";
  std::ofstream(cfg) << json{{"stream", false}, {"timeouts", {{"total_s", 60}}}}.dump();
  std::vector<std::string> a = {"sweep"};
  a.insert(a.end(), problems.begin(), problems.end());
  a.insert(a.end(), {"--samples",
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
                     out});
  return a;
}

json status(Harness& h, const std::string& out) {
  std::string text;
  CHECK(h.kforge({"sweep", "status", out, "--json"}, &text) == 0);
  size_t at = text.find('{');
  REQUIRE(at != std::string::npos);
  return json::parse(text.substr(at));
}

json row(const json& st, const std::string& scope) {
  for (const json& r : st["rows"])
    if (r["scope"] == scope) return r["m"];
  FAIL("no row " << scope);
  return json();
}

double at_k(const json& m, int k) {
  for (const json& kv : m["pass"])
    if (kv["k"] == k) return kv["value"].get<double>();
  FAIL("no pass@" << k);
  return -1;
}

// kMix's numbers, by hand: pass@k = 1 - C(4-c, k) / C(4, k) per problem, and the mean
// over the five problems for the model and its category.
void check_mix_numbers(const json& st) {
  CHECK(st["done"] == 20);
  CHECK(st["failed"] == 0);
  CHECK(st["pending"] == 0);
  CHECK(at_k(row(st, "all_reduce"), 1) == doctest::Approx(1.0));
  CHECK(at_k(row(st, "all_gather"), 1) == doctest::Approx(0.5));
  CHECK(at_k(row(st, "all_gather"), 2) == doctest::Approx(5.0 / 6.0));  // 1 - 1/6
  CHECK(at_k(row(st, "reduce_scatter"), 2) == doctest::Approx(0.5));    // 1 - 3/6
  CHECK(at_k(row(st, "all_to_all"), 4) == doctest::Approx(0.0));
  CHECK(at_k(row(st, "broadcast"), 1) == doctest::Approx(0.75));
  json all = row(st, "all");
  CHECK(all["n"] == 20);
  CHECK(all["correct"] == 10);
  CHECK(at_k(all, 1) == doctest::Approx((1 + 0.5 + 0.25 + 0 + 0.75) / 5));
  CHECK(at_k(all, 2) == doctest::Approx((1 + 5.0 / 6 + 0.5 + 0 + 1) / 5));
  CHECK(at_k(all, 4) == doctest::Approx(0.8));
  CHECK(row(st, "category:collective")["pass"] == all["pass"]);
  // The host backend measures no speed: no fast_p, no geomean.
  CHECK(all["speed_measured"] == false);
  CHECK(all["fast"].empty());
  CHECK(all["geomean_speedup"].is_null());
  // Every correct sample was correct at turn 1, after one reply of 12 + 30 tokens.
  CHECK(all["turns_to_correct"].get<double>() == doctest::Approx(1.0));
  CHECK(all["tokens_to_correct"].get<double>() == doctest::Approx(42.0));
  json v = st["verdicts"]["openai:test-model"];
  CHECK(v["correct"] == 10);
  CHECK(v["compile_error"] == 5);
}

int done_count(const std::string& out) {
  std::vector<sweep::Record> recs;
  int torn = 0;
  std::string err;
  sweep::read_ledgers(out, &recs, &torn, &err);
  return static_cast<int>(sweep::finished(recs).size());
}

// "problem/seed" of each request the server got.
std::multiset<std::string> asked(const fake_llm::Server& s) {
  std::multiset<std::string> out;
  for (const json& r : s.requests()) {
    std::string text = r["body"]["messages"].dump();
    size_t at = text.find("Problem: ");
    std::string problem = text.substr(at + 9, text.find(' ', at + 9) - at - 9);
    out.insert(problem + "/" + std::to_string(r["body"].value("seed", -1)));
  }
  return out;
}

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
  int code = h.kforge(sweep_args(h, server, out, {kCollectives}, 4, 2), &text, 800);
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
  std::vector<std::string> args = sweep_args(h, first, out, {kCollectives}, 4, 2);
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
  int code = h.kforge(sweep_args(h, second, out, {kCollectives}, 4, 2), &text, 800);
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
    if (r.state == "done") ++done[sweep::sample_key(r)];
  CHECK(done.size() == 20);
  for (const auto& [key, n] : done) CHECK_MESSAGE(n == 1, key);
  // The numbers of an uninterrupted run.
  check_mix_numbers(status(h, out));

  // The same folder with other solve options is another sweep: refused before any work.
  std::vector<std::string> other = sweep_args(h, second, out, {kCollectives}, 4, 2);
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
