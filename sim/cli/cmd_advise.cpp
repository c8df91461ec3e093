// relsim advise: from request logs to the SDK setting that meets a target
// (docs/advise.md; fit/advise.hpp).
#include <iostream>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/thresholds.hpp"
#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/predict.hpp"
#include "relsim/fit/seconds.hpp"
#include "relsim/fit/advise.hpp"
#include "cli/commands.hpp"
#include "relsim/options/option_rules.hpp"
#include "cli/read_logs.hpp"
#include "cli/require_option.hpp"

namespace relsim::cli {
namespace {

struct AdviseArgs {
  std::vector<std::string> files;
  std::string format = "auto";
  fit::AdviseSetup setup;
  std::string sdk = "both";
  bool json = false;
  std::string require;
  BillingArgs billing;
};

const std::vector<std::string> kAdviseMetrics = {"success",          "success_low",       "requests_per_task",
                                                 "max_retries",      "mean_seconds",      "mean_seconds_done",
                                                 "p99_seconds_done", "p99_seconds",  "cost_mean",
                                                 "cost_per_done"};

// The kinds of the log's faults as the model takes them: relsim's kinds as
// counted; the SDK's hidden retries (read_otlp's sdk_retry: failed before
// the stream, status unknown) as http_529; any other word left out.
void set_kinds(const fit::KindMix& mix, fit::AdviseFit& f) {
  // fit's own split (kind_mix): relsim's kinds in kinds_option, the rest in other.
  FaultWeights weights = mix.kinds_option.empty() ? FaultWeights{} : parse_fault_weights(mix.kinds_option);
  std::vector<std::string> other;
  std::int64_t hidden = 0;
  for (const std::string& kind : mix.other) {
    const std::int64_t n = mix.counts.at(kind);
    if (kind == "sdk_retry") hidden = n;
    else other.push_back(fmt::format("{} ({})", kind, n));
  }
  weights.weight[static_cast<std::size_t>(FaultKind::http_529)] += static_cast<double>(hidden);
  if (hidden > 0)
    f.notes.push_back(fmt::format("{} hidden SDK retries (failed before the stream, status unknown) taken as http_529",
                                  hidden));
  if (!other.empty())
    f.notes.push_back(fmt::format("faults of kinds relsim does not model left out of the kind mix: {}",
                                  fmt::join(other, ", ")));
  if (weights.total() > 0.0) {
    f.kinds = weights;
    f.kinds_option = to_string(weights);
  } else {
    f.notes.push_back("no fault of a kind relsim models: the default kinds (in-stream, uniform)");
  }
}

fit::AdviseFit fit_logs(const AdviseArgs& a) {
  fit::ChainCounter counter;
  fit::GapCollector gaps;
  const fit::ReadStats read = read_logs(a.files, a.format, [&](const fit::Record& r, const std::string& path) {
    counter.add(r, path);
    gaps.add(r);
  });
  const fit::ChainFit chain = fit::estimate(counter.counts());
  fit::AdviseFit f;
  const Model at = fit::fitted_model(chain);
  f.p = at.p;
  f.q = at.q;
  f.p_ci = chain.p_ci;
  f.q_ci = chain.q_ci;
  bool per_call = false;
  for (const std::string& note : read.notes)
    per_call |= note.find("per-call outcomes only") != std::string::npos;
  if (per_call)
    f.notes.push_back("each record may be one model call with the SDK's retries hidden inside it: the fit counts "
                      "calls, not requests, and has no fit in seconds (docs/fit.md)");
  set_kinds(chain.kinds, f);
  if (per_call) {
    f.untimed_why = "each record is a model call, not a request";
  } else if (gaps.data().count() > 0) {
    const fit::SecondsFit s = fit::fit_seconds(gaps.data());
    if (s.identified) {
      f.timed = true;
      f.t_good = s.t_good, f.t_bad = s.t_bad, f.t_good_ci = s.t_good_ci, f.t_bad_ci = s.t_bad_ci;
      f.region = fit::seconds_region(gaps.data(), s);
      return f;
    }
    f.untimed_why = "the fit in seconds is not identified: " + s.note;
  }
  f.region = fit::chain_region(counter.counts(), chain);
  return f;
}

std::vector<std::string> sdks_of(const std::string& word) {
  if (word == "both") return {"typescript", "python"};
  return {word};
}

Measured advise_measured(const fit::Advice& a) {
  Measured m;
  const fit::AdvicePoint& pt = a.answer;
  m.values["success"] = pt.success;
  m.values["success_low"] = pt.success_band.low;
  m.values["requests_per_task"] = pt.requests_per_task;
  m.values["max_retries"] = pt.max_retries;
  const std::pair<const char*, double> seconds[] = {{"mean_seconds", pt.mean_seconds},
                                                    {"mean_seconds_done", pt.mean_seconds_done},
                                                    {"p99_seconds_done", pt.p99_seconds_done},
                                                    {"p99_seconds", pt.p99_seconds}};
  for (const auto& [name, value] : seconds) {
    if (!a.fit.timed) m.missing[name] = "no seconds here: " + a.fit.untimed_why;
    else if (std::isnan(value)) m.missing[name] = "no task of the Monte Carlo run was done";
    else m.values[name] = value;
  }
  for (const auto& [name, value] : {std::pair{"cost_mean", pt.cost_mean}, std::pair{"cost_per_done", pt.cost_per_done}}) {
    if (!a.setup.billing) m.missing[name] = "no cost without prices: give --price-in and the other billing options";
    else if (std::isnan(value)) m.missing[name] = "no task ends done";
    else m.values[name] = value;
  }
  return m;
}

int run_advise(const AdviseArgs& a) {
  fit::AdviseSetup setup = a.setup;
  setup.billing = a.billing.parsed();
  const fit::Advice advice = fit::advise(fit_logs(a), setup);
  const std::vector<std::string> sdks = sdks_of(a.sdk);
  out() << (a.json ? dump_json(fit::advice_json(advice, sdks)) + "\n" : fit::advice_text(advice, sdks));
  return require_verdict(a.require, kAdviseMetrics, advise_measured(advice));
}

}  // namespace

Runner add_advise(CLI::App& app) {
  auto args = std::make_shared<AdviseArgs>();
  auto* cmd = app.add_subcommand("advise", "fit a log, then the SDK's maxRetries that meets a target (docs/advise.md)");
  cmd->add_option("FILE", args->files, "request logs, as relsim fit reads them")->required();
  cmd->add_option("--format", args->format, "auto, relsim, csv, otlp or litellm")->capture_default_str();
  auto* target = cmd->add_option("--target", args->setup.target, "the success a task must reach, in (0, 1)")->required();
  auto* n = cmd->add_option("--n", args->setup.n, "model calls per task, in [1, 1000000]")->required();
  auto* request = cmd->add_option("--request-seconds", args->setup.request_seconds,
                                  "how long a model call takes, in seconds (with timestamps)")
                      ->capture_default_str();
  auto* think = cmd->add_option("--think-seconds", args->setup.think_seconds,
                                "the agent's time between model calls, in seconds (with timestamps)")
                    ->capture_default_str();
  auto* sdk =
      cmd->add_option("--sdk", args->sdk, "the snippets to print: typescript, python or both")->capture_default_str();
  auto* bound = cmd->add_option("--bound", args->setup.bound,
                                fmt::format("the most maxRetries advised as usual, in [0, {}]; beyond it advise says "
                                            "so and offers stream retries in the agent loop",
                                            args->setup.cap))
                    ->capture_default_str();
  auto* tasks = cmd->add_option("--tasks", args->setup.tasks,
                                "Monte Carlo tasks for the seconds of done tasks, in [1000, 10000000]")
                    ->capture_default_str();
  add_seed_option(*cmd, args->setup.seed, "seed of the Monte Carlo run for seconds");
  add_billing_options(*cmd, args->billing);
  cmd->add_flag("--json", args->json, "print one JSON object");
  add_require_option(*cmd, args->require, kAdviseMetrics);
  check_value<std::string>(sdk, [](const std::string& word) {
    if (word != "typescript" && word != "python" && word != "both")
      throw InputError(fmt::format("--sdk = '{}' is not valid: use typescript, python or both", word));
  });
  check_value<double>(target, [](double t) {
    if (!(t > 0.0 && t < 1.0)) throw InputError(fmt::format("--target = {} is out of range: it must be in (0, 1)", t));
  });
  check_value<long long>(n, [](long long v) {
    if (v < 1 || v > 1'000'000) throw InputError(fmt::format("--n = {} is out of range: it must be in [1, 1000000]", v));
  });
  for (auto* o : {request, think})
    check_value<double>(o, [name = o->get_name()](double s) {
      if (!(s >= 0.0 && s <= kMaxSeconds))
        throw InputError(fmt::format("{} = {} is out of range: it must be in [0, {}]", name, s, kMaxSeconds));
    });
  check_value<int>(bound, [cap = args->setup.cap](int b) {
    if (b < 0 || b > cap) throw InputError(fmt::format("--bound = {} is out of range: it must be in [0, {}]", b, cap));
  });
  check_value<long long>(tasks, [](long long t) {
    if (t < 1000 || t > 10'000'000)
      throw InputError(fmt::format("--tasks = {} is out of range: it must be in [1000, 10000000]", t));
  });
  return [args] { return run_advise(*args); };
}

}  // namespace relsim::cli
