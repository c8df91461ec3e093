#pragma once
// relsim bughunt run's output (docs/bughunt.md): each run's verdict in the
// browser beside the oracle's, the counts, their Wilson intervals and the
// exact rates for the same parameters, as a table or JSON.
#include <cstdint>
#include <string>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/core/model.hpp"
#include "relsim/exact/triage.hpp"
#include "relsim/bughunt/bughunt_plan.hpp"

namespace relsim {

// One run as the tester in the browser concluded it.
struct BrowserVerdict {
  Verdict verdict = Verdict::pass;
  int loads = 0;
  Json evidence;  // what the tester saw on each load, as runs.mjs reports it
};

struct BughuntReport {
  Model model;
  Tester tester = Tester::careful;
  int reloads = 1;
  AppVersion version = AppVersion::healthy;
  PageFaultWeights kinds;
  std::uint64_t seed = 0;
  int workers = 1;
  std::vector<BughuntRun> plan;        // what each run's loads met, and the oracle's verdict
  std::vector<BrowserVerdict> browser; // the same runs in the browser
  TriageRates exact;
  double seconds = 0.0;  // the browser's wall time for all runs
};

// Runs whose verdict or load count differs from the oracle's.
std::int64_t mismatches(const BughuntReport& report);

Json bughunt_json(const BughuntReport& report);
std::string bughunt_table(const BughuntReport& report);

}  // namespace relsim
