// Keep-alive: connections are kept alive (HTTP/1.1 persistent connections,
// RFC 9112 section 9.3) in slots: one per worker of a sliding window, one
// per position of a wave. Every task of a slot runs on the slot's strand
// (with one thread, on the io_context itself), so the idle connection needs
// no lock. A connection goes back to its slot only after a 200 stream read
// to its terminating chunk with message_stop, no byte left over, and no
// `connection: close` from the server; whatever saw a fault, a timeout or an
// error status is closed with its exchange. Before a reuse a non-blocking
// peek checks that the server has not closed it (as urllib3's
// is_connection_dropped does); if it closes it in the moment after the
// peek, the request fails before any response byte with a clean end of
// stream (or the write fails), and it is sent again on a fresh connection
// without being counted: the server never read it (http_exchange.cpp). A
// reset (RST) is never taken for that: it is the `reset` fault.
#include <sys/socket.h>
#include <cerrno>

#include "client/task_client.hpp"

namespace relsim::live_client {

bool still_open(Connection& c) {
  if (c.buffer.size() != 0 || !c.stream.socket().is_open()) return false;
  char byte = 0;
  const ssize_t n = ::recv(c.stream.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

std::unique_ptr<Connection> TaskClient::take_idle() {
  std::unique_ptr<Connection> conn = std::move(slot_.idle);
  if (conn && !still_open(*conn)) conn.reset();
  return conn;
}

void TaskClient::give_back(Exchange& ex) {
  if (!cfg_.keep_alive || !ex.parser.keep_alive() || ex.conn->buffer.size() != 0) return;
  ex.conn->used = true;
  ex.conn->stream.expires_never();
  slot_.idle = std::move(ex.conn);
}

}  // namespace relsim::live_client
