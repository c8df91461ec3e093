#pragma once
// What `relsim fit` prints (docs/fit.md): the human report (what was read,
// estimates, tests, verdict, kinds, predictions) and the --json object; and
// the reader of that object's hidden chain, which --hidden-chain takes back.
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "relsim/core/json.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/hidden.hpp"
#include "relsim/fit/predict.hpp"
#include "relsim/fit/records.hpp"
#include "relsim/fit/seconds.hpp"

namespace relsim::fit {

struct FitReport {
  std::vector<std::string> files;
  fit::ReadStats read;  // merged over the files
  const fit::ChainCounts* counts = nullptr;
  const fit::ChainFit* fit = nullptr;
  std::vector<fit::Prediction> predictions;
  std::optional<fit::HiddenFit> hidden;
  int sdk_retries = 0;  // > 0: fitted by the exact likelihood of per-call outcomes
  // When each record may be one model call with the SDK's retries hidden
  // inside it and the log has nothing to reveal them ("per-call outcomes
  // only"): the estimate under --sdk-retries kSdkDefaultRetries, which the
  // verdict line shows beside the per-request one.
  std::optional<fit::ChainFit> if_sdk_default;
  // The fit in seconds, when any record has its own start time.
  const fit::GapData* gaps = nullptr;
  std::optional<fit::SecondsFit> seconds;
};

// [low, high], or null when not estimated (NaN low); an infinite end is
// written as null by dump_json.
Json interval_json(const fit::Interval& interval);

// "faults are bursty: q = 0.80 [0.77, 0.83] against p = 0.30, LR p < 1e-16"
std::string fit_verdict(const fit::ChainFit& fit);
std::string fit_text(const FitReport& report);
Json fit_json(const FitReport& report);

// A `relsim fit --hidden --json` output's hidden chain: step (k x k, one
// step per request) and bad (k), as fit_json writes them.
struct HiddenChainFile {
  Eigen::MatrixXd step;
  Eigen::VectorXd bad;
};
// Strict: throws InputError naming the file and the field for anything but
// such an object with k in [1, 64] and each bad in [0, 1].
HiddenChainFile read_hidden_chain(const std::string& path);

}  // namespace relsim::fit
