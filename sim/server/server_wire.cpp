#include "server/server_wire.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "relsim/core/json.hpp"
#include "relsim/core/rng.hpp"
#include "server/openai_wire.hpp"
#include "server/stream_fault.hpp"

namespace relsim::wire {

std::string error_body(std::string_view type, std::string_view message) {
  return json_text(Json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}});
}

std::string error_body(Dialect dialect, std::string_view type, std::string_view message) {
  return dialect == Dialect::openai ? openai::error_body(type, message) : error_body(type, message);
}

namespace {

std::string_view id_header(Dialect dialect) { return dialect == Dialect::openai ? "x-request-id" : "request-id"; }

std::string response(int status, std::string_view body, std::string_view content_type, std::string_view request_id,
                     bool keep_alive, const Headers& extra, Dialect dialect) {
  return response_head(status, body.size(), content_type, request_id, keep_alive, extra, dialect) + std::string(body);
}

}  // namespace

std::string response_head(int status, std::size_t content_length, std::string_view content_type,
                          std::string_view request_id, bool keep_alive, const Headers& extra, Dialect dialect) {
  Headers h = {{"content-type", std::string(content_type)},
               {"content-length", std::to_string(content_length)},
               {std::string(id_header(dialect)), std::string(request_id)},
               {"connection", keep_alive ? "keep-alive" : "close"}};
  h.insert(h.end(), extra.begin(), extra.end());
  return head(status, h);
}

std::string json_response(int status, std::string_view body, std::string_view request_id, bool keep_alive,
                          const Headers& extra, Dialect dialect) {
  return response(status, body, "application/json", request_id, keep_alive, extra, dialect);
}

std::string text_response(int status, std::string_view body, std::string_view content_type,
                          std::string_view request_id, bool keep_alive, const Headers& extra) {
  return response(status, body, content_type, request_id, keep_alive, extra, Dialect::anthropic);
}

std::string stream_head(std::string_view request_id, bool keep_alive, const Headers& extra, Dialect dialect) {
  Headers h = {{"content-type", "text/event-stream"},
               {"cache-control", "no-cache"},
               {"transfer-encoding", "chunked"},
               {std::string(id_header(dialect)), std::string(request_id)},
               {"connection", keep_alive ? "keep-alive" : "close"}};
  h.insert(h.end(), extra.begin(), extra.end());
  return head(200, h);
}

namespace {

std::string event(std::string_view name, const Json& data) { return sse_event(name, data.dump()); }

Json text_delta(std::string_view text) {
  return Json{{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", text}}}};
}

}  // namespace

std::string message_id(std::int64_t task, std::int64_t index) { return fmt::format("msg_relsim_{}_{}", task, index); }
std::string request_id(std::int64_t task, std::int64_t index) { return fmt::format("req_relsim_{}_{}", task, index); }

bool streams(const ScriptEntry& entry) {
  return entry.reply == Reply::ok || (entry.reply == Reply::fault && streams_answer(entry.fault));
}

bool made_by_stream_fault(FaultKind kind) {
  return stage_of(kind) == Stage::content || kind == FaultKind::stall_first;
}

StreamScript faulted_script(const std::vector<std::string>& ok, FaultKind kind, Dialect dialect, std::size_t gate_at) {
  StreamScript s;
  mock::StreamFault fault(kind, dialect);
  const auto take = [&s](std::vector<mock::StreamFault::Step> steps) {
    for (mock::StreamFault::Step& step : steps) {
      if (step.then == mock::StreamFault::Then::hold) s.hold_at = s.events.size();
      if (!step.bytes.empty()) s.events.push_back(std::move(step.bytes));
    }
  };
  for (const std::string& event : ok) take(fault.feed(event));
  take(fault.finish());
  s.gate_at = std::min(gate_at, s.events.size());
  return s;
}

namespace {

// The events of a stream that name neither the task nor the request: built
// once (a healthy stream is mostly these).
struct FixedEvents {
  std::string block_start, ping, delta1, block_stop, message_delta, message_stop;
};

const FixedEvents& fixed_events() {
  static const FixedEvents f{
      event("content_block_start",
            Json{{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}),
      event("ping", Json{{"type", "ping"}}),
      event("content_block_delta", text_delta("Hello from ")),
      event("content_block_stop", Json{{"type", "content_block_stop"}, {"index", 0}}),
      event("message_delta", Json{{"type", "message_delta"},
                                  {"delta", {{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                                  {"usage", {{"output_tokens", kOutputTokens}}}}),
      event("message_stop", Json{{"type", "message_stop"}}),
  };
  return f;
}

}  // namespace

StreamScript stream_script(const ScriptEntry& entry, std::int64_t task, std::int64_t index, std::size_t body_bytes) {
  const auto input_tokens = static_cast<std::int64_t>(std::max<std::size_t>(1, body_bytes / 4));
  // As Json{...}.dump() would write them: the fields in this order, and the
  // numbers need no escaping (tests/live/server_test.cpp pins the bytes).
  const std::string message_start = sse_event(
      "message_start",
      fmt::format(R"({{"type":"message_start","message":{{"id":"{}","type":"message","role":"assistant",)"
                  R"("model":"{}","content":[],"stop_reason":null,"stop_sequence":null,)"
                  R"("usage":{{"input_tokens":{},"output_tokens":1}}}}}})",
                  message_id(task, index), kModel, input_tokens));
  const std::string delta2 = sse_event(
      "content_block_delta",
      fmt::format(R"({{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"task {}."}}}})",
                  task));
  const FixedEvents& f = fixed_events();
  const std::string& block_start = f.block_start;
  const std::string& ping = f.ping;
  const std::string& delta1 = f.delta1;
  const std::string& block_stop = f.block_stop;
  const std::string& message_delta = f.message_delta;
  const std::string& message_stop = f.message_stop;

  StreamScript s;
  s.gate_at = 2;  // before the first delta (after message_start, content_block_start)
  if (entry.reply == Reply::ok) {
    s.events = {message_start, block_start, ping, delta1, delta2, block_stop, message_delta, message_stop};
    return s;
  }
  if (made_by_stream_fault(entry.fault))
    return faulted_script({message_start, block_start, ping, delta1, delta2, block_stop, message_delta, message_stop},
                          entry.fault, Dialect::anthropic, s.gate_at);
  switch (entry.fault) {
    case FaultKind::cut:
      s.events = {message_start, block_start, delta1};
      s.clean_end = false;
      break;
    case FaultKind::no_stop:
      s.events = {message_start, block_start, ping, delta1, delta2, block_stop, message_delta};
      break;
    case FaultKind::malformed:
      s.events = {message_start, block_start,
                  sse_event("content_block_delta", R"({"type": "content_block_delta", "index": 0, "delta": {)"),
                  delta1, delta2, block_stop, message_delta, message_stop};
      break;
    case FaultKind::overloaded:
      s.events = {message_start, sse_event("error", error_body("overloaded_error", "Overloaded"))};
      break;
    case FaultKind::stall:
      s.events = {message_start, block_start, ping, delta1, delta2, block_stop, message_delta, message_stop};
      s.hold_at = 2;
      break;
    default:
      s.events = {message_start, block_start, ping, delta1, delta2, block_stop, message_delta, message_stop};
      break;
  }
  s.gate_at = std::min(s.gate_at, s.events.size());
  return s;
}

HttpError http_error(FaultKind kind) {
  switch (kind) {
    case FaultKind::http_429: return {429, "rate_limit_error", "Rate limited"};
    case FaultKind::http_500: return {500, "api_error", "Internal server error"};
    case FaultKind::http_503: return {503, "api_error", "Service unavailable"};
    case FaultKind::http_529: return {529, "overloaded_error", "Overloaded"};
    case FaultKind::http_400: return {400, "invalid_request_error", "Invalid request"};
    default: return {500, "api_error", "Internal server error"};
  }
}

std::string garbage(std::int64_t task, std::int64_t index) {
  // SplitMix64: a fixed, seedable byte source.
  std::uint64_t x = static_cast<std::uint64_t>(task) * rng::kGoldenGamma ^ static_cast<std::uint64_t>(index);
  auto next = [&x] { return rng::splitmix64(x); };
  const std::size_t n = 256 + next() % 256;
  std::string out;
  out.reserve(n + 8);
  while (out.size() < n) {
    std::uint64_t w = next();
    for (int i = 0; i < 8 && out.size() < n; ++i, w >>= 8) out.push_back(static_cast<char>(w & 0xFF));
  }
  // Never by chance an HTTP status line.
  if (out.compare(0, 4, "HTTP") == 0) out[0] = '\x7f';
  return out;
}

}  // namespace relsim::wire
