// The summary and JSON of `relsim live` in time mode (live_time_report.hpp).
#include "relsim/live/live_time_report.hpp"

#include <fmt/format.h>

#include "relsim/core/time_model.hpp"

namespace relsim {
namespace {

std::string policy_words(const Policy& p) {
  switch (p.kind) {
    case PolicyKind::simple: return fmt::format("simple (n = {}, r = {})", p.n, p.r);
    case PolicyKind::budgeted: return fmt::format("budgeted (n = {}, r = {}, s = {}, B = {})", p.n, p.r, p.s, p.B);
    default: return fmt::format("{} (n = {}, r = {}, s = {})", to_string(p.kind), p.n, p.r, p.s);
  }
}

}  // namespace

std::string time_live_summary(const TimeLiveCheck& c) {
  const TimeLiveConfig& k = c.config;
  const double scale = k.timing.time_scale;
  const TimeLiveWaits& w = c.waits;
  const auto ms = [](double s) { return s * 1000.0; };
  std::string out = fmt::format(
      "relsim live (time mode): {} tasks, {}, {} s wall\n"
      "  outage: mean good {} s, mean bad {} s (p = {:.6g}), one model second = {} wall s; backoff {}, "
      "think {} s, tasks every {:.6g} s\n",
      c.live.size(), policy_words(k.policy), fmt::format("{:.2f}", c.wall_seconds), k.t_good, k.t_bad,
      k.t_bad / (k.t_good + k.t_bad), scale, to_string(k.timing.backoff_schedule), k.timing.think_seconds, k.spacing);
  out += fmt::format("  done {}/{}  {:g}% Wilson [{:.4f}, {:.4f}]  exact {:.6f} ({})\n", c.successes, c.live.size(),
                     k.confidence * 100.0, c.interval.low, c.interval.high, c.exact,
                     c.covered() ? "covered" : "NOT covered");
  out += fmt::format("  waits: {} checked, {} outside [max (1 - jitter) - {} s, max + {} s]; least margin {:.2f} ms, "
                     "most past max {:.2f} ms\n",
                     w.checked, w.outside, k.wait_tolerance, k.wait_tolerance, ms(w.min_margin), ms(w.max_excess));
  out += fmt::format("  observed - drawn wait: max {:.2f} ms, mean {:.2f} ms; every step ({}): residual max {:.2f} ms "
                     "= {:.2f}% of a mean bad sojourn, mean {:.2f} ms\n",
                     ms(w.max_residual), ms(w.mean_residual), w.steps, ms(w.max_step_residual),
                     100.0 * w.max_step_residual / (k.t_bad * scale), ms(w.mean_step_residual));
  out += fmt::format("  schedule: {} bad intervals, bad {:.2f}% of {:.1f} model s; {} requests, {} bad\n",
                     c.schedule.bad.size(), 100.0 * c.bad_time, c.schedule.now - c.schedule.from, c.requests,
                     c.bad_requests);
  out += fmt::format("  mean seconds per task (model): live {:.4f}, exact {:.4f}\n", c.mean_seconds,
                     c.exact_mean_seconds);
  for (const auto& [name, count] : c.outcomes)
    if (name != "done") out += fmt::format("  {:<24} {}\n", name, count);
  out += fmt::format("  rule mismatches {}, off-schedule replies {}, late starts {}: {}\n", c.mismatches.size(),
                     c.off_schedule, c.late_starts, c.passed() ? "PASS" : "FAIL");
  return out;
}

Json time_live_json(const TimeLiveCheck& c) {
  const TimeLiveConfig& k = c.config;
  const TimeLiveWaits& w = c.waits;
  Json outcomes = Json::object();
  for (const auto& [name, count] : c.outcomes) outcomes[name] = count;
  Json problems = Json::array();
  for (const auto& p : c.problems) problems.push_back(p);
  Json waits{{"checked", w.checked},           {"outside", w.outside},
             {"tolerance", k.wait_tolerance},  {"min_margin", w.min_margin},
             {"max_excess", w.max_excess},     {"max_residual", w.max_residual},
             {"mean_residual", w.mean_residual}, {"steps", w.steps},
             {"max_step_residual", w.max_step_residual}, {"mean_step_residual", w.mean_step_residual}};
  return Json{{"mode", "time"},
              {"policy", std::string(to_string(k.policy.kind))},
              {"n", k.policy.n},
              {"r", k.policy.r},
              {"s", k.policy.s},
              {"t_good", k.t_good},
              {"t_bad", k.t_bad},
              {"time_scale", k.timing.time_scale},
              {"backoff", to_string(k.timing.backoff_schedule)},
              {"think_seconds", k.timing.think_seconds},
              {"retry_after", k.retry_after},
              {"spacing", k.spacing},
              {"tasks", static_cast<std::int64_t>(c.live.size())},
              {"successes", c.successes},
              {"confidence", k.confidence},
              {"ci_low", c.interval.low},
              {"ci_high", c.interval.high},
              {"exact", c.exact},
              {"covered", c.covered()},
              {"mean_seconds", c.mean_seconds},
              {"exact_mean_seconds", c.exact_mean_seconds},
              {"outcomes", outcomes},
              {"requests", c.requests},
              {"bad_requests", c.bad_requests},
              {"waits", waits},
              {"mismatches", static_cast<std::int64_t>(c.mismatches.size())},
              {"off_schedule", c.off_schedule},
              {"late_starts", c.late_starts},
              {"max_late", c.max_late},
              {"bad_intervals", static_cast<std::int64_t>(c.schedule.bad.size())},
              {"bad_time", c.bad_time},
              {"passed", c.passed()},
              {"problems", problems},
              {"wall_seconds", c.wall_seconds},
              {"seed", k.seed}};
}

}  // namespace relsim
