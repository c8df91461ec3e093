// What a mismatch means, in words (audit.hpp, finding_of; docs/audit.md,
// Findings), and the findings a user accepts (--accept).
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/audit/audit.hpp"
#include "relsim/formats/request_log.hpp"

namespace relsim {
namespace {

// "a cut", "an overloaded", "an http_529".
std::string a_(std::string_view kind) {
  const bool vowel = !kind.empty() && std::string_view("aeiouh").find(kind[0]) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", kind);
}

// A fault taken as an answer: what the client then does, by kind, in the
// words of the dialect the task spoke.
std::string accepted_as_done(std::string_view kind, Dialect dialect) {
  const bool openai = dialect == Dialect::openai;
  if (kind == "no_stop")
    return fmt::format("a stream without {} was reported as done: the client accepts a truncated answer",
                       openai ? "a finish_reason" : "message_stop");
  if (kind == "cut") return "a stream cut before its end was reported as done: the client accepts a truncated answer";
  if (kind == "malformed")
    return "a stream with an event it cannot parse was reported as done: the client skips what it cannot read";
  if (kind == "overloaded")
    return fmt::format("an error {} inside the stream was reported as done: the client ignores errors inside a stream",
                       openai ? "object" : "event");
  if (kind == "stall") return "a stalled stream was reported as done: the client took the part it had as the answer";
  if (kind == "stall_first")
    return "a stream stalled before its first event was reported as done: the client took no answer as one";
  if (kind == "max_tokens")
    return fmt::format("an answer stopped at its token limit ({}) was reported as done: the client does not read the "
                       "stop reason",
                       openai ? "finish_reason length" : "stop_reason max_tokens");
  if (kind == "bad_tool_args")
    return "a tool call whose arguments are not JSON was reported as done: the client does not parse them";
  if (kind == "duplicate_event")
    return "an answer with a content event sent twice was reported as done: the client takes the doubled text";
  return fmt::format("{} was reported as done: the client takes a failed request as an answer", a_(kind));
}

constexpr const char* kStallHung = "a stalled stream hung the task: the client has no idle timeout";

std::string escaped_loop(std::string_view kind) {
  return fmt::format("{} escaped the loop as an exception (crash): the client does not end the task cleanly on it",
                     a_(kind));
}

std::string outcome_finding(const TaskAudit& a, const TaskObservation& o) {
  const Outcome seen = *o.outcome, want = a.expected_outcome.outcome;
  const std::string kind = a.expected_outcome.kind ? std::string(to_string(*a.expected_outcome.kind)) : a.blame;
  // Done (or done short of answers) where the policy fails the task or
  // retries: the client took a failed request as its answer.
  if ((seen == Outcome::done && want != Outcome::done) || seen == Outcome::partial_done)
    return accepted_as_done(a.expected_outcome.kind ? kind : a.blame, o.dialect);
  if (seen == Outcome::hang)
    return kind == "stall" || kind == "stall_first" ? kStallHung
                           : fmt::format("the task hung after {}: the client waits for what never comes", a_(kind));
  if (seen == Outcome::crash) return escaped_loop(kind);
  if (seen == Outcome::env_error && want == Outcome::crash)
    return fmt::format("{} ended the task cleanly where the policy audited crashes", a_(kind));
  if (want == Outcome::done)
    return fmt::format("the task failed ({}) where the policy finishes it: the client gave up on {}", to_string(seen),
                       a_(a.blame));
  return fmt::format("reported {} where the policy ends with {}", to_string(seen), a.expected_outcome.name());
}

}  // namespace

std::string finding_of(const TaskAudit& a, const TaskObservation& o) {
  if (a.checks == 0) return "";
  if (!o.upstream_failed.empty())
    return "the real upstream itself failed and the proxy passed its failure on: this task's mismatch is not the "
           "client's doing (upstream)";
  const std::string kind = a.blame.empty() ? "request" : a.blame;
  std::string line;
  // A request to the other provider met another entry: that explains the rest.
  if (a.failed(Check::provider))
    line = "the client moved to the second provider at another request of a call than its fallback rule says";
  else if (a.failed(Check::outcome) && o.outcome) line = outcome_finding(a, o);
  else if (a.failed(Check::requests) && o.sent < a.expected && o.outcome == Outcome::done && !a.blame.empty() &&
           a.blame != "ok")
    line = accepted_as_done(kind, o.dialect);  // it went on after the fault as after an answer
  else if (a.failed(Check::requests))
    line = o.sent < a.expected ? fmt::format("the client retried {} fewer times than the policy", a_(kind))
                               : fmt::format("the client retried {} more times than the policy", a_(kind));
  else if (a.failed(Check::exhausted)) line = "the client ran past the plan's script";
  else if (a.failed(Check::retry_count))
    line = fmt::format("x-stainless-retry-count does not count the retries after {} as the policy makes them", a_(kind));
  else line = fmt::format("the client waited outside the backoff before retrying {}", a_(kind));
  return line + " (" + kind + ")";
}

std::string finding_of_acceptance(FaultKind kind, Outcome word, Dialect dialect) {
  const std::string k(to_string(kind));
  std::string line;
  switch (word) {
    case Outcome::done: line = accepted_as_done(k, dialect); break;
    case Outcome::hang:
      line = kind == FaultKind::stall || kind == FaultKind::stall_first ? kStallHung
             : kind == FaultKind::slow_headers
                 ? "slow headers hung the task: the client has no header timeout"
                 : fmt::format("the task hung on {}: the client waits for what never comes", a_(k));
      break;
    case Outcome::crash: line = escaped_loop(k); break;
    default:
      line = fmt::format("{} ended the task ({}) at once: the client neither retries it nor crashes on it", a_(k),
                         to_string(word));
  }
  return fmt::format("{} ({}; --accept {}={})", line, k, k, to_string(word));
}

Acceptance parse_acceptance(std::string_view spec) {
  Acceptance out{};
  const auto fail = [&](std::string_view part, const std::string& why) {
    throw InputError(fmt::format("--accept '{}': '{}' {}: give KIND=WORD,... with a fault kind (cut, no_stop, "
                                 "malformed, overloaded, stall, slow_headers, http_429, http_500, http_503, "
                                 "http_529, reset, http_400, max_tokens, bad_tool_args, duplicate_event, "
                                 "stall_first) and done, env_error, crash, hang, harness_error or "
                                 "partial_done",
                                 spec, part, why));
  };
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view part = spec.substr(start, comma - start);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) fail(part, "is not KIND=WORD");
    FaultKind kind{};
    try {
      kind = parse_fault_kind(part.substr(0, eq));
    } catch (const InputError&) {
      fail(part, "names no fault kind");
    }
    std::optional<Outcome> word;
    try {
      word = parse_outcome_word(part.substr(eq + 1));
    } catch (const InputError&) {
      fail(part, "names no outcome");
    }
    auto& slot = out[static_cast<std::size_t>(kind)];
    if (slot) fail(part, "is given twice");
    slot = *word;
    start = comma + 1;
  }
  return out;
}

std::string to_string(const Acceptance& accept) {
  std::string out;
  for (int k = 0; k < kFaultKinds; ++k)
    if (accept[static_cast<std::size_t>(k)])
      out += fmt::format("{}{}={}", out.empty() ? "" : ",", to_string(static_cast<FaultKind>(k)),
                         to_string(*accept[static_cast<std::size_t>(k)]));
  return out;
}

}  // namespace relsim
