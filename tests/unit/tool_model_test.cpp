// Tool calls (docs/tool_model.md): exact_matrix with ToolModel against the
// closed form of independent faults and a brute force written here, and the
// simulator against exact_matrix. The closed form and the brute force take
// the stage probabilities and the harness rules from the docs' algebra,
// written out here, not from tool_shares or tool_step.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/core/tool_faults.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim {
namespace {

// Per tool call, by the docs' algebra: P(ok), P(corrupted and going on), and
// P(each class that ends the task), keyed by class name.
struct PerCall {
  double ok = 0.0, corrupted = 0.0;
  std::map<std::string, double> ends;
};

PerCall per_call(const std::array<double, 6>& c, double rho, bool guarded) {
  // Unconditional P of transport, service, validate, exec, partial_write, truncate.
  std::array<double, 6> f{};
  double passed = 1.0;
  for (int i = 0; i < 6; ++i) {
    f[i] = passed * c[i];
    passed *= 1.0 - c[i];
  }
  PerCall out;
  out.ok = passed;
  if (guarded) {
    out.ends["tool_error:transport"] = f[0];
    out.ends["tool_error:service"] = f[1];
    out.ends["tool_error:validate"] = f[2];
    out.ends["tool_error:exec"] = f[3] + f[4] * (1.0 - rho) + f[5];
    out.ends["side_effect_left"] = f[4] * rho;
  } else {
    out.ends["tool_error:unlocated"] = f[0] + f[1] + f[2] + f[3];
    out.ends["side_effect_left"] = f[4];
    out.corrupted = f[5];
  }
  return out;
}

ToolModel tool_model(const std::array<double, 6>& c, double rho, bool guarded) {
  ToolModel m;
  for (int i = 0; i < 6; ++i) m.faults.conditional[static_cast<std::size_t>(i)] = c[static_cast<std::size_t>(i)];
  m.faults.rollback = rho;
  m.harness = guarded ? Harness::guarded : Harness::naive;
  return m;
}

double tool_class(const ExactResult& r, const std::string& name) {
  for (int x = 0; x < kToolClasses; ++x)
    if (to_string(static_cast<ToolClass>(x)) == name) return r.tool_outcomes[static_cast<std::size_t>(x)];
  ADD_FAILURE() << name;
  return 0.0;
}

double total_probability(const ExactResult& r) {
  double sum = 0.0;
  for (const double x : r.outcomes) sum += x;
  for (const double x : r.tool_outcomes) sum += x;
  return sum;
}

TEST(ToolModelExact, MatchesTheClosedFormForIndependentFaults) {
  // q = p, simple policy: S_k = (1 - p^(r+1))^k, F_k = S_(k-1) p^(r+1), a
  // call sends (1 - p^(r+1)) / (1 - p) requests on average.
  std::mt19937_64 gen(20261001);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const double p = 0.6 * unit(gen);
    const int r = static_cast<int>(gen() % 4);
    const int n = 1 + static_cast<int>(gen() % 25);
    std::array<double, 6> c{};
    for (double& x : c) x = unit(gen) < 0.3 ? 0.0 : 0.2 * unit(gen);
    const double rho = unit(gen);
    const bool guarded = trial % 2 == 0;
    const PerCall t = per_call(c, rho, guarded);
    const double w = t.ok + t.corrupted;
    const double s1 = 1.0 - std::pow(p, r + 1);
    double reach = 0.0, env = 0.0, mean = 0.0;
    for (int k = 1; k <= n; ++k) {
      reach += std::pow(w, k - 1) * std::pow(s1, k);
      env += std::pow(w, k - 1) * std::pow(s1, k - 1) * std::pow(p, r + 1);
      mean += std::pow(w, k - 1) * std::pow(s1, k - 1) * (p < 1.0 ? s1 / (1.0 - p) : r + 1.0);
    }
    const std::string where = testing::PrintToString(std::tuple{p, r, n, c, rho, guarded});
    ExactOptions options;
    options.tools = tool_model(c, rho, guarded);
    const ExactResult got = exact_matrix(Model{p, p, 0, 0}, Policy{n, r}, options);
    EXPECT_NEAR(got.success, std::pow(t.ok, n) * std::pow(s1, n), 1e-12) << where;
    EXPECT_NEAR(tool_class(got, "silent_wrong"), (std::pow(w, n) - std::pow(t.ok, n)) * std::pow(s1, n), 1e-12)
        << where;
    for (const auto& [name, x] : t.ends) EXPECT_NEAR(tool_class(got, name), x * reach, 1e-12) << where << name;
    EXPECT_NEAR(got.env_error, env, 1e-12) << where;
    EXPECT_NEAR(got.mean_requests, mean, 1e-12 * std::max(1.0, mean)) << where;
    EXPECT_NEAR(total_probability(got), 1.0, 1e-12) << where;
    const double wrong = tool_class(got, "silent_wrong") + tool_class(got, "side_effect_left");
    EXPECT_NEAR(got.wrong, wrong, 1e-12) << where;
  }
}

// Every good/bad request sequence and every tool outcome of a task, walked
// one request at a time over the two-state chain written out by hand
// (docs/model.md: P(bad | bad) = q, P(bad | good) = p0 = p (1 - q) / (1 - p),
// the first request bad with p, b = g = 0). Tool calls take no chain step.
struct ToolBrute {
  double p, q, p0;
  int n, r;
  PerCall tool;
  std::map<std::string, double> classes;
  double mean_requests = 0.0;

  void call(int k, bool last_bad, bool first, bool corrupted, int sent, double weight) {
    if (k == n) {
      classes[corrupted ? "silent_wrong" : "done"] += weight;
      mean_requests += weight * sent;
      return;
    }
    attempt(k, 0, last_bad, first, corrupted, sent, weight);
  }
  void attempt(int k, int a, bool last_bad, bool first, bool corrupted, int sent, double weight) {
    const double pb = first ? p : (last_bad ? q : p0);
    // Good: the call succeeds, then its tool call.
    const double good = weight * (1.0 - pb);
    if (good > 0.0) {
      for (const auto& [name, x] : tool.ends) {
        classes[name] += good * x;
        mean_requests += good * x * (sent + 1);
      }
      if (tool.ok > 0.0) call(k + 1, false, false, corrupted, sent + 1, good * tool.ok);
      if (tool.corrupted > 0.0) call(k + 1, false, false, true, sent + 1, good * tool.corrupted);
    }
    const double bad = weight * pb;
    if (!(bad > 0.0)) return;
    if (a == r) {
      classes["env_error"] += bad;
      mean_requests += bad * (sent + 1);
      return;
    }
    attempt(k, a + 1, true, false, corrupted, sent + 1, bad);
  }
};

TEST(ToolModelExact, MatchesABruteForceOverEverySequenceAndToolOutcome) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    const double p = 0.05 + 0.4 * unit(gen);
    const double q = 0.9 * unit(gen) * (p > 0.5 ? 0.0 : 1.0) + 0.05;  // q != p, bursty or anti-bursty
    const int n = 1 + static_cast<int>(gen() % 4);
    const int r = static_cast<int>(gen() % 3);
    std::array<double, 6> c{};
    for (double& x : c) x = 0.15 * unit(gen);
    const double rho = unit(gen);
    const bool guarded = trial % 2 == 1;
    ToolBrute brute{p, q, p * (1.0 - q) / (1.0 - p), n, r, per_call(c, rho, guarded), {}, 0.0};
    brute.call(0, false, true, false, 0, 1.0);
    ExactOptions options;
    options.tools = tool_model(c, rho, guarded);
    const ExactResult got = exact_matrix(Model{p, q, 0, 0}, Policy{n, r}, options);
    const std::string where = testing::PrintToString(std::tuple{p, q, n, r, c, rho, guarded});
    EXPECT_NEAR(got.success, brute.classes["done"], 1e-12) << where;
    EXPECT_NEAR(got.env_error, brute.classes["env_error"], 1e-12) << where;
    EXPECT_NEAR(got.mean_requests, brute.mean_requests, 1e-12) << where;
    for (int x = 0; x < kToolClasses; ++x) {
      const std::string name(to_string(static_cast<ToolClass>(x)));
      EXPECT_NEAR(got.tool_outcomes[static_cast<std::size_t>(x)], brute.classes[name], 1e-12) << where << name;
    }
    EXPECT_NEAR(total_probability(got), 1.0, 1e-12) << where;
  }
}

TEST(ToolModelExact, WithoutToolFaultsTheResultIsUnchanged) {
  ExactOptions none;
  ExactOptions zero;
  zero.tools = ToolModel{};
  const ExactResult a = exact_matrix(Model{0.3, 0.8, 0, 0}, Policy{5, 2}, none);
  const ExactResult b = exact_matrix(Model{0.3, 0.8, 0, 0}, Policy{5, 2}, zero);
  EXPECT_EQ(a.success, b.success);
  EXPECT_EQ(a.mean_requests, b.mean_requests);
  EXPECT_FALSE(a.tools.has_value());
  EXPECT_TRUE(b.tools.has_value());
  EXPECT_FALSE(b.distribution_complete);
}

// Simulated class shares against exact_matrix, within 5 standard errors.
void expect_simulate_agrees(const Model& model, const Policy& policy, const ToolModel& tools) {
  SimConfig config;
  config.tasks = 200'000;
  config.seed = 11;
  config.tools = tools;
  ExactOptions options;
  options.tools = tools;
  options.kinds = config.kinds;
  const ExactResult exact = exact_matrix(model, policy, options);
  const SimResult sim = simulate(model, policy, config);
  const auto n = static_cast<double>(sim.tasks);
  const auto check = [&](double expected, std::int64_t count, const std::string& name) {
    const double se = std::sqrt(std::max(expected * (1.0 - expected), 1e-12) / n);
    EXPECT_NEAR(static_cast<double>(count) / n, expected, 5.0 * se + 1e-12)
        << name << " harness " << to_string(tools.harness) << " p " << model.p << " q " << model.q;
  };
  check(exact.success, sim.successes, "done");
  for (int x = 0; x < kToolClasses; ++x)
    check(exact.tool_outcomes[static_cast<std::size_t>(x)], sim.tool_outcomes[static_cast<std::size_t>(x)],
          std::string(to_string(static_cast<ToolClass>(x))));
  std::int64_t model_classes = 0;
  for (const auto x : sim.outcomes) model_classes += x;
  std::int64_t tool_classes = 0;
  for (const auto x : sim.tool_outcomes) tool_classes += x;
  EXPECT_EQ(model_classes + tool_classes, sim.tasks);
  // Requests per task: the mean's standard error is at most its range over sqrt(n).
  const double mean = static_cast<double>(sim.requests) / n;
  EXPECT_NEAR(mean, exact.mean_requests, 5.0 * static_cast<double>(policy.max_requests()) / std::sqrt(n) / 2.0);
}

TEST(ToolModelSimulate, AgreesWithExactWithinFiveStandardErrors) {
  ToolModel tools;
  tools.faults = parse_tool_faults("transport=0.01,service=0.01,validate=0.02,exec=0.02,partial_write=0.03,"
                                   "truncate=0.04,rollback=0.3");
  for (const Harness h : {Harness::naive, Harness::guarded}) {
    tools.harness = h;
    expect_simulate_agrees(Model{0.1, 0.5, 0, 0}, Policy{10, 2}, tools);   // bursty
    expect_simulate_agrees(Model{0.2, 0.2, 0, 0}, Policy{6, 1}, tools);    // independent
    expect_simulate_agrees(Model{0.2, 0.7, 1, 2}, Policy{4, 1, 2, 0, PolicyKind::layered}, tools);
  }
}

TEST(ToolModelSimulate, SameCountsForAnyThreadCount) {
  SimConfig config;
  config.tasks = 50'000;
  ToolModel tools;
  tools.faults = parse_tool_faults("exec=0.05,partial_write=0.05,truncate=0.05,rollback=0.5");
  tools.harness = Harness::naive;
  config.tools = tools;
  config.threads = 1;
  const SimResult one = simulate(Model{0.2, 0.6, 0, 0}, Policy{5, 2}, config);
  config.threads = 2;
  const SimResult two = simulate(Model{0.2, 0.6, 0, 0}, Policy{5, 2}, config);
  EXPECT_EQ(one.tool_outcomes, two.tool_outcomes);
  EXPECT_EQ(one.outcomes, two.outcomes);
  EXPECT_EQ(one.requests, two.requests);
  EXPECT_EQ(one.env_by_requests, two.env_by_requests);
  EXPECT_GT(one.tool_outcomes[static_cast<std::size_t>(ToolClass::silent_wrong)], 0);
}

TEST(ToolFaults, ParseTakesAnySubsetAndRejectsEverythingElse) {
  const ToolFaults f = parse_tool_faults("truncate=0.5,transport=0.25");
  EXPECT_EQ(f.conditional[static_cast<std::size_t>(ToolFault::truncate)], 0.5);
  EXPECT_EQ(f.probability(ToolFault::truncate), 0.375);
  EXPECT_EQ(f.probability(ToolFault::ok), 0.375);
  EXPECT_EQ(to_string(f), "transport=0.25,truncate=0.5");
  for (const char* bad : {"", "exec", "exec=1.2", "exec=-0.1", "exec=nan", "foo=0.1", "exec=0.1,exec=0.2", "exec=0.1,"})
    EXPECT_THROW(parse_tool_faults(bad), InputError) << bad;
  EXPECT_THROW(parse_harness("foo"), InputError);
}

TEST(ToolFaults, DrawFollowsTheCumulativeProbabilities) {
  const ToolFaults f = parse_tool_faults("transport=0.5,exec=0.5");
  EXPECT_EQ(draw_tool_fault(f, 0.0), ToolFault::transport);
  EXPECT_EQ(draw_tool_fault(f, 0.4999), ToolFault::transport);
  EXPECT_EQ(draw_tool_fault(f, 0.5), ToolFault::exec);
  EXPECT_EQ(draw_tool_fault(f, 0.7499), ToolFault::exec);
  EXPECT_EQ(draw_tool_fault(f, 0.75), ToolFault::ok);
}

}  // namespace
}  // namespace relsim
