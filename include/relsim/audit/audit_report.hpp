#pragma once
// Internal to the CLI: what `relsim audit` prints and writes (docs/audit.md):
// the summary a person reads first, the --json object, the per-task CSV.
#include <optional>
#include <string>

#include "relsim/core/json.hpp"
#include "relsim/core/thresholds.hpp"
#include "relsim/audit/audit.hpp"
#include "relsim/audit/wait_fit.hpp"

namespace relsim {

struct AuditReport {
  std::string plan_path, log_path;
  const Observations* obs = nullptr;
  const AuditResult* result = nullptr;
  std::optional<InferResult> infer;  // with --infer
  std::optional<WaitFit> waits;      // unless --no-wait-check
  // A fallback plan's audit: the K audited (AuditOptions::fallback_after)
  // and, with --infer, every K that explains the paths (infer_fallback).
  bool two_providers = false;
  std::optional<std::vector<int>> fallbacks;
};

// {"policy", "s", "r", "B"}: s null for simple, B null but for budgeted.
Json policy_json(const Policy& policy);

std::string audit_summary(const AuditReport& report);   // the human summary
std::string audit_per_task(const AuditReport& report);  // --per-task rows, after the summary
Json audit_json(const AuditReport& report);             // --json
// --json --per-task: "per_task", the --out CSV's rows as objects (hang a
// bool, checks and requests_per_call arrays).
Json audit_per_task_json(const AuditReport& report);
std::string audit_csv(const AuditReport& report);       // --out

// The metrics --require may name (thresholds.hpp) and their values in an
// audit: the observed success (done over the tasks audited), mismatches,
// requests_per_task sent, amplification (sent / what layered would send),
// hangs, crashes.
extern const std::vector<std::string> kAuditMetrics;
Measured audit_measured(const AuditReport& report);

}  // namespace relsim
