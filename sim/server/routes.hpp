#pragma once
// Internal to the server: what a request is for. POST /t/{task}/v1/messages
// is answered from the task's script (routes.cpp, then replay.cpp);
// /control/... by the control API (control_api.cpp); anything else is a 404.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "server/connection.hpp"

namespace relsim::mock {

// Answers one request; returns whether the connection stays open for the next.
net::awaitable<bool> handle(Connection& conn, Request& req);
// `parts`: the path's segments, parts[0] == "control".
net::awaitable<bool> control(Connection& conn, Request& req, const std::vector<std::string_view>& parts, bool keep);

// The non-empty segments of a path: "/t//1/" -> {"t", "1"}.
std::vector<std::string_view> split_path(std::string_view path);
// A task number in a path: 1 to 18 decimal digits, nothing else.
std::optional<std::int64_t> parse_task(std::string_view s);

}  // namespace relsim::mock
