// What relsim fleet --live prints (fleet_agreement_report.hpp).
#include "relsim/live/fleet_agreement_report.hpp"

#include <fmt/format.h>

#include "relsim/fleet/fleet_report.hpp"

namespace relsim {
namespace {

// The table's part after the live run's figures, read from
// fleet_agreement_json's object: NaN figures print as nan, as it holds them.
std::string fleet_agreement_rows(const Json& j) {
  std::string s;
  const Json& l = j["live"];
  const auto number = [](const Json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.4g}", v.get<double>());
  };
  s += fmt::format("{:<16}{:.3g} wall s per model s; {:.2f} s of wall time; streams {:.4g} model s\n", "time scale",
                   l["time_scale"].get<double>(), l["wall_seconds"].get<double>(), l["stream_seconds"].get<double>());
  const Json& g = l["server_log"];
  s += fmt::format("{:<16}{} requests, {} 429s, {} 529s, at most {} of one tenant open at once: {}\n", "server log",
                   g["requests"].get<long long>(), g["r429"].get<long long>(), g["r529"].get<long long>(),
                   g["most_in_flight_per_tenant"].get<long long>(),
                   l["log_agrees"].get<bool>() ? "agrees with the client" : "DISAGREES");
  for (const auto& p : l["log_problems"]) s += fmt::format("{:<16}{}\n", "", p.get<std::string>());
  s += fmt::format("\nagainst {} simulated replicates (live within {:g} sd + {:g}% of the mean):\n",
                   j["simulated"]["replicates"].get<int>(), kSpreads, 100.0 * kRelativeSlack);
  s += fmt::format("{:<15}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}  {}\n", "figure", "live", "mean", "sd", "min", "max",
                   "replayed", "verdict");
  for (const auto& f : j["agreement"])
    s += fmt::format("{:<15}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}  {}\n", f["figure"].get<std::string>(),
                     number(f["live"]), number(f["mean"]), number(f["sd"]), number(f["min"]), number(f["max"]),
                     number(f["replayed"]),
                     !f["judged"].get<bool>()  ? "(shown, not judged)"
                     : f["agrees"].get<bool>() ? "agrees"
                                               : "DISAGREES");
  return s;
}

}  // namespace

Json fleet_agreement_json(const FleetAgreementRun& run) {
  const fleet::Scenario& s = run.scenario;
  const FleetLiveResult& live = run.live;
  const LogAgreement& log = run.log;
  Json j = fleet::fleet_json(s, run.config, live.counts);
  j.erase("events");  // the live run has none
  j["live"] = {{"dialect", std::string(dialect_name(run.live_config.dialect))},
               {"time_scale", run.live_config.time_scale},
               {"wall_seconds", live.wall_seconds},
               {"stream_seconds", live.stream_seconds},
               {"replayed_replicate", run.live_config.replicate},
               {"wrong_answers", live.wrong_answers},
               {"server_log",
                {{"requests", live.log.requests},
                 {"r429", live.log.r429},
                 {"r529", live.log.r529},
                 {"most_in_flight_per_tenant", live.log.most_in_flight},
                 {"wrong_tenant", live.log.wrong_tenant},
                 {"unfinished", live.log.unfinished}}},
               {"log_agrees", log.agrees},
               {"log_problems", log.problems}};
  if (s.long_agents > 0) j["live"]["long_stream_seconds"] = live.long_stream_seconds;
  j["simulated"] = fleet::fleet_json(s, run.config, run.pooled);
  Json rows = Json::array();
  for (const FigureAgreement& f : run.figures)
    rows.push_back({{"figure", f.name}, {"live", f.live}, {"mean", f.mean}, {"sd", f.sd}, {"min", f.min},
                    {"max", f.max}, {"replayed", f.replayed}, {"allowed", f.allowed}, {"agrees", f.agrees},
                    {"judged", f.judged}});
  j["agreement"] = rows;
  j["agrees"] = run.agrees();
  return j;
}

std::string fleet_agreement_table(const FleetAgreementRun& run) {
  return "the live run:\n" + fleet::fleet_table(run.scenario, run.config, run.live.counts) +
         fleet_agreement_rows(fleet_agreement_json(run));
}

}  // namespace relsim
