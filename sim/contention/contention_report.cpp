// relsim contention run's output (contention.hpp): one JSON object, or a
// table with the predictions beside it.
#include <fmt/format.h>

#include "relsim/contention/contention.hpp"

namespace relsim::contention {
namespace {

Json rate_json(const Rate& r) {
  const Interval ci = r.interval();
  return {{"value", r.value()}, {"k", r.k}, {"n", r.n}, {"ci", {ci.low, ci.high}}};
}

std::string rate_text(const Rate& r) {
  if (r.n == 0) return "-";
  const Interval ci = r.interval();
  return fmt::format("{:.4f}  [{:.4f}, {:.4f}]  ({} of {})", r.value(), ci.low, ci.high, r.k, r.n);
}

}  // namespace

Json scores_json(const ContentionScores& s) {
  Json predictions = Json::array();
  for (const Prediction& p : s.predictions) {
    Json j{{"what", p.what}, {"value", p.value}, {"measured", p.measured}, {"agrees", p.agrees}};
    if (p.interval) j["ci"] = {p.interval->low, p.interval->high};
    predictions.push_back(std::move(j));
  }
  Json out{{"scenario", to_string(s.config.scenario)},
          {"agent", s.config.external ? std::string_view("agent-cmd") : to_string(s.config.agent)},
          {"agents", s.config.agents},
          {"tenants", s.config.tenants},
          {"concurrency", s.config.concurrency > 0 ? s.config.concurrency : s.config.agents},
          {"seed", s.config.seed},
          {"success", rate_json(s.success)},
          {"tool_429_rate", rate_json(s.tool_429)},
          {"wrong_tenant_hit_rate", rate_json(s.wrong_tenant_hits)},
          {"lost_updates", s.lost_updates},
          {"collisions", s.collisions},
          {"deadlocks", s.deadlocks},
          {"stale_accepted", rate_json(s.stale_accepted)},
          {"locks_past_ttl", s.locks_past_ttl},
          {"half_written_seen", s.half_written_seen},
          {"key_collisions", s.key_collisions},
          {"rounds_lost", rate_json(s.rounds_lost)},
          {"pool_wait_p99", s.pool_wait_p99 ? Json(*s.pool_wait_p99) : Json(nullptr)},
          {"model_requests", s.model_requests ? Json(*s.model_requests) : Json(nullptr)},
          {"predictions", std::move(predictions)},
          {"seconds", std::round(s.seconds * 1000.0) / 1000.0}};
  if (s.config.scenario == Scenario::mixed) {
    Json each = Json::object();
    for (const ContentionScores& one : s.by_scenario) each[std::string(to_string(one.config.scenario))] = scores_json(one);
    out["by_scenario"] = std::move(each);
  }
  return out;
}

std::string scores_table(const ContentionScores& s) {
  const ContentionConfig& c = s.config;
  std::string out = fmt::format("contention: scenario {}, {} agent, {} agents over {} tenants, {} at once, seed {}\n",
                                to_string(c.scenario), c.external ? "--agent-cmd's" : to_string(c.agent), c.agents, c.tenants,
                                c.concurrency > 0 ? c.concurrency : c.agents, c.seed);
  out += fmt::format("  {:<24}{}\n", "success", rate_text(s.success));
  out += fmt::format("  {:<24}{}\n", "tool 429 rate", rate_text(s.tool_429));
  out += fmt::format("  {:<24}{}\n", "wrong-tenant hit rate", rate_text(s.wrong_tenant_hits));
  out += fmt::format("  {:<24}{}\n", "stale accepted", rate_text(s.stale_accepted));
  out += fmt::format("  {:<24}{}\n", "lost updates", s.lost_updates);
  out += fmt::format("  {:<24}{}\n", "collisions", s.collisions);
  out += fmt::format("  {:<24}{}\n", "deadlocks", s.deadlocks);
  out += fmt::format("  {:<24}{}\n", "locks past TTL", s.locks_past_ttl);
  out += fmt::format("  {:<24}{}\n", "half-written seen", s.half_written_seen);
  if (c.key_bits > 0) out += fmt::format("  {:<24}{}\n", "memo key collisions", s.key_collisions);
  if (c.think_s > 0) out += fmt::format("  {:<24}{}\n", "rounds that lost one", rate_text(s.rounds_lost));
  out += fmt::format("  {:<24}{}\n", "pool wait p99",
                     s.pool_wait_p99 ? fmt::format("{:.3f} s (model seconds)", *s.pool_wait_p99) : "-");
  if (s.model_requests) out += fmt::format("  {:<24}{}\n", "model requests", *s.model_requests);
  for (const Prediction& p : s.predictions)
    out += fmt::format("  predicted {}: {:.4f}, measured {:.4f}{}: {}\n", p.what, p.value, p.measured,
                       p.interval ? fmt::format(" [{:.4f}, {:.4f}]", p.interval->low, p.interval->high) : "",
                       p.agrees ? "agrees" : "DISAGREES");
  out += fmt::format("  ({:.2f} s)\n", s.seconds);
  return out;
}

}  // namespace relsim::contention
