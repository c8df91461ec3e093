// GET /api/simulate/stream (api_routes.hpp): a simulation's progress and
// result as server-sent events, for the page's progress bar.
//
//   event: progress   data: {"done":D,"total":T}     (repeated)
//   event: result     data: <the command's JSON>     (exit 0 or 1)
//   event: error      data: {"error":MSG,"code":C}   (any other exit)
//
// Progress events are throttled to one per kProgressInterval (the newest
// report wins; a stream of 10^7 tasks reports far more often than a page can
// draw), and each event goes out in its own chunk as soon as it is made.
// When the client goes away (the page closes the stream as a slider moves),
// the watch in UiConnection or a failed write marks the job gone, and the
// command is cancelled at its next report.
#include "ui/api_routes.hpp"

#include <fmt/format.h>

#include "relsim/core/json.hpp"

namespace relsim::ui {
namespace {

constexpr auto kProgressInterval = std::chrono::milliseconds(50);

// The data of the last event.
std::pair<std::string_view, std::string> final_event(const CommandResult& r) {
  if (r.code == 0 || r.code == 1) {
    std::string_view out = r.out;
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.remove_suffix(1);
    return {"result", std::string(out)};
  }
  return {"error", http_text::json_text(Json{{"error", r.err}, {"code", r.code}})};
}

}  // namespace

net::awaitable<bool> serve_event_stream(UiConnection& conn, Work work) {
  if (!co_await conn.write(event_stream_head())) co_return false;
  const auto job = conn.start_job(std::move(work), true);
  bool open = true;
  Clock::time_point next_progress = Clock::now();
  for (;;) {
    co_await job->wait(next_progress);
    if (const auto result = job->take_result()) {
      const auto [name, data] = final_event(*result);
      if (open) open = co_await conn.write(event_chunk(name, data) + std::string(kLastChunk));
      break;
    }
    const auto progress = job->take_progress();
    if (progress && open) {
      open = co_await conn.write(event_chunk("progress", fmt::format(R"({{"done":{},"total":{}}})", progress->done,
                                                                      progress->total)));
      if (!open) job->mark_gone();
      next_progress = Clock::now() + kProgressInterval;
    }
  }
  co_await conn.end_job();
  co_return false;
}

}  // namespace relsim::ui
