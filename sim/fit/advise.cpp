// relsim advise: the SDK's setting from a fitted log (fit/advise.hpp).
#include "relsim/fit/advise.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/model.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/time_model.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/exact/report.hpp"
#include "relsim/fit/fit_report.hpp"
#include "relsim/montecarlo/simulate_time.hpp"
#include "relsim/montecarlo/trace_time.hpp"

namespace relsim::fit {
namespace {

// Evaluates the layered policy at a point of the fit's region.
class Evaluator {
 public:
  Evaluator(const AdviseFit& fit, const AdviseSetup& setup) : fit_(fit), setup_(setup) {}

  Policy policy(int s, int r) const {
    Policy p;
    p.kind = PolicyKind::layered;
    p.n = setup_.n;
    p.s = s;
    p.r = r;
    return p;
  }

  TimeModel time_model(double t_good, double t_bad) const {
    TimeModel t;
    t.chain = two_state_time_chain(t_good, t_bad);
    t.request_seconds = setup_.request_seconds;
    t.think_seconds = setup_.think_seconds;
    t.backoff = Backoff::sdk();
    return t;
  }

  // (a, b): (p, q), or (t_good, t_bad) when timed. `priced`: with the cost
  // walk (the estimate's point alone; the scan and the band need success).
  ExactResult at(double a, double b, int s, int r, bool priced = false) const {
    ExactOptions options;
    options.kinds = fit_.kinds;
    options.distribution = false;
    if (priced) options.billing = setup_.billing;
    if (fit_.timed) return exact_time(time_model(a, b), policy(s, r), options);
    Model m;
    m.p = a;
    m.q = b;
    return exact_matrix(m, policy(s, r), options);
  }

  double success(int s, int r) const {
    const auto& [a, b] = fit_.region.front();
    return at(a, b, s, r).success;
  }

  AdvicePoint point(int s, int r) const {
    AdvicePoint pt;
    pt.max_retries = s;
    pt.stream_retries = r;
    const auto& [a, b] = fit_.region.front();
    const ExactResult e = at(a, b, s, r, true);
    pt.success = e.success;
    pt.requests_per_task = e.mean_requests;
    pt.success_band = {e.success, e.success};
    for (const auto& [x, y] : fit_.region) {
      const double v = at(x, y, s, r).success;
      pt.success_band = {std::min(pt.success_band.low, v), std::max(pt.success_band.high, v)};
    }
    pt.band_points = static_cast<int>(fit_.region.size());
    pt.meets_target = pt.success >= setup_.target;
    if (e.cost) {
      pt.cost_mean = e.cost->mean;
      pt.cost_mean_done = e.cost->mean_done;
      pt.cost_per_done = e.success > 0.0 ? e.cost->mean / e.success : fit::kNaN;
    }
    if (fit_.timed) {
      pt.mean_seconds = e.mean_seconds;
      seconds_of_tasks(a, b, s, r, pt);
    }
    return pt;
  }

 private:
  // Mean and p99 of the done tasks' wall time, and p99 of all, by Monte
  // Carlo (the exact engine's distribution needs fixed waits; the SDK jitters).
  void seconds_of_tasks(double t_good, double t_bad, int s, int r, AdvicePoint& pt) const {
    SimConfig config;
    config.tasks = setup_.tasks;
    config.seed = setup_.seed;
    config.kinds = fit_.kinds;
    const TimeModel time = time_model(t_good, t_bad);
    std::vector<double> done, all;
    for (std::int64_t task = 0; task < setup_.tasks; ++task) {  // one at a time: n x tasks requests never held
      const TimeTaskTrace t = trace_time_task(time, policy(s, r), config, task);
      all.push_back(t.seconds);
      if (t.outcome.outcome == Outcome::done) done.push_back(t.seconds);
    }
    // The smallest x with at least 99% of the tasks <= x, as simulate_time ranks it.
    const auto p99 = [](std::vector<double>& v) {
      std::sort(v.begin(), v.end());
      const std::int64_t rank = quantile_ranks(static_cast<std::int64_t>(v.size()), 99, 0.99).rank;
      return v[static_cast<std::size_t>(rank - 1)];
    };
    pt.p99_seconds = p99(all);
    if (!done.empty()) {
      double sum = 0;
      for (double x : done) sum += x;
      pt.mean_seconds_done = sum / static_cast<double>(done.size());
      pt.p99_seconds_done = p99(done);
    }
  }

  const AdviseFit& fit_;
  const AdviseSetup& setup_;
};

void check(const AdviseFit& fit, const AdviseSetup& s) {
  if (!(s.target > 0.0 && s.target < 1.0))
    throw InputError(fmt::format("--target = {} is out of range: it must be in (0, 1)", s.target));
  if (s.n < 1 || s.n > 1'000'000) throw InputError(fmt::format("--n = {} is out of range: it must be in [1, 1000000]", s.n));
  if (!(s.request_seconds >= 0.0 && s.request_seconds <= kMaxSeconds))
    throw InputError(fmt::format("--request-seconds = {} is out of range: it must be in [0, {}]", s.request_seconds,
                                 kMaxSeconds));
  if (!(s.think_seconds >= 0.0 && s.think_seconds <= kMaxSeconds))
    throw InputError(
        fmt::format("--think-seconds = {} is out of range: it must be in [0, {}]", s.think_seconds, kMaxSeconds));
  if (s.cap < 0 || s.cap > kMaxHttpRetries)
    throw InputError(fmt::format("advise: cap = {} is out of range: it must be in [0, {}]", s.cap, kMaxHttpRetries));
  if (s.bound < 0 || s.bound > s.cap)
    throw InputError(fmt::format("--bound = {} is out of range: it must be in [0, {}]", s.bound, s.cap));
  if (s.tasks < 1000 || s.tasks > 10'000'000)
    throw InputError(fmt::format("--tasks = {} is out of range: it must be in [1000, 10000000]", s.tasks));
  if (fit.region.empty()) throw InputError("advise: the fit gave no estimate");
}

std::string model_options(const Advice& a, const AdvicePoint& pt) {
  const AdviseFit& f = a.fit;
  std::string chain = f.timed ? fmt::format("--t-good {:.6g} --t-bad {:.6g} --request-seconds {:.6g}{} --backoff sdk",
                                            f.t_good, f.t_bad, a.setup.request_seconds,
                                            a.setup.think_seconds > 0
                                                ? fmt::format(" --think-seconds {:.6g}", a.setup.think_seconds)
                                                : std::string())
                              : fmt::format("--p {:.6g} --q {:.6g}", f.p, f.q);
  std::string prices;
  if (const std::optional<Billing>& b = a.setup.billing)
    prices = fmt::format(" --input-tokens {:.17g} --output-tokens {:.17g} --price-in {:.17g} --price-out {:.17g} "
                         "--break-at {}",
                         b->input_tokens, b->output_tokens, b->price_in, b->price_out, break_at_string(b->break_at));
  return fmt::format("{} --policy layered --s {} --r {} --n {}{}{}", chain, pt.max_retries, pt.stream_retries, a.setup.n,
                     f.kinds_option.empty() ? std::string() : " --kinds " + f.kinds_option, prices);
}

}  // namespace

Advice advise(const AdviseFit& fit, const AdviseSetup& setup) {
  check(fit, setup);
  Advice a;
  a.fit = fit;
  a.setup = setup;
  const Evaluator e(a.fit, a.setup);
  // The scan: success never falls as s grows (a retry only adds ways to
  // finish), so the first s that meets the target is the smallest.
  std::optional<int> meets;
  for (int s = 0; s <= setup.cap; ++s) {
    a.scan.emplace_back(s, e.success(s, 0));
    if (a.scan.back().second >= setup.target) {
      meets = s;
      break;
    }
  }
  if (meets && *meets <= setup.bound) {
    a.how = "sdk";
    a.answer = e.point(*meets, 0);
  } else {
    a.sdk_best = e.point(setup.bound, 0);
    for (int r = 1; r <= setup.r_cap; ++r)
      if (e.success(kSdkDefaultMaxRetries, r) >= setup.target) {
        a.agent_loop = e.point(kSdkDefaultMaxRetries, r);
        break;
      }
    if (meets) {
      a.how = "beyond_bound";
      a.answer = e.point(*meets, 0);
    } else if (a.agent_loop) {
      a.how = "agent_loop";
      a.answer = *a.agent_loop;
    } else {
      a.how = "none";
      a.answer = e.point(static_cast<int>(a.scan.back().first), 0);
    }
  }
  a.model = model_options(a, a.answer);
  for (const char* sdk : {"typescript", "python"})
    a.snippets[sdk] = sdk_snippet(sdk, a.answer.max_retries, a.answer.stream_retries);
  return a;
}

std::string sdk_snippet(const std::string& sdk, int max_retries, int stream_retries) {
  if (sdk == "typescript") {
    std::string out = fmt::format("import Anthropic from \"@anthropic-ai/sdk\";\n"
                                  "const client = new Anthropic({{ maxRetries: {} }});\n",
                                  max_retries);
    if (stream_retries > 0)
      out += fmt::format(
          "// The SDK retries only before the stream: retry a stream that broke, up to {} times.\n"
          "async function call(params) {{\n"
          "  for (let attempt = 0; ; attempt++) {{\n"
          "    const stream = client.messages.stream(params);\n"
          "    await stream.withResponse();  // errors here came before the stream: the SDK retried them\n"
          "    try {{\n"
          "      return await stream.finalMessage();\n"
          "    }} catch (err) {{\n"
          "      if (attempt >= {}) throw err;\n"
          "    }}\n"
          "  }}\n"
          "}}\n",
          stream_retries, stream_retries);
    return out;
  }
  std::string out = fmt::format("import anthropic\nclient = anthropic.Anthropic(max_retries={})\n", max_retries);
  if (stream_retries > 0)
    out += fmt::format(
        "# The SDK retries only before the stream: retry a stream that broke, up to {} times.\n"
        "def call(**params):\n"
        "    for attempt in range({}):\n"
        "        # errors on entering came before the stream: the SDK retried them\n"
        "        with client.messages.stream(**params) as stream:\n"
        "            try:\n"
        "                return stream.get_final_message()\n"
        "            except Exception:\n"
        "                if attempt == {}:\n"
        "                    raise\n",
        stream_retries, stream_retries + 1, stream_retries);
  return out;
}

namespace {

std::string seconds_or(double x) { return std::isnan(x) ? std::string("n/a") : fmt::format("{:.4g} s", x); }

std::string point_text(const AdvicePoint& pt, double target) {
  std::string out = fmt::format("  success       {:.6g}  95% band [{:.6g}, {:.6g}] over {} points of the fit's region; "
                                "target {} {}\n",
                                pt.success, pt.success_band.low, pt.success_band.high, pt.band_points, target,
                                pt.meets_target ? "met" : "missed");
  out += fmt::format("  requests/task {:.4g}\n", pt.requests_per_task);
  if (!std::isnan(pt.mean_seconds))
    out += fmt::format("  seconds       done tasks: mean {}, p99 {}; all tasks: mean {} (exact), p99 {}\n",
                       seconds_or(pt.mean_seconds_done), seconds_or(pt.p99_seconds_done), seconds_or(pt.mean_seconds),
                       seconds_or(pt.p99_seconds));
  if (!std::isnan(pt.cost_mean))
    out += fmt::format("  cost          ${:.6g} a task, ${:.6g} a done task; ${:.6g} spent per done task (the failed "
                       "tasks' spend included)\n",
                       pt.cost_mean, pt.cost_mean_done, pt.cost_per_done);
  return out;
}

Json point_json(const AdvicePoint& pt) {
  Json j{{"max_retries", pt.max_retries},
          {"stream_retries", pt.stream_retries},
          {"success", pt.success},
          {"success_band", {pt.success_band.low, pt.success_band.high}},
          {"band_points", pt.band_points},
          {"meets_target", pt.meets_target},
          {"requests_per_task", pt.requests_per_task},
          {"mean_seconds", pt.mean_seconds},  // NaN (untimed) is written as null by dump_json
          {"mean_seconds_done", pt.mean_seconds_done},
          {"p99_seconds_done", pt.p99_seconds_done},
          {"p99_seconds", pt.p99_seconds}};
  if (!std::isnan(pt.cost_mean)) {
    j["cost_mean"] = pt.cost_mean;
    j["cost_mean_done"] = pt.cost_mean_done;  // NaN (no task done) is written as null
    j["cost_per_done"] = pt.cost_per_done;
  }
  return j;
}

// The scan in one line: every value when short, else its head and tail;
// a flat scan said in words.
std::string scan_text(const std::vector<std::pair<int, double>>& scan) {
  constexpr std::size_t kAll = 24, kHead = 12, kTail = 6;
  if (scan.size() > 1 && scan.back().second - scan.front().second < 1e-12)
    return fmt::format("  success {:.4g} at every maxRetries from 0 to {}: no fault in this log is one the SDK "
                       "retries (it retries only before the stream)\n",
                       scan.front().second, scan.back().first);
  std::string out = "  maxRetries:success";
  for (std::size_t i = 0; i < scan.size(); ++i) {
    if (scan.size() > kAll && i == kHead) out += " ...";
    if (scan.size() > kAll && i >= kHead && i + kTail < scan.size()) continue;
    out += fmt::format(" {}:{:.4g}", scan[i].first, scan[i].second);
  }
  return out + "\n";
}

std::string interval_text(const fit::Interval& i) {
  return fmt::format("[{:.4g}, {}]", i.low, std::isinf(i.high) ? std::string("inf") : fmt::format("{:.4g}", i.high));
}

}  // namespace

std::string advice_text(const Advice& a, const std::vector<std::string>& sdks) {
  const AdviseFit& f = a.fit;
  std::string out = fmt::format("fit: p = {:.4g} {}, q = {:.4g} {}\n", f.p, interval_text(f.p_ci), f.q,
                                interval_text(f.q_ci));
  if (f.timed)
    out += fmt::format("     t_good = {:.4g} s {}, t_bad = {:.4g} s {} (from the requests' start times)\n", f.t_good,
                       interval_text(f.t_good_ci), f.t_bad, interval_text(f.t_bad_ci));
  else
    out += "     " + f.untimed_why +
           ": answered in requests alone (the SDK's backoff does not change success in the discrete model); no "
           "seconds\n";
  for (const std::string& note : f.notes) out += "note: " + note + "\n";
  out += fmt::format("\nsearch: the official SDK's own loop (layered policy, r = 0, backoff sdk), maxRetries 0 to {}, "
                     "n = {} calls, target {}\n",
                     a.scan.back().first, a.setup.n, a.setup.target);
  out += scan_text(a.scan);
  if (a.how == "sdk") {
    out += fmt::format("\nadvice: maxRetries = {} (the SDK's own backoff) meets the target\n", a.answer.max_retries);
  } else {
    out += fmt::format("\nthe SDK alone, at the usual bound maxRetries = {}: misses the target\n", a.setup.bound);
    out += point_text(*a.sdk_best, a.setup.target);
    if (a.how == "beyond_bound")
      out += fmt::format("\nadvice: maxRetries = {} meets the target, beyond {}: each outage costs up to {} requests "
                         "per call\n",
                         a.answer.max_retries, a.setup.bound, a.answer.max_retries + 1);
    else if (a.how == "agent_loop")
      out += fmt::format("\nadvice: no maxRetries up to {} meets the target (faults inside the stream, which the SDK "
                         "never retries); retry a broken stream in the agent loop: maxRetries = {} and {} stream "
                         "retries\n",
                         a.setup.cap, a.answer.max_retries, a.answer.stream_retries);
    else
      out += fmt::format("\nadvice: nothing searched meets the target (maxRetries up to {}, stream retries up to {}); "
                         "the best the SDK does, at maxRetries = {}:\n",
                         a.setup.cap, a.setup.r_cap, a.answer.max_retries);
    if (a.agent_loop && a.how == "beyond_bound")
      out += fmt::format("  or: maxRetries = {} and {} stream retries in the agent loop (success {:.6g})\n",
                         a.agent_loop->max_retries, a.agent_loop->stream_retries, a.agent_loop->success);
  }
  out += point_text(a.answer, a.setup.target);
  out += "  relsim exact " + a.model + "\n";
  for (const std::string& sdk : sdks) {
    out += fmt::format("\n{}:\n", sdk);
    const std::string& code = a.snippets.at(sdk);
    std::size_t start = 0;
    while (start < code.size()) {
      const std::size_t end = code.find('\n', start);
      out += "  " + code.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  return out;
}

Json advice_json(const Advice& a, const std::vector<std::string>& sdks) {
  const AdviseFit& f = a.fit;
  Json j = point_json(a.answer);
  j["p"] = f.p;
  j["q"] = f.q;
  j["p_ci"] = interval_json(f.p_ci);
  j["q_ci"] = interval_json(f.q_ci);
  j["timed"] = f.timed;
  j["t_good"] = f.t_good;  // NaN when untimed: null
  j["t_bad"] = f.t_bad;
  j["t_good_ci"] = interval_json(f.t_good_ci);
  j["t_bad_ci"] = interval_json(f.t_bad_ci);
  j["kinds"] = f.kinds_option;
  j["model"] = a.model;
  j["how"] = a.how;
  j["target"] = a.setup.target;
  j["n"] = a.setup.n;
  j["bound"] = a.setup.bound;
  j["sdk_best"] = a.sdk_best ? point_json(*a.sdk_best) : Json(nullptr);
  j["agent_loop"] = a.agent_loop ? point_json(*a.agent_loop) : Json(nullptr);
  j["scan"] = Json::array();
  for (const auto& [s, v] : a.scan) j["scan"].push_back({{"max_retries", s}, {"success", v}});
  j["snippets"] = Json::object();
  for (const std::string& sdk : sdks) j["snippets"][sdk] = a.snippets.at(sdk);
  j["notes"] = f.notes;
  if (a.setup.billing) j["billing"] = billing_json(*a.setup.billing, f.kinds);
  return j;
}

}  // namespace relsim::fit
