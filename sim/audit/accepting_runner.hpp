#pragma once
// Header only: a small wrapper the audit and --infer both run in their inner loops.
// Internal to the audit: TaskRunner with the findings a user has accepted
// (AuditOptions::accept, --accept): a fault of an accepted kind is, for the
// client, a good answer (accepted as done) or the task's end with the word
// given (crash, hang, env_error, ...), in place of what the policy does with it.
#include <algorithm>
#include <optional>

#include "relsim/audit/audit.hpp"

namespace relsim::audit_detail {

class AcceptingRunner {
 public:
  AcceptingRunner(const Policy& policy, const Acceptance& accept) : runner_(policy), accept_(accept) {}
  bool feed(PlannedRequest entry) {
    if (entry && accept_[static_cast<std::size_t>(*entry)]) {
      const Outcome as = *accept_[static_cast<std::size_t>(*entry)];
      if (as == Outcome::done) return runner_.feed(std::nullopt);
      ended_ = true;
      ++extra_;
      outcome_ = OutcomeClass{as, as == Outcome::env_error || as == Outcome::crash ? entry : std::nullopt};
      return false;
    }
    return runner_.feed(entry);
  }
  bool ended() const { return ended_ || runner_.ended(); }
  OutcomeClass outcome() const { return ended_ ? outcome_ : runner_.outcome(); }
  std::int64_t requests() const { return runner_.requests() + extra_; }
  const CallState& state() const { return runner_.state(); }

 private:
  TaskRunner runner_;
  const Acceptance& accept_;
  bool ended_ = false;
  std::int64_t extra_ = 0;
  OutcomeClass outcome_;
};

// The observed outcome with the accepted findings: a reported done counted
// partial_done for want of good answers is done when the faults the client
// takes as answers (accepted as done) make up the n calls.
inline std::optional<Outcome> observed_with(const TaskObservation& o, const TaskPlan& plan, const Acceptance& accept,
                                            std::int64_t n) {
  if (o.outcome != Outcome::partial_done || o.reported != Outcome::done) return o.outcome;
  std::int64_t answers = o.good;
  const auto served = std::min<std::int64_t>(o.sent - o.exhausted, static_cast<std::int64_t>(plan.requests.size()));
  for (std::int64_t i = 0; i < served; ++i) {
    const PlannedRequest& entry = plan.requests[static_cast<std::size_t>(i)];
    if (entry && accept[static_cast<std::size_t>(*entry)] == Outcome::done) ++answers;
  }
  return answers >= n ? Outcome::done : Outcome::partial_done;
}

}  // namespace relsim::audit_detail
