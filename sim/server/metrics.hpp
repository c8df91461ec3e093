#pragma once
// Internal to the server: its metrics in Prometheus' text format (docs/proxy.md,
// Metrics), served at GET /metrics by `serve` and `proxy`. Every count of a
// request is taken where its request-log line is written (ServerState), so
// the counters equal the log's lines; a reply the stop cuts short is
// logged "stopped" but not counted. Thread-safe: one mutex for the tables
// and histograms, atomics for the byte counters.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "relsim/core/dialect.hpp"

namespace relsim::mock {

// One request as its log line has it, for the counters.
struct MetricsRequest {
  Dialect dialect = Dialect::anthropic;
  int status = 0;              // 0: no status line sent
  std::string fault = "none";  // the entry's name (ok, a fault kind, empty, garbage); none: no entry taken
  std::size_t body_bytes = 0;  // the request's body
  double seconds = 0.0;        // received to finished
  std::optional<double> first_event_seconds;       // received to the first event written to the client
  std::optional<double> upstream_headers_seconds;  // proxy: the upstream hop to its answer's headers
  std::size_t upstream_bytes = 0;                  // proxy: the upstream's body bytes read
};

// Fixed buckets, in seconds, from 1 ms to 2 min.
class SecondsHistogram {
 public:
  static constexpr std::array<double, 15> kBounds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                   0.5,   1.0,    2.5,   5.0,  10.0,  30.0, 120.0};
  void observe(double seconds);
  // The _bucket, _sum and _count lines of `name` with these labels (k="v",...; may be empty).
  void render(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::array<std::uint64_t, kBounds.size()> below_{};  // observations <= each bound, not cumulated
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
};

class ServerMetrics {
 public:
  // A messages request arrived (before it is judged).
  void received(Dialect dialect);
  // A request's log line was written.
  void request(const MetricsRequest& r);
  // A 200 event stream began or ended (the mock's, or the upstream's passed on).
  void stream_begin(Dialect dialect);
  void stream_end(Dialect dialect);
  // Replay mode: a request matched a recording, or none (a 404, or a
  // record-on-miss forward).
  void replayed(Dialect dialect, bool matched);
  // Bytes written to clients, every reply included.
  void sent(std::size_t bytes) { sent_bytes_.fetch_add(bytes, std::memory_order_relaxed); }

  // The exposition: every family with its HELP and TYPE, labels sorted.
  // `proxy`: with the upstream families; `replay`: with the replay's.
  std::string text(std::size_t connections_open, std::size_t connections_accepted, bool proxy, bool replay) const;

 private:
  mutable std::mutex mu_;
  std::array<std::uint64_t, 2> received_{};  // by dialect
  std::map<std::tuple<Dialect, int, std::string>, std::uint64_t> requests_;  // (dialect, status, fault)
  std::array<std::int64_t, 2> streams_{};
  std::array<std::uint64_t, 2> request_body_bytes_{};
  std::array<SecondsHistogram, 2> request_seconds_, first_event_seconds_;
  SecondsHistogram upstream_headers_seconds_;
  std::uint64_t upstream_bytes_ = 0;
  std::array<std::array<std::uint64_t, 2>, 2> replayed_{};  // by dialect, then missed (0) or matched (1)
  std::atomic<std::uint64_t> sent_bytes_{0};
};

// Counts a stream in flight while it lives (when `counted`: a reply that
// turns out to be no event stream is not one).
class StreamInFlight {
 public:
  StreamInFlight(ServerMetrics& metrics, Dialect dialect, bool counted = true)
      : metrics_(metrics), dialect_(dialect), counted_(counted) {
    if (counted_) metrics_.stream_begin(dialect_);
  }
  ~StreamInFlight() {
    if (counted_) metrics_.stream_end(dialect_);
  }
  StreamInFlight(const StreamInFlight&) = delete;
  StreamInFlight& operator=(const StreamInFlight&) = delete;

 private:
  ServerMetrics& metrics_;
  Dialect dialect_;
  bool counted_;
};

}  // namespace relsim::mock
