// The client's rules that need no network: the SDKs' retry decision, status
// classification, and the Messages stream's event semantics.
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/client/client.hpp"

namespace relsim {

void validate(const ClientConfig& c) {
  validate(c.policy);
  validate(c.timing);
  if (c.host.empty()) throw InputError("host = '' is empty: give an address such as 127.0.0.1");
  if (c.port == 0) throw InputError("port = 0 is out of range: it must be in [1, 65535]");
  if (c.concurrency < 1 || c.concurrency > kMaxConcurrency)
    throw InputError(fmt::format("concurrency = {} is out of range: it must be in [1, {}]", c.concurrency, kMaxConcurrency));
  if (c.threads < 1 || c.threads > kMaxClientThreads)
    throw InputError(fmt::format("threads = {} is out of range: it must be in [1, {}]", c.threads, kMaxClientThreads));
  if (c.tenants < 0 || c.tenants > kMaxTenants)
    throw InputError(fmt::format("tenants = {} is out of range: it must be in [0, {}] (0: no x-api-key)", c.tenants,
                                 kMaxTenants));
  if (c.pool < 0 || c.pool > kMaxConcurrency)
    throw InputError(fmt::format("pool = {} is out of range: it must be in [0, {}] connections per tenant (0: no pool)",
                                 c.pool, kMaxConcurrency));
  if (c.tasks_per_agent < 0 || c.tasks_per_agent > kMaxTasksPerAgent)
    throw InputError(fmt::format("tasks per agent = {} is out of range: it must be in [0, {}] (0: a sliding window)",
                                 c.tasks_per_agent, kMaxTasksPerAgent));
  if (c.fallback_after < 0 || c.fallback_after > kMaxRequestsPerCall)
    throw InputError(fmt::format("fallback-after = {} is out of range: it must be in [0, {}] (0: no fallback)",
                                 c.fallback_after, kMaxRequestsPerCall));
  if (c.tasks_per_agent > 0 && c.coordinated_start)
    throw InputError("tasks per agent: agents run their tasks one after another, not in waves: drop the coordinated start");
}

int ClientConfig::tenant_of(std::int64_t task) const {
  if (tenants <= 0) return 0;
  const std::int64_t owner = tasks_per_agent > 0 ? task / tasks_per_agent : task;
  return static_cast<int>(owner % tenants);
}

std::string tenant_key(int tenant) { return fmt::format("relsim-tenant-{}", tenant); }

// After anthropic-sdk-python's _base_client.py (`_should_retry`,
// `_calculate_retry_timeout`). The SDKs differ at the edges of the
// retry-after window (Python 0 < x <= 60, TypeScript 0 <= x < 60); this
// client takes it open at both ends, so neither edge value is trusted.
bool should_retry_status(int status, const std::optional<std::string>& x_should_retry) {
  if (x_should_retry == "true") return true;
  if (x_should_retry == "false") return false;
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

namespace {

// A whole string as a finite number, or nothing (as Python's float() would
// refuse it; no HTTP dates).
std::optional<double> header_number(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::string_view s = *text;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return parse_number<double>(s);
}

}  // namespace

std::optional<double> server_retry_after(const RetryHeaders& h) {
  std::optional<double> seconds;
  if (const auto ms = header_number(h.retry_after_ms)) seconds = *ms / 1000.0;
  if (!seconds) seconds = header_number(h.retry_after);
  if (seconds && *seconds > 0.0 && *seconds < 60.0) return seconds;
  return std::nullopt;
}

double http_retry_wait(const RetryHeaders& h, int retry, double u, const ClientTiming& timing) {
  if (const auto s = server_retry_after(h)) return *s * timing.time_scale;
  return timing.backoff(retry, u);
}

FaultKind fault_kind_of_status(int status) {
  switch (status) {
    case 400: return FaultKind::http_400;
    case 429: case 408: case 409: return FaultKind::http_429;
    case 500: return FaultKind::http_500;
    case 503: return FaultKind::http_503;
    case 529: return FaultKind::http_529;
    default: return status >= 500 ? FaultKind::http_500 : FaultKind::http_400;
  }
}

void MessageStream::saw(FaultKind kind, std::string what) {
  if (!wrong_) wrong_ = kind;
  const bool checked = kind == FaultKind::duplicate_event ? checks_ == AnswerChecks::all : checks_ != AnswerChecks::none;
  if (checked) throw StreamError(kind, std::move(what));
}

void MessageStream::note_content(const std::string& data, const std::string& text) {
  // A model repeats short and blank tokens ("\n\n") in healthy answers:
  // only an event of some length and not blank, whose data is the last
  // one's byte for byte, counts as sent twice.
  const bool telling = text.size() >= 4 && text.find_first_not_of(" \t\r\n") != std::string::npos;
  if (telling && data == last_content_) saw(FaultKind::duplicate_event, "a content event came twice running");
  last_content_ = data;
}

void MessageStream::check_tool_arguments() {
  for (const auto& [index, arguments] : tools_)
    if (!arguments.empty() && !nlohmann::json::accept(arguments))
      saw(FaultKind::bad_tool_args,
          fmt::format("tool call {}: its arguments ({} bytes) are not JSON", index, arguments.size()));
  tools_.clear();
}

void MessageStream::on_event(const SseEvent& ev) {
  if (dialect_ == Dialect::openai) return on_chunk(ev);
  if (ev.event != "error" && ev.event != "content_block_delta" && ev.event != "message_delta" &&
      ev.event != "content_block_start" && ev.event != "content_block_stop") {
    // Nothing to read from these but the end: check that the data is a JSON
    // object without building it (the parse below only words the error).
    const std::size_t first = ev.data.find_first_not_of(" \t\n\r");
    if (first != std::string::npos && ev.data[first] == '{' && nlohmann::json::accept(ev.data)) {
      if (ev.event == "message_stop") stopped_ = true;
      return;
    }
  }
  nlohmann::json data;
  try {
    data = nlohmann::json::parse(ev.data);
  } catch (const nlohmann::json::exception& e) {
    throw StreamError(FaultKind::malformed, fmt::format("event '{}': data is not JSON ({})", ev.event, e.what()));
  }
  if (!data.is_object())
    throw StreamError(FaultKind::malformed, fmt::format("event '{}': data is not a JSON object", ev.event));
  if (ev.event == "error") {
    std::string type = "unknown";
    if (const auto e = data.find("error"); e != data.end() && e->is_object())
      if (const auto t = e->find("type"); t != e->end() && t->is_string()) type = t->get<std::string>();
    throw StreamEventError(FaultKind::overloaded, fmt::format("the stream carried an error event: {}", type));
  }
  const auto index = data.find("index");
  const std::int64_t block = index != data.end() && index->is_number_integer() ? index->get<std::int64_t>() : -1;
  if (ev.event == "content_block_delta") {
    const auto delta = data.find("delta");
    if (delta == data.end() || !delta->is_object())
      throw StreamError(FaultKind::malformed, "content_block_delta without a delta object");
    const auto type = delta->find("type");
    if (type != delta->end() && *type == "text_delta") {
      const auto text = delta->find("text");
      if (text == delta->end() || !text->is_string())
        throw StreamError(FaultKind::malformed, "text_delta without a text string");
      note_content(ev.data, text->get_ref<const std::string&>());
      text_ += text->get<std::string>();
    } else if (type != delta->end() && *type == "input_json_delta" && tools_.count(block)) {
      const auto piece = delta->find("partial_json");
      if (piece != delta->end() && piece->is_string()) tools_[block] += piece->get<std::string>();
    }
  } else if (ev.event == "content_block_start") {
    const auto started = data.find("content_block");
    if (started != data.end() && started->is_object())
      if (const auto type = started->find("type"); type != started->end() && *type == "tool_use") tools_[block];
  } else if (ev.event == "content_block_stop") {
    if (tools_.count(block)) check_tool_arguments();
  } else if (ev.event == "message_delta") {
    const auto delta = data.find("delta");
    if (delta != data.end() && delta->is_object() && delta->value("stop_reason", nlohmann::json()) == "max_tokens")
      saw(FaultKind::max_tokens, "the answer stopped at its token limit (stop_reason max_tokens)");
  } else if (ev.event == "message_stop") {
    stopped_ = true;
  }
  // message_start, ping and events this client does not know carry nothing it needs.
}

void MessageStream::on_end() const {
  if (!stopped_)
    throw StreamError(FaultKind::no_stop, dialect_ == Dialect::openai ? "the stream ended without a finish_reason"
                                                                      : "the stream ended without message_stop");
}

std::string request_body(std::int64_t task, std::int64_t call, Dialect dialect) {
  return fmt::format(R"({{"model":"relsim-mock",{}"stream":true,"messages":[{{"role":"user","content":"task {} call {}"}}]}})",
                     dialect == Dialect::openai ? "" : R"("max_tokens":64,)", task, call);
}

std::string expected_text(std::int64_t task) { return fmt::format("Hello from task {}.", task); }

std::string request_target(std::int64_t task, Dialect dialect, bool fallback) {
  return fmt::format("/t/{}/{}v1/{}", task, fallback ? "fallback/" : "",
                     dialect == Dialect::openai ? "chat/completions" : "messages");
}

}  // namespace relsim
