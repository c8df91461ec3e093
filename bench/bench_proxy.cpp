// The cost of relsim proxy's hop (docs/proxy.md), against the same upstream
// asked directly in the same run: a mock server with healthy streams, and a
// proxy in front of a second, identical one (its upstream path /t/{task}).
//   BM_HopLatency     one keep-alive client, 2,000 requests one after the
//                     other: p50 and p99 of the wall time of a whole stream,
//                     direct and through the proxy, and what the hop adds
//                     (goal: under 1 ms p50 added)
//   BM_HopThroughput  relsim's client, 64 tasks in flight, 4,000 one-call
//                     tasks each way, in halves alternated (direct, proxy,
//                     proxy, direct): streams per second direct and through
//                     the proxy, and their ratio (goal: at least 0.5)
// On a shared machine both move with the load; the ratios move less.
#include <benchmark/benchmark.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "relsim/client/client.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"

namespace {

// `tasks` tasks of `per_task` healthy streams each.
relsim::Plan healthy(int tasks, int per_task) {
  std::string text = fmt::format(R"({{"relsim_plan": 1, "tasks": {}, "source": "scripted", "n": 1, "b": 0, "g": 0}})",
                                 tasks) + "\n";
  std::string list;
  for (int i = 0; i < per_task; ++i) list += i ? ", \"ok\"" : "\"ok\"";
  for (int t = 0; t < tasks; ++t) text += fmt::format(R"({{"task": {}, "requests": [{}]}})", t, list) + "\n";
  return relsim::parse_plan(text, "bench.jsonl");
}

relsim::ServerConfig proxy_to(int upstream_port) {
  relsim::ServerConfig c;
  c.threads = 1;
  c.upstream = relsim::parse_upstream(fmt::format("http://127.0.0.1:{}/t/{{task}}", upstream_port));
  return c;
}

// A blocking keep-alive client that sends a stream request and reads to its terminating chunk.
class Client {
 public:
  explicit Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("connect failed");
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Seconds from sending the request to the stream's terminating chunk.
  double stream(const std::string& request) {
    const auto t0 = std::chrono::steady_clock::now();
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size()))
      throw std::runtime_error("send failed");
    std::string got;
    char buf[16384];
    while (got.find("\r\n0\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) throw std::runtime_error("the stream ended early");
      got.append(buf, static_cast<std::size_t>(n));
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  int fd_ = -1;
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

void BM_HopLatency(benchmark::State& state) {
  constexpr int kRequests = 2000;
  const std::string body = R"({"model":"m","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]})";
  const std::string request = fmt::format(
      "POST /t/0/v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
      body.size(), body);
  for (auto _ : state) {
    relsim::ServerConfig plain;
    relsim::Server direct(plain, healthy(1, kRequests));
    relsim::Server upstream(plain, healthy(1, kRequests));
    relsim::Server proxy(proxy_to(upstream.port()), healthy(1, kRequests));
    Client d(direct.port()), p(proxy.port());
    std::vector<double> a, b;
    for (int i = 0; i < kRequests; ++i) {  // interleaved, so both see the same load
      a.push_back(d.stream(request));
      b.push_back(p.stream(request));
    }
    const double us = 1e6;
    state.counters["p50_direct_us"] = quantile(a, 0.5) * us;
    state.counters["p50_proxy_us"] = quantile(b, 0.5) * us;
    state.counters["p50_added_us"] = (quantile(b, 0.5) - quantile(a, 0.5)) * us;
    state.counters["p99_direct_us"] = quantile(a, 0.99) * us;
    state.counters["p99_proxy_us"] = quantile(b, 0.99) * us;
    state.counters["p99_added_us"] = (quantile(b, 0.99) - quantile(a, 0.99)) * us;
  }
}
BENCHMARK(BM_HopLatency)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Wall seconds for `tasks` one-call tasks of relsim's client against `port`.
double run_tasks(int port, int tasks) {
  relsim::ClientConfig cc;
  cc.port = static_cast<std::uint16_t>(port);
  cc.policy.kind = relsim::PolicyKind::layered;
  cc.policy.n = 1;
  cc.policy.r = 2;
  cc.concurrency = 64;
  cc.threads = 1;
  const auto start = std::chrono::steady_clock::now();
  const auto results = relsim::run_live(cc, 0, tasks);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& r : results)
    if (r.outcome.outcome != relsim::Outcome::done) throw std::runtime_error("a healthy stream failed: " + r.error);
  return seconds;
}

void BM_HopThroughput(benchmark::State& state) {
  constexpr int kTasks = 4000;
  for (auto _ : state) {
    relsim::ServerConfig plain;
    // Each of kTasks / 2 tasks answers twice: once in each half.
    relsim::Server direct(plain, healthy(kTasks / 2, 2));
    relsim::Server upstream(plain, healthy(kTasks / 2, 2));
    relsim::Server proxy(proxy_to(upstream.port()), healthy(kTasks / 2, 2));
    // Direct and through the proxy twice each, alternated, so neither has the machine's quieter moment.
    const double d1 = run_tasks(direct.port(), kTasks / 2);
    const double p1 = run_tasks(proxy.port(), kTasks / 2);
    const double p2 = run_tasks(proxy.port(), kTasks / 2);
    const double d2 = run_tasks(direct.port(), kTasks / 2);
    const double d = d1 + d2, p = p1 + p2;
    state.counters["direct_per_s"] = kTasks / d;
    state.counters["proxy_per_s"] = kTasks / p;
    state.counters["proxy_vs_direct"] = d / p;
  }
}
BENCHMARK(BM_HopThroughput)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
