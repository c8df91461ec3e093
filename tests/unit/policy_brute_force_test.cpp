// An independent brute force of all four policies (simple, naive, layered,
// budgeted), written from docs/policies.md and docs/model.md alone: plain
// loops over every kind-labelled good/bad request sequence, the two-state
// chain written out by hand, and each policy's call/retry loop re-implemented
// here as a client would write it (an HTTP layer with s retries nested in a
// stream layer with r retries). Nothing here calls react, TaskRunner, the
// oracle or any other relsim policy code; relsim's public types are used
// only to call exact_matrix and to read its result, which must agree with
// the brute force in every outcome class and every (requests, outcome) bin.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "relsim/exact/exact.hpp"

namespace relsim {
namespace {

// ---------------------------------------------------------------------------
// Fault kinds and their stages, as docs/model.md ("Fault kinds") lists them.

enum class Where { in_stream, pre_response, fatal };

struct Kind {
  const char* name;
  Where where;
  FaultKind id;  // only to fill relsim's FaultWeights
};

constexpr Kind kKinds[] = {
    {"cut", Where::in_stream, FaultKind::cut},
    {"no_stop", Where::in_stream, FaultKind::no_stop},
    {"malformed", Where::in_stream, FaultKind::malformed},
    {"overloaded", Where::in_stream, FaultKind::overloaded},
    {"stall", Where::in_stream, FaultKind::stall},
    {"slow_headers", Where::pre_response, FaultKind::slow_headers},
    {"http_429", Where::pre_response, FaultKind::http_429},
    {"http_500", Where::pre_response, FaultKind::http_500},
    {"http_503", Where::pre_response, FaultKind::http_503},
    {"http_529", Where::pre_response, FaultKind::http_529},
    {"reset", Where::pre_response, FaultKind::reset},
    {"http_400", Where::fatal, FaultKind::http_400},
};
constexpr int kKindCount = static_cast<int>(sizeof(kKinds) / sizeof(kKinds[0]));

int kind_index(const std::string& name) {
  for (int i = 0; i < kKindCount; ++i)
    if (name == kKinds[i].name) return i;
  ADD_FAILURE() << "no kind " << name;
  return 0;
}

// naive's stream layer catches connection and timeout errors only: cut,
// no_stop, malformed, and slow_headers / reset once the HTTP layer gave up.
bool naive_stream_layer_catches(int k) {
  const std::string name = kKinds[k].name;
  return name == "cut" || name == "no_stop" || name == "malformed" || name == "slow_headers" || name == "reset";
}

// Outcome classes, numbered here: done, harness_error, hang,
// env_error:<kind> (3 + k), crash:<kind> (3 + kKindCount + k).
constexpr int kDone = 0, kHarness = 1, kHang = 2;
constexpr int kClasses = 3 + 2 * kKindCount;
int env_error(int k) { return 3 + k; }
int crash(int k) { return 3 + kKindCount + k; }

std::string class_name(int o) {
  if (o == kDone) return "done";
  if (o == kHarness) return "harness_error";
  if (o == kHang) return "hang";
  if (o < 3 + kKindCount) return std::string("env_error:") + kKinds[o - 3].name;
  return std::string("crash:") + kKinds[o - 3 - kKindCount].name;
}

// The outcome without its kind, as the distribution's bins carry it.
std::string class_word(int o) {
  const std::string name = class_name(o);
  return name.substr(0, name.find(':'));
}

bool class_is_wrong(int o) { return o == kHang || o >= 3 + kKindCount; }  // crash or hang
bool class_is_env_error(int o) { return o >= 3 && o < 3 + kKindCount; }

// ---------------------------------------------------------------------------
// The policies, one call at a time, over a sequence of requests.

struct PolicyParams {
  PolicyKind policy = PolicyKind::simple;
  std::int64_t n = 1;
  int r = 0, s = 0, B = 0;
};

// Requests in the order they are sent: -1 good, else a kind index.
class Requests {
 public:
  explicit Requests(const std::vector<int>& seq) : seq_(seq) {}
  int next() {
    if (sent_ == static_cast<int>(seq_.size())) {
      overrun_ = true;  // the policy wanted more requests than the sequence has
      return -1;
    }
    return seq_[static_cast<std::size_t>(sent_++)];
  }
  int sent() const { return sent_; }
  bool overrun() const { return overrun_; }

 private:
  const std::vector<int>& seq_;
  int sent_ = 0;
  bool overrun_ = false;
};

// Each call returns nullopt when it got its answer, else the task's outcome.
using CallEnd = std::optional<int>;

// simple: up to r + 1 attempts; a 400 is raised to the harness at once.
CallEnd simple_call(const PolicyParams& c, Requests& in) {
  int last = -1;
  for (int attempt = 0; attempt <= c.r; ++attempt) {
    const int k = in.next();
    if (k < 0) return std::nullopt;
    if (kKinds[k].where == Where::fatal) return kHarness;
    last = k;
  }
  return env_error(last);
}

// naive: the SDK retries pre-response faults s times; what escapes it is
// either caught by the stream layer (connection/timeout errors, r retries,
// then the last error escapes as a crash), or escapes at once: a status
// error or `event: error` as crash:<kind>, a stall as hang (no idle timeout).
CallEnd naive_call(const PolicyParams& c, Requests& in) {
  for (int round = 0;; ++round) {  // stream layer
    int k = -1;
    for (int http = 0;; ++http) {  // HTTP layer, a fresh s each round
      k = in.next();
      if (k < 0 || kKinds[k].where != Where::pre_response || http == c.s) break;
    }
    if (k < 0) return std::nullopt;
    if (kKinds[k].where == Where::fatal) return kHarness;
    if (std::string(kKinds[k].name) == "stall") return kHang;
    if (!naive_stream_layer_catches(k) || round == c.r) return crash(k);
  }
}

// layered: pre-response faults by the HTTP layer only (s retries, then
// env_error), in-stream faults by the stream layer only (r retries, each a
// fresh HTTP call with its own s, then env_error). budgeted: the same, and a
// call that has sent B requests and would send another ends as
// env_error:<kind of its last fault>.
CallEnd layered_call(const PolicyParams& c, Requests& in, bool budgeted) {
  int sent = 0, last = -1;
  for (int round = 0;; ++round) {  // stream layer
    for (int http = 0;; ++http) {  // HTTP layer
      if (budgeted && sent == c.B) return env_error(last);
      const int k = in.next();
      ++sent;
      if (k < 0) return std::nullopt;
      if (kKinds[k].where == Where::fatal) return kHarness;
      last = k;
      if (kKinds[k].where == Where::in_stream) break;
      if (http == c.s) return env_error(k);
    }
    if (round == c.r) return env_error(last);
  }
}

struct Ending {
  int requests = 0;
  int outcome = kDone;
  bool overrun = false;
};

Ending run_task(const PolicyParams& c, const std::vector<int>& seq) {
  Requests in(seq);
  for (std::int64_t call = 0; call < c.n; ++call) {
    CallEnd end;
    switch (c.policy) {
      case PolicyKind::simple: end = simple_call(c, in); break;
      case PolicyKind::naive: end = naive_call(c, in); break;
      case PolicyKind::layered: end = layered_call(c, in, false); break;
      case PolicyKind::budgeted: end = layered_call(c, in, true); break;
    }
    if (in.overrun()) return {in.sent(), kDone, true};
    if (end) return {in.sent(), *end, false};
  }
  return {in.sent(), kDone, false};
}

// Most requests one call can send, from the docs' worst cases.
int worst_per_call(const PolicyParams& c) {
  if (c.policy == PolicyKind::simple) return c.r + 1;
  const int rounds = (c.s + 1) * (c.r + 1);
  return c.policy == PolicyKind::budgeted ? std::min(c.B, rounds) : rounds;
}

// ---------------------------------------------------------------------------
// The chain and the enumeration.

struct PolicyCase {
  PolicyParams policy;
  double p = 0.0, q = 0.0;
  int b = 0, g = 0;
  bool continuous = false;
  std::vector<std::pair<int, double>> kinds;  // (kind index, weight)
  int length = 0;                             // 0: n times the worst case per call

  int sequence_length() const {
    return length > 0 ? length : static_cast<int>(policy.n) * worst_per_call(policy);
  }
  double sequences() const {
    return std::pow(static_cast<double>(kinds.size() + 1), sequence_length());
  }
  std::string str() const {
    std::string k;
    for (const auto& [i, w] : kinds) k += std::string(k.empty() ? "" : ",") + kKinds[i].name + "=" + std::to_string(w);
    return "policy " + std::string(to_string(policy.policy)) + " p " + std::to_string(p) + " q " + std::to_string(q) +
           " n " + std::to_string(policy.n) + " r " + std::to_string(policy.r) + " s " + std::to_string(policy.s) +
           " B " + std::to_string(policy.B) + " b " + std::to_string(b) + " g " + std::to_string(g) +
           (continuous ? " continuous" : " fresh") + " kinds " + k;
  }
};

struct PolicyBrute {
  std::vector<long double> outcomes = std::vector<long double>(kClasses, 0.0L);
  std::map<std::pair<int, std::string>, long double> bins;  // (requests, outcome word)
  long double mean = 0.0L;
  int max_requests = 0;
  long long sequences = 0;
  bool overrun = false;
};

// P(bad at the m-th step | bad or good now), the matrix [[1 - p0, p0], [1 - q, q]]
// multiplied out m times by hand.
long double m_step_bad_long(long double p0, long double q, bool from_bad, int m) {
  long double good = from_bad ? 0.0L : 1.0L, bad = from_bad ? 1.0L : 0.0L;
  for (int i = 0; i < m; ++i) {
    const long double ng = good * (1.0L - p0) + bad * (1.0L - q);
    const long double nb = good * p0 + bad * q;
    good = ng;
    bad = nb;
  }
  return bad;
}

// Every sequence of the case's length over {good, kinds}. The results are
// kept given the first request good ([0]) and given it bad ([1]); fresh
// scope mixes them with P(first bad) = p, continuous with the long-run
// P(first bad) of successive tasks.
PolicyBrute policy_brute_force(const PolicyCase& c) {
  const int L = c.sequence_length();
  const int K = static_cast<int>(c.kinds.size());
  const long double p = c.p, q = c.q;
  // p0 <= 1 is what makes (p, q) valid; at q = (2p - 1)/p it is 1.
  const long double p0 = c.p >= 1.0 ? 1.0L : std::min(1.0L, p * (1.0L - q) / (1.0L - p));
  long double total = 0.0L;
  for (const auto& kw : c.kinds) total += kw.second;
  std::vector<long double> w;
  for (const auto& kw : c.kinds) w.push_back(kw.second / total);
  const long double after_bad = m_step_bad_long(p0, q, true, 1 + c.b);    // retry of the same call
  const long double after_good = m_step_bad_long(p0, q, false, 1 + c.g);  // next call's first request

  PolicyBrute given[2];
  std::vector<int> digits(static_cast<std::size_t>(L), 0);  // 0 good, d: c.kinds[d - 1]
  std::vector<int> seq(static_cast<std::size_t>(L), -1);
  std::vector<long double> prefix(static_cast<std::size_t>(L), 0.0L);  // weight of requests 0..t
  auto refresh = [&](int from) {
    for (int t = from; t < L; ++t) {
      const int d = digits[static_cast<std::size_t>(t)];
      seq[static_cast<std::size_t>(t)] = d == 0 ? -1 : c.kinds[static_cast<std::size_t>(d - 1)].first;
      long double f;
      if (t == 0) {
        f = d == 0 ? 1.0L : w[static_cast<std::size_t>(d - 1)];  // given the first request's state
      } else {
        const long double pb = digits[static_cast<std::size_t>(t - 1)] != 0 ? after_bad : after_good;
        f = d == 0 ? 1.0L - pb : pb * w[static_cast<std::size_t>(d - 1)];
      }
      prefix[static_cast<std::size_t>(t)] = (t == 0 ? 1.0L : prefix[static_cast<std::size_t>(t - 1)]) * f;
    }
  };
  refresh(0);
  while (true) {
    PolicyBrute& out = given[digits[0] != 0 ? 1 : 0];
    ++out.sequences;
    const long double weight = prefix[static_cast<std::size_t>(L - 1)];
    if (weight > 0.0L) {
      const Ending e = run_task(c.policy, seq);
      if (e.overrun) out.overrun = true;
      out.outcomes[static_cast<std::size_t>(e.outcome)] += weight;
      out.bins[{e.requests, class_word(e.outcome)}] += weight;
      out.mean += weight * e.requests;
      out.max_requests = std::max(out.max_requests, e.requests);
    }
    int i = L - 1;
    while (i >= 0 && ++digits[static_cast<std::size_t>(i)] == K + 1) digits[static_cast<std::size_t>(i--)] = 0;
    if (i < 0) break;
    refresh(i);
  }

  long double start_bad = p;
  if (c.continuous) {
    // A done task ends on a good request, every other outcome on a bad one;
    // the next task's first request comes 1 + g steps later. With E_x the
    // success given the first request x, pi' = c + (a - c)(E_0 + pi (E_1 - E_0)),
    // whose fixed point is the long-run P(first request bad).
    const long double a = after_good, cb = m_step_bad_long(p0, q, true, 1 + c.g);
    const long double e0 = given[0].outcomes[kDone], e1 = given[1].outcomes[kDone];
    start_bad = (cb + (a - cb) * e0) / (1.0L - (a - cb) * (e1 - e0));
  }
  PolicyBrute out;
  const long double mix[2] = {1.0L - start_bad, start_bad};
  for (int x = 0; x < 2; ++x) {
    out.sequences += given[x].sequences;
    out.overrun = out.overrun || given[x].overrun;
    if (mix[x] <= 0.0L) continue;
    for (int o = 0; o < kClasses; ++o)
      out.outcomes[static_cast<std::size_t>(o)] += mix[x] * given[x].outcomes[static_cast<std::size_t>(o)];
    for (const auto& [key, prob] : given[x].bins) out.bins[key] += mix[x] * prob;
    out.mean += mix[x] * given[x].mean;
    out.max_requests = std::max(out.max_requests, given[x].max_requests);
  }
  return out;
}

// ---------------------------------------------------------------------------
// The engine against the brute force.

ExactResult engine(const PolicyCase& c) {
  Model m;
  m.p = c.p;
  m.q = c.q;
  m.b = c.b;
  m.g = c.g;
  m.chain = c.continuous ? ChainScope::continuous : ChainScope::fresh;
  Policy pol;
  pol.kind = c.policy.policy;
  pol.n = c.policy.n;
  pol.r = c.policy.r;
  pol.s = c.policy.s;
  pol.B = c.policy.B;
  ExactOptions opt;
  opt.kinds = FaultWeights{};
  for (const auto& [k, weight] : c.kinds) opt.kinds.weight[static_cast<std::size_t>(kKinds[k].id)] = weight;
  return exact_matrix(m, pol, opt);
}

// Returns the largest absolute difference over every compared probability and mean.
double expect_engine_matches(const PolicyCase& c, const PolicyBrute& bf) {
  SCOPED_TRACE(c.str());
  double diff = 0.0;
  auto near = [&](double got, long double want, const std::string& what) {
    const double d = std::abs(got - static_cast<double>(want));
    diff = std::max(diff, d);
    EXPECT_NEAR(got, static_cast<double>(want), 1e-12) << what;
  };
  EXPECT_FALSE(bf.overrun) << "a task outran its sequence";
  long double total = 0.0L, env = 0.0L, wrong = 0.0L;
  for (int o = 0; o < kClasses; ++o) {
    total += bf.outcomes[static_cast<std::size_t>(o)];
    if (class_is_env_error(o)) env += bf.outcomes[static_cast<std::size_t>(o)];
    if (class_is_wrong(o)) wrong += bf.outcomes[static_cast<std::size_t>(o)];
  }
  EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-13) << "the brute force's own outcomes";

  const ExactResult ex = engine(c);
  EXPECT_TRUE(ex.distribution_complete);
  near(ex.success, bf.outcomes[kDone], "success");
  near(ex.env_error, env, "env_error");
  near(ex.wrong, wrong, "wrong");
  near(ex.mean_requests, bf.mean, "mean requests");
  EXPECT_EQ(ex.max_requests, bf.max_requests);
  // Every outcome class of the engine, by name; each of ours must be one of them.
  std::map<std::string, double> classes;
  for (int o = 0; o < kOutcomeClasses; ++o) classes[outcome_class(o).name()] = ex.outcomes[static_cast<std::size_t>(o)];
  for (int o = 0; o < kClasses; ++o) {
    const auto it = classes.find(class_name(o));
    if (it == classes.end()) {
      ADD_FAILURE() << "the engine has no outcome class " << class_name(o);
      continue;
    }
    near(it->second, bf.outcomes[static_cast<std::size_t>(o)], class_name(o));
    classes.erase(it);
  }
  for (const auto& [name, prob] : classes) EXPECT_EQ(prob, 0.0) << name << " is never an outcome here";
  // Every bin, both ways.
  std::map<std::pair<int, std::string>, double> bins;
  for (const auto& bin : ex.requests)
    bins[{static_cast<int>(bin.requests), std::string(to_string(bin.outcome))}] += bin.probability;
  for (const auto& [key, prob] : bf.bins) {
    const auto it = bins.find(key);
    near(it == bins.end() ? 0.0 : it->second, prob, "bin " + std::to_string(key.first) + " " + key.second);
  }
  for (const auto& [key, prob] : bins)
    EXPECT_TRUE(bf.bins.count(key)) << "engine bin the brute force never reaches: " << key.first << " " << key.second
                                    << " p " << prob;
  return diff;
}

// Random small cases: any p, a q that p allows, 1-4 kinds of any stage with
// random weights, s, r, B, n, silent steps, either scope; at most
// `max_sequences` sequences each.
PolicyCase random_policy_case(std::mt19937_64& gen, PolicyKind policy, double max_sequences) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  while (true) {
    PolicyCase c;
    c.policy.policy = policy;
    c.policy.n = pick(1, 3);
    c.policy.r = pick(0, 3);
    c.policy.s = policy == PolicyKind::simple ? 0 : pick(0, 2);
    if (policy == PolicyKind::budgeted) c.policy.B = pick(1, (c.policy.s + 1) * (c.policy.r + 1) + 1);
    const int shape = pick(0, 9);
    c.p = shape == 0 ? 0.0 : 0.02 + 0.88 * unit(gen);
    const double min_q = c.p > 0.5 ? (2 * c.p - 1) / c.p : 0.0;
    c.q = shape == 1 ? c.p : shape == 2 ? min_q + 1e-3 * (1 - min_q) : shape == 3 ? 1.0 : min_q + (1 - min_q) * unit(gen);
    // On the boundary q = (2p - 1)/p only where it is exact in binary: p0 = 1,
    // so a good request is never followed by a good one. (With a rounded q,
    // p0 computed from it may be 1 - 1e-16 and leave a path of probability
    // 1e-32 that moves the worst case but no probability.)
    if (shape == 4) {
      c.p = 0.5;
      c.q = 0.0;
    }
    if (pick(0, 1)) {
      c.b = pick(0, 3);
      c.g = pick(0, 3);
    }
    // Continuous scope needs a unique long run: not with p = 0 or q = 1, nor
    // with the periodic chain p = 0.5, q = 0 (done and failed tasks can each
    // repeat forever).
    c.continuous = pick(0, 2) == 0 && c.p > 0.0 && c.q < 1.0 && shape != 4;
    const int k = pick(1, 4);
    std::vector<int> all(kKindCount);
    for (int i = 0; i < kKindCount; ++i) all[static_cast<std::size_t>(i)] = i;
    std::shuffle(all.begin(), all.end(), gen);
    for (int i = 0; i < k; ++i) c.kinds.emplace_back(all[static_cast<std::size_t>(i)], 0.25 + 2.75 * unit(gen));
    if (c.sequences() <= max_sequences) return c;
  }
}

TEST(PolicyBruteForce, EngineMatchesIndependentBruteForceOnRandomSmallCases) {
  const auto t0 = std::chrono::steady_clock::now();
  std::mt19937_64 gen(20261001);
  for (auto policy : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted}) {
    long long sequences = 0;
    double diff = 0.0;
    int cases = 0;
    for (; cases < 200; ++cases) {
      const PolicyCase c = random_policy_case(gen, policy, 6e4);
      const PolicyBrute bf = policy_brute_force(c);
      sequences += bf.sequences;
      diff = std::max(diff, expect_engine_matches(c, bf));
    }
    std::cout << "[ brute    ] " << to_string(policy) << ": " << cases << " cases, " << sequences
              << " sequences, max |engine - brute force| " << diff << "\n";
  }
  std::cout << "[ brute    ] "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
}

// ---------------------------------------------------------------------------
// The brute force itself against the docs: scripted sequences.

PolicyCase scripted(PolicyKind policy, int s, int r, int B = 0, std::int64_t n = 1) {
  PolicyCase c;
  c.policy = {policy, n, r, s, B};
  return c;
}

Ending run_script(const PolicyCase& c, const std::vector<std::string>& names, int repeat = 1) {
  std::vector<int> seq;
  for (int i = 0; i < repeat; ++i)
    for (const auto& name : names) seq.push_back(name == "ok" ? -1 : kind_index(name));
  return run_task(c.policy, seq);
}

void expect_ending(const Ending& e, int requests, const std::string& outcome) {
  EXPECT_FALSE(e.overrun);
  EXPECT_EQ(e.requests, requests);
  EXPECT_EQ(class_name(e.outcome), outcome);
}

// docs/policies.md: worst cases per call, simple r + 1, naive and layered
// (s + 1)(r + 1) (naive on persistent slow headers, layered on "headers late
// s times, then a stall, every round"), budgeted min(B, (s + 1)(r + 1)).
TEST(PolicyBruteForce, ScriptedRunsMeetTheDocumentedWorstCases) {
  const auto naive = scripted(PolicyKind::naive, 2, 2), layered = scripted(PolicyKind::layered, 2, 2);
  expect_ending(run_script(scripted(PolicyKind::simple, 2, 2), {"slow_headers"}, 20), 3, "env_error:slow_headers");
  expect_ending(run_script(naive, {"slow_headers"}, 20), 9, "crash:slow_headers");
  expect_ending(run_script(naive, {"reset"}, 20), 9, "crash:reset");
  expect_ending(run_script(layered, {"slow_headers"}, 20), 3, "env_error:slow_headers");
  expect_ending(run_script(layered, {"slow_headers", "slow_headers", "stall"}, 20), 9, "env_error:stall");
  expect_ending(run_script(scripted(PolicyKind::budgeted, 2, 2, 4), {"slow_headers", "slow_headers", "stall"}, 20), 4,
                "env_error:slow_headers");
  expect_ending(run_script(scripted(PolicyKind::budgeted, 2, 2, 9), {"slow_headers", "slow_headers", "stall"}, 20), 9,
                "env_error:stall");
  expect_ending(run_script(scripted(PolicyKind::budgeted, 2, 2, 20), {"slow_headers", "slow_headers", "stall"}, 20), 9,
                "env_error:stall");
}

// docs/policies.md, the naive row: a status error outlives the HTTP retries
// and escapes as crash:<kind> (s + 1 requests); slow_headers / reset that the
// HTTP layer gave up on reach the stream layer, whose retry is a fresh HTTP
// call; overloaded crashes at once, stall hangs; cut is retried r times.
TEST(PolicyBruteForce, ScriptedNaiveFollowsTheDocsRow) {
  const auto naive = scripted(PolicyKind::naive, 2, 2);
  expect_ending(run_script(naive, {"http_529"}, 20), 3, "crash:http_529");
  expect_ending(run_script(naive, {"http_429", "http_503", "ok"}), 3, "done");
  expect_ending(run_script(naive, {"slow_headers", "slow_headers", "reset", "slow_headers", "ok"}), 5, "done");
  expect_ending(run_script(naive, {"slow_headers", "slow_headers", "reset", "http_500", "http_500", "http_500"}), 6,
                "crash:http_500");
  expect_ending(run_script(naive, {"cut", "overloaded"}), 2, "crash:overloaded");
  expect_ending(run_script(naive, {"slow_headers", "stall"}), 2, "hang");
  expect_ending(run_script(naive, {"cut", "no_stop", "malformed"}), 3, "crash:malformed");
  expect_ending(run_script(naive, {"cut", "http_400"}), 2, "harness_error");
}

// Layered: one layer per fault; an in-stream retry starts a fresh HTTP call
// with its own s; http_400 is harness_error under every policy; n calls.
TEST(PolicyBruteForce, ScriptedLayeredAndSimpleFollowTheDocsRows) {
  const auto layered = scripted(PolicyKind::layered, 2, 2, 0, 2);
  expect_ending(run_script(layered, {"http_529", "http_529", "cut", "http_529", "http_529", "ok", "ok"}), 7, "done");
  expect_ending(run_script(layered, {"ok", "cut", "overloaded", "stall"}), 4, "env_error:stall");
  expect_ending(run_script(layered, {"ok", "reset", "reset", "reset"}), 4, "env_error:reset");
  for (auto policy : {PolicyKind::simple, PolicyKind::naive, PolicyKind::layered, PolicyKind::budgeted})
    expect_ending(run_script(scripted(policy, 2, 2, 4, 2), {"ok", "cut", "http_400"}), 3, "harness_error");
  expect_ending(run_script(scripted(PolicyKind::simple, 0, 1, 0, 2), {"reset", "ok", "stall", "ok"}), 4, "done");
}

// ---------------------------------------------------------------------------
// The brute force's distributions against values worked out by hand.

PolicyCase chain_case(PolicyKind policy, int s, int r, int B, std::int64_t n, double p, double q,
                      std::vector<std::pair<std::string, double>> kinds, int length = 0) {
  PolicyCase c = scripted(policy, s, r, B, n);
  c.p = p;
  c.q = q;
  for (const auto& [name, w] : kinds) c.kinds.emplace_back(kind_index(name), w);
  c.length = length;
  return c;
}

long double outcome(const PolicyBrute& bf, const std::string& name) {
  for (int o = 0; o < kClasses; ++o)
    if (class_name(o) == name) return bf.outcomes[static_cast<std::size_t>(o)];
  ADD_FAILURE() << name;
  return 0.0L;
}

// Every request bad (p = q = 1) and one kind: all mass on the worst case.
TEST(PolicyBruteForce, PersistentFaultsPutAllMassOnTheWorstCase) {
  struct Row {
    PolicyKind policy;
    int B;
    const char* kind;
    int requests;
    const char* outcome;
  } rows[] = {
      {PolicyKind::naive, 0, "slow_headers", 9, "crash:slow_headers"},
      {PolicyKind::naive, 0, "http_503", 3, "crash:http_503"},
      {PolicyKind::naive, 0, "cut", 3, "crash:cut"},
      {PolicyKind::layered, 0, "slow_headers", 3, "env_error:slow_headers"},
      {PolicyKind::layered, 0, "no_stop", 3, "env_error:no_stop"},
      {PolicyKind::budgeted, 2, "slow_headers", 2, "env_error:slow_headers"},
      {PolicyKind::simple, 0, "http_429", 3, "env_error:http_429"},
  };
  for (const auto& row : rows) {
    const PolicyBrute bf = policy_brute_force(chain_case(row.policy, 2, 2, row.B, 1, 1.0, 1.0, {{row.kind, 1.0}}));
    SCOPED_TRACE(std::string(to_string(row.policy)) + " " + row.kind);
    EXPECT_FALSE(bf.overrun);
    EXPECT_NEAR(static_cast<double>(outcome(bf, row.outcome)), 1.0, 1e-15);
    EXPECT_EQ(bf.max_requests, row.requests);
    EXPECT_NEAR(static_cast<double>(bf.mean), row.requests, 1e-15);
  }
}

// p = 0.3, q = 0.8 (p0 = 3/35), s = r = 2, one pre-response kind:
//   layered, slow_headers: the HTTP layer alone, 3 requests; fails w.p.
//     p q^2 = 0.192; mean 1 + p + p q = 1.54.
//   naive, slow_headers: 9 requests, crash w.p. p q^8 = 0.3 * 0.16777216
//     = 0.050331648.
//   naive, http_529: the HTTP layer's 3, then crash, w.p. 0.192.
//   budgeted, B = 4, cut only, s = 0, r = 5: stops at 4, env_error:cut
//     w.p. p q^3 = 0.1536; mean 1 + p + p q + p q^2 = 1.732.
TEST(PolicyBruteForce, OneKindCasesMatchHandComputedValues) {
  PolicyBrute bf = policy_brute_force(chain_case(PolicyKind::layered, 2, 2, 0, 1, 0.3, 0.8, {{"slow_headers", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "done")), 0.808, 1e-15);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "env_error:slow_headers")), 0.192, 1e-15);
  EXPECT_NEAR(static_cast<double>(bf.mean), 1.54, 1e-15);
  EXPECT_EQ(bf.max_requests, 3);

  bf = policy_brute_force(chain_case(PolicyKind::naive, 2, 2, 0, 1, 0.3, 0.8, {{"slow_headers", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "crash:slow_headers")), 0.050331648, 1e-15);
  EXPECT_EQ(bf.max_requests, 9);

  bf = policy_brute_force(chain_case(PolicyKind::naive, 2, 2, 0, 1, 0.3, 0.8, {{"http_529", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "crash:http_529")), 0.192, 1e-15);
  EXPECT_EQ(bf.max_requests, 3);

  bf = policy_brute_force(chain_case(PolicyKind::budgeted, 0, 5, 4, 1, 0.3, 0.8, {{"cut", 1.0}}));
  EXPECT_NEAR(static_cast<double>(outcome(bf, "env_error:cut")), 0.1536, 1e-15);
  EXPECT_NEAR(static_cast<double>(bf.mean), 1.732, 1e-15);
  EXPECT_EQ(bf.max_requests, 4);
}

// The reference mix of docs/policies.md (p = 0.3, q = 0.8, r = 2, n = 2,
// s = 2, B = 4, the five in-stream kinds at 1/5 each). With no pre-response
// kind a call sends at most r + 1 = 3 requests, so sequences of length 6 do.
//
// simple, layered, budgeted (the docs: layered equals simple, B never binds):
//   success 0.808 * 33.08/35 = 26.72864/35 = 0.763675428571428571...;
//   mean: call 1 sends 1 + p + p q = 1.54, call 2 (after a good request,
//   p0 = 3/35) 1 + p0 (1 + q) = 40.4/35, so 1.54 + 0.808 * 40.4/35
//   = 86.5432/35 = 2.472662857142857...
// naive: of a bad request's kinds u = 3/5 are retried (cut, no_stop,
//   malformed), 1/5 hangs (stall), 1/5 crashes (overloaded). A call whose
//   first request is bad w.p. x succeeds w.p. (1 - x) + x u (1 - q)(1 + u q),
//   hangs w.p. (x/5)(1 + u q + (u q)^2), ends crash:cut w.p. x (u q)^2 / 5,
//   and sends 1 + x u (1 + u q) requests. With u q = 0.48:
//   call 1 (x = 0.3): success 0.75328, hang 0.102624, crash:cut 0.013824,
//     requests 1.2664;
//   call 2 (x = 3/35): success 32.5328/35, hang 1.02624/35,
//     crash:cut 0.13824/35, requests 37.664/35.
//   success 0.75328 * 32.5328/35 = 24.506307584/35 = 0.70018021668571428...
//   hang = crash:overloaded = 0.102624 + 0.75328 * 1.02624/35
//     = (3.59184 + 0.7730460672)/35 = 4.3648860672/35 = 0.12471103049142857...
//   crash:cut (= no_stop = malformed) = 0.013824 + 0.75328 * 0.13824/35
//     = (0.48384 + 0.1041334272)/35 = 0.5879734272/35 = 0.016799240777142857...
//   mean 1.2664 + 0.75328 * 37.664/35 = (44.324 + 28.37153792)/35
//     = 72.69553792/35 = 2.0770153691428571...
TEST(PolicyBruteForce, ReferenceMixMatchesHandComputedValues) {
  const std::vector<std::pair<std::string, double>> mix = {
      {"cut", 1}, {"no_stop", 1}, {"malformed", 1}, {"overloaded", 1}, {"stall", 1}};
  for (auto policy : {PolicyKind::simple, PolicyKind::layered, PolicyKind::budgeted}) {
    SCOPED_TRACE(std::string(to_string(policy)));
    const PolicyBrute bf = policy_brute_force(chain_case(policy, 2, 2, 4, 2, 0.3, 0.8, mix, 6));
    EXPECT_FALSE(bf.overrun);
    EXPECT_NEAR(static_cast<double>(outcome(bf, "done")), 0.76367542857142857, 1e-15);
    EXPECT_NEAR(static_cast<double>(bf.mean), 2.4726628571428571, 1e-15);
    EXPECT_EQ(bf.max_requests, 6);
  }
  const PolicyBrute bf = policy_brute_force(chain_case(PolicyKind::naive, 2, 2, 0, 2, 0.3, 0.8, mix, 6));
  EXPECT_FALSE(bf.overrun);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "done")), 0.70018021668571429, 1e-15);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "hang")), 0.12471103049142857, 1e-15);
  EXPECT_NEAR(static_cast<double>(outcome(bf, "crash:overloaded")), 0.12471103049142857, 1e-15);
  for (const char* k : {"crash:cut", "crash:no_stop", "crash:malformed"})
    EXPECT_NEAR(static_cast<double>(outcome(bf, k)), 0.016799240777142857, 1e-15) << k;
  EXPECT_NEAR(static_cast<double>(bf.mean), 2.0770153691428571, 1e-15);
  EXPECT_EQ(bf.max_requests, 6);
}

}  // namespace
}  // namespace relsim
