#pragma once
// Internal to the CLI: what `relsim fit` prints (docs/fit.md): the human
// report (what was read, estimates, tests, verdict, kinds, predictions) and
// the --json object.
#include <optional>
#include <string>
#include <vector>

#include "relsim/core/json.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/hidden.hpp"
#include "relsim/fit/predict.hpp"
#include "relsim/fit/records.hpp"

namespace relsim::cli {

struct FitReport {
  std::vector<std::string> files;
  fit::ReadStats read;  // merged over the files
  const fit::ChainCounts* counts = nullptr;
  const fit::ChainFit* fit = nullptr;
  std::vector<fit::Prediction> predictions;
  std::optional<fit::HiddenFit> hidden;
  int sdk_retries = 0;  // > 0: fitted by the exact likelihood of per-call outcomes
};

// "faults are bursty: q = 0.80 [0.77, 0.83] against p = 0.30, LR p < 1e-16"
std::string fit_verdict(const fit::ChainFit& fit);
std::string fit_text(const FitReport& report);
Json fit_json(const FitReport& report);

}  // namespace relsim::cli
