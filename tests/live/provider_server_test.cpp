// The mock server's provider mode (docs/wire.md, Provider mode): per-tenant
// request quotas (tenant = x-api-key) answered 429 with retry-after and the
// anthropic-ratelimit-requests-* headers, a capacity limit answered 529, and
// refused requests that take no script entry and are journaled with their
// tenant and "refused". The expected counts are worked by hand from the
// token bucket (it starts full; quota / 60 tokens a second). The quotas are
// slow (3 a minute: a token every 20 s), so no test depends on timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/client/client.hpp"
#include "relsim/server/server.hpp"
#include "support/input_error_cli.hpp"
#include "support/journal.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

using relsim::Json;
using relsim::ProviderConfig;
using relsim::script_of;
using relsim::Server;
using relsim::ServerConfig;
using relsim::test::RawClient;

relsim::test::RunOptions thirty_seconds() {
  relsim::test::RunOptions o;
  o.timeout = 30;
  return o;
}

struct ProviderReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

ProviderReply parse_reply(const std::string& raw) {
  ProviderReply r;
  if (raw.rfind("HTTP/1.1 ", 0) == 0) r.status = std::stoi(raw.substr(9, 3));
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return r;
  std::size_t at = raw.find("\r\n") + 2;
  while (at < head_end) {
    const std::size_t eol = raw.find("\r\n", at);
    const std::string line = raw.substr(at, eol - at);
    const auto colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    at = eol + 2;
  }
  r.body = raw.substr(head_end + 4);
  return r;
}

// One messages request of `task` with this x-api-key ("" sends none), on its
// own connection, read to the end.
ProviderReply provider_message(int port, std::int64_t task, const std::string& key) {
  RawClient c(port);
  const std::string body = R"({"stream":true})";
  c.send(fmt::format("POST /t/{}/v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\n{}content-length: {}\r\n\r\n{}",
                     task, key.empty() ? "" : fmt::format("x-api-key: {}\r\n", key), body.size(), body));
  c.drain();
  return parse_reply(c.buf);
}

using relsim::test::journal_requests;

ServerConfig provider(double quota, std::int64_t capacity) {
  ServerConfig config;
  ProviderConfig p;
  p.quota_rpm = quota;
  p.capacity = capacity;
  config.provider = p;
  return config;
}

const std::regex kRfc3339(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");

TEST(ProviderServer, EachTenantGetsItsQuotaThen429WithRetryAfterAndRateLimitHeaders) {
  Server server(provider(3, 0));  // 3 a minute: the bucket holds 3, one back every 20 s
  server.set_script(0, script_of({"ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"}));
  std::vector<ProviderReply> a;
  for (int i = 0; i < 5; ++i) a.push_back(provider_message(server.port(), 0, "key-a"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a[i].status, 200) << i;
    EXPECT_EQ(a[i].headers["anthropic-ratelimit-requests-limit"], "3");
    EXPECT_EQ(a[i].headers["anthropic-ratelimit-requests-remaining"], std::to_string(2 - i));
    EXPECT_TRUE(std::regex_match(a[i].headers["anthropic-ratelimit-requests-reset"], kRfc3339))
        << a[i].headers["anthropic-ratelimit-requests-reset"];
    EXPECT_EQ(a[i].headers.count("retry-after"), 0u);
  }
  for (int i = 3; i < 5; ++i) {
    ASSERT_EQ(a[i].status, 429) << i;
    EXPECT_EQ(a[i].headers["anthropic-ratelimit-requests-remaining"], "0");
    // The next token is (1 - tokens) / (3/60) s away, tokens < 1: at most 20 s, rounded up to whole seconds.
    const int retry_after = std::stoi(a[i].headers["retry-after"]);
    EXPECT_GE(retry_after, 1);
    EXPECT_LE(retry_after, 20);
    EXPECT_NE(a[i].body.find("rate_limit_error"), std::string::npos) << a[i].body;
  }
  // Another key is another tenant with a bucket of its own.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(provider_message(server.port(), 0, "key-b").status, 200) << i;
  EXPECT_EQ(provider_message(server.port(), 0, "key-b").status, 429);

  // The journal: tenants in order of first sight; refused requests took no
  // entry (index null), so the six admitted ones took entries 0 to 5.
  const auto lines = journal_requests(server.port());
  ASSERT_EQ(lines.size(), 9u);
  std::vector<std::int64_t> indices;
  int refused = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["tenant"], i < 5 ? 0 : 1) << lines[i].dump();
    if (lines[i]["status"] == 429) {
      ++refused;
      EXPECT_EQ(lines[i]["refused"], "quota");
      EXPECT_TRUE(lines[i]["index"].is_null());
    } else {
      EXPECT_FALSE(lines[i].contains("refused"));
      indices.push_back(lines[i]["index"].get<std::int64_t>());
    }
  }
  EXPECT_EQ(refused, 3);
  EXPECT_EQ(indices, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(server.log(0).requests.size(), 9u);
}

TEST(ProviderServer, NoKeyIsOneTenantOfItsOwn) {
  Server server(provider(1, 0));
  server.set_script(4, script_of({"ok", "ok", "ok"}));
  EXPECT_EQ(provider_message(server.port(), 4, "").status, 200);
  EXPECT_EQ(provider_message(server.port(), 4, "").status, 429);
  EXPECT_EQ(provider_message(server.port(), 4, "k").status, 200);
}

TEST(ProviderServer, PastCapacityA529AndTheStreamsHeldKeepTheirPlaces) {
  Server server(provider(0, 2));
  // Tasks 0 and 1 wait at a gate before their first delta, holding the two streams.
  server.set_script(0, {relsim::parse_script_entry(Json::parse(R"({"kind":"ok","gate":"g"})"))});
  server.set_script(1, {relsim::parse_script_entry(Json::parse(R"({"kind":"ok","gate":"g"})"))});
  server.set_script(2, script_of({"ok"}));
  RawClient held0(server.port()), held1(server.port());
  const std::string body = R"({"stream":true})";
  for (auto [c, task] : {std::pair{&held0, 0}, std::pair{&held1, 1}})
    c->send(fmt::format("POST /t/{}/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\ncontent-length: {}\r\n\r\n{}",
                        task, body.size(), body));
  ASSERT_TRUE(server.wait_held(0, 1, std::chrono::seconds(10)));
  ASSERT_TRUE(server.wait_held(1, 1, std::chrono::seconds(10)));

  ProviderReply refused = provider_message(server.port(), 2, "k");
  ASSERT_EQ(refused.status, 529);
  EXPECT_EQ(refused.headers["x-should-retry"], "true");
  EXPECT_NE(refused.body.find("overloaded_error"), std::string::npos);
  EXPECT_EQ(refused.headers.count("anthropic-ratelimit-requests-limit"), 0u);  // no quota, no quota headers

  EXPECT_EQ(server.open_gate("g"), 2u);
  EXPECT_TRUE(held0.read_until("0\r\n\r\n"));
  EXPECT_TRUE(held1.read_until("0\r\n\r\n"));
  ASSERT_TRUE(server.wait_finished(0, 1, std::chrono::seconds(10)));
  ASSERT_TRUE(server.wait_finished(1, 1, std::chrono::seconds(10)));
  // The 529 took no entry: task 2's one "ok" is still there.
  const ProviderReply later = provider_message(server.port(), 2, "k");
  EXPECT_EQ(later.status, 200);
  EXPECT_NE(later.body.find("message_stop"), std::string::npos);
  const auto lines = journal_requests(server.port());
  int capacity_refusals = 0;
  for (const Json& l : lines) capacity_refusals += l.value("refused", "") == "capacity";
  EXPECT_EQ(capacity_refusals, 1);
}

TEST(ProviderServer, TheQuotaIsAskedBeforeTheCapacity) {
  // A request refused for capacity has spent its token, as in the fleet simulation.
  Server server(provider(2, 1));
  server.set_script(0, {relsim::parse_script_entry(Json::parse(R"({"kind":"ok","gate":"h"})"))});
  server.set_script(1, script_of({"ok"}));
  RawClient held(server.port());
  const std::string body = R"({"stream":true})";
  held.send(fmt::format("POST /t/0/v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\ncontent-length: {}\r\n\r\n{}",
                        body.size(), body));
  ASSERT_TRUE(server.wait_held(0, 1, std::chrono::seconds(10)));
  ProviderReply second = provider_message(server.port(), 1, "k");
  EXPECT_EQ(second.status, 529);
  EXPECT_EQ(second.headers["anthropic-ratelimit-requests-remaining"], "0");
  server.open_gate("h");
  EXPECT_TRUE(held.read_until("0\r\n\r\n"));
  EXPECT_EQ(provider_message(server.port(), 1, "k").status, 429);
}

TEST(ProviderServer, BadKeysAndTooManyTenantsAre400NamingTheLimit) {
  ServerConfig config = provider(100, 0);
  config.provider->max_tenants = 2;
  Server server(config);
  server.set_script(0, script_of({"ok", "ok", "ok"}));
  const ProviderReply long_key = provider_message(server.port(), 0, std::string(300, 'k'));
  EXPECT_EQ(long_key.status, 400);
  EXPECT_NE(long_key.body.find("300 bytes: at most 256"), std::string::npos) << long_key.body;
  EXPECT_EQ(provider_message(server.port(), 0, "one").status, 200);
  EXPECT_EQ(provider_message(server.port(), 0, "two").status, 200);
  const ProviderReply third = provider_message(server.port(), 0, "three");
  EXPECT_EQ(third.status, 400);
  EXPECT_NE(third.body.find("at most 2 tenants"), std::string::npos) << third.body;
  EXPECT_EQ(provider_message(server.port(), 0, "one").status, 200);
}

TEST(ProviderServer, ConfigOutOfRangeIsRefused) {
  for (auto [quota, capacity, scale] : {std::tuple{-1.0, 0, 1.0}, std::tuple{2e9, 0, 1.0}, std::tuple{0.0, -3, 1.0},
                                        std::tuple{10.0, 0, 0.0}}) {
    ServerConfig config = provider(quota, capacity);
    config.provider->time_scale = scale;
    EXPECT_THROW(Server{config}, relsim::InputError) << quota << " " << capacity << " " << scale;
  }
}

TEST(ProviderServer, TheClientSendsEachTasksTenantKey) {
  Server server(provider(1e6, 0));
  for (int t = 0; t < 40; ++t) server.set_script(t, script_of({"ok", "ok"}));
  relsim::ClientConfig client;
  client.port = static_cast<std::uint16_t>(server.port());
  client.policy.kind = relsim::PolicyKind::simple;
  client.policy.n = 2;
  client.tenants = 4;
  client.concurrency = 8;
  const auto results = relsim::run_live(client, 0, 40);
  std::map<std::int64_t, std::set<std::int64_t>> tenants_of_class;  // task mod 4 -> tenant numbers seen
  for (int t = 0; t < 40; ++t) {
    EXPECT_EQ(results[t].requests, 2);
    EXPECT_TRUE(results[t].text_ok);
    for (const auto& r : server.log(t).requests) {
      EXPECT_EQ(r.header("x-api-key"), relsim::tenant_key(static_cast<int>(t % 4)));
      tenants_of_class[t % 4].insert(r.tenant);
    }
  }
  std::set<std::int64_t> all;
  for (const auto& [cls, seen] : tenants_of_class) {
    EXPECT_EQ(seen.size(), 1u) << "class " << cls;
    all.insert(seen.begin(), seen.end());
  }
  EXPECT_EQ(all.size(), 4u);
}

// relsim serve in provider mode: a 429 past the quota, with its headers.
TEST(ProviderServe, QuotaAndCapacityFromTheCommandLine) {
  relsim::test::Background serve(
      {relsim::test::relsim_exe(), "serve", "--port", "0", "--quota", "2", "--capacity", "5", "--outage", "1e6,0.01"});
  const int port = relsim::test::port_from_banner(serve.read_line(60));
  ASSERT_GT(port, 0);
  // Outage mode answers any task without a script (bad with probability 1e-8 at any moment).
  EXPECT_EQ(provider_message(port, 1, "k").headers["anthropic-ratelimit-requests-limit"], "2");
  provider_message(port, 1, "k");
  ProviderReply third = provider_message(port, 1, "k");
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(third.headers["retry-after"].empty(), false);
}

TEST(ProviderServe, BadLimitsAreOneLineAndExitCode2) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"serve --port 0 --quota 0", "quota = 0 is out of range: it must be in (0, 1e9]"},
      {"serve --port 0 --quota -5", "quota = -5 is out of range"},
      {"serve --port 0 --capacity 0", "capacity = 0 is out of range: it must be in [1, 1000000]"},
      {"serve --port 0 --quota 2e9", "quota = 2000000000 is out of range: it must be in (0, 1e9]"},
      {"serve --port 0 --capacity 2000000", "capacity = 2000000 is out of range: it must be in [1, 1000000]"},
      {"serve --port 0 --time-scale 0.1", "--time-scale applies in outage or provider mode only"},
      {"serve --port 0 --quota 10 --time-scale 0", "time scale = 0 is out of range"},
      {"serve --port 0 --read-timeout 0", "read timeout = 0 s is out of range"},
      {"serve --port 0 --max-connections 0", "max connections = 0 is out of range"},
  };
  for (const auto& [args, message_part] : cases) {
    SCOPED_TRACE(args);
    relsim::test::expect_input_error_result(relsim::test::run_relsim(args, thirty_seconds()), message_part);
  }
}

}  // namespace
