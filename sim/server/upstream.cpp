// relsim proxy's hop to the upstream (upstream.hpp), and the upstream's URL.
#include "server/upstream.hpp"

#include <poll.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/parse.hpp"
#include "relsim/formats/recorder.hpp"
#include "server/fault_steps.hpp"
#include "server/routes.hpp"
#include "server/stream_fault.hpp"
#include "server/upstream_framing.hpp"
#include "server/whole_fault.hpp"

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

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The hop's recording (relsim proxy --record), fed the answer's body bytes
// as they are read; with none, nothing.
struct HopRecording {
  RecordedExchange* rec = nullptr;
  Clock::time_point t0;
  // `bytes` arrived now; `done`: the answer has been read to its end.
  void read(std::string_view bytes, bool done) const {
    if (!rec) return;
    if (!bytes.empty()) rec->add_body(bytes, ms_since(t0));
    if (done) rec->finish(true, ms_since(t0));
  }
};

// The hop's line, and its recording, say how the upstream broke off.
void broke_off(Json& upstream, const ServerConfig& config, std::size_t bytes, const error_code& why,
               const HopRecording& recording) {
  upstream["error"] = fmt::format("upstream {} broke off after {} bytes: {}", config.upstream->url, bytes, why.message());
  if (recording.rec) recording.rec->error = upstream["error"].get<std::string>();
}

}  // namespace

using Piece = std::array<char, 16384>;

// One upstream connection, plain or TLS, what was read past the last answer,
// and the room each read's body bytes are parsed into (kept with the
// connection, so a request allocates none of it).
struct UpstreamLink {
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  Piece piece;
};

namespace {

// What `buffer` holds, parsed into `piece` without waiting (chunk headers and
// body bytes alike): how many buffered bytes it used and how many body bytes
// it gave. Neither when it needs more from the upstream.
std::pair<std::size_t, std::size_t> parse_buffered(http::response_parser<http::buffer_body>& parser,
                                                   beast::flat_buffer& buffer, Piece& piece, error_code& ec) {
  parser.get().body().data = piece.data();
  parser.get().body().size = piece.size();
  const std::size_t used = parser.put(buffer.data(), ec);
  buffer.consume(used);
  if (ec == http::error::need_buffer || ec == http::error::need_more) ec = {};
  return {used, piece.size() - parser.get().body().size};
}

// Waits for the upstream's next bytes into `buffer`. An answer that ends
// with its connection is then complete; any other end is an error in `ec`.
template <class Stream>
net::awaitable<void> read_more(Stream& stream, beast::flat_buffer& buffer,
                               http::response_parser<http::buffer_body>& parser, std::chrono::milliseconds timeout,
                               error_code& ec) {
  beast::get_lowest_layer(stream).expires_after(timeout);
  const std::size_t got = co_await stream.async_read_some(buffer.prepare(sizeof(Piece)), redirect(ec));
  buffer.commit(got);
  if (ec == net::error::eof || ec == ssl::error::stream_truncated) {
    error_code at_end;
    parser.put_eof(at_end);
    ec = at_end;
  }
}

// The most of a JSON answer the proxy holds to break it whole.
constexpr std::size_t kMaxWholeAnswer = 64u << 20;

// A 200 JSON answer (not a stream) when p.entry is an in-stream fault kind:
// read whole, then sent to the client broken as whole_fault.hpp says, with
// its length. An upstream that breaks off before the end (or sends more
// than kMaxWholeAnswer) gets what came of it through, chunked, then a close.
template <class Stream>
net::awaitable<Outcome> whole_back(Connection& conn, Stream& stream, UpstreamLink& link,
                                   http::response_parser<http::buffer_body>& parser, std::int64_t task,
                                   const Popped& p, bool keep, Json& upstream, bool& reusable,
                                   const HopRecording& recording) {
  const ServerConfig& config = conn.state().config();
  const auto& res = parser.get();
  const int status = static_cast<int>(res.result_int());
  const Outcome gone{status, "client_gone", false};
  std::string body;
  error_code ec;
  parser.eager(true);
  while (!parser.is_done() && !ec) {
    const auto [used, n] = parse_buffered(parser, link.buffer, link.piece, ec);
    body.append(link.piece.data(), n);
    recording.read(std::string_view(link.piece.data(), n), parser.is_done());
    upstream["bytes"] = body.size();
    if (body.size() > kMaxWholeAnswer) ec = http::error::body_limit;
    if (!ec && !parser.is_done() && used == 0 && n == 0)
      co_await read_more(stream, link.buffer, parser, config.upstream_timeout, ec);
  }
  if (ec) {
    broke_off(upstream, config, body.size(), ec, recording);
    std::string out = client_head(res, keep, false);
    if (!body.empty()) out += wire::chunk(body);
    co_await conn.write(out);
    conn.close_socket();
    co_return Outcome{status, "closed", false};
  }
  reusable = parser.keep_alive() && link.buffer.size() == 0;
  const wire::WholeReply w = wire::break_whole(p.entry.fault, p.dialect, std::move(body));
  // Not the client's doing: the audit must not blame it for an unbroken answer.
  if (!w.broken)
    upstream["error"] = fmt::format("upstream {} answered a JSON body with {}: {} was not applied",
                                    config.upstream->url,
                                    p.entry.fault == FaultKind::no_stop ? "no stop to drop" : "no answer to rewrite",
                                    to_string(p.entry.fault));
  const std::string head = client_head(res, keep, false, w.content_length);
  if (w.hold_before_body) {
    if (!co_await conn.write(head)) co_return gone;
    const HoldEnd h = co_await conn.hold(task, p.epoch, "");
    if (h != HoldEnd::released) co_return Outcome{status, end_of(h), false};
    if (!co_await conn.write(w.body)) co_return gone;
  } else if (!co_await conn.write(head + w.body)) {
    co_return gone;
  }
  if (!w.clean_end) {
    conn.close_socket();
    co_return Outcome{status, "closed", false};
  }
  co_return Outcome{status, "complete", keep};
}

// The answer, streamed back to the client as it comes, broken as p.entry says.
// `reusable` says whether the upstream connection can carry another request:
// its answer was read to the end and it keeps alive.
template <class Stream>
net::awaitable<Outcome> stream_back(Connection& conn, Stream& stream, UpstreamLink& link,
                                    http::response_parser<http::buffer_body>& parser, bool bodiless,
                                    std::int64_t task, const Popped& p, bool keep, Json& upstream,
                                    bool& reusable, const HopRecording& recording) {
  const ServerConfig& config = conn.state().config();
  beast::flat_buffer& buffer = link.buffer;
  Piece& piece = link.piece;
  const auto& res = parser.get();
  const int status = static_cast<int>(res.result_int());
  // Only a 200 event stream is broken here (a JSON one is whole_back's); the rest passes as it comes.
  const bool events = status == 200 && res[http::field::content_type].starts_with("text/event-stream");
  const bool in_stream = p.entry.reply == Reply::fault && wire::streams(p.entry);
  StreamFault fault(events && in_stream ? std::optional<FaultKind>(p.entry.fault) : std::nullopt, p.dialect);
  const Outcome gone{status, "client_gone", false};
  const StreamInFlight flight(conn.state().metrics(), p.dialect, events);
  if (bodiless) {  // its head is all of it
    recording.read({}, true);
    reusable = parser.is_done() && parser.keep_alive() && buffer.size() == 0;
    if (!co_await conn.write(client_head(res, keep, true))) co_return gone;
    co_return Outcome{status, "complete", keep};
  }
  // The upstream's bytes are parsed as they are read, and what the client
  // gets goes out in as few writes as it can without waiting on the
  // upstream: the head with the body bytes its read brought along, all that
  // one read brought, the last of it with the terminating chunk. Before the
  // proxy waits on the upstream, whatever is pending is written.
  std::string pending = client_head(res, keep, false);
  parser.eager(true);  // each put parses all it can: chunk headers and bodies alike
  std::size_t bytes = 0;
  error_code ec;
  while (!fault.done()) {
    std::vector<StreamFault::Step> steps;
    if (parser.is_done()) {
      steps = fault.finish();
    } else {
      const auto [used, n] = parse_buffered(parser, buffer, piece, ec);
      bytes += n;
      upstream["bytes"] = bytes;
      recording.read(std::string_view(piece.data(), n), parser.is_done());
      if (ec) {  // bytes that are not HTTP: as if the upstream broke off, after what came before them
        broke_off(upstream, config, bytes, ec, recording);
        for (const StreamFault::Step& st : fault.feed(std::string_view(piece.data(), n))) pending += wire::chunk(st.bytes);
        if (!pending.empty()) co_await conn.write(std::exchange(pending, {}));
        conn.close_socket();
        co_return Outcome{status, "closed", false};
      }
      if (used == 0 && n == 0) {
        // Nothing more without the upstream.
        if (!pending.empty() && !co_await conn.write(std::exchange(pending, {}))) co_return gone;
        co_await read_more(stream, buffer, parser, config.upstream_timeout, ec);
        if (ec) {
          broke_off(upstream, config, bytes, ec, recording);
          conn.close_socket();
          co_return Outcome{status, "closed", false};
        }
        continue;
      }
      steps = fault.feed(std::string_view(piece.data(), n));
    }
    if (const std::optional<Outcome> ended = co_await send_steps(conn, std::move(steps), pending, task, p, status, events))
      co_return *ended;
  }
  // Bytes past the answer would be taken for the next one's: such a connection is not kept.
  reusable = parser.is_done() && parser.keep_alive() && buffer.size() == 0;
  pending += wire::kLastChunk;
  if (!co_await conn.write(pending)) co_return gone;
  co_return Outcome{status, "complete", keep};
}

// What became of a request on an upstream connection.
struct Hop {
  Outcome outcome;
  bool reusable = false;  // the connection can carry the next request
  bool stale = false;     // a kept connection the upstream had closed: nothing sent back, try a new one
};

// A write that fails on a kept connection the upstream closed while it was idle.
bool closed_while_idle(const error_code& ec) {
  return ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::connection_aborted || ec == ssl::error::stream_truncated;
}

// Over a connected stream (`ec`: the connection or handshake failed): the
// request out, the answer's head in, then stream_back; a 502 when any of it
// failed before the head, unless the connection was a kept one the upstream
// had closed (`reused`), which is stale.
template <class Stream>
net::awaitable<Hop> exchange(Connection& conn, Stream& stream, UpstreamLink& link, error_code ec,
                             bool reused, const Request& req, std::int64_t task, const Popped& p, bool keep,
                             Json& upstream, Clock::time_point t0, RecordedExchange* rec) {
  const HopRecording recording{rec, t0};
  const ServerConfig& config = conn.state().config();
  const std::string out = upstream_request(req, *config.upstream, config.task_header, task);
  if (!ec) {
    beast::get_lowest_layer(stream).expires_after(config.upstream_timeout);
    co_await net::async_write(stream, net::buffer(out), redirect(ec));
  }
  // A kept connection whose write fails was closed by the upstream before
  // it could read the request: stale, and the request goes once more on a
  // new one. After the write the request may have been taken: not resent.
  if (ec && reused && closed_while_idle(ec)) co_return Hop{{}, false, true};
  const bool head = req.method() == http::verb::head;
  std::optional<http::response_parser<http::buffer_body>> parser;
  // Interim answers (1xx) are read past: the proxy has answered 100-continue itself.
  do {
    parser.emplace();
    // No limit: an answer streams through. (Not boost::none: Boost 1.74's
    // parser compares a content-length with the empty optional and refuses it.)
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    parser->skip(head);
    if (!ec) co_await http::async_read_header(stream, link.buffer, *parser, redirect(ec));
  } while (!ec && parser->get().result_int() / 100 == 1);
  if (ec) {
    const std::string why =
        fmt::format("upstream {} failed before its headers: {}", config.upstream->url, ec.message());
    upstream = Json{{"status", nullptr}, {"headers_ms", ms_since(t0)}, {"bytes", 0}, {"reused", reused}, {"error", why}};
    if (rec) rec->error = why;
    const bool ok = co_await conn.send_error(502, "api_error", why, keep);
    co_return Hop{{502, ok ? "complete" : "client_gone", ok && keep}};
  }
  const int status = static_cast<int>(parser->get().result_int());
  upstream = Json{{"status", status},
                  {"headers_ms", ms_since(t0)},
                  {"bytes", 0},
                  {"reused", reused}};
  if (rec) {
    rec->status = status;
    rec->headers_ms = ms_since(t0);
    for (const auto& field : parser->get())
      rec->response_headers.emplace_back(wire::lower_case(std::string(sv(field.name_string()))),
                                         std::string(sv(field.value())));
    rec->set_event_stream(parser->get()[http::field::content_type].starts_with("text/event-stream"));
  }
  Hop hop;
  const bool bodiless = head || status == 204 || status == 304;
  // A 200 JSON answer (not a stream) to break is read whole first.
  const bool whole = !bodiless && status == 200 && p.entry.reply == Reply::fault && wire::streams(p.entry) &&
                     parser->get()[http::field::content_type].starts_with("application/json");
  if (whole)
    hop.outcome = co_await whole_back(conn, stream, link, *parser, task, p, keep, upstream, hop.reusable, recording);
  else
    hop.outcome =
        co_await stream_back(conn, stream, link, *parser, bodiless, task, p, keep, upstream, hop.reusable, recording);
  co_return hop;
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


void UpstreamLinkDeleter::operator()(UpstreamLink* link) const { delete link; }

namespace {

// A new connection to the upstream: resolved (a numeric host needs no
// resolver, whose asynchronous lookups run on a thread of their own),
// connected with TCP_NODELAY (events go on as they come), and for https the
// TLS handshake with SNI and the certificate checked to name the host.
net::awaitable<error_code> connect(Connection& conn, UpstreamLink& link) {
  const ServerConfig& config = conn.state().config();
  const Upstream& up = *config.upstream;
  error_code ec;
  tcp::resolver resolver(conn.executor());
  tcp::resolver::results_type hosts;
  if (const auto address = net::ip::make_address(up.host, ec); !ec)
    hosts = tcp::resolver::results_type::create(tcp::endpoint(address, static_cast<std::uint16_t>(up.port)), up.host,
                                                std::to_string(up.port));
  else
    ec = {}, hosts = co_await resolver.async_resolve(up.host, std::to_string(up.port), redirect(ec));
  beast::tcp_stream& lowest = up.tls ? beast::get_lowest_layer(link.tls.emplace(conn.executor(), *conn.state().tls()))
                                     : link.plain.emplace(conn.executor());
  lowest.expires_after(config.upstream_timeout);
  if (!ec) co_await lowest.async_connect(hosts, redirect(ec));
  if (!ec) lowest.socket().set_option(tcp::no_delay(true), ec);
  if (!up.tls || ec) co_return ec;
  if (!SSL_set_tlsext_host_name(link.tls->native_handle(), const_cast<char*>(up.host.c_str())))
    co_return error_code(static_cast<int>(::ERR_get_error()), net::error::get_ssl_category());
  link.tls->set_verify_callback(ssl::host_name_verification(up.host));
  co_await link.tls->async_handshake(ssl::stream_base::client, redirect(ec));
  co_return ec;
}

}  // namespace

namespace {

// Whether a kept connection is still open with nothing to read: the
// upstream's close (FIN or reset), a TLS close_notify or stray bytes all
// make the socket readable.
bool idle_and_open(UpstreamLink& link) {
  tcp::socket& socket = link.tls ? beast::get_lowest_layer(*link.tls).socket() : link.plain->socket();
  pollfd p{socket.native_handle(), POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 0;
}

}  // namespace

net::awaitable<Outcome> forward(Connection& conn, const Request& req, std::int64_t task, const Popped& p, bool keep,
                                Json& upstream) {
  const auto t0 = Clock::now();
  UpstreamLinkPtr& link = conn.upstream_link();
  // A kept connection the upstream has closed (or sent anything on) while it was idle is let go.
  if (link && !idle_and_open(*link)) link.reset();
  // A kept connection first; if its write fails, once more on a new one.
  for (;;) {
    const bool reused = link != nullptr;
    error_code ec;
    if (!reused) {
      link.reset(new UpstreamLink);
      ec = co_await connect(conn, *link);
    }
    // A messages exchange is recorded (relsim proxy --record); an endpoint passed through is not.
    std::optional<RecordedExchange> rec;
    if (Recorder* recorder = conn.state().recorder(); recorder && p.index >= 0)
      rec = recording_of(req, task, p, *recorder);
    RecordedExchange* r = rec ? &*rec : nullptr;
    const Hop hop = link->tls ? co_await exchange(conn, *link->tls, *link, ec, reused, req, task, p, keep,
                                                  upstream, t0, r)
                              : co_await exchange(conn, *link->plain, *link, ec, reused, req, task, p, keep,
                                                  upstream, t0, r);
    if (!hop.reusable) link.reset();
    if (hop.stale) continue;
    if (rec) {
      rec->finish(false, ms_since(t0));  // when the answer was not read to its end (a cut, a client gone)
      conn.state().recorder()->write(*rec);
      if (RecordingBook* book = conn.state().book()) book->add(std::move(*rec));  // a replay's record-on-miss
    }
    co_return hop.outcome;
  }
}

net::awaitable<Outcome> pass_through(Connection& conn, const Request& req, std::int64_t task, bool keep) {
  Popped as_is;
  as_is.found = true;  // an ok entry: no fault
  Json unlogged;
  co_return co_await forward(conn, req, task, as_is, keep, unlogged);
}

}  // namespace relsim::mock
