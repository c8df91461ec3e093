// The mock server in outage mode (docs/wire.md, Outage mode), over loopback
// with a raw socket client: requests read while the schedule is bad get a
// fault of the given kinds, the others a healthy stream; GET /control/outage
// shows the schedule, the same for the same seed; scripts are refused. No
// assertion is on timing: the requests are classified against the schedule
// the server publishes, away from its switch times by a margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/server/server.hpp"
#include "support/raw_client.hpp"

namespace {

using relsim::Json;
using relsim::OutageConfig;
using relsim::Server;
using relsim::ServerConfig;

struct OutageReply {
  int status = 0;
  std::string body;
};

// One request on its own connection (connection: close), read to its end.
OutageReply exchange(int port, const std::string& method, const std::string& target, const std::string& body = "") {
  relsim::test::RawClient c(port);
  c.send(fmt::format("{} {} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{}", method, target,
                     body.size(), body));
  c.drain();
  OutageReply r;
  if (c.buf.rfind("HTTP/1.1 ", 0) == 0) r.status = std::stoi(c.buf.substr(9, 3));
  const auto head_end = c.buf.find("\r\n\r\n");
  if (head_end != std::string::npos) r.body = c.buf.substr(head_end + 4);
  return r;
}

ServerConfig outage_server(std::uint64_t seed, const std::string& kinds) {
  ServerConfig config;
  OutageConfig o;
  o.t_good = 0.04;  // model seconds; time scale 1: 40 ms of wall time
  o.t_bad = 0.03;
  o.seed = seed;
  o.kinds = relsim::parse_fault_weights(kinds);
  config.outage = o;
  return config;
}

bool inside(const Json& bad, double t, double margin, bool& near_edge) {
  near_edge = false;
  for (const Json& i : bad) {
    const double a = i[0].get<double>(), b = i[1].get<double>();
    if (std::abs(t - a) < margin || std::abs(t - b) < margin) near_edge = true;
    if (t >= a && t < b) return true;
  }
  return false;
}

TEST(OutageServer, RequestsInBadTimeGetFaultsOfTheKindsAndOthersAHealthyStream) {
  Server server(outage_server(9, "http_500=1,http_529=1,cut=1"));
  const std::string body = R"({"stream":true})";
  for (int i = 0; i < 300; ++i) {
    exchange(server.port(), "POST", fmt::format("/t/{}/v1/messages", i % 3), body);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const OutageReply schedule = exchange(server.port(), "GET", "/control/outage");
  ASSERT_EQ(schedule.status, 200) << schedule.body;
  const Json j = Json::parse(schedule.body);
  EXPECT_EQ(j["t_good"], 0.04);
  EXPECT_EQ(j["t_bad"], 0.03);
  EXPECT_EQ(j["seed"], 9);
  EXPECT_EQ(j["from"], 0.0);
  const double margin = 0.002;  // model seconds = wall seconds here
  int bad = 0, good = 0, near = 0;
  for (std::int64_t task = 0; task < 3; ++task) {
    const relsim::TaskLog log = server.log(task);
    ASSERT_EQ(log.requests.size(), 100u);
    for (const relsim::LoggedRequest& r : log.requests) {
      ASSERT_TRUE(r.entry);
      bool near_edge = false;
      const bool in_bad = inside(j["bad"], r.received_ms / 1000.0, margin, near_edge);
      if (near_edge) {
        ++near;
        continue;
      }
      const std::string name = relsim::entry_name(*r.entry);
      if (in_bad) {
        ++bad;
        EXPECT_TRUE(name == "http_500" || name == "http_529" || name == "cut") << name << " at " << r.received_ms;
      } else {
        ++good;
        EXPECT_EQ(name, "ok") << "at " << r.received_ms;
        EXPECT_EQ(r.status, 200);
        EXPECT_EQ(r.end, "complete");
      }
    }
  }
  // 300 requests over many sojourns: both states are met well away from a switch.
  EXPECT_GE(bad, 10) << "near a switch: " << near;
  EXPECT_GE(good, 10) << "near a switch: " << near;
  // The in-process view is the same schedule.
  const auto view = server.outage_schedule();
  ASSERT_TRUE(view);
  ASSERT_GE(view->bad.size(), j["bad"].size());
  for (std::size_t i = 0; i < j["bad"].size(); ++i) EXPECT_EQ(view->bad[i].start, j["bad"][i][0].get<double>());
}

TEST(OutageServer, TheSameSeedPublishesTheSameSchedule) {
  Server a(outage_server(21, "cut=1")), b(outage_server(21, "cut=1")), c(outage_server(22, "cut=1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const Json ja = Json::parse(exchange(a.port(), "GET", "/control/outage").body);
  const Json jb = Json::parse(exchange(b.port(), "GET", "/control/outage").body);
  const Json jc = Json::parse(exchange(c.port(), "GET", "/control/outage").body);
  // Each lists the bad intervals that began before its own clock: the
  // shorter list is a prefix of the longer.
  const std::size_t common = std::min(ja.at("bad").size(), jb.at("bad").size());
  ASSERT_GE(common, 2u);
  for (std::size_t i = 0; i < common; ++i) EXPECT_EQ(ja["bad"].at(i), jb["bad"].at(i)) << i;
  ASSERT_GE(jc.at("bad").size(), 1u);
  EXPECT_NE(ja["bad"].at(0), jc["bad"].at(0));
}

TEST(OutageServer, ScriptsAreRefusedAndTheEndpointNeedsOutageMode) {
  Server outage(outage_server(1, "cut=1"));
  const OutageReply script = exchange(outage.port(), "POST", "/control/tasks/3/script", R"({"responses":["ok"]})");
  EXPECT_EQ(script.status, 400);
  EXPECT_NE(script.body.find("outage mode"), std::string::npos) << script.body;
  EXPECT_THROW(outage.set_script(3, relsim::script_of({"ok"})), relsim::InputError);
  EXPECT_EQ(exchange(outage.port(), "POST", "/control/outage").status, 405);

  Server plain;
  const OutageReply none = exchange(plain.port(), "GET", "/control/outage");
  EXPECT_EQ(none.status, 404);
  EXPECT_NE(none.body.find("without an outage schedule"), std::string::npos) << none.body;
  EXPECT_FALSE(plain.outage_schedule());
}

TEST(OutageServer, AnyTaskIsAnsweredAndItsOutcomeCanBeReported) {
  Server server(outage_server(4, "http_503=1"));
  const OutageReply r = exchange(server.port(), "POST", "/t/123456/v1/messages", R"({"stream":true})");
  EXPECT_TRUE(r.status == 200 || r.status == 503) << r.status;
  EXPECT_EQ(server.log(123456).requests.size(), 1u);
  EXPECT_EQ(exchange(server.port(), "POST", "/control/tasks/123456/outcome", R"({"outcome":"done"})").status, 200);
  EXPECT_EQ(exchange(server.port(), "POST", "/t/7/v1/messages", "not json").status, 400);
}

}  // namespace
