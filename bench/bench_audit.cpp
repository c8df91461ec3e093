// relsim audit --infer on 100,000 tasks (goal: under 2 s on 2 cores): an
// audit plan for the reference experiment with the mixed fault kinds (p = 0.3,
// q = 0.8, n = 2, max_requests 9) and the request log a layered s = 2, r = 2
// client leaves on it, made here by running the policy's rules over the plan
// (fine for timing: the audit's verdicts are tested in tests/unit/audit_test.cpp).
//
//   BM_AuditInfer          observe + infer + audit, from the parsed plan and log
//   BM_AuditInferFromText  the whole command's work: parsing the plan's and the
//                          log's text too (the log is ~290,000 lines, ~50 MB)
// Times in milliseconds. Arg: OpenMP threads.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <string>

#include <fmt/format.h>

#include "relsim/audit/audit.hpp"
#include "relsim/montecarlo/plan_gen.hpp"

namespace {

constexpr std::int64_t kTasks = 100'000;

relsim::Plan bench_plan() {
  relsim::Model model;
  model.p = 0.3;
  model.q = 0.8;
  relsim::SimConfig config;
  config.tasks = kTasks;
  config.seed = 20261001;
  config.kinds = relsim::parse_fault_weights("cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1");
  const relsim::Policy layered{.n = 2, .r = 2, .s = 2, .B = 0, .kind = relsim::PolicyKind::layered};
  return relsim::generate_audit_plan(model, layered, config, 9);
}

// The log of a client that follows `policy` exactly, waiting 0.6 s between requests.
std::string client_log(const relsim::Plan& plan, const relsim::Policy& policy) {
  std::string out = fmt::format("{{\"relsim_log\": 1, \"port\": 8080, \"plan_tasks\": {}}}\n", plan.tasks.size());
  double now = 0.0;
  for (const relsim::TaskPlan& t : plan.tasks) {
    relsim::TaskRunner runner(policy);
    for (std::size_t i = 0; i < t.requests.size() && !runner.ended(); ++i) {
      const int retry = runner.state().http;
      runner.feed(t.requests[i]);
      out += fmt::format(R"({{"task": {}, "index": {}, "entry": "{}", "status": 200, "end": "complete", )"
                         R"("received_ms": {:.3f}, "finished_ms": {:.3f}, "retry_count": "{}", "body_bytes": 86}})"
                         "\n",
                         t.task, i, relsim::plan_name(t.requests[i]), now, now + 1.0, retry);
      now += 601.0;
    }
    out += fmt::format(R"({{"task": {}, "outcome": "{}", "detail": "", "received_ms": {:.3f}}})" "\n", t.task,
                       to_string(runner.outcome().outcome), now);
  }
  return out;
}

struct Fixture {
  relsim::Plan plan = bench_plan();
  std::string plan_text = relsim::write_plan(plan);
  std::string log_text =
      client_log(plan, relsim::Policy{.n = 2, .r = 2, .s = 2, .B = 0, .kind = relsim::PolicyKind::layered});
  relsim::RequestLog log = relsim::parse_request_log(log_text, "bench.jsonl");
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

std::int64_t audit_once(const relsim::Plan& plan, const relsim::RequestLog& log) {
  const relsim::Observations obs = relsim::observe(plan, log, nullptr, 2);
  const relsim::InferResult inferred = relsim::infer_policy(plan, obs, 2);
  relsim::AuditOptions options;
  options.policy = inferred.consistent.front();
  const relsim::AuditResult res = relsim::run_audit(plan, obs, options);
  return res.mismatches + static_cast<std::int64_t>(inferred.consistent.size());
}

void BM_AuditInfer(benchmark::State& state) {
  const Fixture& f = fixture();
  omp_set_num_threads(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(audit_once(f.plan, f.log));
  state.SetItemsProcessed(state.iterations() * kTasks);
  state.counters["log_lines"] = static_cast<double>(f.log.requests.size() + f.log.outcomes.size());
}
BENCHMARK(BM_AuditInfer)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AuditInferFromText(benchmark::State& state) {
  const Fixture& f = fixture();
  omp_set_num_threads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    const relsim::Plan plan = relsim::parse_plan(f.plan_text, "bench_plan.jsonl");
    const relsim::RequestLog log = relsim::parse_request_log(f.log_text, "bench.jsonl");
    benchmark::DoNotOptimize(audit_once(plan, log));
  }
  state.SetItemsProcessed(state.iterations() * kTasks);
  state.counters["log_mb"] = static_cast<double>(f.log_text.size()) / 1e6;
}
BENCHMARK(BM_AuditInferFromText)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
