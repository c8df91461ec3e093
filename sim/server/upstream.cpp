// relsim proxy's hop to the upstream (upstream.hpp), and the upstream's URL.
#include "server/upstream.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "server/stream_fault.hpp"

namespace relsim {

Upstream parse_upstream(std::string_view url) {
  const auto fail = [&](std::string_view why) {
    throw InputError(fmt::format("--upstream '{}' {}: give http[s]://HOST[:PORT][/PATH], e.g. https://api.anthropic.com",
                                 url.substr(0, 200), why));
  };
  Upstream u;
  u.url = std::string(url);
  u.tls = url.rfind("https://", 0) == 0;
  if (!u.tls && url.rfind("http://", 0) != 0) fail("does not start with http:// or https://");
  u.port = u.tls ? 443 : 80;
  std::string_view rest = url.substr(u.tls ? 8 : 7);
  const std::size_t slash = std::min(rest.find('/'), rest.size());
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = rest.substr(slash);
  if (path.find_first_of("?#") != std::string_view::npos) fail("has a query or fragment");
  if (const std::size_t brace = path.find_first_of("{}");
      brace != std::string_view::npos && (path.find(kTaskInPath) != brace || path.find_first_of("{}", brace + kTaskInPath.size()) != std::string_view::npos))
    fail("has a brace other than one {task}");
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  u.base_path = std::string(path);
  if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    const auto port = parse_number<int>(authority.substr(colon + 1));
    if (!port || *port < 1 || *port > 65535) fail("has a port outside [1, 65535]");
    u.port = *port;
    authority = authority.substr(0, colon);
  }
  if (authority.empty() || authority.find_first_of("@[] ") != std::string_view::npos) fail("has no usable host");
  u.host = std::string(authority);
  return u;
}

}  // namespace relsim

namespace relsim::mock {
namespace {

namespace beast = boost::beast;

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

bool hop_by_hop(std::string_view lower) {
  for (const std::string_view h : {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                                   "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
                                   "content-length", "host"})
    if (lower == h) return true;
  return false;
}

// The request as the upstream gets it: its own path (base_path +
// /v1/messages and the query), the client's headers but the hop-by-hop ones
// and the task header, one connection per request.
http::request<http::string_body> upstream_request(const Request& req, const Upstream& up,
                                                  const std::string& task_header, std::int64_t task) {
  const std::string_view target(req.target().data(), req.target().size());
  const std::size_t q = target.find('?');
  std::string base = up.base_path;
  if (const std::size_t at = base.find(kTaskInPath); at != std::string::npos)
    base.replace(at, kTaskInPath.size(), std::to_string(task));
  http::request<http::string_body> out{
      req.method(), base + "/v1/messages" + std::string(q == std::string_view::npos ? "" : target.substr(q)), 11};
  for (const auto& field : req) {
    const std::string name = wire::lower_case(std::string(field.name_string()));
    if (hop_by_hop(name) || (!task_header.empty() && name == task_header)) continue;
    out.insert(field.name_string(), field.value());
  }
  const bool default_port = up.port == (up.tls ? 443 : 80);
  out.set(http::field::host, default_port ? up.host : fmt::format("{}:{}", up.host, up.port));
  out.set(http::field::connection, "close");
  out.body() = req.body();
  out.prepare_payload();
  return out;
}

// The head the client gets: the upstream's status and headers, re-framed chunked.
std::string client_head(const http::response_header<>& res, bool keep) {
  wire::Headers headers;
  for (const auto& field : res)
    if (!hop_by_hop(wire::lower_case(std::string(field.name_string()))))
      headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  headers.emplace_back("transfer-encoding", "chunked");
  headers.emplace_back("connection", keep ? "keep-alive" : "close");
  return wire::head(static_cast<int>(res.result_int()), sv(res.reason()), headers);
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

namespace {

// The answer, streamed back to the client as it comes, broken as p.entry says.
template <class Stream>
net::awaitable<Outcome> stream_back(Connection& conn, Stream& stream, beast::flat_buffer& buffer,
                                    http::response_parser<http::buffer_body>& parser, std::int64_t task,
                                    const Popped& p, bool keep, Json& upstream) {
  const ServerConfig& config = conn.state().config();
  const auto& res = parser.get();
  const int status = static_cast<int>(res.result_int());
  // Only a 200 event stream can be broken inside; anything else passes as it comes.
  const bool events = status == 200 && res[http::field::content_type].starts_with("text/event-stream");
  const bool in_stream = p.entry.reply == Reply::fault && wire::streams(p.entry);
  StreamFault fault(events && in_stream ? std::optional<FaultKind>(p.entry.fault) : std::nullopt);
  const Outcome gone{status, "client_gone", false};
  if (!co_await conn.write(client_head(res, keep))) co_return gone;
  std::array<char, 16384> piece{};
  std::size_t bytes = 0;
  std::vector<StreamFault::Step> steps;
  error_code ec;
  while (!fault.done()) {
    if (parser.is_done()) {
      steps = fault.finish();
    } else {
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      beast::get_lowest_layer(stream).expires_after(config.upstream_timeout);
      co_await http::async_read(stream, buffer, parser, redirect(ec));
      if (ec == http::error::need_buffer) ec = {};
      const std::size_t n = piece.size() - parser.get().body().size;
      bytes += n;
      upstream["bytes"] = bytes;
      if (ec) {  // the upstream broke off: so does the answer
        upstream["error"] =
            fmt::format("upstream {} broke off after {} bytes: {}", config.upstream->url, bytes, ec.message());
        conn.close_socket();
        co_return Outcome{status, "closed", false};
      }
      steps = fault.feed(std::string_view(piece.data(), n));
    }
    for (const StreamFault::Step& s : steps) {
      if (!s.bytes.empty() && !co_await conn.write(wire::chunk(s.bytes))) co_return gone;
      if (s.then == StreamFault::Then::hold) {
        const HoldEnd h = co_await conn.hold(task, p.epoch, "");
        if (h != HoldEnd::released) co_return Outcome{status, end_of(h), false};
      } else if (s.then == StreamFault::Then::cut) {
        conn.close_socket();
        co_return Outcome{status, "closed", false};
      }
    }
  }
  if (!co_await conn.write(wire::kLastChunk)) co_return gone;
  co_return Outcome{status, "complete", keep};
}

// Over a connected stream (`ec`: the connection or handshake failed): the
// request out, the answer's head in, then stream_back; a 502 when any of it
// failed before the head.
template <class Stream>
net::awaitable<Outcome> exchange(Connection& conn, Stream& stream, error_code ec, const Request& req,
                                 std::int64_t task, const Popped& p, bool keep, Json& upstream,
                                 Clock::time_point t0) {
  const ServerConfig& config = conn.state().config();
  http::request<http::string_body> out = upstream_request(req, *config.upstream, config.task_header, task);
  if (!ec) co_await http::async_write(stream, out, redirect(ec));
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  // No limit: an answer streams through. (Not boost::none: Boost 1.74's
  // parser compares a content-length with the empty optional and refuses it.)
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  if (!ec) co_await http::async_read_header(stream, buffer, parser, redirect(ec));
  if (ec) {
    const std::string why =
        fmt::format("upstream {} failed before its headers: {}", config.upstream->url, ec.message());
    upstream = Json{{"status", nullptr}, {"headers_ms", ms_since(t0)}, {"bytes", 0}, {"error", why}};
    const bool ok = co_await conn.send_error(502, "api_error", why, keep);
    co_return Outcome{502, ok ? "complete" : "client_gone", ok && keep};
  }
  upstream = Json{{"status", static_cast<int>(parser.get().result_int())}, {"headers_ms", ms_since(t0)}, {"bytes", 0}};
  co_return co_await stream_back(conn, stream, buffer, parser, task, p, keep, upstream);
}

}  // namespace

std::shared_ptr<ssl::context> make_tls_context(const std::string& ca) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_verify_mode(ssl::verify_peer);
  error_code ec;
  if (ca.empty()) ctx->set_default_verify_paths(ec);
  else ctx->load_verify_file(ca, ec);
  if (ec)
    throw InputError(fmt::format("{} does not load: {}", ca.empty() ? std::string("the system's CA store")
                                                                    : fmt::format("--upstream-ca '{}'", ca),
                                 ec.message()));
  return ctx;
}

net::awaitable<Outcome> forward(Connection& conn, const Request& req, std::int64_t task, const Popped& p, bool keep,
                                Json& upstream) {
  const ServerConfig& config = conn.state().config();
  const Upstream& up = *config.upstream;
  const auto t0 = Clock::now();
  error_code ec;
  // A numeric host needs no resolver (whose asynchronous lookups run on a thread of their own).
  tcp::resolver resolver(conn.executor());
  tcp::resolver::results_type hosts;
  if (const auto address = net::ip::make_address(up.host, ec); !ec)
    hosts = tcp::resolver::results_type::create(tcp::endpoint(address, static_cast<std::uint16_t>(up.port)), up.host,
                                                std::to_string(up.port));
  else
    ec = {}, hosts = co_await resolver.async_resolve(up.host, std::to_string(up.port), redirect(ec));
  if (!up.tls) {
    beast::tcp_stream stream(conn.executor());
    stream.expires_after(config.upstream_timeout);
    if (!ec) co_await stream.async_connect(hosts, redirect(ec));
    if (!ec) stream.socket().set_option(tcp::no_delay(true), ec);  // events go on as they come
    co_return co_await exchange(conn, stream, ec, req, task, p, keep, upstream, t0);
  }
  beast::ssl_stream<beast::tcp_stream> stream(conn.executor(), *conn.state().tls());
  beast::get_lowest_layer(stream).expires_after(config.upstream_timeout);
  if (!ec) co_await beast::get_lowest_layer(stream).async_connect(hosts, redirect(ec));
  if (!ec) beast::get_lowest_layer(stream).socket().set_option(tcp::no_delay(true), ec);
  // SNI, and the certificate must name the host.
  if (!ec && !SSL_set_tlsext_host_name(stream.native_handle(), const_cast<char*>(up.host.c_str())))
    ec = error_code(static_cast<int>(::ERR_get_error()), net::error::get_ssl_category());
  stream.set_verify_callback(ssl::host_name_verification(up.host));
  if (!ec) co_await stream.async_handshake(ssl::stream_base::client, redirect(ec));
  co_return co_await exchange(conn, stream, ec, req, task, p, keep, upstream, t0);
}

}  // namespace relsim::mock
