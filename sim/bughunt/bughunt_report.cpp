// relsim bughunt run's output (bughunt_report.hpp).
#include "relsim/bughunt/bughunt_report.hpp"

#include <array>

#include <fmt/format.h>

#include "relsim/montecarlo/stats.hpp"
#include "relsim/exact/triage_report.hpp"

namespace relsim {
namespace {

constexpr double kConfidence = 0.95;

// The browser's counts of each verdict.
struct Counts {
  std::int64_t pass = 0, bug = 0, env_error = 0, loads = 0;
};

Counts count(const BughuntReport& r) {
  Counts c;
  for (const BrowserVerdict& v : r.browser) {
    c.pass += v.verdict == Verdict::pass;
    c.bug += v.verdict == Verdict::bug;
    c.env_error += v.verdict == Verdict::env_error;
    c.loads += v.loads;
  }
  return c;
}

const VerdictRates& exact_of(const BughuntReport& r) {
  return r.version == AppVersion::healthy ? r.exact.healthy : r.exact.buggy;
}

// One verdict's row: its count in the browser, the Wilson interval of its
// rate, and the exact rate.
struct Row {
  std::string name;
  std::int64_t count = 0;
  double exact = 0.0;
  Interval wilson;
  bool inside() const { return wilson.covers(exact); }
};

// PASS, BUG and ENV_ERROR, named for what they mean for this version: a BUG
// on the healthy shop is false, a PASS on the buggy one a missed bug.
std::array<Row, 3> rows(const BughuntReport& r) {
  const Counts c = count(r);
  const VerdictRates& e = exact_of(r);
  const auto n = static_cast<std::int64_t>(r.browser.size());
  const bool healthy = r.version == AppVersion::healthy;
  std::array<Row, 3> out{Row{healthy ? "PASS" : "missed (PASS)", c.pass, e.pass, {}},
                         Row{healthy ? "false BUG" : "BUG", c.bug, e.bug, {}},
                         Row{"ENV_ERROR", c.env_error, e.env_error, {}}};
  for (Row& row : out) row.wilson = binomial_interval(IntervalKind::wilson, row.count, n, kConfidence);
  return out;
}

std::string faults_of(const BughuntRun& run) {
  std::string s;
  for (const PageLoad& load : run.loads) s += (s.empty() ? "" : ",") + std::string(to_string(load));
  return s;
}

bool matches(const BughuntRun& plan, const BrowserVerdict& seen) {
  return plan.oracle.verdict == seen.verdict && plan.oracle.loads == seen.loads;
}

Json rate_json(const Row& row, std::int64_t n) {
  return {{"count", row.count},
          {"rate", static_cast<double>(row.count) / static_cast<double>(n)},
          {"wilson_low", row.wilson.low},
          {"wilson_high", row.wilson.high},
          {"exact", row.exact},
          {"exact_inside", row.inside()}};
}

}  // namespace

std::int64_t mismatches(const BughuntReport& r) {
  std::int64_t m = 0;
  for (std::size_t i = 0; i < r.plan.size(); ++i) m += !matches(r.plan[i], r.browser[i]);
  return m;
}

Json bughunt_json(const BughuntReport& r) {
  const Counts c = count(r);
  const auto n = static_cast<std::int64_t>(r.browser.size());
  const bool healthy = r.version == AppVersion::healthy;
  const VerdictRates& e = exact_of(r);
  const std::array<Row, 3> table = rows(r);
  Json per_run = Json::array();
  for (std::size_t i = 0; i < r.plan.size(); ++i) {
    Json faults = Json::array();
    for (const PageLoad& load : r.plan[i].loads) faults.push_back(std::string(to_string(load)));
    Json run = {{"run", i},
                {"faults", faults},
                {"verdict", std::string(to_string(r.browser[i].verdict))},
                {"loads", r.browser[i].loads},
                {"oracle", std::string(to_string(r.plan[i].oracle.verdict))},
                {"oracle_loads", r.plan[i].oracle.loads}};
    if (!matches(r.plan[i], r.browser[i])) run["evidence"] = r.browser[i].evidence;  // what the tester saw
    per_run.push_back(std::move(run));
  }
  return {{"runs", n},
          {"false_bugs", healthy ? c.bug : 0},
          {"env_errors", c.env_error},
          {"missed_bugs", healthy ? 0 : c.pass},
          {"passes", c.pass},
          {"bugs", c.bug},
          {"mismatches", mismatches(r)},
          {"exact",
           {{"false_bug", healthy ? e.bug : 0.0},
            {"env_error", e.env_error},
            {"missed_bug", healthy ? 0.0 : e.pass},
            {"pass", e.pass},
            {"bug", e.bug},
            {"mean_loads", e.mean_loads}}},
          {"wilson",
           {{"confidence", kConfidence},
            {"pass", rate_json(table[0], n)},
            {"bug", rate_json(table[1], n)},
            {"env_error", rate_json(table[2], n)}}},
          {"loads", c.loads},
          {"tester", std::string(to_string(r.tester))},
          {"reloads", r.tester == Tester::careful ? Json(r.reloads) : Json(nullptr)},
          {"version", std::string(to_string(r.version))},
          {"p", r.model.p},
          {"q", r.model.q},
          {"b", r.model.b},
          {"g", r.model.g},
          {"chain", r.model.chain == ChainScope::fresh ? "fresh" : "continuous"},
          {"kinds", to_string(r.kinds)},
          {"seed", r.seed},
          {"workers", r.workers},
          {"seconds", r.seconds},
          {"runs_per_second", r.seconds > 0.0 ? static_cast<double>(n) / r.seconds : 0.0},
          {"per_run", per_run}};
}

std::string bughunt_table(const BughuntReport& r) {
  const auto n = static_cast<std::int64_t>(r.browser.size());
  const Counts c = count(r);
  const std::string who = r.tester == Tester::naive
                              ? std::string("naive tester")
                              : fmt::format("careful tester ({} {})", r.reloads, r.reloads == 1 ? "reload" : "reloads");
  std::string s = fmt::format(
      "relsim bughunt run: {}, {} shop, {} runs in Chromium ({} at a time): {:.1f} s, {:.1f} runs/s\n", who,
      to_string(r.version), n, r.workers, r.seconds, r.seconds > 0.0 ? static_cast<double>(n) / r.seconds : 0.0);
  s += fmt::format("  chain: {}; faults {}; seed {}\n", triage_chain_words(r.model), to_string(r.kinds), r.seed);
  s += fmt::format("  {:<14} {:>7}  {:>8}  {:<19} {:>8}  {}\n", "verdict", "runs", "rate",
                   fmt::format("{:.0f}% Wilson", 100 * kConfidence), "exact", "exact inside");
  for (const Row& row : rows(r))
    s += fmt::format("  {:<14} {:>7}  {:>8.4f}  [{:.4f}, {:.4f}]  {:>8.4f}  {}\n", row.name, row.count,
                     static_cast<double>(row.count) / static_cast<double>(n), row.wilson.low, row.wilson.high,
                     row.exact, row.inside() ? "yes" : "no");
  s += fmt::format("  loads: {} ({:.4g} per run; exact {:.4g})\n", c.loads,
                   static_cast<double>(c.loads) / static_cast<double>(n), exact_of(r).mean_loads);
  const std::int64_t m = mismatches(r);
  s += fmt::format("  oracle: {} of {} runs as predicted ({} {})\n", n - m, n, m, m == 1 ? "mismatch" : "mismatches");
  int shown = 0;
  for (std::size_t i = 0; i < r.plan.size() && shown < 10; ++i) {
    if (matches(r.plan[i], r.browser[i])) continue;
    ++shown;
    s += fmt::format("    run {}: loads met {}; the browser said {} in {} loads, the oracle {} in {}\n", i,
                     faults_of(r.plan[i]), to_string(r.browser[i].verdict), r.browser[i].loads,
                     to_string(r.plan[i].oracle.verdict), r.plan[i].oracle.loads);
  }
  return s;
}

}  // namespace relsim
