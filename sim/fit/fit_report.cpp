// relsim fit's output (fit_report.hpp).
#include "relsim/fit/fit_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/files.hpp"
#include "relsim/fit/call_likelihood.hpp"

namespace relsim::fit {
namespace {

std::string pvalue(double p) {
  if (std::isnan(p)) return "n/a";
  if (p < 1e-16) return "< 1e-16";
  return fmt::format("= {:.3g}", p);
}

std::string interval(const fit::Interval& i) { return fmt::format("[{:.4g}, {:.4g}]", i.low, i.high); }

std::string read_text(const FitReport& r) {
  std::string out = fmt::format("read: {} ({} file{}, format {}): {} records, {} tasks\n",
                                r.files.size() == 1 ? r.files.front() : fmt::format("{} files", r.files.size()),
                                r.files.size(), r.files.size() == 1 ? "" : "s", r.read.format, r.counts->records,
                                r.counts->tasks);
  out += fmt::format("faults: {}", r.counts->bad());
  std::string sep = " (";
  for (const auto& [kind, n] : r.counts->kinds) out += fmt::format("{}{} {}", sep, kind, n), sep = ", ";
  out += r.counts->kinds.empty() ? "\n" : ")\n";
  std::int64_t skipped = 0;
  for (const auto& [why, n] : r.read.skipped) skipped += n;
  out += fmt::format("skipped: {} rows", skipped);
  sep = " (";
  for (const auto& [why, n] : r.read.skipped) out += fmt::format("{}{}: {}", sep, why, n), sep = "; ";
  out += r.read.skipped.empty() ? "\n" : ")\n";
  for (const std::string& note : r.read.notes) out += "note: " + note + "\n";
  return out;
}

// `verdict_tail`: what the verdict line says after the verdict itself.
std::string estimates_text(const fit::ChainFit& f, int sdk_retries, const std::string& verdict_tail) {
  std::string out = "\nestimates (maximum likelihood, 95% profile-likelihood intervals):\n";
  if (sdk_retries > 0)
    out += fmt::format("  fitted by the exact likelihood of per-call outcomes with {} hidden SDK retries per call "
                       "(transfer-matrix forward pass)\n",
                       sdk_retries);
  out += fmt::format("  p  = {:.4g} {}  long-run fraction of bad requests\n", f.p, interval(f.p_ci));
  if (f.q_identified) {
    out += fmt::format("  q  = {:.4g} {}  P(bad | previous bad); mean burst 1/(1-q) = {:.3g} requests\n", f.q,
                       interval(f.q_ci), 1.0 / (1.0 - f.q));
    out += fmt::format("  p0 = {:.4g}  P(bad | previous good) = p(1-q)/(1-p)\n", f.p0);
  } else {
    out += "  q  = not identified\n";
  }
  if (!f.note.empty()) out += "note: " + f.note + "\n";
  const auto test = [](const char* name, const char* stat, const fit::Test& t) {
    if (std::isnan(t.p_value)) return fmt::format("  {}: not run ({})\n", name, t.why_not);
    return fmt::format("  {}: {} = {:.4g}, df {}, p {}\n", name, stat, t.statistic, t.df, pvalue(t.p_value));
  };
  out += "\ntests:\n";
  out += test("independent (q = p) against bursty", "LR", f.independence);
  out += test("order 1 against order 2          ", "LR", f.order2);
  out += test("run lengths against geometric    ", "chi2", f.runs);
  out += "verdict: " + fit_verdict(f) + verdict_tail + "\n";
  return out;
}

std::string seconds_interval(const fit::Interval& i) {
  return fmt::format("[{:.4g}, {}]", i.low, std::isinf(i.high) ? std::string("inf") : fmt::format("{:.4g}", i.high));
}

std::string seconds_text(const fit::SecondsFit& f, const fit::GapData& d) {
  std::string out = fmt::format("\nseconds (the two-state chain of time mode, docs/time.md; from {} gaps between the "
                                "starts of a task's requests):\n",
                                f.gaps);
  if (f.identified) {
    out += fmt::format("  t_good = {:.4g} s {}  mean good period\n", f.t_good, seconds_interval(f.t_good_ci));
    out += fmt::format("  t_bad  = {:.4g} s {}  mean outage; p = t_bad/(t_good+t_bad) = {:.4g}\n", f.t_bad,
                       seconds_interval(f.t_bad_ci), f.p);
    out += std::isnan(f.check.p_value)
               ? fmt::format("  check: not run ({})\n", f.check.why_not)
               : fmt::format("  check: bad requests seen against expected, by gap: chi2 = {:.4g}, df {}, p {}\n",
                             f.check.statistic, f.check.df, pvalue(f.check.p_value));
    out += "  " + fit::seconds_options(f) + "\n";
    if (!f.note.empty()) out += "note: " + f.note + "\n";
  } else {
    out += "  not identified: " + f.note + "\n";
  }
  if (d.untimed > 0)
    out += fmt::format("note: {} records have no start of their own (a request index, or the SDK's hidden retries "
                       "and the attempt after them): left out of the fit in seconds\n",
                       d.untimed);
  if (d.same_start > 0)
    out += fmt::format("note: {} records start at the same time as their task's previous one: left out of the fit in "
                       "seconds\n",
                       d.same_start);
  return out;
}

// NaN and infinite values (not identified, an unbounded end, a check not
// run) are written as null by dump_json.
Json seconds_json(const fit::SecondsFit& f, const fit::GapData& d) {
  Json j = {{"identified", f.identified}, {"gaps", f.gaps}, {"untimed", d.untimed}, {"same_start", d.same_start}};
  j["t_good"] = f.t_good;
  j["t_bad"] = f.t_bad;
  j["t_good_ci"] = interval_json(f.t_good_ci);
  j["t_bad_ci"] = interval_json(f.t_bad_ci);
  j["check_p_value"] = f.check.p_value;
  j["options"] = f.identified ? fit::seconds_options(f) : std::string();
  j["note"] = f.note;
  return j;
}

std::string kinds_text(const fit::KindMix& k) {
  if (k.counts.empty()) return "";
  std::string out = "\nkinds:";
  for (const auto& [kind, n] : k.counts) out += fmt::format(" {} {} ({:.1f}%)", kind, n, 100.0 * k.shares.at(kind));
  out += "\n";
  if (!k.kinds_option.empty()) out += "  --kinds " + k.kinds_option + "\n";
  if (!k.other.empty()) {
    out += "  not relsim fault kinds (left out of --kinds):";
    for (const std::string& o : k.other) out += " " + o;
    out += "\n";
  }
  return out;
}

std::string prediction_text(const fit::Prediction& p) {
  std::string out = fmt::format("\nprediction {}:\n", p.spec.text);
  out += fmt::format("  success       {:.6g}  95% band [{:.6g}, {:.6g}]\n", p.success, p.success_band.low,
                     p.success_band.high);
  out += fmt::format("  mean requests {:.6g}  95% band [{:.6g}, {:.6g}]\n", p.mean_requests, p.requests_band.low,
                     p.requests_band.high);
  out += fmt::format("  (band: min and max over {} points of the joint 95% {}; kinds {})\n", p.region_points,
                     p.band_method, p.kinds.empty() ? "default (uniform in-stream)" : "from the log");
  out += "  outcomes:";
  for (const auto& [name, prob] : p.outcomes) out += fmt::format(" {} {:.4g}", name, prob);
  out += "\n  " + p.exact_command + "\n  " + p.netem_command + "\n";
  return out;
}

std::string hidden_text(const fit::HiddenFit& h) {
  std::string out = fmt::format("\nhidden chain ({} states, Baum-Welch, {} iterations{}): log-likelihood {:.6g}, BIC {:.6g}\n",
                                h.states, h.iterations, h.converged ? "" : ", not converged", h.log_likelihood, h.bic);
  for (int i = 0; i < h.states; ++i) {
    out += fmt::format("  state {}: P(bad) = {:.4g}, stationary {:.4g}, step", i, h.bad(i), h.initial(i));
    for (int j = 0; j < h.states; ++j) out += fmt::format(" {:.4g}", h.step(i, j));
    out += "\n";
  }
  return out;
}

// The verdict's second half for a log that can hide retries (FitReport::if_sdk_default).
std::string hidden_retries_text(const fit::ChainFit& f) {
  return fmt::format("; but each record may be one model call with the SDK's retries hidden inside it, and nothing "
                     "here shows them: under --sdk-retries {} (the SDK's default) p = {:.4g} {}, q = {}",
                     fit::kSdkDefaultRetries, f.p, interval(f.p_ci),
                     f.q_identified ? fmt::format("{:.4g} {}", f.q, interval(f.q_ci)) : std::string("not identified"));
}

// Runs of one outcome by length, for the workbench's histogram: at each
// length the runs that reached it and could be seen to go on or end
// (at_risk), those that ended there, and the fitted law's share that ends
// (`end`: 1 - q for bad runs, p0 for good ones) times the runs at risk, as
// the runs test compares them; up to kRunLengths lengths.
constexpr std::int64_t kRunLengths = 40;
Json run_lengths_json(const fit::RunHistogram& completed, const fit::RunHistogram& continued, double end) {
  Json out = Json::array();
  const std::int64_t longest = std::min(kRunLengths, std::max(completed.max_length(), continued.max_length()));
  for (std::int64_t k = 1; k <= longest; ++k) {
    const std::int64_t ended = completed.at(k), at_risk = ended + continued.at(k);
    out.push_back({{"length", k},
                   {"at_risk", at_risk},
                   {"ended", ended},
                   {"expected", std::isnan(end) ? Json(nullptr) : Json(double(at_risk) * end)}});
  }
  return out;
}

// The fitted chain as an exact command, ready to run (docs/fit.md).
std::string exact_line(const fit::ChainFit& f) {
  if (!f.q_identified) return "";
  std::string line = fmt::format("relsim exact --p {:.6g} --q {:.6g}", f.p, f.q);
  if (!f.kinds.kinds_option.empty()) line += " --kinds " + f.kinds.kinds_option;
  return line;
}

}  // namespace

Json interval_json(const fit::Interval& i) {
  if (std::isnan(i.low)) return nullptr;
  return Json::array({i.low, i.high});
}

std::string fit_verdict(const fit::ChainFit& f) {
  if (!f.q_identified) {
    if (f.p == 0.0) return fmt::format("no faults seen: p <= {:.3g} (one-sided 95%); q is not identified", f.p_ci.high);
    if (f.p == 1.0) return fmt::format("every request failed: p >= {:.3g} (one-sided 95%); q is not identified", f.p_ci.low);
    return fmt::format("p = {:.3g} {}; q is not identified", f.p, interval(f.p_ci));
  }
  const std::string numbers = fmt::format("q = {:.2f} [{:.2f}, {:.2f}] against p = {:.2f}, LR p {}", f.q, f.q_ci.low,
                                          f.q_ci.high, f.p, pvalue(f.independence.p_value));
  if (f.independence.p_value < 0.05)
    return (f.q > f.p ? "faults are bursty: " : "faults alternate (a fault makes the next one less likely): ") +
           numbers;
  return "no evidence of bursts (independent faults fit): " + numbers;
}


std::string fit_text(const FitReport& r) {
  std::string out = read_text(r) +
                    estimates_text(*r.fit, r.sdk_retries, r.if_sdk_default ? hidden_retries_text(*r.if_sdk_default) : "") +
                    (r.seconds ? seconds_text(*r.seconds, *r.gaps) : std::string()) + kinds_text(r.fit->kinds);
  for (const fit::Prediction& p : r.predictions) out += prediction_text(p);
  if (r.hidden) out += hidden_text(*r.hidden);
  return out;
}

Json fit_json(const FitReport& r) {
  const fit::ChainFit& f = *r.fit;
  Json j;
  j["records"] = r.counts->records;
  j["tasks"] = r.counts->tasks;
  j["skipped"] = Json::object();
  for (const auto& [why, n] : r.read.skipped) j["skipped"][why] = n;
  j["p"] = f.p;
  j["q"] = f.q;
  j["p0"] = f.p0;
  j["p_ci"] = interval_json(f.p_ci);
  j["q_ci"] = interval_json(f.q_ci);
  j["independence_p_value"] = f.independence.p_value;
  j["order2_p_value"] = f.order2.p_value;
  j["runs_p_value"] = f.runs.p_value;
  j["verdict"] = fit_verdict(f);
  j["run_lengths"] = {{"bad", run_lengths_json(r.counts->completed[1], r.counts->continued[1], 1.0 - f.q)},
                      {"good", run_lengths_json(r.counts->completed[0], r.counts->continued[0], f.p0)}};
  j["kinds"] = {{"counts", f.kinds.counts}, {"shares", f.kinds.shares}, {"kinds_option", f.kinds.kinds_option},
                {"other", f.kinds.other}};
  j["predictions"] = Json::array();
  for (const fit::Prediction& p : r.predictions) {
    Json outcomes = Json::object();
    for (const auto& [name, prob] : p.outcomes) outcomes[name] = prob;
    j["predictions"].push_back({{"spec", p.spec.text}, {"success", p.success},
                                {"success_band", {p.success_band.low, p.success_band.high}},
                                {"mean_requests", p.mean_requests},
                                {"mean_requests_band", {p.requests_band.low, p.requests_band.high}},
                                {"band", p.band_method}, {"region_points", p.region_points}, {"outcomes", outcomes},
                                {"kinds", p.kinds}, {"exact_command", p.exact_command},
                                {"netem_command", p.netem_command}});
  }
  j["seconds"] = r.seconds ? seconds_json(*r.seconds, *r.gaps) : Json(nullptr);
  j["exact_command"] = exact_line(f);
  if (r.sdk_retries > 0) j["sdk_retries"] = r.sdk_retries;
  if (r.if_sdk_default) {
    const fit::ChainFit& d = *r.if_sdk_default;
    j["if_sdk_retries"] = {{"sdk_retries", fit::kSdkDefaultRetries}, {"p", d.p}, {"p_ci", interval_json(d.p_ci)},
                           {"q", d.q}, {"q_ci", interval_json(d.q_ci)}};
  }
  if (r.hidden) {
    const fit::HiddenFit& h = *r.hidden;
    Json step = Json::array();
    for (int i = 0; i < h.states; ++i) {
      Json row = Json::array();
      for (int k = 0; k < h.states; ++k) row.push_back(h.step(i, k));
      step.push_back(row);
    }
    Json bad = Json::array(), initial = Json::array();
    for (int i = 0; i < h.states; ++i) bad.push_back(h.bad(i)), initial.push_back(h.initial(i));
    j["hidden"] = {{"states", h.states}, {"step", step},  {"bad", bad}, {"initial", initial},
                   {"log_likelihood", h.log_likelihood}, {"bic", h.bic}, {"iterations", h.iterations},
                   {"converged", h.converged}};
  }
  return j;
}

namespace {

double hidden_chain_number(const Json& v, const std::string& where) {
  if (!v.is_number()) throw InputError(fmt::format("{}: {} is not a number", where, json_excerpt(v, 40)));
  return v.get<double>();
}

}  // namespace

HiddenChainFile read_hidden_chain(const std::string& path) {
  const std::string text = read_file(path, "hidden chain");
  const Json j = Json::parse(text, nullptr, false);
  const std::string where = fmt::format("hidden chain '{}'", path);
  if (j.is_discarded() || !j.is_object() || !j.contains("hidden") || !j["hidden"].is_object())
    throw InputError(fmt::format("{}: not a `relsim fit --hidden --json` output (no \"hidden\" object)", where));
  const Json& h = j["hidden"];
  if (!h.contains("step") || !h["step"].is_array() || !h.contains("bad") || !h["bad"].is_array())
    throw InputError(fmt::format("{}: \"hidden\" needs the arrays \"step\" and \"bad\"", where));
  const auto k = static_cast<Eigen::Index>(h["bad"].size());
  if (k < 1 || k > 64 || static_cast<Eigen::Index>(h["step"].size()) != k)
    throw InputError(fmt::format("{}: \"step\" must be k rows and \"bad\" k entries, k in [1, 64]", where));
  HiddenChainFile chain{Eigen::MatrixXd(k, k), Eigen::VectorXd(k)};
  for (Eigen::Index i = 0; i < k; ++i) {
    const Json& row = h["step"][static_cast<std::size_t>(i)];
    if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != k)
      throw InputError(fmt::format("{}: step row {} must have {} entries", where, i, k));
    for (Eigen::Index c = 0; c < k; ++c)
      chain.step(i, c) =
          hidden_chain_number(row[static_cast<std::size_t>(c)], fmt::format("{}: step[{}][{}]", where, i, c));
    const double bad =
        hidden_chain_number(h["bad"][static_cast<std::size_t>(i)], fmt::format("{}: bad[{}]", where, i));
    if (!(bad >= 0.0 && bad <= 1.0))
      throw InputError(fmt::format("{}: bad[{}] = {} is out of range: it must be in [0, 1]", where, i, bad));
    chain.bad(i) = bad;
  }
  return chain;
}

}  // namespace relsim::fit
