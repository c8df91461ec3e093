// What relsim oracle prints (oracle_report.hpp).
#include "relsim/live/oracle_report.hpp"

#include <fmt/format.h>

namespace relsim {
namespace {

// The mean of the planned wall times, as simulate_time divides its total.
double oracle_mean_seconds(const OracleResult& res) {
  return static_cast<double>(static_cast<long double>(res.planned_microseconds) /
                             static_cast<long double>(res.tasks.size()) * 1e-6L);
}

// A plan header's "time" as `key value` pairs, numbers in their shortest form.
std::string oracle_time_words(const Json& time) {
  std::string out;
  for (auto it = time.begin(); it != time.end(); ++it) {
    const Json& v = it.value();
    const std::string value = v.is_number()   ? fmt::format("{}", v.get<double>())
                              : v.is_string() ? v.get<std::string>()
                                              : dump_json(v);
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", it.key(), value);
  }
  return out;
}

}  // namespace

Json oracle_json(const OracleReport& r) {
  const Plan& plan = *r.plan;
  const Policy& policy = r.policy;
  const OracleResult& res = *r.result;
  const bool scripted = r.plan_path.empty();
  Json outcomes = Json::object();
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (res.outcomes[static_cast<std::size_t>(o)] > 0)
      outcomes[outcome_class(o).name()] = res.outcomes[static_cast<std::size_t>(o)];
  Json faults = Json::object();
  for (int k = 0; k < kFaultKinds; ++k)
    if (res.faults[static_cast<std::size_t>(k)] > 0)
      faults[std::string(to_string(static_cast<FaultKind>(k)))] = res.faults[static_cast<std::size_t>(k)];
  Json j = Json::object();
  j["plan"] = scripted ? std::string("scripted") : r.plan_path;
  if (scripted) {
    j["fault"] = plan.header["fault"];
    j["times"] = plan.header["times"];
  }
  j.update(Json{{"policy", std::string(to_string(policy.kind))},
                {"n", policy.n},           {"r", policy.r},
                {"s", policy.s},           {"B", policy.B},
                {"tasks", static_cast<std::int64_t>(res.tasks.size())},
                {"successes", res.outcomes[0]},
                {"outcomes", outcomes},    {"requests", res.requests},
                {"faults", faults},        {"wrong", res.wrong}});
  const bool fallback = plan_fallback_after(plan) > 0;
  if (fallback) {
    j["fallback"] = plan.header["fallback"];
    j["fallback_requests"] = res.fallback_requests;
  }
  if (res.timed) {
    j["chain"] = plan.header.value("chain", Json(nullptr));
    j["time"] = plan.header["time"];
    j["total_microseconds"] = res.planned_microseconds;
    j["mean_seconds"] = oracle_mean_seconds(res);
  }
  if (r.per_task) {
    Json per = Json::array();
    for (const auto& p : res.tasks) {
      per.push_back(Json{{"task", p.task}, {"outcome", p.outcome.name()}, {"requests", p.requests},
                         {"max_wait_seconds", p.max_wait_seconds}});
      if (fallback) per.back()["fallback_requests"] = p.fallback_requests;
      if (res.timed) per.back()["seconds"] = p.planned_seconds;
    }
    j["per_task"] = std::move(per);
  }
  return j;
}

std::string oracle_text(const OracleReport& r) {
  const OracleResult& res = *r.result;
  const std::string source = r.plan_path.empty() ? fmt::format("scripted {} {}", r.fault, r.times) : r.plan_path;
  std::string s = fmt::format("relsim oracle: {} ({})\n", source, describe(r.policy));
  s += fmt::format("  tasks {}, done {}, requests {}, wrong {}\n", res.tasks.size(), res.outcomes[0], res.requests,
                   res.wrong);
  if (plan_fallback_after(*r.plan) > 0)
    s += fmt::format("  fallback after {}: {} requests to the second provider\n", plan_fallback_after(*r.plan),
                     res.fallback_requests);
  if (res.timed)
    s += fmt::format("  time mode ({}): planned wall time per task, mean {:.6g} s\n",
                     oracle_time_words(r.plan->header["time"]), oracle_mean_seconds(res));
  for (int o = 1; o < kOutcomeClasses; ++o)
    if (res.outcomes[static_cast<std::size_t>(o)] > 0)
      s += fmt::format("  {:<24} {}\n", outcome_class(o).name(), res.outcomes[static_cast<std::size_t>(o)]);
  if (r.per_task)
    for (const auto& p : res.tasks)
      s += fmt::format("  task {:>6}  {:<24} requests {:>4}  waits at most {:.3f} s{}\n", p.task, p.outcome.name(),
                       p.requests, p.max_wait_seconds,
                       res.timed ? fmt::format("  planned {:.6g} s", p.planned_seconds) : std::string());
  return s;
}

}  // namespace relsim
