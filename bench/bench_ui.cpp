// The workbench's latency (issue 16: an exact answer under 20 ms at the
// server, a 10^5-task simulation under 300 ms): GET /api/exact at the
// reference point (p 0.3, q 0.8, r 2, n 2) and GET /api/simulate with 10^5
// tasks, through a UiServer running relsim::run_command, over one loopback
// keep-alive connection, as the page asks them. The same commands run
// in-process through run_command alone are the baseline of the same run;
// `vs_direct` is the HTTP time as a multiple of it, so the server's own cost
// is what exceeds 1.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "relsim/cli/cli.hpp"
#include "relsim/ui/ui_server.hpp"

namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

struct Query {
  const char* target;             // for the server
  std::vector<std::string> args;  // the same for run_command
};

const std::vector<Query>& queries() {
  static const std::vector<Query> q = {
      {"/api/exact?p=0.3&q=0.8&r=2&n=2", {"exact", "--p=0.3", "--q=0.8", "--r=2", "--n=2", "--json"}},
      {"/api/simulate?p=0.3&q=0.8&r=2&n=2&tasks=100000&seed=20261001",
       {"simulate", "--p=0.3", "--q=0.8", "--r=2", "--n=2", "--tasks=100000", "--seed=20261001", "--json"}},
  };
  return q;
}

// One keep-alive connection to the server: a request out, its response in.
class Connection {
 public:
  explicit Connection(int port) : stream_(ioc_), host_(fmt::format("127.0.0.1:{}", port)) {
    stream_.connect(tcp::endpoint(boost::asio::ip::address_v4::loopback(), static_cast<unsigned short>(port)));
    stream_.socket().set_option(tcp::no_delay(true));
  }

  std::size_t get(const char* target) {
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, host_);
    http::write(stream_, request);
    http::response<http::string_body> response;
    http::read(stream_, buffer_, response);
    if (response.result_int() != 200) throw std::runtime_error(fmt::format("{}: {}", target, response.body()));
    return response.body().size();
  }

 private:
  boost::asio::io_context ioc_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::string host_;
};

// Mean wall seconds of one in-process run, by query; the baselines run first.
std::map<std::int64_t, double>& direct_seconds() {
  static std::map<std::int64_t, double> s;
  return s;
}

template <class Body>
double mean_seconds(benchmark::State& state, Body body) {
  double total = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    body();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(s);
    total += s;
  }
  return total / static_cast<double>(state.iterations());
}

void BM_Direct(benchmark::State& state) {
  const Query& q = queries()[static_cast<std::size_t>(state.range(0))];
  direct_seconds()[state.range(0)] = mean_seconds(state, [&] {
    const auto r = relsim::run_command(q.args);
    if (r.code != 0) throw std::runtime_error(r.err);
    benchmark::DoNotOptimize(r.out.data());
  });
  state.SetLabel(q.args[0] + " in-process (baseline)");
}

void BM_OverHttp(benchmark::State& state) {
  const Query& q = queries()[static_cast<std::size_t>(state.range(0))];
  relsim::ui::UiServer server({}, [](const std::vector<std::string>& args, const relsim::ui::CommandHooks& hooks) {
    return relsim::run_command(args, hooks);
  });
  Connection conn(server.port());
  const double mean = mean_seconds(state, [&] { benchmark::DoNotOptimize(conn.get(q.target)); });
  if (const auto it = direct_seconds().find(state.range(0)); it != direct_seconds().end())
    state.counters["vs_direct"] = mean / it->second;
  const std::string target = q.target;
  state.SetLabel(target.substr(0, target.find('?')) + " over loopback HTTP, keep-alive");
}

}  // namespace

BENCHMARK(BM_Direct)->ArgName("query")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_OverHttp)->ArgName("query")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseManualTime();

BENCHMARK_MAIN();
