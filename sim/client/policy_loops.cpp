// The stream layer of each policy (docs/policies.md) in client terms: which
// of the HTTP layer's errors a call catches and retries. These loops restate
// the decisions of core's `react` on purpose, as a real agent loop would
// make them: the live check compares their outcomes with the oracle's,
// which calls `react`.
#include <limits>
#include <string>

#include "relsim/core/error.hpp"
#include "client/task_client.hpp"

namespace relsim::live_client {

asio::awaitable<std::string> TaskClient::call(std::int64_t c) {
  call_requests_ = 0;
  call_deadline_.reset();
  if (cfg_.policy.kind != PolicyKind::naive) call_deadline_ = Clock::now() + to_duration(cfg_.timing.call_timeout);
  switch (cfg_.policy.kind) {
    case PolicyKind::naive: co_return co_await call_naive(c);
    case PolicyKind::layered:
    case PolicyKind::budgeted: co_return co_await call_layered(c);
    case PolicyKind::simple: co_return co_await call_simple(c);
  }
  RELSIM_ASSERT(false);
  co_return std::string();
}

// A first agent loop: the SDK retries what it retries; around it, the loop
// catches connection and timeout errors and the stream's own breakage, and
// lets everything else escape.
asio::awaitable<std::string> TaskClient::call_naive(std::int64_t c) {
  for (int round = 0;; ++round) {
    FaultKind kind{};
    std::string what;
    try {
      auto ex = co_await create_message(c, HttpOptions{cfg_.policy.s});
      co_return co_await read_message(*ex);
    } catch (const ApiConnectionError& e) {
      if (round >= cfg_.policy.r) throw;
      kind = e.kind();
      what = e.what();
    } catch (const StreamError& e) {
      if (round >= cfg_.policy.r) throw;
      kind = e.kind();
      what = e.what();
    }
    allow_retry_or_end(kind, what);
    co_await pause(cfg_.timing.backoff(round, next_jitter()), kind);
  }
}

// Each fault retried by exactly one layer: what fails before the response is
// the SDK's (its retries spent, the call ends), what fails inside the stream
// is the loop's, which starts a fresh SDK call with its own retries. The
// budgeted policy caps the call's requests of both layers together.
asio::awaitable<std::string> TaskClient::call_layered(std::int64_t c) {
  const Policy& p = cfg_.policy;
  const int cap = p.kind == PolicyKind::budgeted ? p.B : std::numeric_limits<int>::max();
  for (int round = 0;; ++round) {
    std::unique_ptr<Exchange> ex;
    try {
      ex = co_await create_message(c, HttpOptions{p.s, cap});
    } catch (const BadRequestError&) {
      throw;
    } catch (const ClientError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    }
    FaultKind kind{};
    std::string what;
    try {
      co_return co_await read_message(*ex);
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    } catch (const ClientError& e) {
      if (round >= p.r || call_requests_ >= cap) throw RetriesExhausted(e.kind(), e.what());
      kind = e.kind();
      what = e.what();
    }
    ex.reset();
    allow_retry_or_end(kind, what);
    try {
      co_await pause(cfg_.timing.backoff(round, next_jitter()), kind);
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    }
  }
}

// Every failure is one attempt of the call; no SDK retries.
asio::awaitable<std::string> TaskClient::call_simple(std::int64_t c) {
  for (int attempt = 0;; ++attempt) {
    FaultKind kind{};
    std::string what;
    try {
      auto ex = co_await create_message(c, HttpOptions{0});
      co_return co_await read_message(*ex);
    } catch (const BadRequestError&) {
      throw;
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    } catch (const ClientError& e) {
      if (attempt >= cfg_.policy.r) throw RetriesExhausted(e.kind(), e.what());
      kind = e.kind();
      what = e.what();
    }
    allow_retry_or_end(kind, what);
    try {
      co_await pause(cfg_.timing.backoff(attempt, next_jitter()), kind);
    } catch (const CallTimeoutError& e) {
      throw RetriesExhausted(e.kind(), e.what());
    }
  }
}

}  // namespace relsim::live_client
