#pragma once
// No connection.cpp: still_open() is defined with the rules of reuse, in pool.cpp.
// What a request travels on: a kept-alive TCP connection, the slot that
// holds it between two requests, and the response in flight on it
// (pool.cpp has the rules of reuse), and the tenant pool's permit it holds
// (tenant_pools.hpp).
#include <cstdint>
#include <limits>
#include <memory>

#include "client/asio_names.hpp"
#include "client/tenant_pools.hpp"

namespace relsim::live_client {

// One TCP connection to the server; it carries one request at a time.
struct Connection {
  explicit Connection(const asio::any_io_executor& ex) : stream(ex) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool used = false;  // has carried a whole response: a request on it now is a reuse
};

// Where a worker (or a wave's position) keeps its idle connection between
// two requests. Its tasks run one after another on its strand.
class TenantThrottles;

struct Slot {
  explicit Slot(asio::any_io_executor ex, TenantThrottles* t = nullptr, TenantPools* p = nullptr)
      : executor(std::move(ex)), throttles(t), pools(p) {}
  asio::any_io_executor executor;  // a strand, or the io_context's own with one thread
  std::unique_ptr<Connection> idle;
  TenantThrottles* throttles;  // the run's retry throttles; null without one
  TenantPools* pools;          // the run's connection pools; null without one
};

// Whether an idle connection can carry another request: nothing buffered,
// and a non-blocking peek finds neither an end of stream, an error nor a
// byte the server sent unasked.
bool still_open(Connection& c);

// One response in flight, on its connection.
struct Exchange {
  explicit Exchange(std::unique_ptr<Connection> c) : conn(std::move(c)) {
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a stream is as long as it is
  }
  std::unique_ptr<Connection> conn;
  http::response_parser<http::buffer_body> parser;
  PoolPermit permit;  // the tenant pool's connection this request holds (ClientConfig::pool)
};

}  // namespace relsim::live_client
