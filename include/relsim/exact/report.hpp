#pragma once
// The exact engine's results as `relsim exact` prints them: one JSON object
// (--json), a readable table, or the distributions as CSV (--csv,
// --seconds-csv).
#include <string>
#include <utility>
#include <vector>

#include "relsim/core/count_quantiles.hpp"
#include "relsim/core/json.hpp"
#include "relsim/core/thresholds.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim {

// The `relsim exact --json` object for one result: the model's fields, p0,
// independent, mean_burst_length and mean_gap (burst_shape in bursts.hpp),
// then the result's: success .. max_requests, mean_bad_requests and
// fault_share (null where not tracked), requests_quantiles
// (outcome_quantiles_json, or null with a requests_quantiles_note when the
// distribution was left out), policy, outcomes, wrong, method,
// distribution_complete, pruned_mass and the requests distribution.
// `kinds`: the fault kinds the result was computed with (independent_success).
Json exact_json(const Model& model, const Policy& policy, const FaultWeights& kinds, const ExactResult& result);

// A billing as given, with what one request of each drawn kind costs
// ("request_cost"): the "billing" field of exact and simulate.
// With a fallback, also the second provider's prices (price_in2, price_out2).
Json billing_json(const Billing& billing, const FaultWeights& kinds,
                  const std::optional<Fallback>& fallback = std::nullopt);

// The quantiles of requests per task, from the result's distribution (all
// nullopt when it was left out).
OutcomeQuantiles requests_quantiles(const ExactResult& result);

// The metrics --require may name (thresholds.hpp), and their values in a
// result; `time` for a time-mode result (its seconds), else nullptr.
extern const std::vector<std::string> kExactMetrics;
Measured exact_measured(const ExactResult& result, const TimeModel* time);

// The `relsim exact` table; at most `max_rows` rows of the distribution.
std::string exact_table(const Model& model, const Policy& policy, const FaultWeights& kinds, const ExactResult& result,
                        int max_rows = 40);

// Time mode (exact_time). `chain` names the chain as it was given (the mean
// sojourns, or a fitted chain's file), in JSON fields or in words; the
// object has time_head_json's fields, independent, the discrete object's
// result fields, and
// mean_seconds, seconds_quantiles ({p50, p90, p99}, or null with a
// seconds_quantiles_note saying why), seconds_complete and the seconds
// distribution.
Json exact_time_json(const Json& chain, const TimeModel& time, const Policy& policy, const FaultWeights& kinds,
                     const ExactResult& result);
std::string exact_time_table(const std::string& chain, const TimeModel& time, const Policy& policy,
                             const FaultWeights& kinds, const ExactResult& result, int max_rows = 40);

// The time options: request_seconds, fault_seconds ({KIND: seconds} for the
// kinds given), think_seconds, backoff (parse_backoff's syntax) and
// retry_after.
Json time_model_json(const TimeModel& time);
// The fields every time-mode JSON result of one policy starts with: `chain`
// (as given), r, n, chain (the scope), p (the chain's stationary P(bad)) and
// time_model_json's.
Json time_head_json(const Json& chain, const TimeModel& time, const Policy& policy);
// The time model in words, as (name, value) rows for tables: durations,
// backoff, retry-after and think time.
std::vector<std::pair<std::string, std::string>> time_model_rows(const TimeModel& time);
// The discrete model's rows (model, mean burst, mean gap, silent steps,
// chain scope), as relsim exact and relsim simulate print them; the scope in
// `scope_words`, which simulate extends with its lanes.
std::vector<std::pair<std::string, std::string>> model_rows(const Model& model, const std::string& scope_words);

// Why a time-mode result has no exact quantiles ("" when it has them).
std::string seconds_quantiles_note(const TimeModel& time, const ExactResult& result);

// The distributions as CSV, by outcome: requests,outcome,probability and
// seconds,outcome,probability (probabilities with 17 significant digits).
std::string requests_csv(const ExactResult& result);
std::string seconds_csv(const ExactResult& result);

}  // namespace relsim
