#pragma once
// What relsim oracle prints of a plan's predictions (oracle.hpp): one JSON
// object (--json) or a summary, each optionally with every task's line.
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/live/oracle.hpp"

namespace relsim {

struct OracleReport {
  std::string plan_path;     // the plan file; empty for a scripted plan
  std::string fault, times;  // a scripted plan: as given (--fault, --times)
  const Plan* plan = nullptr;
  Policy policy;
  const OracleResult* result = nullptr;
  bool per_task = false;  // list every task (--per-task)
};

// {"plan" (the file, or "scripted" with "fault" and "times" from the plan's
// header), "policy", "n", "r", "s", "B", "tasks", "successes", "outcomes",
// "requests", "faults", "wrong"}; a time-mode plan adds "chain", "time",
// "total_microseconds" and "mean_seconds"; --per-task adds "per_task".
Json oracle_json(const OracleReport& report);

// The summary: the plan and policy, the counts, a time-mode plan's mean wall
// time, the tasks by outcome other than done, and with per_task every task.
std::string oracle_text(const OracleReport& report);

}  // namespace relsim
