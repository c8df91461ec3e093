#pragma once
// relsim tune's results as it prints them: a table, the front as CSV
// (--csv), or one JSON object (--json).
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/sweep/tune.hpp"

namespace relsim {

// The CSV header of the front, fixed: one row per front member, best first
// (cost_mean empty without prices).
inline constexpr const char* kTuneCsvHeader =
    "rank,policy,s,r,B,backoff,success,mean_requests,mean_seconds,mean_seconds_done,p99_seconds,p99_method,p99_low,"
    "p99_high,max_requests,cost_mean";

// One schedule's fields: policy, s, r, B (null unless budgeted), backoff
// (parse_backoff's syntax), success, mean_requests, mean_seconds,
// p99_seconds (null when unknown), p99_exact, p99_method, p99_interval
// ([low, high] for a simulated p99, else null), max_requests, meets_target.
Json tune_point_json(const TunePoint& point);

// {"target", "objective", "n", "chain" (as given), "kinds", "time" (the
// time model's fields but the backoff), "space", "evaluated",
// "meeting_target", "s_matters", "r_matters", "dimensions", "p99_note",
// "front": [points], "best": point or null, "anchors": [{"name",
// "description", point fields, "on_front", "dominated_by" (front index or
// null)}]}.
Json tune_json(const TuneResult& result, const TuneSpace& space, const TuneConfig& config, const Json& chain);

std::string tune_csv(const TuneResult& result);

// The readable report; `chain` names the chain in words.
std::string tune_table(const TuneResult& result, const TuneConfig& config, const std::string& chain);

// Why p99 is missing for some schedules, one sentence.
std::string tune_p99_note();

}  // namespace relsim
