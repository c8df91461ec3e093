// A live fleet run beside the simulation (fleet_agreement.hpp).
#include "relsim/live/fleet_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "relsim/core/error.hpp"

namespace relsim {

std::vector<FigureAgreement> compare_figures(const fleet::FleetResult& live,
                                             const std::vector<fleet::FleetResult>& replicates, int replayed) {
  if (replicates.size() < 2)
    throw InputError(fmt::format("replicates = {}: a spread needs at least 2", replicates.size()));
  using Figure = std::function<double(const fleet::FleetResult&)>;
  std::vector<std::pair<std::string, Figure>> figures = {
      {"success_rate", [](const auto& r) { return r.success_rate(); }},
      {"rate_429", [](const auto& r) { return r.rate_429(); }},
      {"rate_529", [](const auto& r) { return r.rate_529(); }},
      {"amplification", [](const auto& r) { return r.amplification(); }},
      {"latency_p50", [](const auto& r) { return r.latency_quantile(0.5); }},
      {"latency_p99", [](const auto& r) { return r.latency_quantile(0.99); }},
      {"pool_wait_p99", [](const auto& r) { return r.pool_wait_quantile(0.99); }},
      {"short_pool_wait_p99", [](const auto& r) { return r.short_pool_wait_quantile(0.99); }},
  };
  if (live.billed) figures.insert(figures.begin() + 4, {"cost_mean", [](const auto& r) { return r.cost_mean(); }});
  std::vector<FigureAgreement> out;
  for (const auto& [name, of] : figures) {
    FigureAgreement a;
    a.name = name;
    a.live = of(live);
    std::vector<double> values;
    for (const auto& r : replicates) values.push_back(of(r));
    double sum = 0.0;
    for (const double v : values) sum += v;
    a.mean = sum / static_cast<double>(values.size());
    double squares = 0.0;
    for (const double v : values) squares += (v - a.mean) * (v - a.mean);
    a.sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
    a.min = *std::min_element(values.begin(), values.end());
    a.max = *std::max_element(values.begin(), values.end());
    a.replayed = replayed >= 0 && replayed < static_cast<int>(values.size()) ? values[static_cast<std::size_t>(replayed)]
                                                                              : std::nan("");
    a.allowed = kSpreads * a.sd + kRelativeSlack * std::abs(a.mean);
    a.agrees = std::abs(a.live - a.mean) <= a.allowed;  // false when either is NaN
    if (std::isnan(a.live) && std::isnan(a.mean)) a.agrees = true;  // nothing to divide by on either side
    a.judged = name.find("latency") == std::string::npos && name.find("wait") == std::string::npos;
    out.push_back(a);
  }
  return out;
}

LogAgreement check_log(const FleetLiveResult& live, const fleet::Scenario& scenario) {
  LogAgreement a;
  const auto expect = [&](bool ok, const std::string& problem) {
    if (ok) return;
    a.agrees = false;
    a.problems.push_back(problem);
  };
  const fleet::FleetResult& c = live.counts;
  const FleetLiveLog& log = live.log;
  expect(log.requests == c.requests,
         fmt::format("the server logged {} requests, the client sent {}", log.requests, c.requests));
  expect(log.r429 == c.r429, fmt::format("the server answered {} 429s, the client saw {}", log.r429, c.r429));
  expect(log.r529 == c.r529, fmt::format("the server answered {} 529s, the client saw {}", log.r529, c.r529));
  expect(log.wrong_tenant == 0, fmt::format("{} requests came with another tenant's key", log.wrong_tenant));
  expect(live.wrong_answers == 0, fmt::format("{} answers did not name their task", live.wrong_answers));
  expect(log.unfinished == 0, fmt::format("{} requests were still open at the server after the run", log.unfinished));
  if (scenario.pool > 0 && !scenario.pool_per_task)
    expect(log.most_in_flight <= scenario.pool,
           fmt::format("the server had {} requests of one tenant open at once, over the pool of {}",
                       log.most_in_flight, scenario.pool));
  return a;
}

bool FleetAgreementRun::agrees() const {
  bool all = log.agrees;
  for (const FigureAgreement& f : figures) all = all && (f.agrees || !f.judged);
  return all;
}

FleetAgreementRun run_fleet_agreement(const fleet::Scenario& scenario, fleet::RunConfig config,
                                      const FleetLiveConfig& live_config, int replicates, bool force,
                                      const std::function<void(int)>& simulated) {
  validate_live(scenario, live_config);
  config.replicates = 1;
  fleet::validate(scenario, force);
  std::vector<fleet::FleetResult> each;
  for (int i = 0; i < replicates; ++i) {
    config.first_replicate = i;
    each.push_back(fleet::run_fleet(scenario, config, force));
    if (simulated) simulated(i + 1);
  }
  const std::int64_t planned = scenario.agents * scenario.tasks_per_agent;
  for (const auto& r : each)
    if (r.tasks < planned)
      throw InputError(fmt::format("duration = {:g} s let a simulated replicate start only {} of the {} tasks: a live "
                                   "run runs them all, so give --live a longer --duration",
                                   scenario.duration, r.tasks, planned));
  FleetAgreementRun run;
  run.scenario = scenario;
  run.live_config = live_config;
  run.live = run_fleet_live(scenario, config.seed, live_config);
  config.first_replicate = 0;
  config.replicates = replicates;
  run.pooled = fleet::run_fleet(scenario, config, force);
  run.config = config;
  run.figures = compare_figures(run.live.counts, each, live_config.replicate);
  run.log = check_log(run.live, scenario);
  return run;
}

}  // namespace relsim
