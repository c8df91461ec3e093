// The Monte Carlo engine: its generator pinned bit for bit, its draws
// reconstructible request by request, its totals independent of threads, and
// its answers in agreement with the exact engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <Random123/philox.h>
#include <boost/math/distributions/chi_squared.hpp>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "relsim/montecarlo/stats.hpp"
#include "support/models.hpp"

namespace relsim {
namespace {

double exact_success(const Model& m, const Policy& pol) {
  ExactOptions o;
  o.distribution = false;
  return exact_matrix(m, pol, o).success;
}

// ---------------------------------------------------------------- generator

TEST(Philox, MatchesRandom123KnownAnswerVectors) {
  struct Kat {
    rng::Counter ctr;
    rng::Key key;
    rng::Block out;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& kat : kats) {
    EXPECT_EQ(rng::philox4x32_10(kat.ctr, kat.key), kat.out);
    r123::Philox4x32 philox;
    const r123::Philox4x32::ctr_type c = {{kat.ctr[0], kat.ctr[1], kat.ctr[2], kat.ctr[3]}};
    const r123::Philox4x32::key_type k = {{kat.key[0], kat.key[1]}};
    const auto o = philox(c, k);
    EXPECT_EQ((rng::Block{o[0], o[1], o[2], o[3]}), kat.out);
  }
}

TEST(Philox, KeyIsTheSeedAndCounterIsBlockStreamTask) {
  const std::uint64_t seed = 0x0123456789abcdefULL, task = 0xabcdef01234ULL, index = 0x100000005ULL;
  // counter = {block low, stream << 24 | block bits 32..55, task low, task high}, key = {seed low, seed high}
  const rng::Counter ctr = {0x00000005, (1u << 24) | 0x1u, 0xdef01234u, 0xabc};
  const rng::Key key = {0x89abcdef, 0x01234567};
  EXPECT_EQ(rng::counter_of(rng::Stream::kind, task, index), ctr);
  EXPECT_EQ(rng::key_of(seed), key);
  r123::Philox4x32 philox;
  const auto o = philox({{ctr[0], ctr[1], ctr[2], ctr[3]}}, {{key[0], key[1]}});
  EXPECT_EQ(rng::block(seed, rng::Stream::kind, task, index), (rng::Block{o[0], o[1], o[2], o[3]}));
}

TEST(Philox, PinsCallUniformsAndKindWordsForFixedSeedTaskAndDraw) {
  // Block 0 of the chain stream of task 0 under seed 20261001.
  EXPECT_EQ(rng::block(20261001, rng::Stream::chain, 0, 0), (rng::Block{0xdb4f58d8, 0xca9671c7, 0x75addb25, 0x45f043bd}));
  // Call 0 takes words (0, 1): the top 53 bits of 0xca9671c7db4f58d8.
  EXPECT_EQ(rng::call_uniform(20261001, 0, 0), static_cast<double>(0xca9671c7db4f58d8ULL >> 11) * 0x1.0p-53);
  EXPECT_EQ(rng::call_uniform(20261001, 0, 0), 0x1.952ce38fb69ebp-1);
  EXPECT_EQ(rng::call_uniform(20261001, 0, 1), 0x1.17c10ef5d6b76p-2);
  EXPECT_EQ(rng::call_uniform(20261001, 1, 0), 0x1.8a4218a530766p-1);
  EXPECT_EQ(rng::call_uniform(20261001, 123456789, 2), 0x1.ed804b893202cp-2);
  EXPECT_EQ(rng::call_uniform(20261001, 999999999999ULL, 7), 0x1.9eb2eefffb804p-2);
  EXPECT_EQ(rng::kind_word(20261001, 0, 0), 0xe4ae7b45u);
  EXPECT_EQ(rng::kind_word(20261001, 0, 5), 0xbd1c1e8bu);
  EXPECT_EQ(rng::kind_word(20261001, 42, 3), 0x12d31786u);
}

TEST(Philox, UniformsCoverTheUnitIntervalOnA53BitGrid) {
  EXPECT_EQ(rng::u53(0, 0), 0.0);
  EXPECT_EQ(rng::u53(0xffffffffu, 0xffffffffu), 1.0 - 0x1.0p-53);
  EXPECT_EQ(rng::u53(0x800u, 0), 0x1.0p-53);
  EXPECT_EQ(rng::u53(0x7ffu, 0), 0.0);  // the low 11 bits are dropped
}

// ---------------------------------------------------------------- draw scheme

TEST(DrawScheme, ThresholdsAreProbabilitiesOfLeadingBadRuns) {
  const Model m{.p = 0.3, .q = 0.8};
  const DrawScheme s =
      DrawScheme::make(m, Policy{.n = 2, .r = 3, .kind = PolicyKind::simple}, FaultWeights::in_stream_uniform());
  const double p0 = 0.3 * 0.2 / 0.7;
  for (int j = 0; j <= 3; ++j) {
    EXPECT_NEAR(s.thresholds(Entry::task_start)[j], 0.3 * std::pow(0.8, j), 1e-15);
    EXPECT_NEAR(s.thresholds(Entry::after_good)[j], p0 * std::pow(0.8, j), 1e-15);
    EXPECT_NEAR(s.thresholds(Entry::after_bad)[j], std::pow(0.8, j + 1), 1e-15);
  }
  EXPECT_EQ(s.bad_run(Entry::task_start, 0.5), 0);
  EXPECT_EQ(s.bad_run(Entry::task_start, 0.25), 1);  // 0.25 < 0.3, not < 0.3 * 0.8
  EXPECT_EQ(s.bad_run(Entry::task_start, 0.0), 4);  // all four attempts bad: the call fails
}

TEST(DrawScheme, SilentStepsUseMatrixPowers) {
  const Model m{.p = 0.3, .q = 0.8, .b = 2, .g = 5};
  const Chain c = gilbert_chain(m);
  const DrawScheme s =
      DrawScheme::make(m, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, FaultWeights::in_stream_uniform());
  const Eigen::MatrixXd retry = matrix_power(c.step, 3), gap = matrix_power(c.step, 6);
  EXPECT_NEAR(s.thresholds(Entry::after_good)[0], gap(0, 1), 1e-15);
  EXPECT_NEAR(s.thresholds(Entry::after_good)[2], gap(0, 1) * retry(1, 1) * retry(1, 1), 1e-15);
  EXPECT_NEAR(s.thresholds(Entry::after_bad)[1], gap(1, 1) * retry(1, 1), 1e-15);
}

TEST(DrawScheme, KindsSplitTheWordsByCumulativeWeightAndSkipZeroWeights) {
  const DrawScheme s = DrawScheme::make(Model{.p = 0.3, .q = 0.3}, Policy{.n = 1, .r = 0, .kind = PolicyKind::simple},
                                        parse_fault_weights("cut=1,stall=3"));
  EXPECT_EQ(s.kind(0), FaultKind::cut);
  EXPECT_EQ(s.kind(0x3fffffffu), FaultKind::cut);
  EXPECT_EQ(s.kind(0x40000000u), FaultKind::stall);
  EXPECT_EQ(s.kind(0xffffffffu), FaultKind::stall);
  for (std::uint32_t w = 0; w < 0xffffff00u; w += 0x00fffff1u) {
    const FaultKind k = s.kind(w);
    EXPECT_TRUE(k == FaultKind::cut || k == FaultKind::stall) << w;
  }
  const DrawScheme only = DrawScheme::make(
      Model{.p = 0.3, .q = 0.3}, Policy{.n = 1, .r = 0, .kind = PolicyKind::simple}, parse_fault_weights("http_529=2"));
  EXPECT_EQ(only.kind(0), FaultKind::http_529);
  EXPECT_EQ(only.kind(0xffffffffu), FaultKind::http_529);
}

TEST(FaultWeights, ParseAcceptsKindWeightPairsAndRoundTrips) {
  const FaultWeights w = parse_fault_weights("cut=1,stall=3,http_400=0.5");
  EXPECT_EQ(w.weight[static_cast<std::size_t>(FaultKind::cut)], 1.0);
  EXPECT_EQ(w.weight[static_cast<std::size_t>(FaultKind::stall)], 3.0);
  EXPECT_EQ(w.weight[static_cast<std::size_t>(FaultKind::http_400)], 0.5);
  EXPECT_EQ(w.total(), 4.5);
  EXPECT_EQ(to_string(w), "cut=1,stall=3,http_400=0.5");
  EXPECT_EQ(to_string(FaultWeights::in_stream_uniform()), "cut=1,no_stop=1,malformed=1,overloaded=1,stall=1");
  for (int k = 0; k < kFaultKinds; ++k)
    EXPECT_EQ(parse_fault_kind(to_string(static_cast<FaultKind>(k))), static_cast<FaultKind>(k));
  EXPECT_EQ(stage_of(FaultKind::stall), Stage::in_stream);
  EXPECT_EQ(stage_of(FaultKind::reset), Stage::pre_response);
  EXPECT_EQ(stage_of(FaultKind::http_400), Stage::fatal);
}

TEST(FaultWeights, ParseRejectsEverythingElse) {
  for (const char* bad : {"", "cut", "cut=", "=1", "cut=-1", "cut=nan", "cut=inf", "cut=1,", ",cut=1", "cut=1,cut=1",
                          "bogus=1", "cut=0,stall=0", "cut=1x", "cut=1e400"})
    EXPECT_THROW(parse_fault_weights(bad), InputError) << "'" << bad << "'";
}

// The reference experiment (docs/model.md, Reference experiment) at its default seed, pinned: a
// change here changes every plan and every published run.
TEST(Simulate, ReferenceExperimentIsPinnedAtTheDefaultSeed) {
  const SimConfig c;  // 400 tasks, seed 20261001, in-stream kinds uniform
  const SimResult bursty = simulate(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c);
  EXPECT_EQ(bursty.successes, 310);
  EXPECT_EQ(bursty.requests, 978);
  EXPECT_EQ(bursty.faults, (std::array<std::int64_t, kFaultKinds>{68, 67, 79, 54, 73}));
  const SimResult independent =
      simulate(Model{.p = 0.3, .q = 0.3}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c);
  EXPECT_EQ(independent.successes, 381);
  EXPECT_EQ(independent.requests, 1115);
  EXPECT_EQ(independent.faults, (std::array<std::int64_t, kFaultKinds>{67, 66, 79, 58, 71}));
  const SimResult continuous = simulate(Model{.p = 0.3, .q = 0.8, .chain = ChainScope::continuous},
                                        Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c);
  EXPECT_EQ(continuous.successes, 326);
  EXPECT_EQ(continuous.requests, 953);
}

// ---------------------------------------------------------------- traces

// simulate() over `config` against the sum of trace_task over every task.
void expect_trace_sums_to_simulate(const Model& m, const Policy& pol, const SimConfig& config) {
  const SimResult sim = simulate(m, pol, config);
  SimResult sum;
  sum.tasks = config.tasks;
  const auto bins = static_cast<std::size_t>(pol.max_requests() + 1);
  sum.done_by_requests.assign(bins, 0);
  sum.env_by_requests.assign(bins, 0);
  for (std::int64_t t = 0; t < config.tasks; ++t) {
    const TaskTrace tr = trace_task(m, pol, config, t);
    const bool done = tr.outcome == Outcome::done;
    sum.successes += done;
    sum.requests += static_cast<std::int64_t>(tr.requests.size());
    for (const RequestDraw& r : tr.requests) {
      if (r.bad) ++sum.faults[static_cast<std::size_t>(r.kind)];
      else ++sum.calls_succeeded;
    }
    ++(done ? sum.done_by_requests : sum.env_by_requests)[tr.requests.size()];
  }
  const std::string what = ::testing::PrintToString(std::vector<double>{m.p, m.q, static_cast<double>(pol.n),
                                                                        static_cast<double>(pol.r)}) +
                           std::string(to_string(m.chain));
  EXPECT_EQ(sim.successes, sum.successes) << what;
  EXPECT_EQ(sim.requests, sum.requests) << what;
  EXPECT_EQ(sim.calls_succeeded, sum.calls_succeeded) << what;
  EXPECT_EQ(sim.faults, sum.faults) << what;
  EXPECT_EQ(sim.done_by_requests, sum.done_by_requests) << what;
  EXPECT_EQ(sim.env_by_requests, sum.env_by_requests) << what;
}

// Every kernel this CPU runs (scalar always; AVX2, AVX-512 where the CPU
// has them) gives the same totals for the same seed, each checked against
// the task-by-task trace: odd task counts (a partial vector at the end),
// later chain blocks, more than four bad requests, r near the vector
// kernels' bound of 15, and one past it (the scalar kernel runs then). A
// kernel this CPU lacks is named as skipped; asking for it is an InputError.
TEST(Kernels, EveryKernelThisCpuRunsGivesTheSameTotals) {
  struct Case {
    Model m;
    Policy pol;
    std::int64_t tasks;
  };
  const std::vector<Case> cases = {
      {Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, 3001},
      {Model{.p = 0.6, .q = 0.9}, Policy{.n = 7, .r = 3, .kind = PolicyKind::simple}, 2053},
      {Model{.p = 0.8, .q = 0.97}, Policy{.n = 5, .r = 15, .kind = PolicyKind::simple}, 1029},
      {Model{.p = 0.8, .q = 0.97}, Policy{.n = 5, .r = 16, .kind = PolicyKind::simple}, 1029},
      {Model{.p = 0.3, .q = 0.8, .b = 2, .g = 3}, Policy{.n = 4, .r = 1, .kind = PolicyKind::simple}, 7},
  };
  std::vector<Kernel> run, skipped;
  for (const Kernel k : {Kernel::scalar, Kernel::avx2, Kernel::avx512})
    (kernel_available(k) ? run : skipped).push_back(k);
  for (const Kernel k : skipped) {
    std::cout << "kernel " << kernel_name(k) << " skipped: this CPU lacks it\n";
    ::testing::Test::RecordProperty(std::string("skipped_") + std::string(kernel_name(k)), "this CPU lacks it");
    SimConfig c;
    c.kernel = k;
    EXPECT_THROW(validate(c), InputError);
  }
  for (const Case& cs : cases) {
    SimConfig c;
    c.tasks = cs.tasks;
    c.seed = 4242;
    c.kinds = parse_fault_weights("cut=1,stall=3,http_529=2");
    c.kernel = Kernel::scalar;
    const SimResult scalar = simulate(cs.m, cs.pol, c);
    EXPECT_EQ(scalar.kernel, "scalar");
    expect_trace_sums_to_simulate(cs.m, cs.pol, c);
    for (const Kernel k : run) {
      c.kernel = k;
      const SimResult got = simulate(cs.m, cs.pol, c);
      EXPECT_EQ(got.kernel, cs.pol.r < 16 ? kernel_name(k) : "scalar") << kernel_name(k);
      EXPECT_EQ(got.successes, scalar.successes) << kernel_name(k) << " r = " << cs.pol.r;
      EXPECT_EQ(got.requests, scalar.requests) << kernel_name(k);
      EXPECT_EQ(got.calls_succeeded, scalar.calls_succeeded) << kernel_name(k);
      EXPECT_EQ(got.faults, scalar.faults) << kernel_name(k);
      EXPECT_EQ(got.done_by_requests, scalar.done_by_requests) << kernel_name(k);
      EXPECT_EQ(got.env_by_requests, scalar.env_by_requests) << kernel_name(k);
    }
  }
  // auto picks the fastest this CPU has; the general walk says so.
  SimConfig c;
  c.tasks = 100;
  EXPECT_EQ(simulate(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c).kernel,
            kernel_name(run.back()));
  EXPECT_EQ(simulate(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .s = 2, .kind = PolicyKind::layered}, c).kernel,
            "walk");
  EXPECT_EQ(parse_kernel("avx2"), Kernel::avx2);
  EXPECT_THROW(parse_kernel("sse"), InputError);
}

TEST(Trace, SumsToSimulateTotalsForBothScopesAndEveryKernel) {
  SimConfig c;
  c.tasks = 3001;  // not a multiple of any vector width
  c.seed = 77;
  expect_trace_sums_to_simulate(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple},
                                c);  // vector kernel
  expect_trace_sums_to_simulate(Model{.p = 0.6, .q = 0.9}, Policy{.n = 7, .r = 3, .kind = PolicyKind::simple},
                                c);  // later chain blocks, > 4 bad
  expect_trace_sums_to_simulate(Model{.p = 0.7, .q = 0.95}, Policy{.n = 3, .r = 20, .kind = PolicyKind::simple},
                                c);  // r >= 16: scalar kernel
  expect_trace_sums_to_simulate(Model{.p = 0.3, .q = 0.8, .b = 2, .g = 3},
                                Policy{.n = 4, .r = 1, .kind = PolicyKind::simple}, c);  // silent steps
  expect_trace_sums_to_simulate(Model{.p = 1.0, .q = 1.0}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple},
                                c);  // every request bad
  expect_trace_sums_to_simulate(Model{.p = 0.0, .q = 0.0}, Policy{.n = 3, .r = 1, .kind = PolicyKind::simple},
                                c);  // none bad
  c.kinds = parse_fault_weights("cut=1,stall=3,http_400=0.5");
  expect_trace_sums_to_simulate(Model{.p = 0.4, .q = 0.7}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c);
  c.lanes = 7;
  c.tasks = 1501;
  expect_trace_sums_to_simulate(Model{.p = 0.3, .q = 0.8, .chain = ChainScope::continuous},
                                Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c);
  expect_trace_sums_to_simulate(Model{.p = 0.5, .q = 0.9, .b = 1, .g = 2, .chain = ChainScope::continuous},
                                Policy{.n = 3, .r = 1, .kind = PolicyKind::simple}, c);
}

// The documented scheme, rebuilt here from rng.hpp and the model's formulas
// alone: attempt j of a call is bad when its uniform is below P(first j + 1
// bad), and the m-th bad request of a task takes kind word m.
TEST(Trace, RequestsFollowTheDocumentedScheme) {
  const double p = 0.3, q = 0.8, p0 = p * (1 - q) / (1 - p);
  const int r = 2;
  const Model m{.p = p, .q = q};
  const Policy pol{.n = 3, .r = r, .kind = PolicyKind::simple};
  SimConfig c;
  c.tasks = 500;
  c.seed = 4242;
  c.kinds = parse_fault_weights("cut=1,stall=3");
  for (std::int64_t t = 0; t < c.tasks; ++t) {
    std::vector<RequestDraw> want;
    std::uint64_t bad_index = 0;
    bool failed = false;
    for (std::int64_t call = 0; call < pol.n && !failed; ++call) {
      const double u = rng::call_uniform(c.seed, static_cast<std::uint64_t>(t), static_cast<std::uint64_t>(call));
      double threshold = call == 0 ? p : p0;
      for (int j = 0; j <= r; ++j, threshold *= q) {
        if (u < threshold) {
          const std::uint32_t w = rng::kind_word(c.seed, static_cast<std::uint64_t>(t), bad_index++);
          want.push_back({call, j, true, w < (1ULL << 30) ? FaultKind::cut : FaultKind::stall});
          failed = j == r;
        } else {
          want.push_back({call, j, false, FaultKind::cut});
          break;
        }
      }
    }
    const TaskTrace got = trace_task(m, pol, c, t);
    ASSERT_EQ(got.requests.size(), want.size()) << "task " << t;
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got.requests[i].call, want[i].call);
      EXPECT_EQ(got.requests[i].attempt, want[i].attempt);
      EXPECT_EQ(got.requests[i].bad, want[i].bad);
      if (want[i].bad) {
        EXPECT_EQ(got.requests[i].kind, want[i].kind);
      }
    }
    EXPECT_EQ(got.outcome, failed ? Outcome::env_error : Outcome::done);
  }
}

TEST(Trace, RejectsTasksOutsideTheRun) {
  SimConfig c;
  c.tasks = 10;
  EXPECT_THROW(trace_task(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c, 10),
               InputError);
  EXPECT_THROW(trace_task(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, c, -1),
               InputError);
}

// ---------------------------------------------------------------- determinism

void expect_same_result(const SimResult& a, const SimResult& b) {
  EXPECT_EQ(a.successes, b.successes);
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_EQ(a.calls_succeeded, b.calls_succeeded);
  EXPECT_EQ(a.faults, b.faults);
  EXPECT_EQ(a.done_by_requests, b.done_by_requests);
  EXPECT_EQ(a.env_by_requests, b.env_by_requests);
  EXPECT_EQ(a.pairs_after, b.pairs_after);
  EXPECT_EQ(a.done_after, b.done_after);
}

TEST(Simulate, SameTotalsForAnyThreadCount) {
  for (const ChainScope scope : {ChainScope::fresh, ChainScope::continuous}) {
    const Model m{.p = 0.3, .q = 0.8, .b = 1, .chain = scope};
    SimConfig c;
    c.tasks = 100'003;
    c.threads = 1;
    const SimResult one = simulate(m, Policy{.n = 3, .r = 2, .kind = PolicyKind::simple}, c);
    for (const int threads : {2, 3, 8}) {
      c.threads = threads;
      expect_same_result(one, simulate(m, Policy{.n = 3, .r = 2, .kind = PolicyKind::simple}, c));
    }
  }
}

TEST(Simulate, RejectsConfigOutsideItsRange) {
  const Model m{.p = 0.3, .q = 0.8};
  const Policy pol{.n = 2, .r = 2, .kind = PolicyKind::simple};
  SimConfig c;
  c.tasks = 0;
  EXPECT_THROW(simulate(m, pol, c), InputError);
  c.tasks = kMaxTasks + 1;
  EXPECT_THROW(simulate(m, pol, c), InputError);
  c = {};
  c.lanes = 0;
  EXPECT_THROW(simulate(m, pol, c), InputError);
  c.lanes = kMaxLanes + 1;
  EXPECT_THROW(simulate(m, pol, c), InputError);
  c = {};
  c.threads = -1;
  EXPECT_THROW(simulate(m, pol, c), InputError);
  c = {};
  c.kinds = FaultWeights{};
  EXPECT_THROW(simulate(m, pol, c), InputError);
  c = {};
  Policy budgeted = pol;
  budgeted.kind = PolicyKind::budgeted;  // B = 0: no cap given
  EXPECT_THROW(simulate(m, budgeted, c), InputError);
}

// ---------------------------------------------------------------- agreement with the exact engine

// P(success) of a task whose first request has the hidden-state law of row
// `from` of P^(1+g): the success probability after a done (0) or failed (1) task.
double success_after(const Model& m, const Policy& pol, int from) {
  const Chain c = gilbert_chain(m);
  ExactOptions o;
  o.distribution = false;
  return exact_matrix_from(c, c.gap.row(from), pol, o).success;
}

TEST(Simulate, RatesLieInsideTheir999WilsonIntervalOnAGridOf54Cases) {
  struct Shape {
    std::int64_t n;
    int r;
    std::int64_t b, g;
  };
  const Shape shapes[] = {{2, 2, 0, 0}, {5, 1, 0, 0}, {3, 3, 2, 1}};
  int cases = 0, seed = 1000;
  for (const double p : {0.05, 0.3, 0.6})
    for (const double q : {p, 0.8, 0.95})
      for (const Shape& sh : shapes)
        for (const ChainScope scope : {ChainScope::fresh, ChainScope::continuous}) {
          const Model m{.p = p, .q = q, .b = sh.b, .g = sh.g, .chain = scope};
          const Policy pol{.n = sh.n, .r = sh.r, .kind = PolicyKind::simple};
          SimConfig c;
          c.tasks = 20'000;
          c.seed = static_cast<std::uint64_t>(seed++);
          const SimResult sim = simulate(m, pol, c);
          const double exact = exact_success(m, pol);
          // In a continuous lane successes form a two-state Markov chain
          // (a task ends good exactly when it succeeds), lag-1 correlation
          // lambda; its variance inflation widens the interval.
          double design_effect = 1.0;
          if (scope == ChainScope::continuous) {
            const double lambda = success_after(m, pol, 0) - success_after(m, pol, 1);
            design_effect = (1.0 + lambda) / (1.0 - lambda);
          }
          const Interval ci = effective_interval(IntervalKind::wilson, sim.successes, sim.tasks, 0.999, design_effect);
          EXPECT_TRUE(ci.covers(exact)) << "p=" << p << " q=" << q << " n=" << sh.n << " r=" << sh.r << " b=" << sh.b
                                        << " g=" << sh.g << " " << to_string(scope) << ": " << sim.successes << "/"
                                        << sim.tasks << " [" << ci.low << ", " << ci.high << "] exact " << exact;
          // Every bad request got a kind; the good ones are the successful calls.
          EXPECT_EQ(sim.bad_requests(), sim.requests - sim.calls_succeeded);
          ++cases;
        }
  EXPECT_GE(cases, 50);
}

TEST(Simulate, LaneCorrelationEstimateMatchesTheExactOne) {
  const Model m{.p = 0.3, .q = 0.8, .chain = ChainScope::continuous};
  const Policy pol{.n = 2, .r = 2, .kind = PolicyKind::simple};
  SimConfig c;
  c.tasks = 400'000;
  const SimResult sim = simulate(m, pol, c);
  const double lambda = success_after(m, pol, 0) - success_after(m, pol, 1);
  EXPECT_NEAR(sim.lag_correlation(), lambda, 0.02);
  EXPECT_EQ(sim.pairs_after[0] + sim.pairs_after[1], c.tasks - c.lanes);
  EXPECT_EQ(simulate(Model{.p = 0.3, .q = 0.8}, pol, c).design_effect(), 1.0);
}

TEST(Simulate, Wilson95CoversTheExactValueAbout95PercentOfTheTime) {
  const Model m{.p = 0.3, .q = 0.8};
  const Policy pol{.n = 2, .r = 2, .kind = PolicyKind::simple};
  const double exact = exact_success(m, pol);
  SimConfig c;
  c.tasks = 200;
  c.threads = 1;
  const int runs = 2000;
  int covered = 0;
  for (int i = 0; i < runs; ++i) {
    c.seed = 5'000'000 + static_cast<std::uint64_t>(i);
    const SimResult sim = simulate(m, pol, c);
    covered += binomial_interval(IntervalKind::wilson, sim.successes, sim.tasks, 0.95).covers(exact);
  }
  const double share = static_cast<double>(covered) / runs;
  EXPECT_GE(share, 0.93);
  EXPECT_LE(share, 0.97);
}

// Pearson's chi-square of simulated counts against the exact distribution of
// (outcome, requests), bins with expectation below 5 pooled.
void expect_histogram_matches(const Model& m, const Policy& pol, std::int64_t tasks, std::uint64_t seed) {
  const ExactResult ex = exact_matrix(m, pol);
  ASSERT_TRUE(ex.distribution_complete);
  SimConfig c;
  c.tasks = tasks;
  c.seed = seed;
  const SimResult sim = simulate(m, pol, c);
  std::int64_t seen_in_bins = 0;
  double chi2 = 0.0, pooled_expect = 0.0, pooled_seen = 0.0;
  int df = -1;
  for (const RequestBin& bin : ex.requests) {
    const auto& hist = bin.outcome == Outcome::done ? sim.done_by_requests : sim.env_by_requests;
    const double seen = static_cast<double>(hist.at(static_cast<std::size_t>(bin.requests)));
    const double expect = bin.probability * static_cast<double>(tasks);
    seen_in_bins += static_cast<std::int64_t>(seen);
    if (expect < 5.0) {
      pooled_expect += expect;
      pooled_seen += seen;
      continue;
    }
    chi2 += (seen - expect) * (seen - expect) / expect;
    ++df;
  }
  if (pooled_expect > 0.0) {
    chi2 += (pooled_seen - pooled_expect) * (pooled_seen - pooled_expect) / std::max(pooled_expect, 1e-300);
    ++df;
  }
  EXPECT_EQ(seen_in_bins, tasks);  // no task outside the exact support
  ASSERT_GE(df, 1);
  const double limit = boost::math::quantile(boost::math::chi_squared_distribution<double>(df), 0.999);
  EXPECT_LT(chi2, limit) << "df " << df;
}

TEST(Simulate, RequestHistogramMatchesTheExactDistribution) {
  expect_histogram_matches(Model{.p = 0.3, .q = 0.8}, Policy{.n = 2, .r = 2, .kind = PolicyKind::simple}, 1'000'000,
                           11);
  expect_histogram_matches(Model{.p = 0.5, .q = 0.9, .b = 1, .g = 2},
                           Policy{.n = 3, .r = 2, .kind = PolicyKind::simple}, 300'000, 12);
  expect_histogram_matches(Model{.p = 0.2, .q = 0.6}, Policy{.n = 4, .r = 20, .kind = PolicyKind::simple}, 200'000,
                           13);  // scalar kernel
}

TEST(Simulate, StallIsThreeQuartersOfFaultsWithWeightsCut1Stall3) {
  const Model m{.p = 0.3, .q = 0.8};
  const Policy pol{.n = 2, .r = 2, .kind = PolicyKind::simple};
  SimConfig c;
  c.tasks = 200'000;
  c.kinds = parse_fault_weights("cut=1,stall=3");
  const SimResult sim = simulate(m, pol, c);
  const std::int64_t bad = sim.bad_requests();
  const std::int64_t stall = sim.faults[static_cast<std::size_t>(FaultKind::stall)];
  EXPECT_TRUE(binomial_interval(IntervalKind::wilson, stall, bad, 0.999).covers(0.75)) << stall << "/" << bad;
  for (int k = 0; k < kFaultKinds; ++k)
    if (k != static_cast<int>(FaultKind::cut) && k != static_cast<int>(FaultKind::stall)) {
      EXPECT_EQ(sim.faults[static_cast<std::size_t>(k)], 0) << to_string(static_cast<FaultKind>(k));
    }
  // Simple policy: the good requests are exactly the successful calls.
  EXPECT_EQ(bad, sim.requests - sim.calls_succeeded);
  // And the successful calls follow from the histogram's done tasks plus the
  // calls finished before the failing one of each env_error task.
  std::int64_t done_tasks = 0;
  for (const auto x : sim.done_by_requests) done_tasks += x;
  EXPECT_EQ(done_tasks, sim.successes);
  EXPECT_GE(sim.calls_succeeded, done_tasks * pol.n);
}

}  // namespace
}  // namespace relsim
