// The request log as JSON Lines (request_journal.hpp).
#include "server/request_journal.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "server/server_wire.hpp"

namespace relsim::mock {
namespace {

Json request_line(const JournalRequest& r, int status, std::string_view how, double finished_ms) {
  Json j{{"task", r.task},
         {"index", r.index >= 0 ? Json(r.index) : Json(nullptr)},
         {"entry", r.entry},
         {"status", status},
         {"end", std::string(how)},
         {"received_ms", r.received_ms},
         {"finished_ms", finished_ms},
         {"retry_count", r.retry_count ? Json(*r.retry_count) : Json(nullptr)},
         {"body_bytes", r.body_bytes}};
  if (r.exhausted) j["exhausted"] = true;
  if (r.tenant >= 0) j["tenant"] = r.tenant;
  if (!r.refused.empty()) j["refused"] = std::string(r.refused);
  return j;
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
  Json line = request_line(it->second, status, how, finished_ms);
  if (!upstream.is_null()) line["upstream"] = std::move(upstream);
  write_locked(line);
  open_.erase(it);
}

void RequestJournal::write_ended(const JournalRequest& request, int status, std::string_view how,
                                 double finished_ms) {
  std::lock_guard lock(mu_);
  write_locked(request_line(request, status, how, finished_ms));
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
  for (const auto& [id, r] : open_) write_locked(request_line(r, 0, "stopped", stop_ms));
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

void RequestJournal::write_locked(const Json& value) {
  if (closed_) return;
  std::string line = wire::json_text(value);
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
