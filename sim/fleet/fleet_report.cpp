// What relsim fleet prints (fleet_report.hpp).
#include "relsim/fleet/fleet_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "relsim/exact/report.hpp"
#include "relsim/montecarlo/stats.hpp"

namespace relsim::fleet {
namespace {

// The table, read from fleet_json's object: NaN figures print as nan, as
// the object holds them.
std::string fleet_table_of_json(const Json& j) {
  std::string s;
  const auto row = [&](const std::string& name, const std::string& value) {
    s += fmt::format("{:<16}{}\n", name, value);
  };
  const auto seconds = [](const Json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.3g} s", v.get<double>());
  };
  const auto share = [](const Json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.3g}%", 100.0 * v.get<double>());
  };
  const auto count = [](long long k, const char* one, const char* many) {
    return fmt::format("{} {}", k, k == 1 ? one : many);
  };
  const Json& sc = j["scenario"];
  row("scenario", fmt::format("{} over {}, start {}, {}", count(sc["agents"].get<long long>(), "agent", "agents"),
                              count(sc["tenants"].get<long long>(), "tenant", "tenants"),
                              sc["start"].get<std::string>(), sc["policy"].get<std::string>()));
  row("provider",
      fmt::format("quota {} rpm, capacity {}, queue {}, trigger {}",
                  sc["quota"].get<double>() > 0 ? fmt::format("{:g}", sc["quota"].get<double>()) : "none",
                  sc["capacity"].get<long long>() > 0 ? std::to_string(sc["capacity"].get<long long>()) : "none",
                  sc["queue"].get<long long>(), sc["trigger"].get<std::string>()));
  row("client", fmt::format("pool {}, throttle {}", sc["pool"].dump(), sc["throttle"].get<std::string>()));
  row("tasks", fmt::format("{} ({})", j["tasks"].get<long long>(),
                           count(j["replicates"].get<int>(), "replicate", "replicates")));
  row("success",
      fmt::format("{} [{}, {}] (Wilson 95%)", share(j["success_rate"]), share(j["ci_low"]), share(j["ci_high"])));
  row("requests", fmt::format("{} ({} good, amplification {:.4g})", j["requests"].get<long long>(),
                              j["good"].get<long long>(),
                              j["amplification"].is_null() ? NAN : j["amplification"].get<double>()));
  row("429", fmt::format("{} ({} of requests)", j["r429"].get<long long>(), share(j["rate_429"])));
  row("529", fmt::format("{} ({} of requests)", j["r529"].get<long long>(), share(j["rate_529"])));
  row("timeouts", fmt::format("{} given up, {} streams served for nobody", j["timeouts"].get<long long>(),
                              j["wasted"].get<long long>()));
  row("throttled", fmt::format("{} retries refused", j["denied"].get<long long>()));
  if (j.contains("cost_mean"))
    row("cost", fmt::format("${:.6g} a task, ${:.6g} a done one; ${:.6g} spent per done task (failed tasks and "
                            "streams served for nobody included)",
                            j["cost_mean"].is_null() ? NAN : j["cost_mean"].get<double>(), j["cost_mean_done"].is_null() ? NAN : j["cost_mean_done"].get<double>(),
                            j["cost_per_done"].is_null() ? NAN : j["cost_per_done"].get<double>()));
  row("latency", fmt::format("p50 {}, p99 {}", seconds(j["latency_p50"]), seconds(j["latency_p99"])));
  if (sc["long_agents"].get<long long>() > 0)
    row("pool wait", fmt::format("p99 {} (the short agents' requests: {})", seconds(j["pool_wait_p99"]),
                                 seconds(j["short_pool_wait_p99"])));
  else
    row("pool wait", fmt::format("p99 {}", seconds(j["pool_wait_p99"])));
  row("seed", fmt::format("{}", j["seed"].get<std::uint64_t>()));
  return s;
}

}  // namespace

Json fleet_json(const Scenario& s, const RunConfig& c, const FleetResult& r) {
  const Interval ci = r.tasks > 0 ? binomial_interval(IntervalKind::wilson, r.successes, r.tasks, 0.95) : Interval{};
  Json j;
  j["tasks"] = r.tasks;
  j["successes"] = r.successes;
  j["success_rate"] = r.success_rate();
  j["ci_low"] = ci.low;
  j["ci_high"] = ci.high;
  j["requests"] = r.requests;
  j["rate_429"] = r.rate_429();
  j["rate_529"] = r.rate_529();
  j["amplification"] = r.amplification();
  j["latency_p50"] = r.latency_quantile(0.5);
  j["latency_p99"] = r.latency_quantile(0.99);
  j["pool_wait_p99"] = r.pool_wait_quantile(0.99);
  j["short_pool_wait_p99"] = r.short_pool_wait_quantile(0.99);
  j["seed"] = c.seed;
  j["replicates"] = r.replicates;
  j["good"] = r.good;
  j["r429"] = r.r429;
  j["r529"] = r.r529;
  j["timeouts"] = r.timeouts;
  j["wasted"] = r.wasted;
  j["denied"] = r.denied;
  j["events"] = r.events;
  if (r.billed) {
    j["cost_mean"] = r.cost_mean();
    j["cost_mean_done"] = r.cost_mean_done();  // NaN (no task done): null
    j["cost_per_done"] = r.cost_per_done();
    j["cost_wasted"] = static_cast<double>(r.cost_wasted_nano) / 1e9;
  }
  Json outcomes = Json::object();
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (r.outcomes[static_cast<std::size_t>(o)] > 0)
      outcomes[outcome_class(o).name()] = r.outcomes[static_cast<std::size_t>(o)];
  j["outcomes"] = outcomes;
  j["scenario"] = {{"agents", s.agents},       {"tenants", s.tenants},
                   {"tasks_per_agent", s.tasks_per_agent},
                   {"start", to_string(s.start)},
                   {"duration", s.duration},   {"quota", s.quota},
                   {"capacity", s.capacity},   {"queue", s.queue},
                   {"pool", s.pool_per_task ? Json("task") : Json(s.pool)},
                   {"throttle", to_string(s.throttle)},
                   {"trigger", to_string(s.trigger)},
                   {"header_timeout", s.header_timeout},
                   {"request_seconds", s.request_seconds},
                   {"dialect", std::string(dialect_name(s.dialect))},
                   {"long_agents", s.long_agents},
                   {"long_seconds", s.long_seconds},
                   {"backoff", to_string(s.backoff)},
                   {"policy", describe(s.policy)}};
  if (s.billing) j["scenario"]["billing"] = billing_json(*s.billing, s.kinds);
  return j;
}

std::string fleet_table(const Scenario& scenario, const RunConfig& config, const FleetResult& result) {
  return fleet_table_of_json(fleet_json(scenario, config, result));
}

namespace {

double goodput_of(const FleetResult& r, const Bin& b) {
  return static_cast<double>(b.good) / r.bin_seconds / r.replicates;
}

}  // namespace

std::string series_csv(const FleetResult& r) {
  std::string s = "t,sent,good,r429,r529,timeouts,started,finished,successes,goodput\n";
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    const Bin& b = r.series[i];
    s += fmt::format("{:g},{},{},{},{},{},{},{},{},{:g}\n", static_cast<double>(i) * r.bin_seconds, b.sent, b.good,
                     b.r429, b.r529, b.timeouts, b.started, b.finished, b.successes, goodput_of(r, b));
  }
  return s;
}

Json series_json(const FleetResult& r) {
  Json t = Json::array(), sent = Json::array(), good = Json::array(), r429 = Json::array(), r529 = Json::array(),
       timeouts = Json::array(), goodput = Json::array();
  for (std::size_t i = 0; i < r.series.size(); ++i) {
    const Bin& b = r.series[i];
    t.push_back(static_cast<double>(i) * r.bin_seconds);
    sent.push_back(b.sent);
    good.push_back(b.good);
    r429.push_back(b.r429);
    r529.push_back(b.r529);
    timeouts.push_back(b.timeouts);
    goodput.push_back(goodput_of(r, b));
  }
  return {{"bin_seconds", r.bin_seconds}, {"t", t},         {"sent", sent},     {"good", good},
          {"r429", r429},                 {"r529", r529}, {"timeouts", timeouts}, {"goodput", goodput}};
}

}  // namespace relsim::fleet
