// The server's Prometheus metrics (metrics.hpp).
#include "server/metrics.hpp"

#include <fmt/format.h>

namespace relsim::mock {
namespace {

std::size_t at(Dialect d) { return d == Dialect::openai ? 1 : 0; }
constexpr Dialect kDialects[] = {Dialect::anthropic, Dialect::openai};

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::string dialect_label(Dialect d) { return fmt::format("dialect=\"{}\"", dialect_name(d)); }

}  // namespace

void SecondsHistogram::observe(double seconds) {
  for (std::size_t i = 0; i < kBounds.size(); ++i)
    if (seconds <= kBounds[i]) {
      ++below_[i];
      break;
    }
  ++count_;
  sum_ += seconds;
}

void SecondsHistogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  const std::string sep = labels.empty() ? "" : ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += below_[i];
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, kBounds[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, count_);
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, sum_, name, braces, count_);
}

void ServerMetrics::received(Dialect dialect) {
  std::lock_guard lock(mu_);
  ++received_[at(dialect)];
}

void ServerMetrics::request(const MetricsRequest& r) {
  std::lock_guard lock(mu_);
  ++requests_[{r.dialect, r.status, r.fault}];
  request_body_bytes_[at(r.dialect)] += r.body_bytes;
  request_seconds_[at(r.dialect)].observe(r.seconds);
  if (r.first_event_seconds) first_event_seconds_[at(r.dialect)].observe(*r.first_event_seconds);
  if (r.upstream_headers_seconds) upstream_headers_seconds_.observe(*r.upstream_headers_seconds);
  upstream_bytes_ += r.upstream_bytes;
}

void ServerMetrics::replayed(Dialect dialect, bool matched) {
  std::lock_guard lock(mu_);
  ++replayed_[at(dialect)][matched ? 1 : 0];
}

void ServerMetrics::stream_begin(Dialect dialect) {
  std::lock_guard lock(mu_);
  ++streams_[at(dialect)];
}

void ServerMetrics::stream_end(Dialect dialect) {
  std::lock_guard lock(mu_);
  --streams_[at(dialect)];
}

std::string ServerMetrics::text(std::size_t connections_open, std::size_t connections_accepted, bool proxy,
                                bool replay) const {
  std::lock_guard lock(mu_);
  std::string out;
  family(out, "relsim_received_requests_total", "counter",
         "Messages requests received (POST /v1/messages or /v1/chat/completions, any task), by dialect.");
  for (const Dialect d : kDialects)
    out += fmt::format("relsim_received_requests_total{{{}}} {}\n", dialect_label(d), received_[at(d)]);
  family(out, "relsim_requests_total", "counter",
         "Requests written to the request log, by dialect, HTTP status (0: none sent) and the fault the script "
         "entry named (ok: none; none: no entry taken).");
  for (const auto& [key, n] : requests_) {
    const auto& [dialect, status, fault] = key;
    out += fmt::format("relsim_requests_total{{dialect=\"{}\",fault=\"{}\",status=\"{}\"}} {}\n",
                       dialect_name(dialect), fault, status, n);
  }
  family(out, "relsim_streams_in_flight", "gauge", "200 event streams being written to clients now, by dialect.");
  for (const Dialect d : kDialects)
    out += fmt::format("relsim_streams_in_flight{{{}}} {}\n", dialect_label(d), streams_[at(d)]);
  family(out, "relsim_request_body_bytes_total", "counter", "Request body bytes of the logged requests, by dialect.");
  for (const Dialect d : kDialects)
    out += fmt::format("relsim_request_body_bytes_total{{{}}} {}\n", dialect_label(d), request_body_bytes_[at(d)]);
  family(out, "relsim_response_bytes_total", "counter", "Bytes written to clients, every reply included.");
  out += fmt::format("relsim_response_bytes_total {}\n", sent_bytes_.load(std::memory_order_relaxed));
  family(out, "relsim_request_seconds", "histogram",
         "Logged requests from received to finished, by dialect (the log's finished_ms - received_ms).");
  for (const Dialect d : kDialects) request_seconds_[at(d)].render(out, "relsim_request_seconds", dialect_label(d));
  family(out, "relsim_first_event_seconds", "histogram",
         "Streams from the request received to the first event written to the client (time to first token), "
         "by dialect.");
  for (const Dialect d : kDialects)
    first_event_seconds_[at(d)].render(out, "relsim_first_event_seconds", dialect_label(d));
  if (proxy) {
    family(out, "relsim_upstream_headers_seconds", "histogram",
           "The proxy's upstream hops, from forwarding to the upstream answer's headers (the log's "
           "upstream.headers_ms).");
    upstream_headers_seconds_.render(out, "relsim_upstream_headers_seconds", "");
    family(out, "relsim_upstream_bytes_total", "counter", "Body bytes read from the upstream (the log's upstream.bytes).");
    out += fmt::format("relsim_upstream_bytes_total {}\n", upstream_bytes_);
  }
  if (replay) {
    family(out, "relsim_replay_requests_total", "counter",
           "Replay mode: messages requests that matched a recording, or none (answered 404, or forwarded and "
           "recorded with --upstream), by dialect.");
    for (const Dialect d : kDialects)
      for (const int matched : {1, 0})
        out += fmt::format("relsim_replay_requests_total{{{},result=\"{}\"}} {}\n", dialect_label(d),
                           matched ? "matched" : "missed", replayed_[at(d)][matched]);
  }
  family(out, "relsim_connections_open", "gauge", "Client connections open now.");
  out += fmt::format("relsim_connections_open {}\n", connections_open);
  family(out, "relsim_connections_accepted_total", "counter", "Client connections accepted since the start.");
  out += fmt::format("relsim_connections_accepted_total {}\n", connections_accepted);
  return out;
}

}  // namespace relsim::mock
