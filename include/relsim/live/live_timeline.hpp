#pragma once
// Internal to the CLI: `relsim live --json --timeline`, what the workbench's
// fault lab draws: each task's live outcome next to the oracle's, and each
// request as the mock server logged it (when it came and ended, what it was
// answered, the retry count the client sent) with the retry layer that sent
// it.
#include <optional>
#include <string_view>

#include "relsim/core/json.hpp"
#include "relsim/live/live.hpp"

namespace relsim {

// Which loop sent a request of a task: "first" (its first request), "http"
// (the SDK's HTTP layer: a retry count above 0), "stream" (the loop above
// the SDK retrying a call: count 0 after a failed request) or "call" (the
// next model call: count 0 after a good one).
std::string_view request_layer(std::size_t request, std::optional<int> retry_count, bool previous_failed);

// {"tasks": [...], "requests": [...]} (docs: README, relsim live); needs
// check.logs (LiveOptions::keep_logs).
Json live_timeline_json(const LiveCheck& check);

}  // namespace relsim
