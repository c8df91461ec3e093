#include "relsim/sweep/tune_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/csv.hpp"
#include "relsim/exact/fallback_report.hpp"
#include "relsim/exact/report.hpp"


namespace relsim {
namespace {

// Front members the table shows; --csv and --json have them all.
constexpr std::size_t kTableRows = 30;

Json space_json(const TuneSpace& space) {
  Json policies = Json::array();
  for (const PolicyKind k : space.policies) policies.push_back(std::string(to_string(k)));
  Json fixed = Json::array();
  for (const Backoff& b : space.fixed) fixed.push_back(to_string(b));
  return Json{{"policies", policies}, {"s_max", space.s_max},       {"r_max", space.r_max},
              {"budgets", space.budgets}, {"bases", space.bases},   {"caps", space.caps},
              {"jitters", space.jitters}, {"lists", fixed}};
}

// The time model's fields but the backoff, which each schedule has its own.
Json time_json(const TimeModel& time) {
  Json j{{"p", time.chain.bad_share()}};
  const Json fields = time_model_json(time);
  for (auto it = fields.begin(); it != fields.end(); ++it)
    if (it.key() != "backoff") j[it.key()] = it.value();
  return j;
}

std::string schedule_words(const TuneSchedule& s) {
  const Policy& p = s.policy;
  const std::string budget = p.kind == PolicyKind::budgeted ? fmt::format(" B={}", p.B) : "";
  return fmt::format("{} s={} r={}{} backoff {}", to_string(p.kind), p.s, p.r, budget, to_string(s.backoff));
}

std::string p99_text(const TunePoint& p) {
  if (!p.p99_seconds) return "-";
  return fmt::format("{}{:.6g}", p.p99_method == P99Method::simulated ? "~" : "", *p.p99_seconds);
}

std::string point_row(const TunePoint& p) {
  const Policy& pol = p.schedule.policy;
  const std::string done = std::isnan(p.mean_seconds_done) ? "-" : fmt::format("{:.4f}", p.mean_seconds_done);
  return fmt::format("{:<9} {:>3} {:>3} {:>3}  {:<24} {:>14.10f} {:>10.5f} {:>11.4f} {:>11} {:>10}",
                     to_string(pol.kind), pol.s, pol.r, pol.kind == PolicyKind::budgeted ? std::to_string(pol.B) : "-",
                     to_string(p.schedule.backoff), p.success, p.mean_requests, p.mean_seconds, done, p99_text(p));
}

std::string anchor_place(const TuneAnchor& a) {
  if (!a.point.meets_target) return "misses the target";
  if (a.dominated_by) return fmt::format("meets the target, dominated by front #{}", *a.dominated_by + 1);
  return "meets the target, dominated by no front member";
}

}  // namespace

std::string tune_p99_note() {
  return "p99_seconds is the smallest x with P(wall time <= x) >= 0.99, computed for the front, the anchors and, "
         "with --objective p99-seconds, every schedule meeting the target. Fixed waits (jitter 0, lists, none): "
         "exact, from the exact wall-time distribution (p99_method exact) while it costs at most --p99-work. "
         "Jittered waits (the exact engine averages the jitter into the chain's steps and has no wall-time "
         "distribution), and fixed waits over --p99-work: the seeded simulation's (--p99-tasks tasks, --seed), with "
         "its distribution-free 99% interval p99_interval (p99_method simulated; jittered or too-large, and null, "
         "with --p99-tasks 0); so too for durations drawn from recordings (drawn-durations with --p99-tasks 0)";
}

Json tune_point_json(const TunePoint& point) {
  const Policy& p = point.schedule.policy;
  Json j;
  j["policy"] = std::string(to_string(p.kind));
  j["s"] = p.s;
  j["r"] = p.r;
  j["B"] = p.kind == PolicyKind::budgeted ? Json(p.B) : Json(nullptr);
  j["backoff"] = to_string(point.schedule.backoff);
  j["success"] = point.success;
  j["mean_requests"] = point.mean_requests;
  j["mean_seconds"] = point.mean_seconds;
  j["mean_seconds_done"] = point.mean_seconds_done;  // NaN (not computed) is written as null by dump_json
  j["p99_seconds"] = point.p99_seconds ? Json(*point.p99_seconds) : Json(nullptr);
  j["p99_exact"] = point.p99_method == P99Method::exact;
  j["p99_method"] = std::string(to_string(point.p99_method));
  j["p99_interval"] = point.p99_interval ? Json::array({point.p99_interval->low, point.p99_interval->high})
                                         : Json(nullptr);
  j["max_requests"] = point.max_requests;
  if (!std::isnan(point.cost_mean)) j["cost_mean"] = point.cost_mean;
  j["meets_target"] = point.meets_target;
  return j;
}

Json tune_json(const TuneResult& result, const TuneSpace& space, const TuneConfig& config, const Json& chain) {
  Json j;
  j["target"] = config.target;
  j["objective"] = std::string(to_string(config.objective));
  j["n"] = config.n;
  j["chain"] = chain;
  j["scope"] = std::string(to_string(config.time.scope));
  j["kinds"] = to_string(config.kinds);
  j["time"] = time_json(config.time);
  if (config.billing) j["billing"] = billing_json(*config.billing, config.kinds, config.fallback);
  if (config.fallback) j["fallback"] = fallback_json(config.time.chain.bad_share(), *config.fallback);
  j["space"] = space_json(space);
  j["evaluated"] = result.schedules;
  j["meeting_target"] = result.meeting;
  j["s_matters"] = result.s_matters;
  j["r_matters"] = result.r_matters;
  j["dimensions"] = result.dimensions;
  j["p99_tasks"] = config.p99_tasks;
  j["p99_work"] = config.p99_work;
  j["seed"] = config.seed;
  j["p99_note"] = tune_p99_note();
  Json front = Json::array();
  for (const TunePoint& p : result.front) front.push_back(tune_point_json(p));
  j["front"] = std::move(front);
  j["best"] = result.front.empty() ? Json(nullptr) : tune_point_json(result.front.front());
  Json anchors = Json::array();
  for (const TuneAnchor& a : result.anchors) {
    Json x{{"name", a.name}, {"description", a.description}};
    x.update(tune_point_json(a.point));
    x["on_front"] = a.point.meets_target && !a.dominated_by;
    x["dominated_by"] = a.dominated_by ? Json(*a.dominated_by) : Json(nullptr);
    anchors.push_back(std::move(x));
  }
  j["anchors"] = std::move(anchors);
  j["p99_ties"] = result.p99_ties;
  j["notes"] = result.notes;
  return j;
}

std::string tune_csv(const TuneResult& result) {
  std::string s = std::string(kTuneCsvHeader) + "\n";
  for (std::size_t i = 0; i < result.front.size(); ++i) {
    const TunePoint& p = result.front[i];
    const Policy& pol = p.schedule.policy;
    const auto number = [](std::optional<double> x) { return x ? fmt::format("{:.17g}", *x) : std::string(); };
    const std::optional<Interval>& ci = p.p99_interval;
    s += fmt::format("{},{},{},{},{},{},{:.17g},{:.17g},{:.17g},{},{},{},{},{},{},{}\n", i + 1, to_string(pol.kind),
                     pol.s, pol.r, pol.kind == PolicyKind::budgeted ? std::to_string(pol.B) : "",
                     csv_field(to_string(p.schedule.backoff)), p.success, p.mean_requests, p.mean_seconds,
                     number(std::isnan(p.mean_seconds_done) ? std::nullopt : std::optional(p.mean_seconds_done)),
                     number(p.p99_seconds), to_string(p.p99_method), number(ci ? std::optional(ci->low) : std::nullopt),
                     number(ci ? std::optional(ci->high) : std::nullopt), p.max_requests,
                     number(std::isnan(p.cost_mean) ? std::nullopt : std::optional(p.cost_mean)));
  }
  return s;
}

std::string tune_table(const TuneResult& result, const TuneConfig& config, const std::string& chain) {
  std::string s =
      fmt::format("relsim tune: target P(success) >= {}, n = {} calls, {}\n", config.target, config.n, chain);
  s += fmt::format("  kinds {}; {} distinct schedules, {} meet the target; objective {}\n", to_string(config.kinds),
                   result.schedules, result.meeting, to_string(config.objective));
  if (config.fallback)
    s += fmt::format("  fallback {}; a schedule whose calls send at most {} requests never falls back\n",
                     fallback_words(config.time.chain.bad_share(), *config.fallback), config.fallback->after);
  if (!result.s_matters) s += "  s has no effect (no pre-response kind in --kinds): s = 0 stands for every s\n";
  if (!result.r_matters) s += "  r has no effect (no in-stream kind in --kinds): r = 0 stands for every r\n";
  std::string dims;
  for (const auto& d : result.dimensions) dims += (dims.empty() ? "" : ", ") + d;
  s += fmt::format("\nPareto front ({}), best first:\n", dims);
  s += fmt::format("  #  {:<9} {:>3} {:>3} {:>3}  {:<24} {:>14} {:>10} {:>11} {:>11} {:>10}{}\n", "policy", "s", "r",
                   "B", "backoff", "success", "mean req", "mean s all", "mean s done", "p99 s",
                   config.billing ? "  mean cost" : "");
  const std::size_t shown = std::min(result.front.size(), kTableRows);
  for (std::size_t i = 0; i < shown; ++i) {
    const TunePoint& p = result.front[i];
    s += fmt::format("{:>3}  {}{}\n", i + 1, point_row(p),
                     std::isnan(p.cost_mean) ? std::string() : fmt::format("  ${:.6g}", p.cost_mean));
  }
  if (shown < result.front.size())
    s += fmt::format("  ... {} more (--csv or --json for the whole front)\n", result.front.size() - shown);
  if (result.front.empty()) s += "  (none: no schedule in the space meets the target)\n";
  else s += fmt::format("best ({}): {}\n", to_string(config.objective), schedule_words(result.front[0].schedule));
  for (const std::string& note : result.notes) s += "note: " + note + "\n";
  s += "\nanchors:\n";
  for (const TuneAnchor& a : result.anchors)
    s += fmt::format("  {:<13} {}\n  {:<13} {}: {}\n", a.name, point_row(a.point), "", a.description,
                     anchor_place(a));
  s += fmt::format("\np99: {}\n", tune_p99_note());
  return s;
}

}  // namespace relsim
