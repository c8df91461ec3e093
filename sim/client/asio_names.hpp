#pragma once
// Header only: names, aliases and the clock.
// The Asio and Beast names the live client's I/O files share, and the one
// clock they all measure with.
#include <algorithm>
#include <chrono>

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

namespace relsim::live_client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

inline Clock::duration to_duration(double seconds) {
  // Clamp: a deadline a century away is "never" and cannot overflow.
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::min(seconds, 3.0e9)));
}

}  // namespace relsim::live_client
