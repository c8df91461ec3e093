// relsim contention trend (trend.hpp): a --history file's lines, each a
// run's scores, read back into the four trend lines.
#include "relsim/contention/trend.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/csv.hpp"
#include "relsim/core/error.hpp"

namespace relsim::contention {
namespace {

// A line's rate object {"value", "ci": [low, high], ...}; nullopt when it
// counts nothing (n = 0: the run did not measure it).
std::optional<TrendRate> rate_of(const Json& j, const char* key) {
  if (!j.contains(key)) throw std::invalid_argument(fmt::format("it has no {}", key));
  const Json& r = j[key];
  if (!r.is_object() || !r.contains("value") || !r["value"].is_number() || !r.contains("ci") || !r["ci"].is_array() ||
      r["ci"].size() != 2 || !r["ci"][0].is_number() || !r["ci"][1].is_number())
    throw std::invalid_argument(fmt::format("its {} is not a rate {{\"value\", \"k\", \"n\", \"ci\"}}", key));
  if (r.contains("n") && r["n"].is_number() && r["n"].get<double>() == 0) return std::nullopt;
  return TrendRate{r["value"].get<double>(), {r["ci"][0].get<double>(), r["ci"][1].get<double>()}};
}

std::string text_of(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

TrendRun run_of(const Json& j, int run) {
  if (!j.is_object()) throw std::invalid_argument("it is not a JSON object");
  TrendRun r;
  r.run = run;
  r.scenario = text_of(j, "scenario");
  if (r.scenario.empty()) throw std::invalid_argument("it has no scenario");
  r.time = text_of(j, "time");
  r.commit = text_of(j, "commit");
  r.agent = text_of(j, "agent");
  const auto whole = [&](const char* key) -> std::uint64_t {
    if (!j.contains(key)) return 0;
    if (!j[key].is_number_unsigned()) throw std::invalid_argument(fmt::format("its {} is not a whole number", key));
    return j[key].get<std::uint64_t>();
  };
  r.seed = whole("seed");
  r.agents = static_cast<int>(std::min<std::uint64_t>(whole("agents"), 1u << 30));
  r.tenants = static_cast<int>(std::min<std::uint64_t>(whole("tenants"), 1u << 30));
  const std::optional<TrendRate> success = rate_of(j, "success");
  r.success = success.value_or(TrendRate{0.0, {0.0, 1.0}});
  r.leak = rate_of(j, "wrong_tenant_hit_rate");
  if (r.scenario == "burst") r.burst_429 = rate_of(j, "tool_429_rate");
  if (r.scenario == "mixed") {
    if (!j.contains("by_scenario") || !j["by_scenario"].contains("burst"))
      throw std::invalid_argument("it is a mixed run without by_scenario.burst");
    r.burst_429 = rate_of(j["by_scenario"]["burst"], "tool_429_rate");
  }
  if (j.contains("pool_wait_p99") && j["pool_wait_p99"].is_number()) r.pool_wait_p99 = j["pool_wait_p99"].get<double>();
  return r;
}

Json rate_json(const std::optional<TrendRate>& r) {
  if (!r) return nullptr;
  return Json{{"value", r->value}, {"ci", {r->ci.low, r->ci.high}}};
}

std::string cells(const std::optional<TrendRate>& r) {
  return r ? fmt::format("{:.6g},{:.6g},{:.6g}", r->value, r->ci.low, r->ci.high) : ",,";
}

std::string shown(const std::optional<TrendRate>& r) { return r ? fmt::format("{:.4f}", r->value) : "-"; }

}  // namespace

std::vector<TrendRun> read_trend(std::istream& in, const std::string& source) {
  std::vector<TrendRun> runs;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Json j = Json::parse(line, nullptr, false);
    try {
      if (j.is_discarded()) throw std::invalid_argument("it is not JSON");
      runs.push_back(run_of(j, static_cast<int>(runs.size()) + 1));
    } catch (const Json::exception& e) {
      throw InputError(fmt::format("history file '{}' line {} is not a line of relsim contention run --history: {}",
                                   source, number, e.what()));
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("history file '{}' line {} is not a line of relsim contention run --history: {}",
                                   source, number, e.what()));
    }
  }
  if (runs.empty())
    throw InputError(fmt::format("history file '{}' has no run: relsim contention run --history FILE appends one "
                                 "line a run",
                                 source));
  return runs;
}

Json trend_json(const std::vector<TrendRun>& runs) {
  Json out = Json::array();
  for (const TrendRun& r : runs)
    out.push_back({{"run", r.run},
                   {"time", r.time},
                   {"commit", r.commit},
                   {"scenario", r.scenario},
                   {"agent", r.agent},
                   {"seed", r.seed},
                   {"agents", r.agents},
                   {"tenants", r.tenants},
                   {"success", rate_json(r.success)},
                   {"burst_429", rate_json(r.burst_429)},
                   {"leak", rate_json(r.leak)},
                   {"pool_wait_p99", r.pool_wait_p99 ? Json(*r.pool_wait_p99) : Json(nullptr)}});
  return Json{{"runs", std::move(out)}};
}

std::string trend_csv(const std::vector<TrendRun>& runs) {
  std::string out =
      "run,time,commit,scenario,agent,seed,agents,tenants,success,success_lo,success_hi,burst_429,burst_429_lo,"
      "burst_429_hi,leak,leak_lo,leak_hi,pool_wait_p99\n";
  for (const TrendRun& r : runs)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.run, csv_field(r.time), csv_field(r.commit),
                       csv_field(r.scenario), csv_field(r.agent), r.seed,
                       r.agents, r.tenants, cells(r.success), cells(r.burst_429), cells(r.leak),
                       r.pool_wait_p99 ? fmt::format("{:.6g}", *r.pool_wait_p99) : "");
  return out;
}

std::string trend_table(const std::vector<TrendRun>& runs) {
  std::string out = fmt::format("contention trend: {} runs\n  {:>4}  {:<20}  {:<11}  {:<8}  {:>8}  {:>9}  {:>8}  {:>13}\n",
                                runs.size(), "run", "time", "scenario", "agent", "success", "burst 429", "leak",
                                "pool wait p99");
  for (const TrendRun& r : runs)
    out += fmt::format("  {:>4}  {:<20}  {:<11}  {:<8}  {:>8.4f}  {:>9}  {:>8}  {:>13}\n", r.run,
                       r.time.empty() ? "-" : r.time, r.scenario, r.agent, r.success.value, shown(r.burst_429),
                       shown(r.leak), r.pool_wait_p99 ? fmt::format("{:.3f} s", *r.pool_wait_p99) : "-");
  return out;
}

}  // namespace relsim::contention
