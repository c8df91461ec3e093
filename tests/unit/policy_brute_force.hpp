#pragma once
// For policy_brute_force_test.cpp and policy_brute_force_docs_test.cpp: an
// independent brute force of all four policies (simple, naive, layered,
// budgeted), written from docs/policies.md and docs/model.md alone: plain
// loops over every kind-labelled good/bad request sequence, the two-state
// chain written out by hand, and each policy's call/retry loop re-implemented
// here as a client would write it (an HTTP layer with s retries nested in a
// stream layer with r retries). Nothing here calls react, TaskRunner, the
// oracle or any other relsim policy code; its own PolicyParams and PolicyCase
// stand in for relsim's Policy and Model, and relsim's public types appear
// only to name the fault kinds (FaultKind, PolicyKind).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"

namespace relsim::test::policy_bf {

// ---------------------------------------------------------------------------
// Fault kinds and their stages, as docs/model.md ("Fault kinds") lists them.

// content: a whole 200 stream whose answer is wrong, which a naive loop
// takes as its answer and the other policies retry on the stream layer.
enum class Where { in_stream, pre_response, fatal, content };

struct Kind {
  const char* name;
  Where where;
  FaultKind id;  // only to fill relsim's FaultWeights
};

inline constexpr Kind kKinds[] = {
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
    {"max_tokens", Where::content, FaultKind::max_tokens},
    {"bad_tool_args", Where::content, FaultKind::bad_tool_args},
    {"duplicate_event", Where::content, FaultKind::duplicate_event},
    {"stall_first", Where::in_stream, FaultKind::stall_first},
};
inline constexpr int kKindCount = static_cast<int>(sizeof(kKinds) / sizeof(kKinds[0]));

inline int kind_index(const std::string& name) {
  for (int i = 0; i < kKindCount; ++i)
    if (name == kKinds[i].name) return i;
  ADD_FAILURE() << "no kind " << name;
  return 0;
}

// naive's stream layer catches connection and timeout errors only: cut,
// no_stop, malformed, and slow_headers / reset once the HTTP layer gave up.
inline bool naive_stream_layer_catches(int k) {
  const std::string name = kKinds[k].name;
  return name == "cut" || name == "no_stop" || name == "malformed" || name == "slow_headers" || name == "reset";
}

// Outcome classes, numbered here: done, harness_error, hang, partial_done
// (every call answered, some answer a content fault's), env_error:<kind>
// (4 + k), crash:<kind> (4 + kKindCount + k).
inline constexpr int kDone = 0, kHarness = 1, kHang = 2, kPartial = 3;
inline constexpr int kClasses = 4 + 2 * kKindCount;
inline int env_error(int k) { return 4 + k; }
inline int crash(int k) { return 4 + kKindCount + k; }

inline std::string class_name(int o) {
  if (o == kDone) return "done";
  if (o == kHarness) return "harness_error";
  if (o == kHang) return "hang";
  if (o == kPartial) return "partial_done";
  if (o < 4 + kKindCount) return std::string("env_error:") + kKinds[o - 4].name;
  return std::string("crash:") + kKinds[o - 4 - kKindCount].name;
}

// The outcome without its kind, as the distribution's bins carry it.
inline std::string class_word(int o) {
  const std::string name = class_name(o);
  return name.substr(0, name.find(':'));
}

inline bool class_is_wrong(int o) { return o == kHang || o == kPartial || o >= 4 + kKindCount; }  // crash, hang, partial_done
inline bool class_is_env_error(int o) { return o >= 4 && o < 4 + kKindCount; }

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
  bool trusted = false;  // some call took a content fault's answer as its own

 private:
  const std::vector<int>& seq_;
  int sent_ = 0;
  bool overrun_ = false;
};

// Each call returns nullopt when it got its answer, else the task's outcome.
using CallEnd = std::optional<int>;

// simple: up to r + 1 attempts; a 400 is raised to the harness at once.
inline CallEnd simple_call(const PolicyParams& c, Requests& in) {
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
// A whole 200 stream is its answer, whatever the answer says.
inline CallEnd naive_call(const PolicyParams& c, Requests& in) {
  for (int round = 0;; ++round) {  // stream layer
    int k = -1;
    for (int http = 0;; ++http) {  // HTTP layer, a fresh s each round
      k = in.next();
      if (k < 0 || kKinds[k].where != Where::pre_response || http == c.s) break;
    }
    if (k < 0) return std::nullopt;
    if (kKinds[k].where == Where::content) {
      in.trusted = true;
      return std::nullopt;
    }
    if (kKinds[k].where == Where::fatal) return kHarness;
    const std::string name = kKinds[k].name;
    if (name == "stall" || name == "stall_first") return kHang;
    if (!naive_stream_layer_catches(k) || round == c.r) return crash(k);
  }
}

// layered: pre-response faults by the HTTP layer only (s retries, then
// env_error), in-stream and content faults by the stream layer only (but a
// duplicated event is taken as the answer) (r retries, each a
// fresh HTTP call with its own s, then env_error). budgeted: the same, and a
// call that has sent B requests and would send another ends as
// env_error:<kind of its last fault>.
inline CallEnd layered_call(const PolicyParams& c, Requests& in, bool budgeted) {
  int sent = 0, last = -1;
  for (int round = 0;; ++round) {  // stream layer
    for (int http = 0;; ++http) {  // HTTP layer
      if (budgeted && sent == c.B) return env_error(last);
      const int k = in.next();
      ++sent;
      if (k < 0) return std::nullopt;
      // Checking the stop reason and the tool arguments does not show a
      // text delta sent twice: that answer is taken.
      if (std::string(kKinds[k].name) == "duplicate_event") {
        in.trusted = true;
        return std::nullopt;
      }
      if (kKinds[k].where == Where::fatal) return kHarness;
      last = k;
      if (kKinds[k].where == Where::in_stream || kKinds[k].where == Where::content) break;
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

inline Ending run_task(const PolicyParams& c, const std::vector<int>& seq) {
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
  return {in.sent(), in.trusted ? kPartial : kDone, false};
}

// Most requests one call can send, from the docs' worst cases.
inline int worst_per_call(const PolicyParams& c) {
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
  long double last_good = 0.0L;  // P(the task's last request was good)
  std::map<std::pair<int, std::string>, long double> bins;  // (requests, outcome word)
  long double mean = 0.0L;
  int max_requests = 0;
  long long sequences = 0;
  bool overrun = false;
};

// P(bad at the m-th step | bad or good now), the matrix [[1 - p0, p0], [1 - q, q]]
// multiplied out m times by hand.
inline long double m_step_bad_long(long double p0, long double q, bool from_bad, int m) {
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
inline PolicyBrute policy_brute_force(const PolicyCase& c) {
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
  // A naive loop's next call after it took a content fault's answer.
  const long double after_trusted = m_step_bad_long(p0, q, true, 1 + c.g);
  const auto next_call_after = [&c](int kind) {
    const PolicyKind pk = c.policy.policy;
    return (pk == PolicyKind::naive && kKinds[kind].where == Where::content) ||
           ((pk == PolicyKind::layered || pk == PolicyKind::budgeted) &&
            std::string(kKinds[kind].name) == "duplicate_event");
  };

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
        const int prev = seq[static_cast<std::size_t>(t - 1)];
        const long double pb = prev < 0 ? after_good : next_call_after(prev) ? after_trusted : after_bad;
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
      if (seq[static_cast<std::size_t>(e.requests - 1)] < 0) out.last_good += weight;
      out.max_requests = std::max(out.max_requests, e.requests);
    }
    int i = L - 1;
    while (i >= 0 && ++digits[static_cast<std::size_t>(i)] == K + 1) digits[static_cast<std::size_t>(i--)] = 0;
    if (i < 0) break;
    refresh(i);
  }

  long double start_bad = p;
  if (c.continuous) {
    // A done task ends on a good request (or, naive, a trusted content
    // fault), every other outcome on a bad one; the next task's first
    // request comes 1 + g steps later. With E_x the chance that the last
    // request was good given the first request x,
    // pi' = c + (a - c)(E_0 + pi (E_1 - E_0)), whose fixed point is the
    // long-run P(first request bad).
    const long double a = after_good, cb = m_step_bad_long(p0, q, true, 1 + c.g);
    const long double e0 = given[0].last_good, e1 = given[1].last_good;
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

}  // namespace relsim::test::policy_bf
