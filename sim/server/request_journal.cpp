// The request log as JSON Lines (request_journal.hpp).
#include "server/request_journal.hpp"

#include <cerrno>
#include <cmath>
#include <iterator>
#include <cstring>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "server/server_wire.hpp"

namespace relsim::mock {
namespace {

// A request's line is written straight to text: it is most of what a
// server does per request, and building it as a Json object first cost
// several times the writing. Numbers are written as json_text writes them
// (a double keeps a ".0" when whole; NaN and infinities are null), strings
// and the nested values through json_text itself, so a reader finds the
// same values in the same order as before (tests/live/control_log_test.cpp,
// EveryLineIsTheTextTheJsonLibraryWritesForItsValues, holds each line to
// the JSON library's own writing of it).
void append_double(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  const std::size_t from = out.size();
  fmt::format_to(std::back_inserter(out), "{}", x);
  if (out.find_first_of(".e", from) == std::string::npos) out += ".0";
}

std::string request_line(const JournalRequest& r, int status, std::string_view how, double finished_ms,
                         const Json& upstream) {
  std::string out;
  out.reserve(256);
  fmt::format_to(std::back_inserter(out), R"({{"task":{},"index":)", r.task);
  if (r.index >= 0) fmt::format_to(std::back_inserter(out), "{}", r.index);
  else out += "null";
  out += R"(,"entry":)";
  out += wire::json_text(r.entry);
  fmt::format_to(std::back_inserter(out), R"(,"status":{},"end":)", status);
  out += wire::json_text(Json(how));
  out += R"(,"received_ms":)";
  append_double(out, r.received_ms);
  out += R"(,"finished_ms":)";
  append_double(out, finished_ms);
  out += R"(,"retry_count":)";
  out += r.retry_count ? wire::json_text(Json(*r.retry_count)) : "null";
  fmt::format_to(std::back_inserter(out), R"(,"body_bytes":{})", r.body_bytes);
  if (r.exhausted) out += R"(,"exhausted":true)";
  if (r.dialect == Dialect::openai) out += R"(,"dialect":"openai")";
  if (r.fallback) out += R"(,"fallback":true)";
  if (r.tenant >= 0) fmt::format_to(std::back_inserter(out), R"(,"tenant":{})", r.tenant);
  if (!r.refused.empty()) out += R"(,"refused":)" + wire::json_text(Json(r.refused));
  if (!upstream.is_null()) out += R"(,"upstream":)" + wire::json_text(upstream);
  out += '}';
  return out;
}

}  // namespace

RequestJournal::~RequestJournal() {
  if (file_) std::fclose(file_);
}

void RequestJournal::open_file(const std::string& path) {
  std::lock_guard lock(mu_);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f)
    throw InputError(fmt::format("--log '{}' cannot be written: {}", path, std::strerror(errno)));
  if (file_) std::fclose(file_);
  file_ = f;
  path_ = path;
}

void RequestJournal::write_header(int port, std::optional<std::size_t> plan_tasks, const std::string& retry_after,
                                  const std::string& retry_after_ms, const Json& mode) {
  std::lock_guard lock(mu_);
  Json header{{"relsim_log", 1},
              {"port", port},
              {"plan_tasks", plan_tasks ? Json(*plan_tasks) : Json(nullptr)},
              {"retry_after", retry_after},
              {"retry_after_ms", retry_after_ms.empty() ? Json(nullptr) : Json(retry_after_ms)}};
  header.update(mode);
  write_locked(header);
}

std::uint64_t RequestJournal::begin(JournalRequest request) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = next_id_++;
  open_.emplace(id, std::move(request));
  return id;
}

void RequestJournal::end(std::uint64_t id, int status, std::string_view how, double finished_ms, Json upstream) {
  std::lock_guard lock(mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return;
  write_locked(request_line(it->second, status, how, finished_ms, upstream));
  open_.erase(it);
}

void RequestJournal::write_ended(const JournalRequest& request, int status, std::string_view how,
                                 double finished_ms) {
  std::lock_guard lock(mu_);
  write_locked(request_line(request, status, how, finished_ms, nullptr));
}

void RequestJournal::outcome(std::int64_t task, std::string_view word, std::string_view detail,
                             double received_ms) {
  std::lock_guard lock(mu_);
  write_locked(Json{{"task", task}, {"outcome", std::string(word)}, {"detail", std::string(detail)},
                    {"received_ms", received_ms}});
}

void RequestJournal::close(double stop_ms) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  // No status is known for these: the reply's coroutine never came back to
  // say what it sent (the normal path writes "stopped" with its status).
  for (const auto& [id, r] : open_) write_locked(request_line(r, 0, "stopped", stop_ms, nullptr));
  open_.clear();
  closed_ = true;
  if (file_ && std::fclose(file_) != 0 && !write_failed_)
    std::fprintf(stderr, "relsim serve: closing the request log '%s' failed: %s\n", path_.c_str(),
                 std::strerror(errno));
  file_ = nullptr;
}

std::pair<std::string, std::uint64_t> RequestJournal::text() const {
  std::lock_guard lock(mu_);
  return {memory_, left_out_};
}

void RequestJournal::write_locked(const Json& value) { write_locked(wire::json_text(value)); }

void RequestJournal::write_locked(std::string line) {
  if (closed_) return;
  line += '\n';
  if (file_ && !write_failed_) {
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
      // The server goes on (the run's replies matter more than its log); the
      // person reading the log is told once.
      write_failed_ = true;
      std::fprintf(stderr, "relsim serve: writing the request log '%s' failed: %s\n", path_.c_str(),
                   std::strerror(errno));
    }
  }
  if (memory_.size() + line.size() > max_memory_bytes_) {
    ++left_out_;
    return;
  }
  memory_ += line;
}

}  // namespace relsim::mock
