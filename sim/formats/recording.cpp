// The recording format (formats/recording.hpp).
#include "relsim/formats/recording.hpp"

#include <utility>

#include "relsim/core/http_text.hpp"
#include "relsim/core/json.hpp"

namespace relsim {
namespace {

// The end of the first event in `text` from `from`: just past its blank
// line (\n\n, \r\n\r\n or \r\r), or npos.
std::size_t event_end(std::string_view text, std::size_t from) {
  std::size_t best = std::string_view::npos;
  for (const std::string_view sep : {std::string_view("\n\n"), std::string_view("\r\n\r\n"), std::string_view("\r\r")}) {
    const std::size_t at = text.find(sep, from);
    if (at != std::string_view::npos && (best == std::string_view::npos || at + sep.size() < best))
      best = at + sep.size();
  }
  return best;
}

Json headers_json(const std::vector<std::pair<std::string, std::string>>& headers) {
  Json out = Json::array();
  for (const auto& [name, value] : headers) out.push_back(Json::array({name, value}));
  return out;
}

// Whether a text is valid UTF-8 (JSON keeps it byte for byte; otherwise
// the bytes that are not are replaced, and the line says so).
bool utf8(const std::string& text) {
  try {
    (void)Json(text).dump(-1, ' ', false, Json::error_handler_t::strict);
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

}  // namespace

void RecordedExchange::add_body(std::string_view bytes, double ms) {
  if (!events_mode_) {
    body_.append(bytes);
    return;
  }
  const std::size_t scan_from = pending_.size() >= 3 ? pending_.size() - 3 : 0;  // a blank line split across reads
  pending_.append(bytes);
  pending_ms_ = ms;
  std::size_t from = 0;
  for (std::size_t end = event_end(pending_, scan_from); end != std::string::npos;
       end = event_end(pending_, from)) {
    events_.emplace_back(ms, pending_.substr(from, end - from));
    from = end;
  }
  pending_.erase(0, from);
}

void RecordedExchange::finish(bool complete, double ms) {
  if (std::exchange(finished_, true)) return;
  if (!pending_.empty()) events_.emplace_back(pending_ms_, std::exchange(pending_, {}));  // an unended last event
  complete_ = complete;
  end_ms_ = ms;
}

std::string RecordedExchange::line() const {
  Json request{{"method", method}, {"path", path}, {"headers", headers_json(request_headers)}, {"body", request_body}};
  Json response{{"status", status ? Json(*status) : Json(nullptr)},
                {"headers", headers_json(response_headers)},
                {"headers_ms", headers_ms}};
  bool lossy = !utf8(request_body);
  if (events_mode_) {
    Json events = Json::array();
    for (const auto& [ms, text] : events_) {
      events.push_back(Json{{"ms", ms}, {"text", text}});
      lossy = lossy || !utf8(text);
    }
    response["events"] = std::move(events);
  } else {
    response["body"] = body_;
    lossy = lossy || !utf8(body_);
  }
  response["complete"] = complete_;
  response["end_ms"] = end_ms_;
  Json line{{"relsim_recording", kRecordingVersion}, {"dialect", std::string(dialect_name(dialect))},
            {"task", task},           {"index", index},
            {"entry", entry},         {"request", std::move(request)},
            {"response", std::move(response)}};
  if (!error.empty()) line["error"] = error;
  if (lossy) line["lossy"] = true;  // bytes that are not UTF-8 were replaced: not replayable byte for byte
  return http_text::json_text(line);
}

}  // namespace relsim
