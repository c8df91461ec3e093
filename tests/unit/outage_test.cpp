// The mock server's outage schedule without a server (core/outage.hpp): a
// pure function of the seed, with the law it promises (first state
// stationary, exponential sojourns of the given means, kinds by weight, as
// the simulator cuts them), strict parsing, and the same answers after its
// oldest part is let go. The server that answers by it is
// tests/live/outage_server_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/outage.hpp"
#include "relsim/montecarlo/simulate.hpp"

namespace relsim {
namespace {

OutageConfig outage_config(double t_good, double t_bad, std::uint64_t seed, double scale = 1.0) {
  OutageConfig c;
  c.t_good = t_good;
  c.t_bad = t_bad;
  c.seed = seed;
  c.time_scale = scale;
  return c;
}

// z standard errors of a mean of n draws with standard deviation sd.
double bound(double sd, double n, double z = 5.0) { return z * sd / std::sqrt(n); }

TEST(OutageSchedule, TheSameSeedDrawsTheSameScheduleAndAnotherSeedAnother) {
  OutageSchedule a(outage_config(2.0, 1.0, 11)), b(outage_config(2.0, 1.0, 11)), c(outage_config(2.0, 1.0, 12));
  const OutageView va = a.view(500.0), vb = b.view(500.0), vc = c.view(500.0);
  ASSERT_GT(va.bad.size(), 50u);
  EXPECT_EQ(va.bad, vb.bad);
  EXPECT_NE(va.bad, vc.bad);
  // Asking in another order (a state first, far ahead) changes nothing.
  OutageSchedule d(outage_config(2.0, 1.0, 11));
  d.bad_at(400.0);
  EXPECT_EQ(d.view(500.0).bad, va.bad);
}

TEST(OutageSchedule, IntervalsAreOrderedDisjointAndAgreeWithTheState) {
  OutageSchedule s(outage_config(0.7, 0.3, 5));
  const OutageView v = s.view(300.0);
  EXPECT_EQ(v.from, 0.0);
  EXPECT_EQ(v.now, 300.0);
  double last_end = -1.0;
  for (const OutageInterval& i : v.bad) {
    EXPECT_LT(i.start, i.end);
    EXPECT_GT(i.start, last_end);  // a good stretch between two bad ones
    EXPECT_LT(i.start, 300.0);
    EXPECT_TRUE(s.bad_at(0.5 * (i.start + i.end)));
    if (i.start > 1e-9) {
      EXPECT_FALSE(s.bad_at(i.start * (1 - 1e-12) - 1e-12)) << i.start;
    }
    EXPECT_FALSE(s.bad_at(i.end + 1e-9));
    last_end = i.end;
  }
}

// Over many seeds the first state is bad with p = t_bad / (t_good + t_bad).
TEST(OutageSchedule, TheFirstStateIsStationary) {
  const double t_good = 3.0, t_bad = 1.0, p = t_bad / (t_good + t_bad);
  const int seeds = 20000;
  int bad = 0;
  for (int seed = 1; seed <= seeds; ++seed) bad += OutageSchedule(outage_config(t_good, t_bad, seed)).bad_at(0.0);
  EXPECT_NEAR(static_cast<double>(bad) / seeds, p, bound(std::sqrt(p * (1 - p)), seeds));
}

// Sojourns are exponential with the given means (sd = mean), and the share
// of bad time tends to p.
TEST(OutageSchedule, SojournsHaveTheGivenMeansAndTheBadShareIsP) {
  const double t_good = 4.0, t_bad = 1.5, horizon = 200000.0;
  OutageSchedule s(outage_config(t_good, t_bad, 20261001));
  const OutageView v = s.view(horizon);
  double bad_time = 0.0, good_time = 0.0;
  double sq_bad = 0.0;
  const std::size_t n = v.bad.size() - 1;  // whole bad intervals, and the good gaps between them
  for (std::size_t i = 0; i + 1 < v.bad.size(); ++i) {
    const double b = v.bad[i].end - v.bad[i].start;
    bad_time += b;
    sq_bad += b * b;
    good_time += v.bad[i + 1].start - v.bad[i].end;
  }
  const double count = static_cast<double>(n);
  EXPECT_NEAR(bad_time / count, t_bad, bound(t_bad, count));
  EXPECT_NEAR(good_time / count, t_good, bound(t_good, count));
  // Exponential: E[X^2] = 2 mean^2 (sd of X^2 = sqrt(20) mean^2).
  EXPECT_NEAR(sq_bad / count, 2 * t_bad * t_bad, bound(std::sqrt(20.0) * t_bad * t_bad, count));
  EXPECT_NEAR(bad_time / (bad_time + good_time), t_bad / (t_good + t_bad), 0.01);
}

// A bad request's kind is the simulator's kind for the same word.
TEST(OutageSchedule, KindsAreCutFromTheKindWordAsTheSimulatorCutsThem) {
  OutageConfig c = outage_config(1.0, 1.0, 77);
  c.kinds = parse_fault_weights("cut=1,http_529=3,stall=0.5");
  const OutageSchedule s(c);
  Model m;
  m.p = 0.3;
  m.q = 0.3;
  Policy policy;
  policy.n = 1;
  policy.r = 0;
  const DrawScheme scheme = DrawScheme::make(m, policy, c.kinds);
  int counts[kFaultKinds] = {};
  const int draws = 40000;
  for (std::int64_t task = 0; task < 200; ++task)
    for (std::int64_t k = 0; k < draws / 200; ++k) {
      const FaultKind kind = s.kind_of(task, k);
      ASSERT_EQ(kind, scheme.kind(rng::kind_word(c.seed, static_cast<std::uint64_t>(task), static_cast<std::uint64_t>(k))));
      ++counts[static_cast<int>(kind)];
    }
  EXPECT_EQ(counts[static_cast<int>(FaultKind::cut)] + counts[static_cast<int>(FaultKind::http_529)] +
                counts[static_cast<int>(FaultKind::stall)],
            draws);
  const double share = 3.0 / 4.5;
  EXPECT_NEAR(counts[static_cast<int>(FaultKind::http_529)] / double(draws), share,
              bound(std::sqrt(share * (1 - share)), draws));
}

// Past kMaxOutageSwitches the oldest half is let go; a question about a time
// before what is kept is answered by drawing again, the same.
TEST(OutageSchedule, LettingTheOldestPartGoChangesNoAnswer) {
  OutageSchedule long_run(outage_config(1.0, 1.0, 3)), fresh(outage_config(1.0, 1.0, 3));
  const OutageView early = fresh.view(50.0);
  const OutageView late = long_run.view(1.2 * static_cast<double>(kMaxOutageSwitches));
  EXPECT_GT(late.from, 0.0);
  EXPECT_LT(late.bad.size(), kMaxOutageSwitches / 2 + 1);
  for (const OutageInterval& i : early.bad) {
    EXPECT_TRUE(long_run.bad_at(0.5 * (i.start + i.end)));
    EXPECT_FALSE(long_run.bad_at(i.end + 1e-9));
  }
}

TEST(OutageConfig, SojournsParseStrictlyAndNameTheBadPart) {
  EXPECT_EQ(parse_outage_sojourns("120,30"), (std::array<double, 2>{120.0, 30.0}));
  EXPECT_EQ(parse_outage_sojourns("0.5,2e1"), (std::array<double, 2>{0.5, 20.0}));
  const auto message = [](const std::string& spec) {
    try {
      parse_outage_sojourns(spec);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("120").find("is not T_GOOD,T_BAD"), std::string::npos);
  EXPECT_NE(message("1,2,3").find("is not T_GOOD,T_BAD"), std::string::npos);
  EXPECT_NE(message("0,30").find("t_good = 0 is out of range"), std::string::npos);
  EXPECT_NE(message("30,-1").find("t_bad = -1 is out of range"), std::string::npos);
  EXPECT_NE(message("abc,1").find("t_good = 'abc' is not a number"), std::string::npos);
  EXPECT_NE(message("1,inf").find("t_bad = 'inf' is not a number"), std::string::npos);
  EXPECT_NE(message(",1").find("t_good = '' is not a number"), std::string::npos);
}

TEST(OutageConfig, RefusesSojournsShorterThanAMillisecondOfWallTime) {
  EXPECT_NO_THROW(validate(outage_config(2.0, 1.0, 1, 0.001)));
  EXPECT_THROW(validate(outage_config(2.0, 0.5, 1, 0.001)), InputError);
  EXPECT_THROW(validate(outage_config(2.0, 1.0, 1, 0.0)), InputError);
  EXPECT_THROW(validate(outage_config(2.0, 1.0, 1, std::nan(""))), InputError);
  EXPECT_THROW(validate(outage_config(0.0, 1.0, 1)), InputError);
  EXPECT_THROW(validate(outage_config(2e9, 1.0, 1)), InputError);
}

}  // namespace
}  // namespace relsim
