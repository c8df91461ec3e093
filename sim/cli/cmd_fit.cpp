// relsim fit: from request logs to p and q, with intervals, tests and
// predictions (docs/fit.md).
#include <iostream>
#include <unordered_map>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/fit/baum_welch.hpp"
#include "relsim/fit/call_likelihood.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/hidden.hpp"
#include "relsim/fit/predict.hpp"
#include "relsim/fit/records.hpp"
#include "relsim/fit/seconds.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/read_logs.hpp"
#include "relsim/fit/fit_report.hpp"

namespace relsim::cli {
namespace {

// --hidden auto tries 1 .. this many states and keeps the best BIC.
constexpr int kAutoHiddenStates = 4;

struct FitArgs {
  std::vector<std::string> files;
  std::string format = "auto";
  bool json = false;
  std::vector<std::string> predict;
  std::string hidden;
  std::uint64_t seed = 1;
  int restarts = 8;
  int sdk_retries = 0;
};

// The tasks' good/bad sequences, kept only for --hidden (Baum-Welch needs
// them whole; the counts alone do not).
struct Sequences {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::vector<std::uint8_t>> tasks;
  void add(const fit::Record& r) {
    const auto [it, fresh] = index.try_emplace(r.task, tasks.size());
    if (fresh) tasks.emplace_back();
    tasks[it->second].push_back(r.bad ? 1 : 0);
  }
};

int hidden_states(const std::string& word) {
  if (word == "auto") return 0;
  const long long k = parse_integer(word, "--hidden");
  if (k < 1 || k > fit::kMaxHiddenStates)
    throw InputError(fmt::format("--hidden = {} is out of range: give auto or K in [1, {}]", k, fit::kMaxHiddenStates));
  return static_cast<int>(k);
}

// Every file into one counter (and the sequences and gaps, when asked).
fit::ReadStats read_all(const FitArgs& a, fit::ChainCounter& counter, Sequences* sequences,
                        fit::GapCollector* gaps = nullptr) {
  return read_logs(a.files, a.format, [&](const fit::Record& r, const std::string& path) {
    counter.add(r, path);
    if (sequences) sequences->add(r);
    if (gaps) gaps->add(r);
  });
}

// OTLP chat spans without HTTP children or attempt counts: the SDK's retries
// are hidden, so say how to fit them. True when the note was added.
bool suggest_sdk_retries(fit::ReadStats& read) {
  for (const std::string& note : read.notes)
    if (note.find("per-call outcomes only") != std::string::npos) {
      read.notes.push_back("each record is one model call: give --sdk-retries S (the SDK's max retries) to fit by "
                           "the exact likelihood of per-call outcomes (docs/fit.md)");
      return true;
    }
  return false;
}

// The fit under the SDK's default retries, for the verdict of a log that can
// hide them: a second read, keeping each task's sequence.
fit::ChainFit fit_with_sdk_default(const FitArgs& a) {
  fit::ChainCounter counter;
  Sequences sequences;
  read_all(a, counter, &sequences);
  return fit::estimate_calls(fit::distinct_sequences(sequences.tasks), fit::kSdkDefaultRetries, counter.counts());
}

int run_fit(const FitArgs& a) {
  std::vector<fit::PredictSpec> specs;
  for (const std::string& s : a.predict) specs.push_back(fit::parse_predict(s));
  const int states = a.hidden.empty() ? -1 : hidden_states(a.hidden);
  const bool per_call = a.sdk_retries > 0;
  fit::ChainCounter counter;
  Sequences sequences;
  fit::FitReport report;
  report.files = a.files;
  report.sdk_retries = a.sdk_retries;
  fit::GapCollector gaps;
  report.read = read_all(a, counter, states >= 0 || per_call ? &sequences : nullptr, &gaps);
  // Fitted in seconds when any record has its own start time, and each
  // record is a request (with --sdk-retries it is a call's outcome).
  if (!per_call && gaps.data().count() + gaps.data().first[0] + gaps.data().first[1] > 0) {
    report.gaps = &gaps.data();
    report.seconds = fit::fit_seconds(gaps.data());
  }
  if (!per_call && suggest_sdk_retries(report.read)) report.if_sdk_default = fit_with_sdk_default(a);
  fit::Sequences calls;
  if (per_call) {
    calls = fit::distinct_sequences(sequences.tasks);
    sequences = Sequences{};  // the distinct ones are all the fit needs
  }
  const fit::ChainFit chain =
      per_call ? fit::estimate_calls(calls, a.sdk_retries, counter.counts()) : fit::estimate(counter.counts());
  report.counts = &counter.counts();
  report.fit = &chain;
  if (per_call && !specs.empty()) {
    const fit::PredictRegion region = fit::call_region(calls, a.sdk_retries, chain);
    for (const fit::PredictSpec& s : specs) report.predictions.push_back(fit::predict(region, chain, s));
  }
  if (!per_call)
    for (const fit::PredictSpec& s : specs) report.predictions.push_back(fit::predict(counter.counts(), chain, s));
  if (states == 0) report.hidden = fit::fit_hidden_auto(sequences.tasks, kAutoHiddenStates, a.seed, a.restarts);
  else if (states > 0) report.hidden = fit::fit_hidden(sequences.tasks, states, a.seed, a.restarts);
  // Everything is computed before anything is printed: bad input leaves stdout empty.
  out() << (a.json ? dump_json(fit_json(report)) + "\n" : fit_text(report));
  return 0;
}

}  // namespace

Runner add_fit(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  auto* cmd = app.add_subcommand(
      "fit",
      "estimate p and q from request logs (relsim logs, plans and proxy recordings, CSV/JSON Lines, OTLP/JSON,\n"
      "  LiteLLM), with 95% profile-likelihood intervals, tests of burstiness, and predictions for retry policies\n"
      "  (docs/fit.md)");
  cmd->add_option("FILE", args->files,
                  "request logs, read in order; tasks of different files are kept apart; a directory is relsim proxy "
                  "--record's recordings")
      ->required();
  cmd->add_option("--format", args->format, "auto, relsim, csv, otlp or litellm")->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_option("--predict", args->predict,
                  "predict success, outcomes and mean requests for a policy, e.g. policy=layered,s=2,r=3,n=10 "
                  "(repeatable; B=... for budgeted)");
  auto* hidden = cmd->add_option("--hidden", args->hidden, fmt::format("also fit a K-state hidden chain by Baum-Welch: K in "
                                                        "[1, {}], or auto (BIC over 1..{})",
                                                        fit::kMaxHiddenStates, kAutoHiddenStates));
  auto* sdk_retries = cmd->add_option("--sdk-retries", args->sdk_retries,
                  fmt::format("each record is one model call through an SDK that retries up to S times inside it "
                              "(S in [0, {}]; 0: each record is one request): fit by the exact likelihood of "
                              "per-call outcomes",
                              fit::kMaxSdkRetries))
      ->capture_default_str();
  add_seed_option(*cmd, args->seed, "seed of --hidden's random starts");
  auto* restarts =
      cmd->add_option("--restarts", args->restarts, "--hidden's random starts, the best kept")->capture_default_str();
  check_value<std::string>(hidden, [](const std::string& word) { hidden_states(word); });
  check_value<int>(sdk_retries, [hidden](int s) {
    if (s < 0 || s > fit::kMaxSdkRetries)
      throw InputError(
          fmt::format("--sdk-retries = {} is out of range: it must be in [0, {}]", s, fit::kMaxSdkRetries));
    if (s > 0 && hidden->count())
      throw InputError("--hidden fits request sequences and --sdk-retries per-call outcomes: give one of them");
  });
  check_value<int>(restarts, [](int k) {
    if (k < 1 || k > 1000) throw InputError(fmt::format("--restarts = {} is out of range: it must be in [1, 1000]", k));
  });
  return [args] { return run_fit(*args); };
}

}  // namespace relsim::cli
