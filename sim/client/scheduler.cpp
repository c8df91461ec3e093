// When tasks start: a sliding window of `concurrency` workers, each taking
// the next task when its last one ends (the default), `concurrency` agents
// each running its own tasks in order (ClientConfig::tasks_per_agent), or waves of
// `concurrency` tasks released together at a gate, each wave after the one
// before has ended (coordinated start). Every task is a coroutine on one
// io_context run by `threads` threads.
#include <atomic>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "client/start_gate.hpp"
#include "client/task_client.hpp"
#include "client/tenant_pools.hpp"
#include "client/tenant_throttles.hpp"

namespace relsim {
namespace live_client {
namespace {

asio::awaitable<void> run_task(const ClientConfig& config, tcp::endpoint endpoint, std::int64_t task, LiveTask& out,
                               Clock::time_point run_start, StartGate* gate, Slot& slot) {
  TaskClient client(config, endpoint, task, out, run_start, slot);
  co_await client.run(gate);
}

// Task i waits for its start time (ClientConfig::start_at), if it has one.
// It waited for a worker when the worker's previous task (`after_a_task`)
// ended past that time; a worker's first task only ever waits for the
// io_context's threads to start, which no --concurrency would change.
asio::awaitable<void> wait_for_start(const ClientConfig& config, std::size_t i, LiveTask& out,
                                     Clock::time_point run_start, bool after_a_task) {
  if (config.start_at.empty()) co_return;
  const Clock::time_point at = run_start + to_duration(config.start_at[i]);
  out.waited_for_worker = after_a_task && Clock::now() > at;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  asio::steady_timer due(executor, at);
  error_code ec;
  co_await due.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// A sliding window: each worker takes the next task when its last one ends.
asio::awaitable<void> run_worker(const ClientConfig& config, tcp::endpoint endpoint, std::int64_t first_task,
                                 std::vector<LiveTask>& out, std::atomic<std::size_t>& next,
                                 Clock::time_point run_start, Slot& slot) {
  bool after_a_task = false;
  for (std::size_t i = next++; i < out.size(); i = next++, after_a_task = true) {
    co_await wait_for_start(config, i, out[i], run_start, after_a_task);
    TaskClient client(config, endpoint, first_task + static_cast<std::int64_t>(i), out[i], run_start, slot);
    co_await client.run(nullptr);
  }
}

// An agent: its tasks one after another, the first no earlier than its
// start time, if any.
asio::awaitable<void> run_agent(const ClientConfig& config, tcp::endpoint endpoint, std::int64_t first_task,
                                std::vector<LiveTask>& out, std::size_t first, Clock::time_point run_start,
                                Slot& slot) {
  const auto count = static_cast<std::size_t>(config.tasks_per_agent);
  for (std::size_t i = first; i < first + count; ++i) {
    co_await wait_for_start(config, i, out[i], run_start, i > first);
    TaskClient client(config, endpoint, first_task + static_cast<std::int64_t>(i), out[i], run_start, slot);
    co_await client.run(nullptr);
  }
}

void run_io(asio::io_context& ioc, int threads) {
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : pool) t.join();
  ioc.restart();
}

tcp::endpoint resolve(const ClientConfig& config) {
  error_code ec;
  const auto address = asio::ip::make_address(config.host, ec);
  if (!ec) return {address, config.port};
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(config.host, std::to_string(config.port), ec);
  if (ec || results.empty())
    throw InputError(fmt::format("host = '{}' does not resolve: {}", config.host, ec ? ec.message() : "no address"));
  return results.begin()->endpoint();
}

// What every task of a run shares.
struct Run {
  const ClientConfig& config;
  tcp::endpoint endpoint;
  std::int64_t first_task;
  std::vector<LiveTask>& out;
  Clock::time_point start;
};

void run_waves(const Run& run, asio::io_context& ioc, std::vector<Slot>& slots) {
  // Position w of every wave runs in slot w: a wave reuses the connections
  // of the wave before.
  const auto width = static_cast<std::size_t>(run.config.concurrency);
  for (std::size_t begin = 0; begin < run.out.size(); begin += width) {
    const std::size_t end = std::min(run.out.size(), begin + width);
    StartGate gate(end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      Slot& slot = slots[i - begin];
      asio::co_spawn(slot.executor,
                     run_task(run.config, run.endpoint, run.first_task + static_cast<std::int64_t>(i), run.out[i],
                              run.start, &gate, slot),
                     asio::detached);
    }
    run_io(ioc, run.config.threads);
  }
}

void run_window(const Run& run, asio::io_context& ioc, std::vector<Slot>& slots) {
  std::atomic<std::size_t> next{0};
  for (Slot& slot : slots)
    asio::co_spawn(slot.executor, run_worker(run.config, run.endpoint, run.first_task, run.out, next, run.start, slot),
                   asio::detached);
  run_io(ioc, run.config.threads);
}

void run_agents(const Run& run, asio::io_context& ioc, std::vector<Slot>& slots) {
  const auto per_agent = static_cast<std::size_t>(run.config.tasks_per_agent);
  for (std::size_t a = 0; a < slots.size(); ++a)
    asio::co_spawn(slots[a].executor,
                   run_agent(run.config, run.endpoint, run.first_task, run.out, a * per_agent, run.start, slots[a]),
                   asio::detached);
  run_io(ioc, run.config.threads);
}

}  // namespace
}  // namespace live_client

std::vector<LiveTask> run_live(const ClientConfig& config, std::int64_t first_task, std::int64_t count) {
  using namespace live_client;
  validate(config);
  if (count < 0) throw InputError(fmt::format("count = {} is out of range: it must be >= 0", count));
  if (first_task < 0) throw InputError(fmt::format("first task = {} is out of range: it must be >= 0", first_task));
  if (!config.start_at.empty()) {
    if (config.coordinated_start || static_cast<std::int64_t>(config.start_at.size()) != count)
      throw InputError(fmt::format("start times: {} given for {} tasks{}: give one per task, without a coordinated "
                                   "start",
                                   config.start_at.size(), count, config.coordinated_start ? " in waves" : ""));
    for (const double t : config.start_at)
      if (!(t >= 0.0 && t <= 1e9))
        throw InputError(fmt::format("start time = {} is out of range: it must be in [0, 1e9] seconds", t));
  }
  if (config.tasks_per_agent > 0 &&
      (count != config.concurrency * config.tasks_per_agent || first_task % config.tasks_per_agent != 0))
    throw InputError(fmt::format("tasks {}..{}: {} agents of {} tasks each run {} tasks from a multiple of {}",
                                 first_task, first_task + count - 1, config.concurrency, config.tasks_per_agent,
                                 config.concurrency * config.tasks_per_agent, config.tasks_per_agent));
  const tcp::endpoint endpoint = resolve(config);
  std::vector<LiveTask> out(static_cast<std::size_t>(count));
  asio::io_context ioc(config.threads);
  const Run run{config, endpoint, first_task, out, Clock::now()};
  const std::size_t width = std::min(static_cast<std::size_t>(config.concurrency), out.size());
  std::optional<TenantThrottles> throttles;
  if (config.throttle.kind != Throttle::Kind::none) throttles.emplace(config.throttle, config.tenants);
  TenantThrottles* shared = throttles ? &*throttles : nullptr;
  std::optional<TenantPools> pools;
  if (config.pool > 0) pools.emplace(config.pool, config.tenants);
  TenantPools* pooled = pools ? &*pools : nullptr;
  // After the io_context: the idle connections close before it goes.
  std::vector<Slot> slots;
  slots.reserve(width);
  for (std::size_t w = 0; w < width; ++w) {
    // One thread runs everything in order: a strand would only cost.
    if (config.threads > 1) slots.emplace_back(asio::make_strand(ioc), shared, pooled);
    else slots.emplace_back(ioc.get_executor(), shared, pooled);
  }
  if (config.tasks_per_agent > 0) run_agents(run, ioc, slots);
  else if (config.coordinated_start) run_waves(run, ioc, slots);
  else run_window(run, ioc, slots);
  return out;
}

}  // namespace relsim
