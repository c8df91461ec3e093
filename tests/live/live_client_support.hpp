#pragma once
// For the live client's tests (client_test.cpp, client_connection_test.cpp):
// the client configuration they share (short timeouts of 250 ms, backoff
// scaled by 0.001, a fixed seed) and a task plan as the mock server's script.
#include <cstdint>
#include <vector>

#include "relsim/client/client.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/server/server.hpp"

namespace relsim::test::live_client {

inline ClientConfig config_for(const Policy& policy, int port) {
  ClientConfig c;
  c.port = static_cast<std::uint16_t>(port);
  c.policy = policy;
  c.seed = 20261001;
  c.timing.connect_timeout = 5.0;
  c.timing.header_timeout = 0.25;
  c.timing.idle_timeout = 0.25;
  c.timing.call_timeout = 60.0;
  c.timing.task_timeout = 60.0;
  c.timing.time_scale = 0.001;
  return c;
}

inline std::vector<ScriptEntry> script_of_plan(const TaskPlan& plan) {
  std::vector<ScriptEntry> s;
  for (const PlannedRequest& r : plan.requests) s.push_back(r ? ScriptEntry::of(*r) : ScriptEntry::ok());
  return s;
}

}  // namespace relsim::test::live_client
