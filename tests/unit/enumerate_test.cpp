// Enumeration against the transfer matrix (docs/model.md, Exact answers: the same success
// probability and request distribution to 1e-12), and its promise of the
// same bits for any number of threads.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <utility>

#include "relsim/core/error.hpp"
#include "relsim/exact/enumerate.hpp"
#include "relsim/exact/exact.hpp"
#include "support/closed_form.hpp"

namespace relsim {
namespace {

using relsim_test::Case;
using Bins = std::map<std::pair<std::int64_t, int>, double>;

Bins bins_of(const ExactResult& r) {
  Bins out;
  for (const auto& bin : r.requests) {
    const auto key = std::pair{bin.requests, static_cast<int>(bin.outcome)};
    EXPECT_EQ(out.count(key), 0u) << "bin listed twice: " << bin.requests;
    out[key] = bin.probability;
  }
  return out;
}

// Largest |a - b| over the union of bins (a bin missing on one side is 0).
double bin_by_bin_diff(const ExactResult& a, const ExactResult& b) {
  const Bins x = bins_of(a), y = bins_of(b);
  double diff = 0.0;
  for (const auto& [key, value] : x) diff = std::max(diff, std::abs(value - (y.count(key) ? y.at(key) : 0.0)));
  for (const auto& [key, value] : y) diff = std::max(diff, std::abs(value - (x.count(key) ? x.at(key) : 0.0)));
  return diff;
}

bool sorted_done_before_env(const ExactResult& r) {
  for (std::size_t i = 1; i < r.requests.size(); ++i) {
    const auto& u = r.requests[i - 1];
    const auto& v = r.requests[i];
    if (std::pair{u.requests, static_cast<int>(u.outcome)} >= std::pair{v.requests, static_cast<int>(v.outcome)})
      return false;
  }
  return true;
}

TEST(Enumerate, MatchesMatrixInSuccessAndEveryBinOn250RandomParameterSets) {
  std::mt19937_64 rng(0x5eed2026);
  int with_silent = 0, continuous = 0, high_p = 0, longest = 0;
  for (int i = 0; i < 250; ++i) {
    Case c = relsim_test::random_case(rng, 16);
    with_silent += c.b > 0 || c.g > 0;
    continuous += c.continuous;
    high_p += c.p > 0.5;
    longest = std::max<int>(longest, static_cast<int>(c.length()));
    const ExactResult m = exact_matrix(c.model(), c.policy());
    const ExactResult e = exact_enumerate(c.model(), c.policy());
    ASSERT_TRUE(m.distribution_complete) << c.str();
    EXPECT_EQ(m.pruned_mass, 0.0) << c.str();
    EXPECT_NEAR(m.success, e.success, 1e-12) << c.str();
    EXPECT_NEAR(m.env_error, e.env_error, 1e-12) << c.str();
    EXPECT_LT(max_abs_diff(m, e), 1e-12) << c.str();
    EXPECT_LT(bin_by_bin_diff(m, e), 1e-12) << c.str();
    EXPECT_NEAR(m.mean_requests, e.mean_requests, 1e-12 * std::max(1.0, m.mean_requests)) << c.str();
    EXPECT_EQ(m.max_requests, e.max_requests) << c.str();
    EXPECT_TRUE(sorted_done_before_env(m)) << c.str();
    EXPECT_TRUE(sorted_done_before_env(e)) << c.str();
    EXPECT_EQ(e.method, "enumerate");
    EXPECT_EQ(m.method, "matrix");
  }
  // The generator really covered silent steps, the continuous scope, p > 1/2 and long tasks.
  EXPECT_GT(with_silent, 50);
  EXPECT_GT(continuous, 50);
  EXPECT_GT(high_p, 20);
  EXPECT_EQ(longest, 16);
}

TEST(Enumerate, NaiveAndFastEnumerationAgreeOn40RandomParameterSets) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 40; ++i) {
    Case c = relsim_test::random_case(rng, 12);
    const ExactResult fast = exact_enumerate(c.model(), c.policy());
    const ExactResult naive = exact_enumerate_naive(c.model(), c.policy());
    EXPECT_LT(max_abs_diff(fast, naive), 1e-13) << c.str();
    EXPECT_EQ(fast.max_requests, naive.max_requests) << c.str();
  }
}

TEST(Enumerate, MatchesMatrixAcrossTheTailTableBoundaryAtLengths9To20) {
  // The enumeration switches to tail tables for the last 10 requests and to
  // blocks above that: lengths on both sides of each switch, every split of
  // n and r, where a task often ends well before the table takes over.
  for (const auto& [n, r] : std::vector<std::pair<int, int>>{
           {9, 0}, {10, 0}, {11, 0}, {3, 3}, {1, 10}, {2, 5}, {11, 1}, {2, 10}, {4, 4}, {1, 19}, {20, 0}, {5, 3}}) {
    for (bool cont : {false, true}) {
      Case c{0.3, 0.8, r, n, 1, 2, cont};
      const ExactResult m = exact_matrix(c.model(), c.policy());
      const ExactResult e = exact_enumerate(c.model(), c.policy());
      EXPECT_LT(max_abs_diff(m, e), 1e-12) << c.str();
      EXPECT_LT(bin_by_bin_diff(m, e), 1e-12) << c.str();
      EXPECT_EQ(m.max_requests, e.max_requests) << c.str();
      EXPECT_NEAR(m.mean_requests, e.mean_requests, 1e-12 * m.mean_requests) << c.str();
    }
  }
}

TEST(Enumerate, ContinuousScopeMatchesMatrixWhenGapRowsSumAboveOne) {
  // A found case: the gap matrix P^6 has rows summing to 1 + 4e-16; the
  // continuous scope's long-run start must not turn that into NaN (which
  // used to come out as success 0, env_error 0, no bins).
  Case c{0.48764660441721203, 0.52312126894344324, 0, 1, 0, 5, true};
  const ExactResult m = exact_matrix(c.model(), c.policy());
  const ExactResult e = exact_enumerate(c.model(), c.policy());
  EXPECT_NEAR(m.success, relsim_test::closed_success(c), 1e-12);
  EXPECT_NEAR(e.success, relsim_test::closed_success(c), 1e-12);
  EXPECT_NEAR(e.success + e.env_error, 1.0, 1e-12);
  EXPECT_LT(max_abs_diff(m, e), 1e-12);
  EXPECT_EQ(e.max_requests, 1);
  // and one with retries and two calls
  Case d{0.10240182658096611, 0.78332036399503147, 4, 2, 0, 6, true};
  EXPECT_LT(max_abs_diff(exact_matrix(d.model(), d.policy()), exact_enumerate(d.model(), d.policy())), 1e-12);
}

TEST(Enumerate, LengthsAboveTenWithEarlyEndsDoNotTripAnInternalAssertion) {
  // Long calls (r = 10) leave policy states that the tail tables see at
  // depths they can never be reached at; enumeration must still run.
  for (const Case& c : {Case{0.3, 0.8, 10, 2, 0, 0, false}, Case{0.3, 0.8, 5, 2, 0, 0, false},
                        Case{0.3, 0.8, 11, 1, 0, 0, false}}) {
    ExactResult e;
    ASSERT_NO_THROW(e = exact_enumerate(c.model(), c.policy())) << c.str();
    EXPECT_NEAR(e.success, relsim_test::closed_success(c), 1e-12) << c.str();
  }
}

void expect_bit_identical(const ExactResult& a, const ExactResult& b, const std::string& what) {
  EXPECT_EQ(std::memcmp(&a.success, &b.success, sizeof(double)), 0) << what;
  EXPECT_EQ(std::memcmp(&a.env_error, &b.env_error, sizeof(double)), 0) << what;
  EXPECT_EQ(std::memcmp(&a.mean_requests, &b.mean_requests, sizeof(double)), 0) << what;
  EXPECT_EQ(std::memcmp(&a.log10_success, &b.log10_success, sizeof(double)), 0) << what;
  EXPECT_EQ(a.max_requests, b.max_requests) << what;
  ASSERT_EQ(a.requests.size(), b.requests.size()) << what;
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].requests, b.requests[i].requests) << what;
    EXPECT_EQ(a.requests[i].outcome, b.requests[i].outcome) << what;
    EXPECT_EQ(std::memcmp(&a.requests[i].probability, &b.requests[i].probability, sizeof(double)), 0)
        << what << " bin " << i;
  }
}

TEST(Enumerate, BitIdenticalFor1And2And8ThreadsAtLength22) {
  for (const Case& c : {Case{0.3, 0.8, 10, 2, 1, 3, false}, Case{0.2, 0.9, 1, 11, 0, 2, true}}) {
    ASSERT_EQ(c.length(), 22);
    const ExactResult one = exact_enumerate(c.model(), c.policy(), {kDefaultMaxEnumerateLength, 1});
    const ExactResult two = exact_enumerate(c.model(), c.policy(), {kDefaultMaxEnumerateLength, 2});
    const ExactResult eight = exact_enumerate(c.model(), c.policy(), {kDefaultMaxEnumerateLength, 8});
    expect_bit_identical(one, two, c.str() + " threads 1 vs 2");
    expect_bit_identical(one, eight, c.str() + " threads 1 vs 8");
    EXPECT_LT(max_abs_diff(one, exact_matrix(c.model(), c.policy())), 1e-12) << c.str();
  }
}

TEST(Enumerate, RefusesSequencesLongerThanMaxLengthNamingTheLimit) {
  Model m;
  m.p = 0.3;
  m.q = 0.8;
  try {
    exact_enumerate(m, Policy{14, 2});  // n(r+1) = 42 > 40
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("42"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("40"), std::string::npos) << e.what();
  }
  EXPECT_THROW(exact_enumerate(m, Policy{2, 2}, {kHardMaxEnumerateLength + 1, 1}), InputError);
  EXPECT_THROW(exact_enumerate(m, Policy{2, 2}, {0, 1}), InputError);
  EXPECT_THROW(exact_enumerate(m, Policy{2, 2}, {kDefaultMaxEnumerateLength, -1}), InputError);
  EXPECT_THROW(exact_enumerate(m, Policy{5, 1}, {9, 1}), InputError);
  EXPECT_NO_THROW(exact_enumerate(m, Policy{5, 1}, {10, 1}));
}

}  // namespace
}  // namespace relsim

namespace relsim {
namespace {

// The enumeration sees only good and bad requests: its outcome classes come
// from the kind weights, and must match the matrix, which tracks every kind.
TEST(Enumerate, OutcomeClassesMatchTheMatrixForEveryKindMix) {
  Model m;
  m.p = 0.3;
  m.q = 0.8;
  Policy pol;
  pol.n = 3;
  pol.r = 2;
  for (const char* spec : {"cut=1,no_stop=1,malformed=1,overloaded=1,stall=1", "cut=1,stall=3", "slow_headers=2,http_529=1,reset=1"}) {
    SCOPED_TRACE(spec);
    EnumerateOptions eopt;
    eopt.kinds = parse_fault_weights(spec);
    ExactOptions mopt;
    mopt.kinds = eopt.kinds;
    const ExactResult e = exact_enumerate(m, pol, eopt);
    const ExactResult x = exact_matrix(m, pol, mopt);
    ASSERT_EQ(e.outcomes.size(), x.outcomes.size());
    for (std::size_t o = 0; o < e.outcomes.size(); ++o)
      EXPECT_NEAR(e.outcomes[o], x.outcomes[o], 1e-14) << outcome_class(static_cast<int>(o)).name();
  }
}

TEST(Enumerate, RefusesAFatalKindItCannotSee) {
  Model m;
  m.p = 0.3;
  Policy pol;
  pol.n = 2;
  pol.r = 2;
  EnumerateOptions eopt;
  eopt.kinds = parse_fault_weights("cut=1,http_400=1");
  try {
    exact_enumerate(m, pol, eopt);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("http_400"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relsim
