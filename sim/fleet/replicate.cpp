// One replicate of a fleet scenario (replicate.hpp): a discrete-event
// simulation in virtual time. Events at the same instant run in the order
// they were scheduled (a sequence number breaks ties), so a replicate is a
// pure function of (scenario, seed, index).
//
// A request's life: the task asks its tenant's pool for a connection
// (waiting in FIFO order when none is free), then the provider answers it:
// 429 when the tenant's quota bucket is empty, else a stream when one is free
// (none starts during an outage), a place in the queue when there is one, or
// 529.
// A served request is good or bad by the task's own fault chain, drawn as
// it starts: a good one takes request_seconds (long_seconds for the long
// agents), a bad one the share of it before the mock breaks its stream
// (stream_break_share), when its agent sees the fault and its stream frees. The client gives up a request still queued after the
// header timeout (slow_headers); the provider, not knowing, serves it later
// for nobody (wasted). Every answer goes through the policy (TaskRunner) and,
// for a retry, the tenant's throttle and the backoff.
#include "replicate.hpp"

#include <cmath>
#include <deque>
#include <optional>
#include <queue>
#include <vector>

#include "relsim/core/retry_throttle.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/core/token_bucket.hpp"

namespace relsim::fleet {
namespace {

enum class EventType : std::uint8_t { arrival, send, stream_end, rejected, header_timeout, outage_end };

struct Event {
  double t = 0.0;
  std::uint64_t seq = 0;
  std::uint64_t serial = 0;  // the request's serial, or the arrival's number
  std::uint32_t slot = 0;    // the task's slot
  EventType type = EventType::send;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Task {
  std::uint64_t key = 0;  // the RNG's task index
  std::int64_t agent = 0, tenant = 0;
  double started = 0.0;
  TaskRunner runner;
  std::uint64_t pending = 0;  // serial of the request in flight; 0: none
  bool serving = false;       // the pending request holds a provider stream
  bool retry = false;         // the pending (or next) request retries its call
  bool holds_connection = false;
  double pool_since = 0.0;
  FaultKind reply = FaultKind::http_529;  // a rejection's answer, until it arrives
  double reply_after = 0.0;               // its retry-after
  double paid = 0.0;                      // what the throttle took for the pending retry (AWS)
  ServedChain chain;  // its own fault chain over its served requests
  std::optional<FaultKind> served;  // the served request's reply, drawn as it starts
  std::int64_t cost_nano = 0;       // billed for its served requests so far
  std::uint32_t jitters = 0;
  explicit Task(const Policy& policy) : runner(policy) {}
};

struct Tenant {
  RetryThrottle throttle;
  TokenBucket quota;  // used when the scenario has one
  std::int64_t free_connections = 0;
  std::deque<std::uint32_t> waiting;  // slots waiting for a connection
};

struct Queued {
  std::uint32_t slot = 0;
  std::uint64_t serial = 0;
};

class Replicate {
 public:
  Replicate(const Prepared& prepared, int index, FleetResult& out)
      : p_(prepared), s_(prepared.scenario), index_(index), out_(out), agent_tasks_(static_cast<std::size_t>(
                                                                           s_.agents), 0) {
    for (std::int64_t t = 0; t < s_.tenants; ++t)
      tenants_.push_back(Tenant{RetryThrottle(s_.throttle), TokenBucket(s_.quota, 0.0), s_.pool, {}});
  }

  void run() {
    schedule_starts();
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      ++out_.events;
      dispatch(e);
    }
  }

 private:
  void push(double t, EventType type, std::uint32_t slot, std::uint64_t serial) {
    events_.push(Event{t, seq_++, serial, slot, type});
  }

  Bin* bin(double t) {
    if (!(t < s_.duration)) return nullptr;
    const auto b = static_cast<std::size_t>(t / p_.bin_seconds);
    return b < out_.series.size() ? &out_.series[b] : nullptr;
  }

  double start_uniform(std::uint64_t number, std::uint64_t draw) const {
    return fleet::start_uniform(p_, index_, number, draw);
  }

  void schedule_starts() {
    if (s_.trigger.active()) push(s_.trigger.start + s_.trigger.length, EventType::outage_end, 0, 0);
    if (s_.start.kind == Start::Kind::poisson) {
      push(next_arrival(0.0, 0), EventType::arrival, 0, 0);
      return;
    }
    for (std::int64_t a = 0; a < s_.agents; ++a) {
      const auto number = static_cast<std::uint64_t>(a * s_.tasks_per_agent);
      const double t = s_.start.window * start_uniform(static_cast<std::uint64_t>(a), 0);
      if (t < s_.duration) push(t, EventType::arrival, 0, number);
    }
  }

  // The time of arrival `i` after one at `t` (exponential gaps of the Poisson stream).
  double next_arrival(double t, std::uint64_t i) const {
    return t - std::log1p(-start_uniform(0, i)) / s_.start.rate;
  }

  void dispatch(const Event& e) {
    switch (e.type) {
      case EventType::arrival:
        return arrive(e);
      case EventType::send:
        return send(e.slot, e.t);
      case EventType::stream_end:
        return stream_end(e.slot, e.serial, e.t);
      case EventType::rejected:
        return answer(e.slot, tasks_[e.slot].reply, tasks_[e.slot].reply_after, e.t);
      case EventType::header_timeout:
        return header_timeout(e.slot, e.serial, e.t);
      case EventType::outage_end:
        return serve_queue(e.t);
    }
  }

  void arrive(const Event& e) {
    if (s_.start.kind == Start::Kind::poisson) {
      const std::uint64_t i = e.serial;
      start_task(static_cast<std::int64_t>(i % static_cast<std::uint64_t>(s_.agents)), i, e.t);
      const double next = next_arrival(e.t, i + 1);
      if (next < s_.duration) push(next, EventType::arrival, 0, i + 1);
      return;
    }
    start_task(static_cast<std::int64_t>(e.serial / static_cast<std::uint64_t>(s_.tasks_per_agent)), e.serial, e.t);
  }

  void start_task(std::int64_t agent, std::uint64_t number, double t) {
    std::uint32_t slot = 0;
    if (free_slots_.empty()) {
      slot = static_cast<std::uint32_t>(tasks_.size());
      tasks_.emplace_back(s_.policy);
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      tasks_[slot] = Task(s_.policy);
    }
    Task& task = tasks_[slot];
    task.key = task_key(index_, number);
    task.agent = agent;
    task.tenant = agent % s_.tenants;
    task.started = t;
    ++out_.tasks;
    if (Bin* b = bin(t)) ++b->started;
    send(slot, t);
  }

  // The task's next request asks for a connection.
  void send(std::uint32_t slot, double t) {
    Task& task = tasks_[slot];
    task.pending = ++serial_;
    Tenant& tenant = tenants_[static_cast<std::size_t>(task.tenant)];
    tenant.throttle.sent(task.retry);
    if (s_.pool == 0 || s_.pool_per_task) return depart(slot, t, 0.0);
    if (tenant.free_connections > 0) {
      --tenant.free_connections;
      task.holds_connection = true;
      return depart(slot, t, 0.0);
    }
    task.pool_since = t;
    tenant.waiting.push_back(slot);
  }

  // With a connection, after waiting `waited` for it: to the provider.
  void depart(std::uint32_t slot, double t, double waited) {
    const auto bin_of_wait = static_cast<std::size_t>(latency_bin(waited));
    ++out_.pool_wait[bin_of_wait];
    if (tasks_[slot].agent >= s_.long_agents) ++out_.pool_wait_short[bin_of_wait];
    ++out_.requests;
    if (Bin* b = bin(t)) ++b->sent;
    provide(slot, t);
  }

  bool in_outage(double t) const {
    const Trigger& outage = s_.trigger;
    return outage.active() && t >= outage.start && t < outage.start + outage.length;
  }

  // May a new stream start now?
  bool stream_free(double t) const { return !in_outage(t) && (s_.capacity == 0 || busy_ < s_.capacity); }

  void provide(std::uint32_t slot, double t) {
    if (s_.quota > 0.0) {
      Tenant& tenant = tenants_[static_cast<std::size_t>(tasks_[slot].tenant)];
      // retry-after in whole seconds, as the header carries it.
      if (const double wait = tenant.quota.take(t); wait > 0.0) return reject(slot, FaultKind::http_429, wait, t);
    }
    const std::uint64_t serial = tasks_[slot].pending;
    if (stream_free(t)) return serve(slot, serial, t);
    if (static_cast<std::int64_t>(queue_.size()) < s_.queue) {
      queue_.push_back(Queued{slot, serial});
      if (s_.header_timeout > 0.0) push(t + s_.header_timeout, EventType::header_timeout, slot, serial);
      return;
    }
    reject(slot, FaultKind::http_529, 0.0, t);
  }

  void reject(std::uint32_t slot, FaultKind kind, double retry_after, double t) {
    Task& task = tasks_[slot];
    task.reply = kind;
    task.reply_after = retry_after;
    ++(kind == FaultKind::http_429 ? out_.r429 : out_.r529);
    if (Bin* b = bin(t + s_.reject_seconds)) ++(kind == FaultKind::http_429 ? b->r429 : b->r529);
    push(t + s_.reject_seconds, EventType::rejected, slot, task.pending);
  }

  void serve(std::uint32_t slot, std::uint64_t serial, double t) {
    ++busy_;
    Task& task = tasks_[slot];
    double length = task.agent < s_.long_agents ? s_.long_seconds : s_.request_seconds;
    // A request its client gave up on is served in full, for nobody, and draws nothing.
    if (task.pending == serial) {
      task.serving = true;
      task.served = draw_served(p_, task.key, task.chain);
      if (task.served) length *= p_.break_share[static_cast<std::size_t>(*task.served)];
    }
    push(t + length, EventType::stream_end, slot, serial);
  }

  // Queued requests into the streams free at `t`, first come first served.
  void serve_queue(double t) {
    while (!queue_.empty() && stream_free(t)) {
      const Queued next = queue_.front();
      queue_.pop_front();
      serve(next.slot, next.serial, t);
    }
  }

  void stream_end(std::uint32_t slot, std::uint64_t serial, double t) {
    --busy_;
    serve_queue(t);
    if (tasks_[slot].pending != serial) {
      ++out_.wasted;  // its client gave up at the header timeout; the provider bills the whole answer
      out_.cost_wasted_nano += p_.nano[kFaultKinds];
      return;
    }
    Task& task = tasks_[slot];
    const std::int64_t billed = p_.nano[task.served ? static_cast<std::size_t>(*task.served) : kFaultKinds];
    task.cost_nano += billed;
    out_.cost_nano += billed;
    answer(slot, task.served, 0.0, t);
  }

  void header_timeout(std::uint32_t slot, std::uint64_t serial, double t) {
    const Task& task = tasks_[slot];
    if (task.pending != serial || task.serving) return;
    ++out_.timeouts;
    if (Bin* b = bin(t)) ++b->timeouts;
    answer(slot, FaultKind::slow_headers, 0.0, t);
  }

  void release_connection(Task& task, double t) {
    if (!task.holds_connection) return;
    task.holds_connection = false;
    Tenant& tenant = tenants_[static_cast<std::size_t>(task.tenant)];
    if (tenant.waiting.empty()) {
      ++tenant.free_connections;
      return;
    }
    const std::uint32_t next = tenant.waiting.front();
    tenant.waiting.pop_front();
    tasks_[next].holds_connection = true;
    depart(next, t, t - tasks_[next].pool_since);
  }

  void answer(std::uint32_t slot, std::optional<FaultKind> fault, double retry_after, double t) {
    Task& task = tasks_[slot];
    task.pending = 0;
    task.serving = false;
    if (!fault) {
      ++out_.good;
      if (Bin* b = bin(t)) ++b->good;
    }
    release_connection(task, t);
    Tenant& tenant = tenants_[static_cast<std::size_t>(task.tenant)];
    const CallState from = task.runner.state();
    const std::int64_t calls = task.runner.call();
    const bool going = task.runner.feed(fault);
    // A whole answer the call took (good, or a content fault's it trusted) is good to the throttle.
    tenant.throttle.answered(task.retry, !fault || task.runner.call() > calls, task.paid);
    task.paid = 0.0;
    if (!going) return end_task(slot, task.runner.outcome(), t);
    if (task.runner.call() > calls) {
      task.retry = false;
      return send(slot, t);
    }
    if (!tenant.throttle.allow_retry(*fault, task.paid)) {
      ++out_.denied;
      return end_task(slot, OutcomeClass{Outcome::env_error, fault}, t);
    }
    const Wait wait = wait_before(s_.backoff, retry_after, from, task.runner.state(), *fault);
    const double u =
        wait.jitter > 0.0 ? rng::uniform(p_.seed, rng::Stream::jitter, task.key, task.jitters++) : 0.0;
    task.retry = true;
    push(t + wait.max * (1.0 - wait.jitter * u), EventType::send, slot, 0);
  }

  void end_task(std::uint32_t slot, const OutcomeClass& outcome, double t) {
    const Task& task = tasks_[slot];
    ++out_.outcomes[static_cast<std::size_t>(index_of(outcome))];
    ++out_.latency[static_cast<std::size_t>(latency_bin(t - task.started))];
    const bool done = outcome.outcome == Outcome::done;
    if (done) {
      ++out_.successes;
      out_.cost_done_nano += task.cost_nano;
    }
    if (Bin* b = bin(t)) {
      ++b->finished;
      if (done) ++b->successes;
    }
    const std::int64_t agent = task.agent;
    const std::uint64_t number = task.key & ((std::uint64_t{1} << kTaskBits) - 1);
    free_slots_.push_back(slot);
    if (s_.start.kind == Start::Kind::coordinated &&
        ++agent_tasks_[static_cast<std::size_t>(agent)] < s_.tasks_per_agent && t < s_.duration)
      start_task(agent, number + 1, t);
  }

  const Prepared& p_;
  const Scenario& s_;
  int index_;
  FleetResult& out_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0, serial_ = 0;
  std::vector<Task> tasks_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Tenant> tenants_;
  std::vector<std::int64_t> agent_tasks_;  // coordinated: tasks each agent has finished
  std::deque<Queued> queue_;               // the provider's queue
  std::int64_t busy_ = 0;                  // streams in service
};

}  // namespace

FleetResult empty_result(const Prepared& prepared) {
  FleetResult r;
  r.latency.assign(kLatencyBins, 0);
  r.pool_wait.assign(kLatencyBins, 0);
  r.pool_wait_short.assign(kLatencyBins, 0);
  r.series.assign(static_cast<std::size_t>(prepared.bins), Bin{});
  r.bin_seconds = prepared.bin_seconds;
  r.billed = prepared.scenario.billing.has_value();
  return r;
}

void run_replicate(const Prepared& prepared, int index, FleetResult& into) {
  Replicate(prepared, index, into).run();
  ++into.replicates;
}

}  // namespace relsim::fleet
