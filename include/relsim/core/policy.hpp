#pragma once
// The task and its retry policy (docs/model.md, Policies).
//
// simple:   a task is n calls in sequence; each call makes up to r + 1
//           attempts and succeeds at its first good request; a call whose
//           r + 1 requests are all bad ends the task with env_error.
// naive, layered, budgeted: the real client's layers, an HTTP layer with s
//           retries under a stream layer with r retries (see `react`).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "relsim/core/faults.hpp"

namespace relsim {

inline constexpr std::int64_t kMaxCalls = 100'000'000;
inline constexpr int kMaxRetries = 1000;
inline constexpr int kMaxHttpRetries = 100;
// (s + 1)(r + 1) bounds the requests of one call under the layered
// policies, and the exact engine's per-call work grows with its square.
inline constexpr int kMaxRequestsPerCall = 10'000;

enum class PolicyKind { simple, naive, layered, budgeted };
std::string_view to_string(PolicyKind kind);
PolicyKind parse_policy_kind(std::string_view word);  // throws InputError

struct Policy {
  std::int64_t n = 1;  // model calls per task
  int r = 0;           // stream-layer retries per call (simple: retries per call)
  int s = 2;           // HTTP-layer (SDK) retries; not used by simple
  int B = 0;           // budgeted: cap on requests per call, >= 1
  PolicyKind kind = PolicyKind::simple;

  // Most requests one call can send.
  int max_requests_per_call() const;
  // Requests a task can send at most: n times the above.
  std::int64_t max_requests() const { return n * static_cast<std::int64_t>(max_requests_per_call()); }
};

// Throws InputError naming the bad value and its valid range.
void validate(const Policy& policy);

// One line for tables: "layered, n = 2 calls, s = 2 HTTP retries, r = 2 stream retries".
std::string describe(const Policy& policy);

// How a task ends (docs/model.md, Outcomes). crash, hang and partial_done
// are wrong: a healthy policy has none of them.
enum class Outcome { done, env_error, harness_error, crash, hang, partial_done };
inline constexpr int kOutcomes = 6;
std::string_view to_string(Outcome outcome);
bool is_wrong(Outcome outcome);

// An outcome with the fault kind it names: env_error:cut, crash:overloaded.
// done, harness_error, hang and partial_done carry no kind.
struct OutcomeClass {
  Outcome outcome = Outcome::done;
  std::optional<FaultKind> kind{};
  std::string name() const;  // "done", "env_error:stall", ...
  bool operator==(const OutcomeClass&) const = default;
};
// Dense index of an outcome class, 0 .. kOutcomeClasses - 1 (0 is done).
inline constexpr int kOutcomeClasses = 4 + 2 * kFaultKinds;
int index_of(const OutcomeClass& c);
OutcomeClass outcome_class(int index);

// Where a call stands between two of its requests.
struct CallState {
  int http = 0;    // HTTP-layer retries used in this round
  int stream = 0;  // stream-layer retries used in this call
  int used = 0;    // requests this call has sent
  bool operator==(const CallState&) const = default;
};

// A fallback to a second provider after `after` requests of a call
// (core/fallback.hpp; 0: none): whether the call's next request, after the
// `used` it has sent, goes to the second provider. The one rule the exact
// walk, the simulation, the oracle, the client and the audit route by.
constexpr bool to_second_provider(int used, int after) { return after > 0 && used >= after; }

// What the policy does after a request of the call in state `state`:
// the call succeeds (`call_done`), the task ends (`ended`), or the call sends
// another request from state `next`. `fault` is empty for a good request.
// `trusted_bad`: the call took a content fault's wrong answer as its own
// (naive); the task goes on, and ends partial_done if it would end done.
struct Reaction {
  bool call_done = false;
  bool trusted_bad = false;
  std::optional<OutcomeClass> ended;
  CallState next;
};
// The rules of docs/policies.md, in one place: the exact engine, the
// simulator and the oracle all call this; the live client does not (it is
// what the oracle checks).
Reaction react(const Policy& policy, const CallState& state, std::optional<FaultKind> fault);

// A task run request by request through `react`: feed it the requests in the
// order they are sent (a fault kind, or nullopt for a good one) until it
// says the task has ended.
class TaskRunner {
 public:
  explicit TaskRunner(const Policy& policy) : policy_(policy) {}
  // The next request's result. Returns true while the task goes on.
  bool feed(std::optional<FaultKind> fault);
  bool ended() const { return ended_; }
  const OutcomeClass& outcome() const { return outcome_; }
  std::int64_t requests() const { return requests_; }
  std::int64_t call() const { return call_; }        // calls completed so far
  const CallState& state() const { return state_; }  // of the current call
  // Whether the last request fed was bad: the chain's state where the task
  // stopped (a task that took a content fault's answer last ends on one).
  bool last_request_bad() const { return last_bad_; }

 private:
  Policy policy_;
  CallState state_;
  std::int64_t call_ = 0, requests_ = 0;
  bool ended_ = false, trusted_bad_ = false, last_bad_ = false;
  OutcomeClass outcome_;
};

}  // namespace relsim
