// relsim bughunt: a testing agent's world (docs/bughunt.md). `serve` runs the
// synthetic shop (ui/shop.hpp) on 127.0.0.1 until SIGINT or SIGTERM, for the
// testers of examples/bughunt/ to drive in a browser. `run` draws each run's
// page-load faults from the chain (bughunt/bughunt_plan.hpp), serves the shop,
// has examples/bughunt/runs.mjs drive Chromium through the runs, and sets
// every verdict beside the oracle's and the counts beside the exact rates.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/bughunt/bughunt_plan.hpp"
#include "relsim/ui/ui_server.hpp"
#include "relsim/bughunt/bughunt_report.hpp"
#include "cli/child_process.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/stop_signals.hpp"

namespace relsim::cli {
namespace {

namespace fs = std::filesystem;

inline constexpr int kMaxWorkers = 16;

ui::UiServer shop_server(ui::UiConfig config) {
  config.site = ui::Site::shop;
  ui::validate(config);
  // The shop runs no command: its routes are its page and its cart.
  return ui::UiServer(config, ui::CommandRunner([](const std::vector<std::string>&, const ui::CommandHooks&) {
                        return ui::CommandResult{kExitInput, "", "the shop runs no command", ""};
                      }));
}

int run_serve(const ui::UiConfig& config) {
  ui::validate(config);
  StopSignals signals;  // before the server's threads start
  ui::UiServer server = shop_server(config);
  out() << fmt::format("relsim bughunt: listening on {}", server.url()) << std::endl;
  signals.wait();
  server.stop();
  return 0;
}

struct RunArgs {
  ModelArgs model;
  std::string tester = "careful";
  int reloads = 1;
  std::string version = "healthy";
  std::string kinds = "reset=1,503=1,slow=1";
  long long runs = 100;
  std::uint64_t seed = rng::kReferenceSeed;
  int workers = 2;
  std::string driver = "examples/bughunt";
  std::string chromium = "/usr/bin/chromium";
  std::string node = "node";
  bool json = false;
};

// The plan file runs.mjs reads, removed when the run ends.
class PlanFile {
 public:
  explicit PlanFile(const std::string& text) {
    std::string name = (fs::temp_directory_path() / "relsim-bughunt-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw InputError(fmt::format("cannot make a temporary file for the plan in {}", fs::temp_directory_path().string()));
    path_ = name;
    const bool whole = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!whole) throw InputError(fmt::format("cannot write the plan to '{}'", path_));
  }
  ~PlanFile() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  PlanFile(const PlanFile&) = delete;
  PlanFile& operator=(const PlanFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The browser side must be there before anything starts.
void check_driver(const RunArgs& a) {
  const fs::path dir(a.driver);
  for (const char* file : {"runs.mjs", "testers.mjs", "faults.mjs", "browser.mjs"})
    if (!fs::is_regular_file(dir / file))
      throw InputError(fmt::format("driver = '{}' has no {}: give the folder of examples/bughunt/", a.driver, file));
  if (!fs::is_directory(dir / "node_modules" / "playwright-core"))
    throw InputError(fmt::format("driver = '{}' has no node_modules/playwright-core: run 'npm ci' in it once "
                                 "(docs/bughunt.md)", a.driver));
  if (::access(a.chromium.c_str(), X_OK) != 0)
    throw InputError(fmt::format("chromium = '{}' is not an executable file (apt-get install chromium)", a.chromium));
}

Verdict parse_verdict(const std::string& word) {
  for (const Verdict v : {Verdict::pass, Verdict::bug, Verdict::env_error})
    if (word == to_string(v)) return v;
  throw std::runtime_error(fmt::format("verdict '{}' is not PASS, BUG or ENV_ERROR", word));
}

std::string plan_text(const RunArgs& a, const std::string& url, const std::vector<BughuntRun>& plan) {
  Json runs = Json::array();
  for (const BughuntRun& run : plan) {
    Json loads = Json::array();
    for (const PageLoad& load : run.loads) loads.push_back(std::string(to_string(load)));
    runs.push_back(loads);
  }
  return Json{{"url", url}, {"tester", a.tester}, {"reloads", a.reloads}, {"workers", a.workers}, {"runs", runs}}
      .dump();
}

// Drives the browser through the plan; each run's verdict, in run order.
// Throws std::runtime_error when the driver fails or says something else.
std::vector<BrowserVerdict> drive(const RunArgs& a, const std::string& url, const std::vector<BughuntRun>& plan) {
  const PlanFile file(plan_text(a, url, plan));
  ChildProcess driver({a.node, (fs::path(a.driver) / "runs.mjs").string(), file.path()},
                      {"RELSIM_CHROMIUM=" + a.chromium});
  std::vector<BrowserVerdict> seen(plan.size());
  std::vector<bool> done(plan.size(), false);
  std::size_t count = 0;
  const bool show = terminal_progress();
  std::string line;
  while (driver.read_line(line)) {
    BrowserVerdict v;
    std::size_t run = 0;
    try {
      const Json j = Json::parse(line);
      run = j.at("run").get<std::size_t>();
      v.verdict = parse_verdict(j.at("verdict").get<std::string>());
      v.loads = j.at("loads").get<int>();
      if (j.contains("evidence")) v.evidence = j["evidence"];
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("the browser driver printed '{:.200}', not a run's verdict: {}", line, e.what()));
    }
    if (run >= plan.size() || done[run])
      throw std::runtime_error(fmt::format("the browser driver reported run {} {}", run,
                                           run >= plan.size() ? "out of range" : "twice"));
    seen[run] = v;
    done[run] = true;
    ++count;
    if (show) std::cerr << fmt::format("\rbughunt run: {}/{} runs", count, plan.size()) << std::flush;
  }
  if (show) std::cerr << "\n";
  const int code = driver.wait();
  if (code != 0 || count != plan.size())
    throw std::runtime_error(fmt::format("the browser driver (node {}/runs.mjs) exited with {} after {} of {} runs",
                                         a.driver, code, count, plan.size()));
  return seen;
}

int run_runs(const RunArgs& a) {
  BughuntReport r;
  r.model = a.model.model();
  r.tester = parse_tester(a.tester);
  r.reloads = a.reloads;
  r.version = parse_app_version(a.version);
  r.kinds = parse_page_fault_weights(a.kinds);
  r.seed = a.seed;
  r.workers = a.workers;
  r.exact = triage_exact(r.model, r.tester, r.reloads);
  r.plan = draw_bughunt_plan(r.model, r.tester, r.reloads, r.version, r.kinds, a.runs, a.seed);
  check_driver(a);

  ui::UiConfig config;
  config.threads = 1;
  ui::UiServer shop = shop_server(config);
  const std::string url = shop.url() + (r.version == AppVersion::buggy ? "?v=buggy" : "");
  const auto start = std::chrono::steady_clock::now();
  try {
    r.browser = drive(a, url, r.plan);
  } catch (const std::runtime_error& e) {
    std::cerr << fmt::format("relsim bughunt run: {}\n", e.what());
    return kExitInternal;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  shop.stop();
  out() << (a.json ? dump_json(bughunt_json(r)) + "\n" : bughunt_table(r));
  return mismatches(r) == 0 ? 0 : kExitMiss;
}

void add_run_options(CLI::App& run, RunArgs& a) {
  add_model_options(run, a.model, false);
  run.remove_option(run.get_option("--r"));
  run.remove_option(run.get_option("--n"));
  a.model.p_option->required();
  run.get_option("--b")->description("silent chain steps between two loads of a run (the reload's delay), >= 0");
  run.get_option("--g")->description("--chain continuous: silent chain steps between two runs, >= 0");
  run.get_option("--chain")->description("fresh (each run from the chain's long-run law) or continuous (one chain "
                                         "through all runs, in order)");
  auto* tester =
      run.add_option("--tester", a.tester, "naive (one load; a failed load is a BUG) or careful (reloads; ENV_ERROR)")
          ->capture_default_str();
  auto* reloads = run.add_option("--reloads", a.reloads,
                                 fmt::format("careful: reloads after a failed load, in [0, {}]", kMaxReloads))
                      ->capture_default_str();
  check_value<std::string>(tester, [reloads](const std::string& word) {
    if (parse_tester(word) == Tester::naive && reloads->count())
      throw InputError("--reloads: the naive tester never reloads; give --tester careful");
  });
  run.add_option("--version", a.version, "healthy (the total is 487.00) or buggy (?v=buggy: 288.00)")
      ->capture_default_str();
  run.add_option("--kinds", a.kinds,
                 "how a failed load fails, fault=weight over reset (connection reset), 503, slow (past the page's "
                 "1 s timeout)")
      ->capture_default_str();
  run.add_option("--runs", a.runs, fmt::format("runs, in [1, {}]", kMaxBughuntRuns))->capture_default_str();
  add_seed_option(run, a.seed, "seeds the page loads' faults");
  check_value<int>(
      run.add_option("--workers", a.workers, fmt::format("runs at a time in the one browser, in [1, {}]", kMaxWorkers))
          ->capture_default_str(),
      [](int workers) {
        if (workers < 1 || workers > kMaxWorkers)
          throw InputError(fmt::format("workers = {} is out of range: it must be in [1, {}]", workers, kMaxWorkers));
      });
  run.add_option("--driver", a.driver,
                 "the folder of runs.mjs and the testers, with playwright-core installed by 'npm ci'")
      ->capture_default_str();
  run.add_option("--chromium", a.chromium, "the chromium executable playwright-core starts")->capture_default_str();
  run.add_option("--node", a.node, "the node executable (looked up on PATH)")->capture_default_str();
  run.add_flag("--json", a.json,
               "print one JSON object (runs, false_bugs, env_errors, missed_bugs, passes, mismatches, exact, ... "
               "and per_run) instead of the table");
}

}  // namespace

Runner add_bughunt(CLI::App& app) {
  auto config = std::make_shared<ui::UiConfig>();
  config->threads = 1;
  auto* cmd = app.add_subcommand("bughunt",
                                 "a testing agent's world (docs/bughunt.md): environment faults against product bugs");
  // No require_subcommand: the runner names the one to give.
  auto* serve = cmd->add_subcommand(
      "serve",
      "serve the synthetic shop on 127.0.0.1 until SIGINT/SIGTERM: GET / (its page: the cart's total, 487.00; with\n"
      "  ?v=buggy it forgets the quantity and shows 288.00), /shop.js and /api/cart");
  serve->add_option("--port", config->port, "port on 127.0.0.1, in [0, 65535]; 0 picks a free one")
      ->capture_default_str();
  auto runs = std::make_shared<RunArgs>();
  auto* run = cmd->add_subcommand(
      "run",
      "drive Chromium through --runs runs of one tester against the shop, each page load's fault drawn from the\n"
      "  chain (one load per step); every verdict is set beside the oracle's, the counts beside the exact rates\n"
      "  with Wilson intervals; exit 1 when a run's verdict differs from the oracle's. Needs node and\n"
      "  playwright-core installed in --driver (npm ci), and Debian's chromium");
  add_run_options(*run, *runs);
  return [config, serve, runs, run] {
    if (serve->parsed()) return run_serve(*config);
    if (run->parsed()) return run_runs(*runs);
    throw InputError("relsim bughunt needs a subcommand: serve or run (relsim bughunt --help)");
  };
}

}  // namespace relsim::cli
