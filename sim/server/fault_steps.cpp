// Sending a StreamFault's steps (fault_steps.hpp).
#include "server/fault_steps.hpp"

#include <utility>

#include "server/server_wire.hpp"

namespace relsim::mock {

net::awaitable<std::optional<Outcome>> send_steps(Connection& conn, std::vector<StreamFault::Step> steps,
                                                  std::string& pending, std::int64_t task, const Popped& p, int status,
                                                  bool events) {
  for (const StreamFault::Step& s : steps) {
    if (events && !s.bytes.empty()) conn.mark_first_event();  // it goes out before the reply waits again
    if (!s.bytes.empty()) pending += wire::chunk(s.bytes);
    if (s.then == StreamFault::Then::go_on || s.then == StreamFault::Then::end) continue;
    if (!co_await conn.write(std::exchange(pending, {}))) co_return Outcome{status, "client_gone", false};
    if (s.then == StreamFault::Then::hold) {
      const HoldEnd h = co_await conn.hold(task, p.epoch, "");
      if (h != HoldEnd::released) co_return Outcome{status, end_of(h), false};
    } else {  // cut
      conn.close_socket();
      co_return Outcome{status, "closed", false};
    }
  }
  co_return std::nullopt;
}

}  // namespace relsim::mock
