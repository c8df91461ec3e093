// The harness around the agent: it runs a task's calls, checks each answer,
// and sorts what ends the task into outcomes.
#include <fmt/format.h>

#include "client/start_gate.hpp"
#include "client/task_client.hpp"

namespace relsim::live_client {

// Connect first, then wait at the gate: once it opens, a task's first
// request is one write away, so a wave's requests leave together. The
// slot's idle connection serves if it is still open.
asio::awaitable<void> TaskClient::preconnect_and_wait(StartGate& gate) {
  // (No co_await inside the braces: GCC 12 miscompiles that.)
  Preconnected first{take_idle(), {}};
  if (!first.conn) {
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    first.conn = std::make_unique<Connection>(executor);
    first.conn->stream.expires_after(to_duration(cfg_.timing.connect_timeout));
    co_await first.conn->stream.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, first.error));
  }
  preconnected_ = std::move(first);
  co_await gate.arrive_and_wait();
}

asio::awaitable<void> TaskClient::run(StartGate* gate) {
  out_.task = task_;
  if (gate) co_await preconnect_and_wait(*gate);
  const Clock::time_point start = Clock::now();
  out_.started = std::chrono::duration<double>(start - run_start_).count();
  task_deadline_ = start + to_duration(cfg_.timing.task_timeout);
  try {
    for (std::int64_t c = 0; c < cfg_.policy.n; ++c) {
      const std::int64_t wrong_before = out_.wrong_answers;
      out_.text = co_await call(c);
      // An answer that is not this task's text: a content fault's the loop
      // took (graded partial_done at the end), or a bug (crash).
      if (out_.text != expected_text(task_) && out_.wrong_answers == wrong_before)
        throw WrongAnswerError(fmt::format("call {} got \"{}\", not \"{}\"", c, out_.text, expected_text(task_)));
      if (c + 1 < cfg_.policy.n && cfg_.timing.think_seconds > 0.0) {
        // Between calls only the task's deadline runs (the kind names no fault).
        call_deadline_.reset();
        co_await pause(cfg_.timing.think(), FaultKind::cut);
      }
    }
    out_.outcome = {out_.wrong_answers > 0 ? Outcome::partial_done : Outcome::done, std::nullopt};
  } catch (const RetriesExhausted& e) {
    out_.outcome = {Outcome::env_error, e.kind()};
    out_.error = e.what();
  } catch (const BadRequestError& e) {
    out_.outcome = {Outcome::harness_error, std::nullopt};
    out_.error = e.what();
  } catch (const TaskDeadlineExceeded& e) {
    out_.outcome = {Outcome::hang, std::nullopt};
    out_.error = e.what();
  } catch (const WrongAnswerError& e) {
    out_.outcome = {Outcome::crash, std::nullopt};
    out_.text_ok = false;
    out_.error = e.what();
  } catch (const ClientError& e) {
    out_.outcome = {Outcome::crash, e.kind()};
    out_.error = e.what();
  } catch (const std::exception& e) {
    out_.outcome = {Outcome::crash, std::nullopt};
    out_.error = e.what();
  }
  settle(false);  // a request the task gave up on (a deadline) is a failure to the throttle
  out_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace relsim::live_client
