#include "relsim/live/live.hpp"

#include <chrono>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/server/server.hpp"

namespace relsim {

ClientTiming live_timing() {
  ClientTiming t;
  t.connect_timeout = 1.0;
  t.header_timeout = 0.2;
  t.idle_timeout = 0.2;
  t.call_timeout = 10.0;
  t.task_timeout = 2.0;
  t.time_scale = 0.01;
  return t;
}

LiveCheck run_live_check(const Plan& plan, const Policy& policy, const ClientTiming& timing,
                         const LiveOptions& options) {
  validate(policy);
  validate(timing);
  const bool throttled = options.throttle.kind != Throttle::Kind::none;
  if (throttled && options.concurrency != 1)
    throw InputError(fmt::format("concurrency = {} with a retry throttle: the live check needs concurrency 1, where the "
                                 "answers come in the plan's order and the oracle can predict every decision of the "
                                 "throttle",
                                 options.concurrency));
  if (throttled && options.fallback_after > 0)
    throw InputError("a retry throttle with a fallback (--fallback-after) is not covered by the live check yet: "
                     "leave out one of them");
  LiveCheck check;
  const OracleResult oracle = throttled ? run_oracle(policy, plan, timing, options.throttle, 0)
                                        : run_oracle(policy, plan, timing, options.fallback_after);
  check.oracle = oracle.tasks;

  ServerConfig server_config;
  server_config.threads = options.server_threads;
  Server server(server_config);
  server.load_plan(plan);
  ClientConfig client;
  client.port = static_cast<std::uint16_t>(server.port());
  client.dialect = options.dialect;
  client.policy = policy;
  client.timing = timing;
  client.concurrency = options.concurrency;
  client.threads = options.client_threads;
  client.seed = options.jitter_seed;
  client.coordinated_start = options.coordinated_start;
  client.throttle = options.throttle;
  client.fallback_after = options.fallback_after;
  validate(client);

  const auto start = std::chrono::steady_clock::now();
  check.live = run_live(client, 0, static_cast<std::int64_t>(plan.tasks.size()));
  check.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  server.stop();  // the requests still open are logged "stopped", so every log is final
  if (options.keep_logs)
    for (std::int64_t t = 0; t < static_cast<std::int64_t>(plan.tasks.size()); ++t) check.logs.push_back(server.log(t));

  RELSIM_ASSERT(check.live.size() == check.oracle.size());
  for (std::size_t i = 0; i < check.live.size(); ++i) {
    const LiveTask& got = check.live[i];
    const Prediction& want = check.oracle[i];
    ++check.outcomes[got.outcome.name()];
    check.successes += got.outcome.outcome == Outcome::done ? 1 : 0;
    check.wrong += is_wrong(got.outcome.outcome) ? 1 : 0;
    check.requests += got.requests;
    check.throttled += got.throttled ? 1 : 0;
    check.fallback_requests += got.fallback_requests;
    if (!got.text_ok || !(got.outcome == want.outcome) || got.requests != want.requests ||
        got.throttled != want.throttled || got.fallback_requests != want.fallback_requests)
      check.mismatches.push_back(got.task);
  }
  return check;
}

}  // namespace relsim
