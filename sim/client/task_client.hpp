#pragma once
// No task_client.cpp: the members are defined by concern (task_harness, policy_loops, http_exchange, pool, deadlines).
// One task of the live client: its calls, each through the policy's loop
// (policy_loops.cpp) over the SDK-like HTTP layer (http_exchange.cpp), its
// deadlines (deadlines.cpp), the slot's kept-alive connection (pool.cpp),
// and the outcome it ends with (task_harness.cpp).
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "relsim/client/client.hpp"
#include "client/asio_names.hpp"
#include "client/connection.hpp"

namespace relsim::live_client {

class StartGate;

// Which deadline an operation runs against.
enum class Limit { stage, call, task };

class TaskClient {
 public:
  TaskClient(const ClientConfig& config, const tcp::endpoint& endpoint, std::int64_t task, LiveTask& out,
             Clock::time_point run_start, Slot& slot)
      : cfg_(config), endpoint_(endpoint), task_(task), out_(out), run_start_(run_start), slot_(slot) {}

  // Runs the task (after `gate` opens, if there is one) into `out`.
  asio::awaitable<void> run(StartGate* gate);

 private:
  struct HttpOptions {
    int max_retries = 0;
    int request_cap = std::numeric_limits<int>::max();  // requests of the call, in total
  };

  asio::awaitable<void> preconnect_and_wait(StartGate& gate);

  asio::awaitable<std::string> call(std::int64_t c);
  asio::awaitable<std::string> call_naive(std::int64_t c);
  asio::awaitable<std::string> call_layered(std::int64_t c);
  asio::awaitable<std::string> call_simple(std::int64_t c);

  asio::awaitable<std::unique_ptr<Exchange>> create_message(std::int64_t c, HttpOptions options);
  asio::awaitable<std::unique_ptr<Exchange>> send(std::int64_t c, int retry_count);
  asio::awaitable<std::unique_ptr<Exchange>> open_exchange(std::unique_ptr<Connection> conn, error_code ec,
                                                           const std::string& request);
  [[noreturn]] void fail_status(const Exchange& ex, const std::string& body);
  asio::awaitable<std::string> read_message(Exchange& ex);
  // The slot's idle connection if it is still open; else none.
  std::unique_ptr<Connection> take_idle();
  // After a clean, complete response: back to the slot, unless the server
  // asked to close or keep-alive is off.
  void give_back(Exchange& ex);
  std::string request_bytes(std::int64_t c, int retry_count) const;
  // Whether the request being sent goes to the second provider: it is
  // counted in call_requests_ as it is sent, so the call had sent one fewer.
  bool to_fallback() const { return to_second_provider(call_requests_ - 1, cfg_.fallback_after); }
  asio::awaitable<void> pause(double seconds, FaultKind last);
  double next_jitter() { return jitter(cfg_.seed, task_, retries_++); }

  // Sets the stream's expiry for a stage that has its own timeout (or none).
  Limit expire(beast::tcp_stream& stream, std::optional<Clock::time_point> stage);
  template <class E>
  [[noreturn]] void fail(const E& error) {
    out_.seen.back() = error.kind();
    settle(false);
    throw error;
  }
  // The retry throttle (ClientConfig::throttle): the answer to the request
  // in flight (good: a whole stream) is told once; before a retry of either
  // layer the throttle is asked, and a denial ends the task (RetriesExhausted).
  void settle(bool good);
  void allow_retry_or_end(FaultKind kind, const std::string& what);
  // The error for an operation that timed out against `limit`.
  template <class StageError>
  [[noreturn]] void timed_out(Limit limit, FaultKind kind, const std::string& what);

  const ClientConfig& cfg_;
  tcp::endpoint endpoint_;
  std::int64_t task_;
  LiveTask& out_;
  Clock::time_point run_start_;
  Slot& slot_;
  Clock::time_point task_deadline_;
  std::optional<Clock::time_point> call_deadline_;
  int call_requests_ = 0;
  // The first request's connection, made before a coordinated start; its
  // outcome (a timeout or refusal too) counts as that request's.
  struct Preconnected {
    std::unique_ptr<Connection> conn;
    error_code error;
  };
  std::optional<Preconnected> preconnected_;
  std::int64_t retries_ = 0;  // of the task, both layers: the jitter's draw index
  // The request the throttle was told of and not yet of its answer.
  struct Told {
    bool retry = false;
    double paid = 0.0;  // what allow_retry took for it (AWS)
  };
  std::optional<Told> told_;
  double paid_next_ = 0.0;  // what allow_retry took for the next request
};

}  // namespace relsim::live_client
