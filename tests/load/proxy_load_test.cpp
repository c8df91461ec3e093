// relsim proxy under load (docs/proxy.md): 1,000 tasks at once, relsim's own
// client through the proxy to an upstream mock with no faults (its path
// http://127.0.0.1:UP/t/{task}, so each upstream answer names its task). The
// proxy injects a bursty fault plan. Nothing may be lost or mixed between
// tasks: every answer is its own task's (the client checks the text), each
// task ends as the oracle predicts from its plan with the predicted number
// of requests, the proxy logs every one of them, and the upstream received
// exactly the ones the proxy forwarded. Proxy and upstream run as their own
// processes, each with about 2,000 descriptors.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "relsim/core/faults.hpp"
#include "relsim/client/client.hpp"
#include "relsim/live/oracle.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/montecarlo/simulate.hpp"
#include "support/fd_limit.hpp"
#include "support/files.hpp"
#include "support/journal.hpp"
#include "support/run.hpp"

namespace {

constexpr int kProxiedTasks = 1000;

TEST(ProxyLoad, AThousandConcurrentTasksThroughTheProxyLoseAndMixNothing) {
  relsim::test::FdLimit fds(4 * kProxiedTasks + 1000);
  if (fds.soft() < 4 * kProxiedTasks + 1000)
    RELSIM_SKIP_OR_FAIL(fmt::format("needs {} descriptors, the limit is {}", 4 * kProxiedTasks + 1000, fds.soft()));
  relsim::Policy policy;
  policy.kind = relsim::PolicyKind::layered;
  policy.n = 2;
  policy.r = 2;
  policy.s = 2;
  relsim::Model model;
  model.p = 0.1;
  model.q = 0.6;
  relsim::SimConfig sim;
  sim.tasks = kProxiedTasks;
  sim.seed = 20261205;
  sim.kinds = relsim::parse_fault_weights("cut=1,no_stop=1,malformed=1,overloaded=1,http_500=1,http_529=1");
  const relsim::Plan plan = relsim::generate_plan(model, policy, sim);
  const auto plan_file = relsim::test::write_temp("proxy_load", "plan.jsonl", relsim::write_plan(plan));
  // The upstream: every task 40 healthy streams, more than any task of the plan asks for.
  std::string healthy = fmt::format(R"({{"relsim_plan": 1, "tasks": {}, "source": "scripted", "n": 2, "b": 0, "g": 0}})",
                                    kProxiedTasks) + "\n";
  for (int t = 0; t < kProxiedTasks; ++t)
    healthy += fmt::format(R"({{"task": {}, "requests": [{}]}})", t,
                           fmt::join(std::vector<std::string>(40, "\"ok\""), ", ")) + "\n";
  const auto up_file = relsim::test::write_temp("proxy_load", "upstream.jsonl", healthy);
  const std::vector<std::string> limits = {"--max-connections", std::to_string(2 * kProxiedTasks + 100), "--threads",
                                           "2", "--read-timeout", "120"};
  std::vector<std::string> up_argv = {relsim::test::relsim_exe(), "serve", "--port", "0", "--plan", up_file.string()};
  up_argv.insert(up_argv.end(), limits.begin(), limits.end());
  relsim::test::Background upstream(up_argv);
  const int up_port = relsim::test::port_from_banner(upstream.read_line(60));
  ASSERT_GT(up_port, 0);
  std::vector<std::string> px_argv = {relsim::test::relsim_exe(), "proxy", "--port", "0", "--plan", plan_file.string(),
                                      "--upstream", fmt::format("http://127.0.0.1:{}/t/{{task}}", up_port)};
  px_argv.insert(px_argv.end(), {"--max-connections", std::to_string(2 * kProxiedTasks + 100), "--threads", "2"});
  relsim::test::Background proxy(px_argv);
  const int port = relsim::test::port_from_banner(proxy.read_line(60));
  ASSERT_GT(port, 0);

  relsim::ClientConfig client;
  client.port = static_cast<std::uint16_t>(port);
  client.policy = policy;
  client.concurrency = kProxiedTasks;
  client.threads = 2;
  client.timing.connect_timeout = 60;
  client.timing.header_timeout = 60;
  client.timing.idle_timeout = 60;
  client.timing.time_scale = 0.001;  // backoff in ms: this is about answers, not waits
  const auto live = relsim::run_live(client, 0, kProxiedTasks);
  ASSERT_EQ(live.size(), static_cast<std::size_t>(kProxiedTasks));

  const relsim::OracleResult oracle = relsim::run_oracle(policy, plan, client.timing);
  std::int64_t requests = 0, faults = 0;
  for (int t = 0; t < kProxiedTasks; ++t) {
    ASSERT_TRUE(live[t].text_ok) << "task " << t << " got an answer that is not its own: " << live[t].text;
    EXPECT_EQ(live[t].outcome, oracle.tasks[t].outcome) << "task " << t << ": " << live[t].error;
    EXPECT_EQ(live[t].requests, oracle.tasks[t].requests) << "task " << t;
    requests += live[t].requests;
    for (const auto& seen : live[t].seen) faults += seen.has_value();
  }
  EXPECT_GT(faults, 100);
  const auto proxied = relsim::test::journal_requests(port);
  ASSERT_EQ(static_cast<std::int64_t>(proxied.size()), requests);
  std::int64_t forwarded = 0;
  for (const auto& l : proxied) forwarded += l.contains("upstream");
  const auto served = relsim::test::journal_requests(up_port);
  EXPECT_EQ(static_cast<std::int64_t>(served.size()), forwarded);
  for (const auto& l : served) EXPECT_EQ(l["entry"], "ok") << l.dump();
  RecordProperty("requests", static_cast<int>(requests));
  RecordProperty("forwarded", static_cast<int>(forwarded));
  std::printf("proxy load: %d tasks at once, %lld requests (%lld faults), %lld forwarded to the upstream\n",
              kProxiedTasks, static_cast<long long>(requests), static_cast<long long>(faults),
              static_cast<long long>(forwarded));
  EXPECT_EQ(proxy.stop(SIGTERM), 0);
  EXPECT_EQ(upstream.stop(SIGTERM), 0);
}

}  // namespace
