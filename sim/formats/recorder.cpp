// relsim proxy --record (recorder.hpp).
#include "relsim/formats/recorder.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/core/http_text.hpp"

namespace relsim {

Recorder::Recorder(const std::string& dir, const std::vector<std::string>& redact) {
  for (const std::string& name : redact) redact_.push_back(http_text::lower_case(name));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(fmt::format("--record '{}' is not a directory relsim can create or use: {}", dir,
                                 ec ? ec.message() : "it is a file"));
  const auto now = std::chrono::system_clock::now();
  path_ = (std::filesystem::path(dir) /
           fmt::format("relsim-{:%Y%m%dT%H%M%S}-{}.jsonl", fmt::gmtime(std::chrono::system_clock::to_time_t(now)),
                       ::getpid()))
              .string();
  file_ = std::fopen(path_.c_str(), "wx");  // never over an earlier recording
  if (!file_)
    throw InputError(fmt::format("--record '{}': cannot create {}: {}", dir, path_, std::strerror(errno)));
}

Recorder::~Recorder() {
  if (file_) std::fclose(file_);
}

bool Recorder::left_out(std::string_view name) const {
  if (name == "x-api-key" || name == "authorization" || name == "proxy-authorization" || name == "cookie")
    return true;
  for (const std::string& r : redact_)
    if (r == name) return true;
  return false;
}

void Recorder::write(const RecordedExchange& exchange) {
  std::string text = exchange.line();
  text += '\n';
  std::lock_guard lock(mu_);
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
    if (!failed_) std::cerr << fmt::format("relsim proxy: writing the recording {} failed: {}\n", path_, std::strerror(errno));
    failed_ = true;
    return;
  }
  ++written_;
}

std::uint64_t Recorder::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

}  // namespace relsim
