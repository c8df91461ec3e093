#pragma once
// Internal to the server: sending what a StreamFault (stream_fault.hpp) makes
// of an event stream, the same way for relsim proxy's upstream answers
// (upstream.cpp) and for a replay's recorded ones (playback.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/connection.hpp"
#include "server/replay.hpp"
#include "server/stream_fault.hpp"

namespace relsim::mock {

// Appends each step's bytes to `pending` as a chunk (marking the stream's
// first event when `events`), and at a hold or a cut writes what is
// pending first; then holds until the task is released, or closes. nullopt
// while the reply goes on; else how it ended (a 200 of `status`).
net::awaitable<std::optional<Outcome>> send_steps(Connection& conn, std::vector<StreamFault::Step> steps,
                                                  std::string& pending, std::int64_t task, const Popped& p, int status,
                                                  bool events);

}  // namespace relsim::mock
