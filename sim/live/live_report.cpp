// What relsim live prints and writes for a plan's run (live_report.hpp).
#include "relsim/live/live_report.hpp"

#include <fmt/format.h>

#include "relsim/exact/exact.hpp"
#include "relsim/live/live_timeline.hpp"

namespace relsim {
namespace {

std::int64_t live_tasks_run(const LiveCheck& check) { return static_cast<std::int64_t>(check.live.size()); }

// A scripted run: every task, live against the oracle.
std::string live_scripted_table(const LiveReport& r) {
  const LiveCheck& check = *r.check;
  std::string s = fmt::format("relsim live: {} {} under {}\n", r.fault, r.times, describe(r.policy));
  s += fmt::format("  {:>5}  {:<24} {:>8} {:>10}   {:<24} {:>8} {:>12}\n", "task", "live outcome", "requests",
                   "waited s", "oracle outcome", "requests", "waits <= s");
  for (std::size_t i = 0; i < check.live.size(); ++i)
    s += fmt::format("  {:>5}  {:<24} {:>8} {:>10.3f}   {:<24} {:>8} {:>12.3f}\n", check.live[i].task,
                     check.live[i].outcome.name(), check.live[i].requests, check.live[i].seconds,
                     check.oracle[i].outcome.name(), check.oracle[i].requests, check.oracle[i].max_wait_seconds);
  return s;
}

// A generated or replayed run: the counts, and the interval against the exact value.
std::string live_counts_table(const LiveReport& r) {
  const LiveCheck& check = *r.check;
  const std::int64_t tasks = live_tasks_run(check);
  std::string s = fmt::format("relsim live: {} tasks, policy {}, {} concurrent, {:.2f} s\n", tasks,
                              describe(r.policy), r.concurrency, check.wall_seconds);
  s += fmt::format("  done {}/{}  95% Wilson [{:.4f}, {:.4f}]{}\n", check.successes, tasks, r.ci.low, r.ci.high,
                   r.exact ? fmt::format("  exact {:.6f} ({})", *r.exact,
                                         r.ci.covers(*r.exact) ? "covered" : "NOT covered")
                           : "");
  s += fmt::format("  requests {}  wrong outcomes {}\n", check.requests, check.wrong);
  if (!r.fallback.is_null())
    s += fmt::format("  fallback after {}: {} requests to the second provider\n", r.fallback.value("after", 0),
                     check.fallback_requests);
  if (r.throttle != "none")
    s += fmt::format("  retry throttle {}: ended {} tasks by denying a retry\n", r.throttle, check.throttled);
  for (const auto& [name, count] : check.outcomes)
    if (name != "done") s += fmt::format("  {:<24} {}\n", name, count);
  return s;
}

}  // namespace

LiveReport live_report(const LiveCheck& check, const Policy& policy, const std::optional<Model>& model,
                       const FaultWeights& kinds, const std::optional<Fallback>& fallback) {
  LiveReport r;
  r.check = &check;
  r.policy = policy;
  r.ci = binomial_interval(IntervalKind::wilson, check.successes, live_tasks_run(check), 0.95);
  if (model) {
    ExactOptions eopt;
    eopt.distribution = false;
    eopt.kinds = kinds;
    eopt.fallback = fallback;
    r.exact = exact_matrix(*model, policy, eopt).success;
  }
  return r;
}

Json live_json(const LiveReport& r) {
  const LiveCheck& check = *r.check;
  const Policy& policy = r.policy;
  Json outcomes = Json::object();
  for (const auto& [name, count] : check.outcomes) outcomes[name] = count;
  Json mism = Json::array();
  for (auto t : check.mismatches) {
    const auto i = static_cast<std::size_t>(t);
    Json m{{"task", t},
           {"oracle", check.oracle[i].outcome.name()},
           {"oracle_requests", check.oracle[i].requests},
           {"live", check.live[i].outcome.name()},
           {"live_requests", check.live[i].requests},
           {"error", check.live[i].error}};
    if (!r.fallback.is_null()) {
      m["oracle_fallback_requests"] = check.oracle[i].fallback_requests;
      m["live_fallback_requests"] = check.live[i].fallback_requests;
    }
    mism.push_back(std::move(m));
  }
  Json j{{"policy", std::string(to_string(policy.kind))},
         {"n", policy.n},
         {"r", policy.r},
         {"s", policy.s},
         {"tasks", live_tasks_run(check)},
         {"successes", check.successes},
         {"ci_low", r.ci.low},
         {"ci_high", r.ci.high},
         {"exact", r.exact ? Json(*r.exact) : Json(nullptr)},
         {"outcomes", outcomes},
         {"requests", check.requests},
         {"wrong", check.wrong},
         {"mismatches", static_cast<std::int64_t>(check.mismatches.size())},
         {"mismatched_tasks", mism},
         {"wall_seconds", check.wall_seconds},
         {"throttle", r.throttle},
         {"throttled", check.throttled},
         {"seed", r.seed},
         {"dialect", std::string(dialect_name(r.dialect))}};
  if (!r.fallback.is_null()) {
    j["fallback"] = r.fallback;
    j["fallback_requests"] = check.fallback_requests;
  }
  if (r.timeline) j["timeline"] = live_timeline_json(check);
  return j;
}

std::string live_table(const LiveReport& r) { return r.fault.empty() ? live_counts_table(r) : live_scripted_table(r); }

std::string live_mismatch_lines(const LiveCheck& check) {
  std::string s;
  for (auto t : check.mismatches) {
    const auto i = static_cast<std::size_t>(t);
    const std::int64_t want = check.oracle[i].fallback_requests, got = check.live[i].fallback_requests;
    s += fmt::format("relsim live: MISMATCH task {}: oracle {} after {} requests, live {} after {} ({}){}\n", t,
                     check.oracle[i].outcome.name(), check.oracle[i].requests, check.live[i].outcome.name(),
                     check.live[i].requests, check.live[i].error,
                     want == got ? "" : fmt::format("; to the second provider: oracle {}, live {}", want, got));
  }
  return s;
}

std::string live_mismatch_count(const LiveCheck& check) {
  return fmt::format("  oracle mismatches: {}\n", check.mismatches.size());
}

std::string live_csv(const LiveCheck& check) {
  std::string out = "task,oracle_outcome,oracle_requests,live_outcome,live_requests,seconds,match\n";
  for (std::size_t i = 0; i < check.live.size(); ++i) {
    const LiveTask& got = check.live[i];
    const Prediction& want = check.oracle[i];
    const bool match = got.text_ok && got.outcome == want.outcome && got.requests == want.requests;
    out += fmt::format("{},{},{},{},{},{:.6f},{}\n", got.task, want.outcome.name(), want.requests, got.outcome.name(),
                       got.requests, got.seconds, match ? "true" : "false");
  }
  return out;
}

}  // namespace relsim
