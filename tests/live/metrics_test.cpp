// GET /metrics (docs/proxy.md, Metrics): after a bursty run of over 10,000
// requests in both dialects, by relsim's own client under a layered policy,
// every counter of the exposition equals what the request log file says,
// counted here from the file; the bytes a client reads equal the growth of
// relsim_response_bytes_total; and Debian's promtool accepts the text.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "live/live_client_support.hpp"
#include "relsim/core/json.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "relsim/server/server.hpp"
#include "support/files.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

// Named, not anonymous: the live tests build as unity batches.
namespace metrics_test {

using namespace relsim;

// Everything one connection reads, the request sent with connection: close.
std::string exchange(int port, const std::string& request) {
  test::RawClient c(port);
  c.send(request);
  while (c.fill()) {
  }
  return c.buf;
}

std::string metrics_response(int port) {
  return exchange(port, "GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
}

std::string body_of(const std::string& response) { return response.substr(response.find("\r\n\r\n") + 4); }

// The samples of an exposition, by name with its labels as written.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

double at(const std::map<std::string, double>& s, const std::string& key) {
  const auto it = s.find(key);
  EXPECT_NE(it, s.end()) << key;
  return it == s.end() ? -1.0 : it->second;
}

// What the log file says, counted as the metrics should.
struct LogCounts {
  std::map<std::string, double> requests;  // relsim_requests_total{...} as the exposition writes it
  std::map<std::string, double> lines, body_bytes, streams_200, seconds;  // by dialect
};

LogCounts count_log(const std::filesystem::path& path) {
  LogCounts c;
  std::ifstream in(path);
  std::string text;
  while (std::getline(in, text)) {
    const Json line = Json::parse(text);
    if (line.contains("relsim_log") || line.contains("outcome")) continue;
    const std::string dialect = line.value("dialect", "anthropic");
    const Json& entry = line["entry"];
    const std::string fault = entry.is_null() ? "none" : entry.is_string() ? entry.get<std::string>()
                                                                            : entry["kind"].get<std::string>();
    const int status = line["status"].get<int>();
    c.requests[fmt::format("relsim_requests_total{{dialect=\"{}\",fault=\"{}\",status=\"{}\"}}", dialect, fault,
                           status)] += 1;
    c.lines[dialect] += 1;
    c.body_bytes[dialect] += line["body_bytes"].get<double>();
    if (status == 200) c.streams_200[dialect] += 1;
    c.seconds[dialect] += (line["finished_ms"].get<double>() - line["received_ms"].get<double>()) / 1000.0;
  }
  return c;
}

TEST(Metrics, EveryCounterEqualsTheRequestLogAfterTenThousandRequests) {
  const Policy policy{.n = 10, .r = 2, .kind = PolicyKind::layered};
  SimConfig config;
  config.tasks = 1200;
  config.seed = 44;
  config.kinds = parse_fault_weights("cut=1,overloaded=1,http_529=2,http_500=1,malformed=1,no_stop=1,reset=1");
  const Plan plan = generate_plan(Model{.p = 0.3, .q = 0.8}, policy, config);
  const std::filesystem::path log = test::scratch("metrics") / "requests.jsonl";
  ServerConfig sc;
  sc.threads = 2;
  sc.log_path = log.string();
  Server server(sc, plan);

  ClientConfig client = test::live_client::config_for(policy, server.port());
  std::int64_t sent = 0;
  for (const Dialect dialect : {Dialect::anthropic, Dialect::openai}) {
    client.dialect = dialect;
    const std::int64_t first = dialect == Dialect::anthropic ? 0 : 600;
    for (const LiveTask& t : run_live(client, first, 600)) {
      sent += t.requests;
      // The client may see a reply end before the server logs it.
      ASSERT_TRUE(server.wait_finished(t.task, static_cast<std::size_t>(t.requests), std::chrono::seconds(10)));
    }
  }
  ASSERT_GE(sent, 10000);

  const std::string first = metrics_response(server.port());
  ASSERT_EQ(first.rfind("HTTP/1.1 200", 0), 0u) << first.substr(0, 200);
  EXPECT_NE(first.find("content-type: text/plain; version=0.0.4"), std::string::npos);
  const std::map<std::string, double> m = samples(body_of(first));
  const LogCounts want = count_log(log);

  double total = 0;
  for (const auto& [key, n] : want.requests) {
    EXPECT_EQ(at(m, key), n) << key;
    total += n;
  }
  EXPECT_EQ(total, static_cast<double>(sent));
  int families = 0;
  for (const auto& [key, n] : m)
    if (key.rfind("relsim_requests_total{", 0) == 0) ++families;
  EXPECT_EQ(families, static_cast<int>(want.requests.size()));  // no label set the log lacks
  for (const std::string dialect : {"anthropic", "openai"}) {
    SCOPED_TRACE(dialect);
    const std::string l = fmt::format("{{dialect=\"{}\"}}", dialect);
    EXPECT_EQ(at(m, "relsim_received_requests_total" + l), want.lines.at(dialect));
    EXPECT_EQ(at(m, "relsim_request_seconds_count" + l), want.lines.at(dialect));
    EXPECT_NEAR(at(m, "relsim_request_seconds_sum" + l), want.seconds.at(dialect), 1e-9 * want.seconds.at(dialect));
    EXPECT_EQ(at(m, "relsim_request_body_bytes_total" + l), want.body_bytes.at(dialect));
    // Every 200 here is a stream (the client asks for one), and each wrote its first event.
    EXPECT_EQ(at(m, "relsim_first_event_seconds_count" + l), want.streams_200.at(dialect));
    EXPECT_EQ(at(m, fmt::format("relsim_request_seconds_bucket{{dialect=\"{}\",le=\"+Inf\"}}", dialect)),
              want.lines.at(dialect));
    EXPECT_EQ(at(m, "relsim_streams_in_flight" + l), 0);
  }
  EXPECT_GT(want.lines.at("openai"), 3000);
  EXPECT_GT(want.lines.at("anthropic"), 3000);

  // The bytes of the first exposition and of one more request, read whole
  // here, are what the counter grew by.
  server.set_script(100000, script_of({"ok"}));
  const std::string reply = exchange(server.port(), fmt::format("POST /t/100000/v1/messages HTTP/1.1\r\nhost: x\r\n"
                                                                "content-type: application/json\r\nconnection: close\r\n"
                                                                "content-length: {}\r\n\r\n{}",
                                                                request_body(100000, 0).size(), request_body(100000, 0)));
  ASSERT_TRUE(server.wait_finished(100000, 1, std::chrono::seconds(10)));
  const std::map<std::string, double> after = samples(body_of(metrics_response(server.port())));
  EXPECT_EQ(at(after, "relsim_response_bytes_total") - at(m, "relsim_response_bytes_total"),
            static_cast<double>(first.size() + reply.size()));
  RecordProperty("requests", static_cast<int>(sent));
  RecordProperty("label_sets", static_cast<int>(want.requests.size()));
}

// A proxy (relsim proxy's mode) in front of a mock whose task 0 answers
// every forwarded request: its exposition adds the upstream's families.
struct ProxyPair {
  Server upstream, proxy;
  ProxyPair(const Plan& plan, std::int64_t oks)
      : upstream(ServerConfig{}),
        proxy(with_upstream(upstream.port()), plan) {
    upstream.set_script(0, std::vector<ScriptEntry>(static_cast<std::size_t>(oks), ScriptEntry::ok()));
  }
  static ServerConfig with_upstream(int port) {
    ServerConfig c;
    c.threads = 2;
    c.log_path = (test::scratch("metrics_proxy") / "requests.jsonl").string();
    c.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/0", port));
    return c;
  }
};

Plan small_plan(std::int64_t tasks, std::uint64_t seed) {
  SimConfig c;
  c.tasks = tasks;
  c.seed = seed;
  c.kinds = parse_fault_weights("cut=1,overloaded=1,http_529=1,no_stop=1");
  return generate_plan(Model{.p = 0.3, .q = 0.8}, Policy{.n = 3, .r = 2, .kind = PolicyKind::layered}, c);
}

// Runs tasks [first, first + count) through `port` and waits until the server `s` has logged each request.
std::int64_t drive(const Server& s, int port, Dialect dialect, std::int64_t first, std::int64_t count) {
  ClientConfig client = test::live_client::config_for(Policy{.n = 3, .r = 2, .kind = PolicyKind::layered}, port);
  client.dialect = dialect;
  std::int64_t sent = 0;
  for (const LiveTask& t : run_live(client, first, count)) {
    sent += t.requests;
    EXPECT_TRUE(s.wait_finished(t.task, static_cast<std::size_t>(t.requests), std::chrono::seconds(10)));
  }
  return sent;
}

TEST(Metrics, TheProxyCountsItsUpstreamHops) {
  ProxyPair pair(small_plan(40, 45), 1000);
  const std::int64_t sent = drive(pair.proxy, pair.proxy.port(), Dialect::anthropic, 0, 40);
  const std::map<std::string, double> m = samples(body_of(metrics_response(pair.proxy.port())));
  // The hops, from the proxy's log: each forwarded request's "upstream".
  double hops = 0, bytes = 0, lines = 0;
  std::ifstream in(test::scratch("metrics_proxy") / "requests.jsonl");
  std::string text;
  while (std::getline(in, text)) {
    const Json line = Json::parse(text);
    if (!line.contains("index")) continue;
    ++lines;
    const auto up = line.find("upstream");
    if (up == line.end() || !up->is_object()) continue;
    if ((*up)["headers_ms"].is_number()) ++hops;
    bytes += up->value("bytes", 0.0);
  }
  EXPECT_EQ(lines, static_cast<double>(sent));
  EXPECT_GT(hops, 0.5 * lines);  // the ok and in-stream entries are forwarded; the rest answered here
  EXPECT_EQ(at(m, "relsim_upstream_headers_seconds_count"), hops);
  EXPECT_EQ(at(m, "relsim_upstream_bytes_total"), bytes);
  EXPECT_EQ(at(m, "relsim_received_requests_total{dialect=\"anthropic\"}"), lines);
  RecordProperty("hops", static_cast<int>(hops));
}

TEST(Metrics, PromtoolAcceptsBothServersExpositions) {
  if (std::system("command -v promtool > /dev/null 2>&1") != 0)
    RELSIM_SKIP_OR_FAIL("promtool is not installed (Debian's prometheus package; scripts/install-deps.sh --tests)");
  ProxyPair pair(small_plan(20, 46), 500);
  Server serve(ServerConfig{}, small_plan(20, 47));
  drive(pair.proxy, pair.proxy.port(), Dialect::openai, 0, 20);
  drive(serve, serve.port(), Dialect::anthropic, 0, 10);
  drive(serve, serve.port(), Dialect::openai, 10, 10);
  for (const Server* s : {&serve, &pair.proxy}) {
    const std::string text = body_of(metrics_response(s->port()));
    ASSERT_NE(text.find("relsim_requests_total{"), std::string::npos);
    const std::filesystem::path file = test::write_temp("metrics", "metrics.txt", text);
    const std::filesystem::path out = file.parent_path() / "promtool.out";
    const int code =
        std::system(fmt::format("promtool check metrics < '{}' > '{}' 2>&1", file.string(), out.string()).c_str());
    EXPECT_EQ(code, 0) << test::slurp(out) << text;
    EXPECT_EQ(test::slurp(out), "") << "promtool's lint";
  }
}

}  // namespace metrics_test
