// A fleet scenario's spellings and checks (fleet/scenario.hpp). The parsers
// and validate() share one range check per spelling, so a Scenario built in
// code is refused with the same words as the command line that would build it.
#include "relsim/fleet/scenario.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"

namespace relsim::fleet {
namespace {

// The bounds the header states for the spellings' numbers.
constexpr double kMaxWindow = 3600.0;        // seconds: a coordinated start spread over at most an hour
constexpr double kMaxStartRate = 1e7;             // tasks per second of a Poisson start
constexpr double kMaxTokens = 1e6;           // grpc MAX
constexpr long long kMaxMinRetries = 1'000'000;  // budget MIN
constexpr double kDefaultWindow = Start{}.window;
constexpr int kDefaultMinRetries = Throttle{}.min_retries;

constexpr const char* kStartForms =
    "coordinated, coordinated:WINDOW (seconds in [0, 3600]) or poisson:RATE (tasks per second in (0, 10000000])";
constexpr const char* kThrottleForms =
    "none, grpc:MAX,RATIO (MAX in (0, 1000000], RATIO in (0, MAX]), aws or budget:RATIO[,MIN] (RATIO in (0, 1], "
    "MIN an integer in [0, 1000000], default 3)";
constexpr const char* kTriggerForms =
    "none or outage:START,LENGTH (seconds, START in [0, 10000000], LENGTH in (0, 10000000])";

// Why `value` lies outside [low, high] ((low, high] when open_low), or ""
// when it lies inside. Written as !(inside) so that NaN is outside.
template <class T>
std::string out_of_range(std::string_view name, T value, bool open_low, T low, T high, std::string_view unit = "") {
  const bool above = open_low ? value > low : value >= low;
  if (above && value <= high) return {};
  return fmt::format("{} = {} is out of range: it must be in {}{}, {}]{}", name, value, open_low ? "(" : "[", low,
                     high, unit);
}

void require(const std::string& problem) {
  if (!problem.empty()) throw InputError(problem);
}

// A spelling's problem, with the spelling in front: "start = 'poisson:0': RATE = 0 is out of range ...".
void require_in_spec(std::string_view what, std::string_view spec, const std::string& problem) {
  if (!problem.empty()) throw InputError(fmt::format("{} = '{}': {}", what, spec, problem));
}

// A spelling split at its first colon: "budget:0.2,3" is {"budget", {"0.2",
// "3"}}. Without a colon there are no arguments; "aws:" has one, empty,
// which no number parses, so a stray colon is refused.
struct Form {
  std::string_view head;
  std::vector<std::string_view> args;
};

Form split_form(std::string_view spec) {
  const auto colon = spec.find(':');
  Form form{spec.substr(0, colon), {}};
  if (colon == std::string_view::npos) return form;
  std::string_view rest = spec.substr(colon + 1);
  for (;;) {
    const auto comma = rest.find(',');
    form.args.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) return form;
    rest.remove_prefix(comma + 1);
  }
}

std::string start_problem(const Start& s) {
  if (s.kind == Start::Kind::coordinated) return out_of_range("WINDOW", s.window, false, 0.0, kMaxWindow, " seconds");
  return out_of_range("RATE", s.rate, true, 0.0, kMaxStartRate, " tasks per second");
}

std::string throttle_problem(const Throttle& t) {
  if (t.kind == Throttle::Kind::grpc) {
    if (auto why = out_of_range("MAX", t.max_tokens, true, 0.0, kMaxTokens); !why.empty()) return why;
    // The ratio is bounded by MAX: one good answer never refills more than the whole bucket.
    if (!(t.token_ratio > 0.0 && t.token_ratio <= t.max_tokens))
      return fmt::format("RATIO = {} is out of range: it must be in (0, MAX = {}]", t.token_ratio, t.max_tokens);
  }
  if (t.kind == Throttle::Kind::budget) {
    if (auto why = out_of_range("RATIO", t.ratio, true, 0.0, 1.0); !why.empty()) return why;
    return out_of_range<long long>("MIN", t.min_retries, false, 0, kMaxMinRetries);
  }
  return {};
}

// `spelled`: whether the trigger came from "outage:START,LENGTH", which must
// have LENGTH > 0; a Trigger built in code may have length 0 (none).
std::string trigger_problem(const Trigger& t, bool spelled) {
  if (auto why = out_of_range("LENGTH", t.length, spelled, 0.0, kMaxForcedDuration, " seconds"); !why.empty())
    return why;
  if (!t.active()) return {};
  return out_of_range("START", t.start, false, 0.0, kMaxForcedDuration, " seconds");
}

void validate_agents(const Scenario& s, bool force) {
  require(out_of_range<std::int64_t>("agents", s.agents, false, 1, kMaxAgents));
  if (!(s.tenants >= 1 && s.tenants <= s.agents))
    throw InputError(fmt::format(
        "tenants = {} is out of range: it must be in [1, agents = {}] (agent a is tenant a mod tenants)", s.tenants,
        s.agents));
  require(out_of_range<std::int64_t>("tasks-per-agent", s.tasks_per_agent, false, 1, kMaxTasksPerAgent));
  require_in_spec("start", to_string(s.start), start_problem(s.start));
  // The event count grows with the duration, so a long run is asked for twice.
  if (force)
    require(out_of_range("duration", s.duration, true, 0.0, kMaxForcedDuration, " seconds"));
  else
    require(out_of_range("duration", s.duration, true, 0.0, kMaxDuration,
                         fmt::format(" seconds (--force allows up to {})", kMaxForcedDuration)));
}

void validate_provider(const Scenario& s) {
  require(out_of_range("quota", s.quota, false, 0.0, kMaxQuota, " requests per minute per tenant (0: no limit)"));
  require(out_of_range<std::int64_t>("capacity", s.capacity, false, 0, kMaxCapacity, " streams (0: no limit)"));
  require(out_of_range<std::int64_t>("queue", s.queue, false, 0, kMaxCapacity, " requests"));
  const Trigger& t = s.trigger;
  const std::string spelled = t.length == 0.0 ? std::string("none") : fmt::format("outage:{},{}", t.start, t.length);
  require_in_spec("trigger", spelled, trigger_problem(t, false));
}

void validate_client(const Scenario& s) {
  require(
      out_of_range<std::int64_t>("pool", s.pool, false, 0, kMaxCapacity, " connections per tenant (0: no limit)"));
  require_in_spec("throttle", to_string(s.throttle), throttle_problem(s.throttle));
  require(out_of_range("header-timeout", s.header_timeout, false, 0.0, kMaxSeconds, " seconds (0: never)"));
}

void validate_requests(const Scenario& s) {
  validate(s.model);
  // The fleet runs in seconds, so the discrete model's silent steps have no
  // meaning in it, and a task's chain is its own (fleet.hpp draws it per task).
  if (s.model.b != 0 || s.model.g != 0)
    throw InputError(fmt::format("b = {}, g = {}: the fleet has no silent steps, b and g must be 0 (time passes by "
                                 "request-seconds and the backoff)", s.model.b, s.model.g));
  if (s.model.chain != ChainScope::fresh)
    throw InputError(fmt::format("chain = {} is not supported by the fleet: every task's fault chain starts fresh "
                                 "(use fresh)", to_string(s.model.chain)));
  validate(s.policy);
  s.kinds.checked_total();
  require(out_of_range("request-seconds", s.request_seconds, true, 0.0, kMaxSeconds, " seconds"));
  require(out_of_range<std::int64_t>("long-agents", s.long_agents, false, 0, s.agents, " agents (at most --agents)"));
  require(out_of_range("long-seconds", s.long_seconds, true, 0.0, kMaxSeconds, " seconds"));
  require(out_of_range("reject-seconds", s.reject_seconds, false, 0.0, kMaxSeconds, " seconds"));
  // validate(TimeModel) holds the one check of a Backoff; the chain and the
  // other times of this TimeModel are valid placeholders.
  TimeModel time;
  time.chain = two_state_time_chain(1.0, 1.0);
  time.backoff = s.backoff;
  validate(time);
  if (s.billing) validate(*s.billing);
  if (s.billing && s.billing->cached_tokens > 0.0)
    throw InputError("cached-tokens: the fleet does not bill a cached prefix yet (relsim exact and simulate do)");
}

}  // namespace

Start parse_start(std::string_view spec) {
  const Form form = split_form(spec);
  const auto bad = [&] { return InputError(fmt::format("start = '{}' is not a start: use {}", spec, kStartForms)); };
  Start s;
  if (form.head == "coordinated" && form.args.size() <= 1) {
    s.kind = Start::Kind::coordinated;
    if (!form.args.empty()) {
      const auto window = parse_number<double>(form.args[0]);
      if (!window) throw bad();
      s.window = *window;
    }
  } else if (form.head == "poisson" && form.args.size() == 1) {
    const auto rate = parse_number<double>(form.args[0]);
    if (!rate) throw bad();
    s.kind = Start::Kind::poisson;
    s.rate = *rate;
  } else {
    throw bad();
  }
  require_in_spec("start", spec, start_problem(s));
  return s;
}

std::string to_string(const Start& start) {
  if (start.kind == Start::Kind::poisson) return fmt::format("poisson:{}", start.rate);
  if (start.window == kDefaultWindow) return "coordinated";
  return fmt::format("coordinated:{}", start.window);
}

Throttle parse_throttle(std::string_view spec) {
  const Form form = split_form(spec);
  const auto bad = [&] {
    return InputError(fmt::format("throttle = '{}' is not a throttle: use {}", spec, kThrottleForms));
  };
  Throttle t;
  if ((form.head == "none" || form.head == "aws") && form.args.empty()) {
    t.kind = form.head == "aws" ? Throttle::Kind::aws : Throttle::Kind::none;
    return t;
  }
  if (form.head == "grpc" && form.args.size() == 2) {
    const auto max = parse_number<double>(form.args[0]);
    const auto ratio = parse_number<double>(form.args[1]);
    if (!max || !ratio) throw bad();
    t.kind = Throttle::Kind::grpc;
    t.max_tokens = *max;
    t.token_ratio = *ratio;
  } else if (form.head == "budget" && (form.args.size() == 1 || form.args.size() == 2)) {
    const auto ratio = parse_number<double>(form.args[0]);
    const auto min =
        form.args.size() == 2 ? parse_number<long long>(form.args[1]) : std::optional<long long>(kDefaultMinRetries);
    if (!ratio || !min) throw bad();
    // Checked before it narrows to an int.
    require_in_spec("throttle", spec, out_of_range("MIN", *min, false, 0LL, kMaxMinRetries));
    t.kind = Throttle::Kind::budget;
    t.ratio = *ratio;
    t.min_retries = static_cast<int>(*min);
  } else {
    throw bad();
  }
  require_in_spec("throttle", spec, throttle_problem(t));
  return t;
}

std::string to_string(const Throttle& throttle) {
  switch (throttle.kind) {
    case Throttle::Kind::none: return "none";
    case Throttle::Kind::aws: return "aws";
    case Throttle::Kind::grpc: return fmt::format("grpc:{},{}", throttle.max_tokens, throttle.token_ratio);
    case Throttle::Kind::budget:
      if (throttle.min_retries == kDefaultMinRetries) return fmt::format("budget:{}", throttle.ratio);
      return fmt::format("budget:{},{}", throttle.ratio, throttle.min_retries);
  }
  return "none";
}

Trigger parse_trigger(std::string_view spec) {
  const Form form = split_form(spec);
  if (form.head == "none" && form.args.empty()) return {};
  const auto bad = [&] {
    return InputError(fmt::format("trigger = '{}' is not a trigger: use {}", spec, kTriggerForms));
  };
  if (form.head != "outage" || form.args.size() != 2) throw bad();
  const auto start = parse_number<double>(form.args[0]);
  const auto length = parse_number<double>(form.args[1]);
  if (!start || !length) throw bad();
  const Trigger t{*start, *length};
  require_in_spec("trigger", spec, trigger_problem(t, true));
  return t;
}

std::string to_string(const Trigger& trigger) {
  if (!trigger.active()) return "none";
  return fmt::format("outage:{},{}", trigger.start, trigger.length);
}

void validate(const Scenario& scenario, bool force) {
  validate_agents(scenario, force);
  validate_provider(scenario);
  validate_client(scenario);
  validate_requests(scenario);
}

}  // namespace relsim::fleet
