// The client's deadlines are those of beast::tcp_stream: before each
// operation the stream's expiry is set to the earliest of the stage's own
// timeout, the call's deadline and the task's deadline, and when it fires
// the socket is closed (so a held response is released) and the error says
// which of the three it was. A backoff pause runs against the same two
// outer deadlines.
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "client/task_client.hpp"

namespace relsim::live_client {

Limit TaskClient::expire(beast::tcp_stream& stream, std::optional<Clock::time_point> stage) {
  Clock::time_point at = task_deadline_;
  Limit limit = Limit::task;
  if (call_deadline_ && *call_deadline_ <= at) at = *call_deadline_, limit = Limit::call;
  if (stage && *stage < at) at = *stage, limit = Limit::stage;
  stream.expires_at(at);
  return limit;
}

template <class StageError>
void TaskClient::timed_out(Limit limit, FaultKind kind, const std::string& what) {
  switch (limit) {
    case Limit::task:
      out_.seen.back() = kind;
      throw TaskDeadlineExceeded(fmt::format("task deadline ({} s) passed while {}", cfg_.timing.task_timeout, what));
    case Limit::call:
      fail(CallTimeoutError(kind, fmt::format("call deadline ({} s) passed while {}", cfg_.timing.call_timeout, what)));
    case Limit::stage:
      fail(StageError(kind, fmt::format("timed out while {}", what)));
  }
  RELSIM_ASSERT(false);
}
// The two stages with their own timeouts: the response headers, the stream's idle time.
template void TaskClient::timed_out<ApiTimeoutError>(Limit, FaultKind, const std::string&);
template void TaskClient::timed_out<StreamIdleTimeout>(Limit, FaultKind, const std::string&);

asio::awaitable<void> TaskClient::pause(double seconds, FaultKind last) {
  const Clock::time_point until = Clock::now() + to_duration(seconds);
  if (call_deadline_ && *call_deadline_ < until)
    throw CallTimeoutError(last, fmt::format("the call deadline ({} s) comes before the next retry; last fault: {}",
                                             cfg_.timing.call_timeout, to_string(last)));
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, std::min(until, task_deadline_));
  error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  if (until > task_deadline_)
    throw TaskDeadlineExceeded(fmt::format("task deadline ({} s) passed in a backoff", cfg_.timing.task_timeout));
}

}  // namespace relsim::live_client
