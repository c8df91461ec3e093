#pragma once
// The live agent client (docs/model.md, Live check): the retrying agent loop that the
// oracle checks. It runs every task as a coroutine on one Asio io_context,
// talks HTTP/1.1 to the mock server over loopback, decodes the Messages
// streaming API's server-sent events, and applies a policy (docs/policies.md)
// in client terms: an HTTP layer with the Anthropic SDKs' retry rules raises
// exceptions after the SDKs' classes, and the stream layer of each policy
// decides which of them it catches. It never calls `react`: its outcomes
// are compared with the oracle's, which does.
//
// Clocks (ClientTiming), each separate: connect, response headers (request
// sent -> status line), idle time between two stream events, the whole call
// (all its retries), the whole task (its deadline). `naive` has no idle
// timeout and no call timeout, like a first agent loop over an SDK: a stall
// waits for the task deadline and ends as `hang`.
//
// Connections (ClientConfig::keep_alive): HTTP/1.1 keep-alive, as the SDKs'
// HTTP clients pool them. Each worker of the window (each position of a
// wave) keeps one idle connection; the next request of its task, or its
// next task, reuses it. Only a clean, complete 200 stream (terminating chunk,
// message_stop, no `connection: close`) returns a connection to its worker;
// after a fault, a timeout or an error status it is closed and the next
// request connects afresh, so a fault never leaks into the next request.
// Many agents (ClientConfig::tasks_per_agent, tenants, pool, throttle): the
// client can play a fleet's agents, each tenant with its own connection pool
// and retry throttle (docs/fleet.md, The fleet, live).
// A connection the server closed while it was idle is not a fault and not a
// request: it is found before the reuse (a non-blocking peek), or, if the
// server closes it in that moment, by a clean end of stream before any
// response byte (or a failed write), and the request goes out again on a
// fresh connection, counted once. A reset is never taken for an idle close:
// it is the `reset` fault. (A reply "empty" on a reused connection looks
// just like an idle close and is resent; plans never script it.)
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "relsim/core/dialect.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/core/retry_throttle.hpp"
#include "relsim/core/rng.hpp"
#include "relsim/client/sse.hpp"
#include "relsim/client/timing.hpp"

namespace relsim {

struct ClientConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  // The API it speaks: the Messages API (POST /t/{task}/v1/messages) or
  // OpenAI's Chat Completions (POST /t/{task}/v1/chat/completions,
  // docs/wire.md "The OpenAI dialect"); the policies and the oracle are the same.
  Dialect dialect = Dialect::anthropic;
  Policy policy;
  ClientTiming timing;
  int concurrency = 32;  // tasks in flight at once
  std::uint64_t seed = 0;  // of the backoff jitter
  // By default a sliding window starts a task whenever one ends. With a
  // coordinated start tasks run in waves of `concurrency` (the burst-start
  // experiment): every task of a wave connects, waits at a gate, and all are
  // released at once when the last one is ready, so their first requests
  // leave within a few ms; a wave starts when the one before has ended, so
  // each waits for its slowest task.
  bool coordinated_start = false;
  int threads = 1;  // threads running the io_context
  // Reuse connections (see above); false: one connection per request, each
  // request saying `connection: close` (the baseline of bench_live).
  bool keep_alive = true;
  // Time mode's live check: task first_task + i starts no earlier than
  // start_at[i] seconds after the run starts (its worker waits for that), so
  // that when a task meets the server's outage schedule does not depend on
  // how the tasks before it went. Empty: each starts as soon as a worker is
  // free. Needs the sliding window (not coordinated_start) and one entry per
  // task, each finite and >= 0.
  std::vector<double> start_at;
  // Tenants of a provider (the server's --quota, --capacity): task t sends
  // `x-api-key: relsim-tenant-{t mod tenants}`. 0: no key.
  int tenants = 0;
  // Retry throttling as practised (retry_throttle.hpp), one throttle per
  // tenant shared by its tasks: told of every request and its answer, asked
  // before every retry of either layer; a denied retry ends the task
  // env_error with the fault it would have retried (LiveTask::throttled).
  // With --concurrency 1 the run is the oracle's (run_oracle with a throttle).
  Throttle throttle;
  // A connection pool per tenant (as the fleet simulation's --pool): at
  // most `pool` requests of one tenant in flight at once, each holding its
  // connection from before it connects (or reuses one) until its answer
  // ends; a request that finds all taken waits, first come first served
  // (LiveTask::pool_waits). 0: no pool.
  int pool = 0;
  // Agents, as the fleet has them: > 0 runs the tasks as `concurrency`
  // agents, each running tasks_per_agent tasks one after another: task t is
  // agent t / tasks_per_agent's and belongs to tenant (t / tasks_per_agent)
  // mod tenants. The run's first task must be a multiple of tasks_per_agent
  // and its count concurrency × tasks_per_agent. 0: the sliding window, where
  // task t belongs to tenant t mod tenants.
  std::int64_t tasks_per_agent = 0;
  // A fallback to a second provider (core/fallback.hpp; docs/model.md,
  // Fallback): a call's first `fallback_after` requests go to the task's
  // path, its later ones (of either layer) to the second provider's,
  // /t/{task}/fallback/v1/... on the same server. 0: no fallback.
  int fallback_after = 0;

  // The tenant of task `task`: 0 without tenants.
  int tenant_of(std::int64_t task) const;
};
inline constexpr int kMaxConcurrency = 10'000;
inline constexpr int kMaxTenants = 10'000;
inline constexpr std::int64_t kMaxTasksPerAgent = 1'000'000;
// The x-api-key of tenant number `tenant`.
std::string tenant_key(int tenant);
inline constexpr int kMaxClientThreads = 256;
// Throws InputError naming the bad value and its valid range.
void validate(const ClientConfig& config);

struct LiveTask {
  std::int64_t task = 0;
  OutcomeClass outcome;
  std::int64_t requests = 0;
  double seconds = 0.0;  // from the task's release to its end
  double started = 0.0;  // its release, in seconds since run_live began
  // With ClientConfig::start_at: no worker was free at the task's start
  // time, so it started when one was (its start depends on the tasks before).
  bool waited_for_worker = false;
  std::string text;      // the last answer the task received
  // False when an answer did not name its task; the outcome is then crash
  // without a kind (a bug of the server or the client, not a fault).
  bool text_ok = true;
  std::vector<int> retry_counts;  // x-stainless-retry-count of each request sent
  // What the client made of each request: nullopt for a good one (a
  // content fault the loop took as its answer is named here too).
  std::vector<std::optional<FaultKind>> seen;
  // Answers a call took that were a content fault's (naive takes them all,
  // layered a duplicated event): the task, if it goes on to its end, is
  // partial_done.
  std::int64_t wrong_answers = 0;
  std::string error;  // the message of the error that ended the task, if any
  bool throttled = false;  // the retry throttle denied a retry, which ended the task
  // With ClientConfig::pool: per request sent, the wall seconds it waited
  // for a connection of its tenant's pool.
  std::vector<double> pool_waits;
  // With ClientConfig::fallback_after: the requests sent to the second provider.
  std::int64_t fallback_requests = 0;
};

// Runs tasks first_task .. first_task + count - 1 against the server at
// host:port; results in task order. Throws InputError for a bad config.
std::vector<LiveTask> run_live(const ClientConfig& config, std::int64_t first_task, std::int64_t count);

// The response headers the HTTP layer's retry decision reads.
struct RetryHeaders {
  std::optional<std::string> should_retry;    // x-should-retry
  std::optional<std::string> retry_after_ms;  // retry-after-ms
  std::optional<std::string> retry_after;     // retry-after, seconds
};

// ---- Errors, after the Anthropic SDKs' exception classes --------------------
// Each carries the fault kind it is classified as.
class ClientError : public std::runtime_error {
 public:
  ClientError(FaultKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  FaultKind kind() const { return kind_; }

 private:
  FaultKind kind_;
};
// No response: connection refused, reset or closed before the response
// headers (kind reset).
struct ApiConnectionError : ClientError {
  using ClientError::ClientError;
};
// The connection or the response headers took too long (kind slow_headers).
struct ApiTimeoutError : ApiConnectionError {
  using ApiConnectionError::ApiConnectionError;
};
// A response with an error status.
struct ApiStatusError : ClientError {
  ApiStatusError(FaultKind kind, int status, RetryHeaders headers, const std::string& what)
      : ClientError(kind, what), status(status), headers(std::move(headers)) {}
  int status;
  RetryHeaders headers;
};
// A 4xx the SDKs never retry: the caller's bug, raised to the harness.
struct BadRequestError : ApiStatusError {
  using ApiStatusError::ApiStatusError;
};
// The stream broke before a whole message: cut, no_stop, malformed. These
// are the connection and decoding errors a naive loop catches.
struct StreamError : ClientError {
  using ClientError::ClientError;
};
// No event within the idle timeout (kind stall).
struct StreamIdleTimeout : ClientError {
  using ClientError::ClientError;
};
// An `event: error` inside a 200 stream (kind overloaded).
struct StreamEventError : ClientError {
  using ClientError::ClientError;
};
// The call's time budget ran out; kind: the fault it was waiting on or
// had last seen.
struct CallTimeoutError : ClientError {
  using ClientError::ClientError;
};
// A policy's retries ran out on an environment fault: env_error:<kind>.
struct RetriesExhausted : ClientError {
  using ClientError::ClientError;
};
// The task passed its deadline: hang.
struct TaskDeadlineExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An answer that does not name its task.
struct WrongAnswerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- The HTTP layer's rules (Anthropic SDKs, `_should_retry` and
// `_calculate_retry_timeout`) ------------------------------------------------
// x-should-retry "true"/"false" decides; otherwise 408, 409, 429 and every
// status >= 500 are retried.
bool should_retry_status(int status, const std::optional<std::string>& x_should_retry);
// The wait the server asks for: retry-after-ms if it parses, else
// retry-after in seconds; only a value strictly between 0 and 60 s counts.
std::optional<double> server_retry_after(const RetryHeaders& headers);
// The wait before HTTP retry `retry` (0-based): the server's retry-after,
// else the backoff; either way times timing.time_scale.
double http_retry_wait(const RetryHeaders& headers, int retry, double u, const ClientTiming& timing);

// The kind of an error status: 400/429/500/503/529 as themselves; other
// retryable statuses (408, 409) as http_429, other 5xx as http_500, other
// 4xx as http_400 (the caller's bug).
FaultKind fault_kind_of_status(int status);

// Jitter of the task's k-th retry (counted over the task, both layers):
// Philox stream 2.
inline constexpr rng::Stream kJitterStream = static_cast<rng::Stream>(2);
inline double jitter(std::uint64_t seed, std::int64_t task, std::int64_t k) {
  return rng::uniform(seed, kJitterStream, static_cast<std::uint64_t>(task), static_cast<std::uint64_t>(k));
}

// ---- The streaming API, event by event ---------------------------------------
// Folds the events of one response into the answer text. Throws
// StreamError(malformed) for data that is not the JSON an event needs,
// StreamEventError for `event: error`, and at on_end() StreamError(no_stop)
// unless message_stop came: half a stream is never an answer. In the OpenAI
// dialect (chat_stream.cpp): chat.completion.chunk data, StreamEventError
// for a chunk that holds an error object, and at on_end() StreamError(no_stop)
// unless a chunk gave a finish_reason.
//
// What the stream checks in a whole answer (docs/policies.md, Content
// faults): `stop_and_tools` (the layered and budgeted loops) throws
// StreamError(max_tokens) at the stop reason max_tokens (finish_reason
// length) and StreamError(bad_tool_args) at a tool call whose arguments do
// not parse as JSON; `all` (simple, where every bad request is a failed
// attempt) also StreamError(duplicate_event) at a content event whose data
// repeats the one before it (note_content: a heuristic made for the mock's
// and the proxy's duplicate, which a real stream's repeated token of four
// bytes or more would also trip). `none` (naive) takes the answer as it is;
// wrong() still says what was wrong with it.
enum class AnswerChecks { none, stop_and_tools, all };
class MessageStream {
 public:
  explicit MessageStream(Dialect dialect = Dialect::anthropic, AnswerChecks checks = AnswerChecks::none)
      : dialect_(dialect), checks_(checks) {}
  void on_event(const SseEvent& event);
  void on_end() const;
  bool stopped() const { return stopped_; }
  const std::string& text() const { return text_; }
  // The content fault the answer carried, the first one seen: max_tokens,
  // bad_tool_args or duplicate_event; nullopt for a healthy answer.
  std::optional<FaultKind> wrong() const { return wrong_; }

 private:
  void on_chunk(const SseEvent& event);  // the OpenAI dialect's
  // A content fault seen: noted, and thrown when the checks cover it.
  void saw(FaultKind kind, std::string what);
  // A content event's data and its text: a duplicate_event when the data
  // repeats the last content event's and the text is at least 4 bytes and
  // not blank (a healthy answer repeats short tokens).
  void note_content(const std::string& data, const std::string& text);
  // The arguments of the tool calls so far: whether each parses as JSON (an empty one is {}).
  void check_tool_arguments();

  Dialect dialect_;
  AnswerChecks checks_;
  std::string text_;
  bool stopped_ = false;  // message_stop came, or a finish_reason
  std::optional<FaultKind> wrong_;
  std::string last_content_;                  // the data of the last content event
  std::map<std::int64_t, std::string> tools_;  // tool call index -> its arguments so far
};

// The request body of call `call` of `task`, and the answer it must get.
std::string request_body(std::int64_t task, std::int64_t call, Dialect dialect = Dialect::anthropic);
std::string expected_text(std::int64_t task);
// "/t/{task}/v1/messages", or "/t/{task}/v1/chat/completions" in the OpenAI dialect.
// With `fallback`: the second provider's, /t/{task}/fallback/v1/....
std::string request_target(std::int64_t task, Dialect dialect = Dialect::anthropic, bool fallback = false);

}  // namespace relsim
