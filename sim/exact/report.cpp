#include "relsim/exact/report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "relsim/core/bursts.hpp"
#include "relsim/exact/fallback_report.hpp"

namespace relsim {
namespace {

constexpr const char* kNoDistribution =
    "the requests distribution is too large to compute exactly here (raise --distribution-work); "
    "mean and worst case are exact, relsim simulate estimates the quantiles";

constexpr const char* kNoToolDistribution =
    "the requests distribution is not computed with tool calls (--tool-faults); mean and worst case are exact, "
    "relsim simulate estimates the quantiles";

constexpr const char* kNoCostDistribution =
    "the cost distribution is too large to compute exactly here (raise --distribution-work); its mean is exact";

const char* no_distribution_note(const ExactResult& result) {
  return result.tools ? kNoToolDistribution : kNoDistribution;
}

// With tool calls: the tool model as given and P(each class its harness can
// give), all of them, so that the keys do not depend on the values.
void add_tool_fields(Json& j, const ExactResult& result) {
  const ToolModel& tools = *result.tools;
  j["tool_faults"] = to_string(tools.faults);
  j["harness"] = std::string(to_string(tools.harness));
  Json classes = Json::object();
  for (int x = 0; x < kToolClasses; ++x)
    if (can_end_in(tools.harness, static_cast<ToolClass>(x)))
      classes[std::string(to_string(static_cast<ToolClass>(x)))] = result.tool_outcomes[static_cast<std::size_t>(x)];
  j["tool_outcomes"] = std::move(classes);
}

// With a billing: the prices as given, what one request of each kind costs,
// and the cost per task.
void add_cost_fields(Json& j, const ExactResult& result, const FaultWeights& kinds) {
  const CostResult& cost = *result.cost;
  j["billing"] = billing_json(cost.billing, kinds, result.fallback);
  j["cost_mean"] = cost.mean;
  j["cost_mean_done"] = cost.mean_done;  // NaN (no task done) is written as null by dump_json
  if (cost.complete) {
    j["cost_quantiles"] = Json{{"p50", cost.quantiles.p50}, {"p90", cost.quantiles.p90}, {"p99", cost.quantiles.p99}};
  } else {
    j["cost_quantiles"] = nullptr;
    j["cost_quantiles_note"] = kNoCostDistribution;
  }
}

// The fields every exact result has, after the model's: from success to the
// requests distribution.
void add_result_fields(Json& j, const Policy& policy, const ExactResult& result) {
  j["success"] = result.success;
  j["log10_success"] = result.log10_success;
  j["env_error"] = result.env_error;
  j["mean_requests"] = result.mean_requests;
  j["max_requests"] = result.max_requests;
  j["mean_bad_requests"] = result.mean_bad_requests;
  j["fault_share"] = result.fault_share();
  if (result.distribution_complete) {
    j["requests_quantiles"] = outcome_quantiles_json(requests_quantiles(result));
  } else {
    j["requests_quantiles"] = nullptr;
    j["requests_quantiles_note"] = no_distribution_note(result);
  }
  j["policy"] = std::string(to_string(policy.kind));
  if (policy.kind != PolicyKind::simple) j["s"] = policy.s;
  if (policy.kind == PolicyKind::budgeted) j["B"] = policy.B;
  Json outcomes = Json::object();
  for (int o = 0; o < kOutcomeClasses; ++o)
    if (result.outcomes[static_cast<std::size_t>(o)] > 0.0 || o == 0)
      outcomes[outcome_class(o).name()] = result.outcomes[static_cast<std::size_t>(o)];
  j["outcomes"] = std::move(outcomes);
  j["wrong"] = result.wrong;
  if (result.tools) add_tool_fields(j, result);
  j["method"] = result.method;
  j["distribution_complete"] = result.distribution_complete;
  j["pruned_mass"] = result.pruned_mass;
  Json bins = Json::array();
  for (const auto& bin : result.requests)
    bins.push_back(Json{{"requests", bin.requests}, {"outcome", std::string(to_string(bin.outcome))},
                        {"probability", bin.probability}});
  j["requests"] = std::move(bins);
}

using Row = std::function<void(std::string_view, const std::string&)>;

// The rows both tables print: success, and below the independent formula
// the outcomes and requests.
void result_rows(const Row& row, const ExactResult& result) {
  row("P(success)", fmt::format("{:.12g}", result.success));
  row("log10 P(success)", fmt::format("{:.12g}", result.log10_success));
  row("P(env_error)", fmt::format("{:.12g}", result.env_error));
}

void requests_rows(std::string& s, const ExactResult& result, int max_rows) {
  if (!result.distribution_complete) {
    s += result.tools ? "  requests per task: not computed with tool calls (relsim simulate estimates it)\n"
                      : "  requests per task: not computed (too large for an exact distribution here)\n";
    return;
  }
  s += "  requests  outcome        probability\n";
  int shown = 0;
  for (const auto& bin : result.requests) {
    if (shown++ == max_rows) {
      s += fmt::format("  ... {} more bins (use --json for all)\n", result.requests.size() - static_cast<std::size_t>(max_rows));
      break;
    }
    s += fmt::format("  {:>8}  {:<13}  {:.12g}\n", bin.requests, to_string(bin.outcome), bin.probability);
  }
}

// The tool model and every class its harness can give, with P.
void tool_rows(const Row& row, const ExactResult& result) {
  const ToolModel& tools = *result.tools;
  const ToolShares shares = tool_shares(tools);
  row("tool calls", fmt::format("{} harness, {}", to_string(tools.harness), to_string(tools.faults)));
  row("  per tool call", fmt::format("ok {:.6g}, goes on corrupted {:.6g}, ends the task {:.6g}", shares.ok,
                                     shares.corrupted, 1.0 - shares.goes_on()));
  for (int x = 0; x < kToolClasses; ++x)
    if (can_end_in(tools.harness, static_cast<ToolClass>(x)))
      row("  " + std::string(to_string(static_cast<ToolClass>(x))),
          fmt::format("{:.12g}", result.tool_outcomes[static_cast<std::size_t>(x)]));
}

// USD with enough digits for a fraction of a cent.
std::string usd(double x) { return std::isnan(x) ? std::string("none") : fmt::format("${:.6g}", x); }

void cost_rows(const Row& row, const CostResult& cost, const std::optional<Fallback>& fallback) {
  const Billing& b = cost.billing;
  row("billing", fmt::format("{:.0f} tokens in at ${}/M, {:.0f} out at ${}/M; a good request {}", b.input_tokens,
                             b.price_in, b.output_tokens, b.price_out, usd(b.request_cost(std::nullopt))));
  if (fallback) {
    const Billing two = second_billing(b, *fallback);
    row("  second provider", fmt::format("in at ${}/M, out at ${}/M; a good request {}", two.price_in, two.price_out,
                                         usd(two.request_cost(std::nullopt))));
  }
  if (b.cached_tokens > 0.0)
    row("  cached prefix", fmt::format("{:.0f} of the tokens in, read at ${}/M; the task's first billed request "
                                       "writes it at ${}/M ({} more)",
                                       b.cached_tokens, b.cache_read, b.cache_write, usd(b.cache_surcharge())));
  row("  breaks bill", fmt::format("{} of the output (docs/model.md, Cost)", break_at_string(b.break_at)));
  row("mean cost", fmt::format("{} a task, {} a done task", usd(cost.mean), usd(cost.mean_done)));
  row("cost p50, p90, p99", cost.complete ? fmt::format("{}, {}, {}", usd(cost.quantiles.p50), usd(cost.quantiles.p90),
                                                        usd(cost.quantiles.p99))
                                          : std::string("not computed (too large here; raise --distribution-work)"));
}

void outcome_rows(const Row& row, const ExactResult& result) {
  row("P(wrong)", fmt::format("{:.12g}  (crash, hang, partial_done{})", result.wrong,
                              result.tools ? ", side_effect_left, silent_wrong" : ""));
  for (int o = 1; o < kOutcomeClasses; ++o) {
    const double p = result.outcomes[static_cast<std::size_t>(o)];
    if (!(p > 0.0)) continue;
    // Without tool calls a task ends partial_done only on a wrong answer its loop trusted.
    const bool trusted = !result.tools && outcome_class(o).name() == "partial_done";
    row("  " + outcome_class(o).name(),
        fmt::format("{:.12g}{}", p, trusted ? "  (lost to taken wrong answers: a content fault trusted, docs/model.md)" : ""));
  }
  if (result.tools) tool_rows(row, result);
  row("mean requests", fmt::format("{:.12g}", result.mean_requests));
  row("max requests", fmt::format("{}", result.max_requests));
  if (!std::isnan(result.mean_bad_requests))
    row("fault share", fmt::format("{:.6g}  (E[bad requests] / E[requests]: the share of sent requests that fail)",
                                   result.fault_share()));
  if (result.cost) cost_rows(row, *result.cost, result.fallback);
  if (!result.distribution_complete) {
    row("requests quantiles", result.tools ? "not computed with tool calls: relsim simulate estimates them"
                                           : "not computed: the distribution is too large here (raise --distribution-work)");
    return;
  }
  const OutcomeQuantiles q = requests_quantiles(result);
  if (q.all) row("requests quantiles", count_quantiles_words(*q.all));
  if (q.done && q.failed) {
    row("  done tasks", count_quantiles_words(*q.done));
    row("  failed tasks", count_quantiles_words(*q.failed));
  }
}

std::string backoff_words(const Backoff& b) {
  switch (b.kind) {
    case Backoff::Kind::none: return "none (a retry follows at once)";
    case Backoff::Kind::exp:
      return fmt::format("{}: min({} 2^k, {}) (1 - {} U) s before retry k+1", to_string(b), b.base, b.cap, b.jitter);
    case Backoff::Kind::list: return fmt::format("{} s before retry 1, 2, ... (the last repeats)", to_string(b));
  }
  return to_string(b);
}

// A drawn duration's law: how many, the mean and some quantiles.
Json request_law_json(const TimeModel& time) {
  std::vector<double> sorted = time.request_law;
  std::sort(sorted.begin(), sorted.end());
  // The smallest x with at least `level` of the durations at or below it.
  const auto at = [&sorted](double level) {
    const double rank = std::ceil(level * static_cast<double>(sorted.size()));
    return sorted[static_cast<std::size_t>(std::max(1.0, rank)) - 1];
  };
  return Json{{"source", time.request_law_source}, {"count", sorted.size()}, {"mean", time.request_seconds},
              {"first_event_mean", time.request_law_first}, {"p50", at(0.5)}, {"p90", at(0.9)}, {"p99", at(0.99)},
              {"min", sorted.front()}, {"max", sorted.back()}};
}

std::string durations_words(const TimeModel& time) {
  std::string faults;
  for (int k = 0; k < kFaultKinds; ++k)
    if (!std::isnan(time.fault_seconds[static_cast<std::size_t>(k)]))
      faults += fmt::format("{}{} {} s", faults.empty() ? "" : ", ", to_string(static_cast<FaultKind>(k)),
                            time.fault_seconds[static_cast<std::size_t>(k)]);
  std::string good = fmt::format("{} s", time.request_seconds);
  if (!time.request_law.empty()) {
    const Json law = request_law_json(time);
    good = fmt::format("drawn from {} recorded ({}): mean {:.6g} s (first event {:.6g} s), p50 {:.6g}, p90 {:.6g}, "
                       "max {:.6g}",
                       law["count"].get<std::size_t>(), time.request_law_source, time.request_seconds,
                       time.request_law_first, law["p50"].get<double>(), law["p90"].get<double>(),
                       law["max"].get<double>());
  }
  return fmt::format("{}{}", good, faults.empty() ? "" : fmt::format(" (faults: {})", faults));
}

// The independent formula's value (null for a policy it does not cover) and row.
Json independent_json(double p, const Policy& policy, const FaultWeights& kinds) {
  const std::optional<double> value = independent_success(p, policy, kinds);
  return value ? Json(*value) : Json(nullptr);
}

void independent_row(const Row& row, double p, const Policy& policy, const FaultWeights& kinds) {
  if (const std::optional<double> value = independent_success(p, policy, kinds))
    row("independent formula", fmt::format("{:.12g}  {}", *value, independent_form(policy, kinds)));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> time_model_rows(const TimeModel& time) {
  return {{"request takes", durations_words(time)},
          {"backoff", backoff_words(time.backoff)},
          {"retry-after", time.retry_after > 0.0 ? fmt::format("{} s (http_429)", time.retry_after) : "none"},
          {"think between calls", fmt::format("{} s", time.think_seconds)}};
}

const std::vector<std::string> kExactMetrics = {"success",      "env_error",         "requests_per_task", "p99_requests",
                                                "mean_seconds", "mean_seconds_done", "p99_seconds",  "cost_mean",
                                                "cost_mean_done", "p99_cost"};

namespace {

constexpr const char* kCostNeedsPrices =
    "no prices were given: add --input-tokens, --output-tokens, --price-in and --price-out";

// The cost metrics of --require.
void cost_measured(const ExactResult& result, Measured& m) {
  if (!result.cost) {
    for (const char* name : {"cost_mean", "cost_mean_done", "p99_cost"}) m.missing[name] = kCostNeedsPrices;
    return;
  }
  m.values["cost_mean"] = result.cost->mean;
  if (std::isnan(result.cost->mean_done)) m.missing["cost_mean_done"] = "no task ends done";
  else m.values["cost_mean_done"] = result.cost->mean_done;
  if (result.cost->complete) m.values["p99_cost"] = result.cost->quantiles.p99;
  else m.missing["p99_cost"] = kNoCostDistribution;
}

}  // namespace

Measured exact_measured(const ExactResult& result, const TimeModel* time) {
  Measured m;
  m.values["success"] = result.success;
  m.values["env_error"] = result.env_error;
  m.values["requests_per_task"] = result.mean_requests;
  const OutcomeQuantiles q = requests_quantiles(result);
  if (q.all) m.values["p99_requests"] = static_cast<double>(q.all->at[2]);
  else m.missing["p99_requests"] = no_distribution_note(result);
  cost_measured(result, m);
  if (time == nullptr) {
    for (const char* name : {"mean_seconds", "mean_seconds_done", "p99_seconds"})
      m.missing[name] = kSecondsNeedTimeMode;
    return m;
  }
  m.values["mean_seconds"] = result.mean_seconds;
  if (std::isnan(result.mean_seconds_done)) m.missing["mean_seconds_done"] = "no task ends done";
  else m.values["mean_seconds_done"] = result.mean_seconds_done;
  if (result.seconds_complete) m.values["p99_seconds"] = result.seconds_quantiles.p99;
  else m.missing["p99_seconds"] = seconds_quantiles_note(*time, result);
  return m;
}

OutcomeQuantiles requests_quantiles(const ExactResult& result) {
  if (!result.distribution_complete) return {};
  std::vector<double> done, failed;
  for (const RequestBin& bin : result.requests) {
    auto& mass = bin.outcome == Outcome::done ? done : failed;
    const auto m = static_cast<std::size_t>(bin.requests);
    if (mass.size() <= m) mass.resize(m + 1, 0.0);
    mass[m] += bin.probability;
  }
  return outcome_quantiles(done, failed);
}

Json billing_json(const Billing& b, const FaultWeights& kinds, const std::optional<Fallback>& fallback) {
  Json each = Json::object();
  each["ok"] = b.request_cost(std::nullopt);
  for (const FaultKind kind : drawn_fault_kinds(kinds)) each[std::string(to_string(kind))] = b.request_cost(kind);
  Json j{{"input_tokens", b.input_tokens}, {"output_tokens", b.output_tokens}, {"price_in", b.price_in},
         {"price_out", b.price_out}, {"break_at", break_at_string(b.break_at)}, {"request_cost", std::move(each)}};
  if (fallback) {
    const Billing second = second_billing(b, *fallback);
    j["price_in2"] = second.price_in;
    j["price_out2"] = second.price_out;
  }
  if (b.cached_tokens > 0.0) {
    j["cached_tokens"] = b.cached_tokens;
    j["cache_read"] = b.cache_read;
    j["cache_write"] = b.cache_write;
    j["cache_surcharge"] = b.cache_surcharge();  // the first billed request's, on top of request_cost
  }
  return j;
}

Json exact_json(const Model& model, const Policy& policy, const FaultWeights& kinds, const ExactResult& result) {
  Json j = model_json(model, policy);
  j["p0"] = model.p < 1.0 ? Json(model.p0()) : Json(nullptr);
  const BurstShape shape = burst_shape(model);
  j["mean_burst_length"] = shape.mean_burst;
  j["mean_gap"] = shape.mean_gap;
  if (result.fallback) {
    j["fallback"] = fallback_json(model.p, *result.fallback);
    const std::optional<double> f = independent_fallback_success(model, policy, kinds, *result.fallback);
    j["independent"] = f ? Json(*f) : Json(nullptr);
  } else {
    j["independent"] = independent_json(model.p, policy, kinds);
  }
  add_result_fields(j, policy, result);
  if (result.cost) add_cost_fields(j, result, kinds);
  return j;
}

Json time_model_json(const TimeModel& time) {
  Json j;
  j["request_seconds"] = time.request_seconds;
  if (!time.request_law.empty()) j["request_seconds_from"] = request_law_json(time);
  Json faults = Json::object();
  for (int k = 0; k < kFaultKinds; ++k)
    if (!std::isnan(time.fault_seconds[static_cast<std::size_t>(k)]))
      faults[std::string(to_string(static_cast<FaultKind>(k)))] = time.fault_seconds[static_cast<std::size_t>(k)];
  j["fault_seconds"] = std::move(faults);
  j["think_seconds"] = time.think_seconds;
  j["backoff"] = to_string(time.backoff);
  j["retry_after"] = time.retry_after;
  return j;
}

Json time_head_json(const Json& chain, const TimeModel& time, const Policy& policy) {
  Json j = chain;
  j["r"] = policy.r;
  j["n"] = policy.n;
  j["chain"] = std::string(to_string(time.scope));
  j["p"] = time.chain.bad_share();
  const Json fields = time_model_json(time);
  for (auto it = fields.begin(); it != fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

std::string seconds_quantiles_note(const TimeModel& time, const ExactResult& result) {
  if (result.seconds_complete) return "";
  if (!time.fixed_times())
    return fmt::format("{}: the wall-time distribution and its quantiles are not exact; relsim simulate estimates "
                       "them with intervals",
                       time.request_law.empty() ? "the waits are jittered (backoff jitter > 0)"
                                                : "the requests' seconds are drawn from recorded durations");
  return "the wall-time distribution is too large to compute exactly here (see --distribution-work): "
         "relsim simulate estimates its quantiles with intervals";
}

Json exact_time_json(const Json& chain, const TimeModel& time, const Policy& policy, const FaultWeights& kinds,
                     const ExactResult& result) {
  Json j = time_head_json(chain, time, policy);
  j["independent"] = result.fallback ? Json(nullptr) : independent_json(time.chain.bad_share(), policy, kinds);
  if (result.fallback) j["fallback"] = fallback_json(time.chain.bad_share(), *result.fallback);
  add_result_fields(j, policy, result);
  if (result.cost) add_cost_fields(j, result, kinds);
  j["mean_seconds"] = result.mean_seconds;
  j["mean_seconds_done"] = result.mean_seconds_done;  // NaN (no task done) is written as null by dump_json
  if (result.seconds_complete) {
    const Quantiles& q = result.seconds_quantiles;
    j["seconds_quantiles"] = Json{{"p50", q.p50}, {"p90", q.p90}, {"p99", q.p99}};
  } else {
    j["seconds_quantiles"] = nullptr;
    j["seconds_quantiles_note"] = seconds_quantiles_note(time, result);
  }
  j["seconds_complete"] = result.seconds_complete;
  Json bins = Json::array();
  for (const auto& bin : result.seconds)
    bins.push_back(Json{{"seconds", bin.seconds}, {"outcome", std::string(to_string(bin.outcome))},
                        {"probability", bin.probability}});
  j["seconds"] = std::move(bins);
  return j;
}

std::vector<std::pair<std::string, std::string>> model_rows(const Model& model, const std::string& scope_words) {
  const BurstShape shape = burst_shape(model);
  return {{"model", model.independent() ? fmt::format("independent, p = {}", model.p)
                                        : fmt::format("bursty, p = {}, q = {}, p0 = {:.6g}", model.p, model.q,
                                                      model.p0())},
          {"mean burst", burst_words(shape)},
          {"mean gap", gap_words(shape)},
          {"silent steps", fmt::format("b = {}, g = {}", model.b, model.g)},
          {"chain scope", scope_words}};
}

std::string exact_table(const Model& model, const Policy& policy, const FaultWeights& kinds, const ExactResult& result,
                        int max_rows) {
  std::string s;
  const Row row = [&](std::string_view name, const std::string& value) {
    s += fmt::format("  {:<22} {}\n", name, value);
  };
  s += fmt::format("relsim exact ({})\n", result.method);
  for (const auto& named : model_rows(model, std::string(to_string(model.chain)))) row(named.first, named.second);
  row("policy", describe(policy));
  if (result.fallback) row("fallback", fallback_words(model.p, *result.fallback));
  result_rows(row, result);
  if (!result.fallback) {
    independent_row(row, model.p, policy, kinds);
  } else if (const auto f = independent_fallback_success(model, policy, kinds, *result.fallback)) {
    row("independent formula", fmt::format("{:.12g}  (1 - p^K p2^(r+1-K))^n", *f));
  }
  outcome_rows(row, result);
  requests_rows(s, result, max_rows);
  return s;
}

std::string exact_time_table(const std::string& chain, const TimeModel& time, const Policy& policy,
                             const FaultWeights& kinds, const ExactResult& result, int max_rows) {
  std::string s;
  const Row row = [&](std::string_view name, const std::string& value) {
    s += fmt::format("  {:<22} {}\n", name, value);
  };
  s += fmt::format("relsim exact ({}, time in seconds)\n", result.method);
  row("chain", chain);
  row("chain scope", std::string(to_string(time.scope)));
  for (const auto& named : time_model_rows(time)) row(named.first, named.second);
  row("policy", describe(policy));
  if (result.fallback) row("fallback", fallback_words(time.chain.bad_share(), *result.fallback));
  result_rows(row, result);
  if (!result.fallback) independent_row(row, time.chain.bad_share(), policy, kinds);
  outcome_rows(row, result);
  row("mean seconds, all", fmt::format("{:.12g}  (every task, first request's start to last request's end)",
                                       result.mean_seconds));
  row("mean seconds, done", std::isnan(result.mean_seconds_done)
                                ? std::string("none (no task ends done)")
                                : fmt::format("{:.12g}  (the tasks that end done)", result.mean_seconds_done));
  if (result.seconds_complete) {
    const Quantiles& q = result.seconds_quantiles;
    row("seconds p50, p90, p99", fmt::format("{:.12g}, {:.12g}, {:.12g}", q.p50, q.p90, q.p99));
  } else {
    row("seconds p50, p90, p99", time.fixed_times()           ? "not computed (too large here): relsim simulate estimates them"
                                 : time.request_law.empty() ? "no exact value (jittered waits): relsim simulate estimates them"
                                                            : "no exact value (drawn durations): relsim simulate estimates them");
  }
  requests_rows(s, result, max_rows);
  if (!result.seconds_complete) return s;
  s += "  seconds        outcome        probability\n";
  int shown = 0;
  for (const auto& bin : result.seconds) {
    if (shown++ == max_rows) {
      s += fmt::format("  ... {} more bins (use --json or --seconds-csv for all)\n",
                       result.seconds.size() - static_cast<std::size_t>(max_rows));
      break;
    }
    s += fmt::format("  {:>13}  {:<13}  {:.12g}\n", fmt::format("{}", bin.seconds), to_string(bin.outcome),
                     bin.probability);
  }
  return s;
}

std::string requests_csv(const ExactResult& result) {
  std::string s = "requests,outcome,probability\n";
  for (const auto& bin : result.requests)
    s += fmt::format("{},{},{:.17g}\n", bin.requests, to_string(bin.outcome), bin.probability);
  return s;
}

std::string seconds_csv(const ExactResult& result) {
  std::string s = "seconds,outcome,probability\n";
  for (const auto& bin : result.seconds)
    s += fmt::format("{},{},{:.17g}\n", bin.seconds, to_string(bin.outcome), bin.probability);
  return s;
}

}  // namespace relsim
