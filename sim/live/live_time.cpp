// The live check in time mode (live_time.hpp): the server in outage mode,
// the real client, the exact value and the review of every task.
#include "relsim/live/live_time.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/exact/exact.hpp"
#include "relsim/server/server.hpp"
#include "live/live_time_review.hpp"

namespace relsim {
namespace {

// Half a second on top of the longer timeout: connecting, sending, reading.
constexpr double kRequestAllowance = 0.5;
constexpr std::int64_t kMaxLiveTimeTasks = 1'000'000;

OutageConfig outage_of(const TimeLiveConfig& c) {
  OutageConfig o;
  o.t_good = c.t_good;
  o.t_bad = c.t_bad;
  o.time_scale = c.timing.time_scale;
  o.seed = c.seed;
  o.kinds = c.kinds;
  return o;
}

void validate_deadlines(const TimeLiveConfig& c) {
  const LiveDeadlines need = needed_deadlines(c);
  if (c.policy.kind != PolicyKind::naive && c.timing.call_timeout < need.call)
    throw InputError(fmt::format("call-timeout = {} s is shorter than a call can take here ({:.3f} s): the exact value "
                                 "knows no deadline, so give at least that (or leave it out)",
                                 c.timing.call_timeout, need.call));
  if (c.timing.task_timeout < need.task)
    throw InputError(fmt::format("task-timeout = {} s is shorter than a task can take here ({:.3f} s): the exact value "
                                 "knows no deadline, so give at least that (or leave it out)",
                                 c.timing.task_timeout, need.task));
}

// The server's retry-after header: a plain decimal (validate(ServerConfig)).
std::string retry_after_text(double seconds) { return fmt::format("{:.6f}", seconds); }

double bad_share(const OutageView& v) {
  if (!(v.now > v.from)) return 0.0;
  double bad = 0.0;
  for (const OutageInterval& i : v.bad) bad += std::max(0.0, std::min(i.end, v.now) - std::max(i.start, v.from));
  return bad / (v.now - v.from);
}

std::vector<LiveTask> run_tasks(const TimeLiveConfig& c, TimeLiveCheck& out, Server& server) {
  ClientConfig client;
  client.port = static_cast<std::uint16_t>(server.port());
  client.dialect = c.dialect;
  client.policy = c.policy;
  client.timing = c.timing;
  client.concurrency = c.concurrency;
  client.threads = c.client_threads;
  client.seed = c.seed;
  client.start_at.resize(static_cast<std::size_t>(c.tasks));
  for (std::size_t i = 0; i < client.start_at.size(); ++i)
    client.start_at[i] = static_cast<double>(i) * c.spacing * c.timing.time_scale;
  const auto start = std::chrono::steady_clock::now();
  std::vector<LiveTask> live = run_live(client, 0, c.tasks);
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Late by a tenth of the shorter mean sojourn: a start that the tasks
  // before it pushed back that far could see another state.
  const double slack = 0.1 * std::min(c.t_good, c.t_bad) * c.timing.time_scale;
  for (std::size_t i = 0; i < live.size(); ++i) {
    const double late = live[i].started - client.start_at[i];
    out.max_late = std::max(out.max_late, late);
    if (live[i].waited_for_worker && late > slack) ++out.late_starts;
  }
  return live;
}

void tally(TimeLiveCheck& out) {
  double seconds = 0.0;
  for (const LiveTask& t : out.live) {
    ++out.outcomes[t.outcome.name()];
    out.successes += t.outcome.outcome == Outcome::done ? 1 : 0;
    out.requests += t.requests;
    seconds += t.seconds;
  }
  const auto n = static_cast<std::int64_t>(out.live.size());
  out.mean_seconds = n > 0 ? seconds / static_cast<double>(n) / out.config.timing.time_scale : 0.0;
  out.interval = binomial_interval(IntervalKind::wilson, out.successes, n, out.config.confidence);
  if (out.late_starts > 0)
    out.problems.push_back(fmt::format("{} tasks started late (up to {:.3f} s): raise --concurrency", out.late_starts,
                                       out.max_late));
}

}  // namespace

double default_spacing(double t_good, double t_bad) { return 5.0 / (1.0 / t_good + 1.0 / t_bad); }

TimeModel live_time_model(const TimeLiveConfig& c) {
  const ClientTiming& t = c.timing;
  TimeModel m;
  m.chain = two_state_time_chain(c.t_good, c.t_bad);
  m.scope = ChainScope::fresh;
  m.request_seconds = 0.0;
  m.fault_seconds = parse_fault_seconds("timeouts", t.header_timeout / t.time_scale, t.idle_timeout / t.time_scale);
  m.think_seconds = t.think_seconds;
  m.backoff = t.backoff_schedule;
  m.retry_after = c.retry_after;
  validate(m);
  return m;
}

LiveDeadlines needed_deadlines(const TimeLiveConfig& c) {
  const ClientTiming& t = c.timing;
  const int most = c.policy.max_requests_per_call();
  double longest_wait = 0.0;
  for (int k = 0; k < most; ++k) longest_wait = std::max(longest_wait, t.backoff_max(k));
  if (c.retry_after > 0.0 && c.retry_after < kMaxRetryAfter)
    longest_wait = std::max(longest_wait, c.retry_after * t.time_scale);
  const double request = std::max(t.header_timeout, t.idle_timeout) + kRequestAllowance;
  LiveDeadlines d;
  d.call = most * (request + longest_wait);
  d.task = static_cast<double>(c.policy.n) * (d.call + t.think()) + 1.0;
  return d;
}

void validate(const TimeLiveConfig& c) {
  validate(c.policy);
  validate(c.timing);
  validate(outage_of(c));
  if (c.tasks < 1 || c.tasks > kMaxLiveTimeTasks)
    throw InputError(fmt::format("tasks = {} is out of range: it must be in [1, {}]", c.tasks, kMaxLiveTimeTasks));
  if (!(c.spacing > 0.0 && c.spacing * static_cast<double>(c.tasks) * c.timing.time_scale <= kMaxSeconds))
    throw InputError(fmt::format("task spacing = {} model seconds is out of range: it must be > 0, and the tasks' "
                                 "starts within {:g} wall seconds",
                                 c.spacing, kMaxSeconds));
  if (!(c.wait_tolerance >= 0.0 && c.wait_tolerance <= 60.0))
    throw InputError(fmt::format("wait-tolerance = {} is out of range: it must be in [0, 60] wall seconds",
                                 c.wait_tolerance));
  if (!(c.confidence > 0.0 && c.confidence < 1.0))
    throw InputError(fmt::format("confidence = {} is out of range: it must be in (0, 1)", c.confidence));
  if (!(c.retry_after == 0.0 || (c.retry_after >= 1e-6 && c.retry_after <= kMaxSeconds)))
    throw InputError(fmt::format("retry-after = {} is out of range: it must be 0 (none) or in [1e-06, {:g}] model "
                                 "seconds",
                                 c.retry_after, kMaxSeconds));
  validate_deadlines(c);
}

TimeLiveCheck run_time_live_check(const TimeLiveConfig& c) {
  validate(c);
  TimeLiveCheck out;
  out.config = c;
  const TimeModel model = live_time_model(c);
  ExactOptions exact;
  exact.kinds = c.kinds;
  exact.distribution = false;
  const ExactResult e = exact_time(model, c.policy, exact);
  out.exact = e.success;
  out.exact_mean_seconds = e.mean_seconds;

  ServerConfig sc;
  sc.threads = c.server_threads;
  sc.retry_after = retry_after_text(c.retry_after);
  sc.outage = outage_of(c);
  Server server(sc);
  out.live = run_tasks(c, out, server);
  server.stop();
  out.schedule = server.outage_schedule().value();
  out.bad_time = bad_share(out.schedule);

  OutageSchedule schedule(outage_of(c));  // redrawn from the seed, apart from the server's
  live_time::Sums sums;
  for (const LiveTask& t : out.live) live_time::review_task(model, schedule, server.log(t.task), t, sums, out);
  if (out.waits.checked > 0) out.waits.mean_residual = sums.residual / static_cast<double>(out.waits.checked);
  if (out.waits.steps > 0) out.waits.mean_step_residual = sums.step / static_cast<double>(out.waits.steps);
  tally(out);
  return out;
}

std::string time_live_csv(const TimeLiveCheck& check) {
  std::string out = "task,start_s,seconds,requests,outcome,expected_outcome,expected_requests,match\n";
  for (std::size_t i = 0; i < check.live.size(); ++i) {
    const LiveTask& got = check.live[i];
    const Prediction& want = check.expected[i];
    const bool match = got.text_ok && got.outcome == want.outcome && got.requests == want.requests;
    out += fmt::format("{},{:.6f},{:.6f},{},{},{},{},{}\n", got.task, got.started, got.seconds, got.requests,
                       got.outcome.name(), want.outcome.name(), want.requests, match ? "true" : "false");
  }
  return out;
}

}  // namespace relsim
