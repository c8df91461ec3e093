// The request logs of fit and advise (read_logs.hpp).
#include "cli/read_logs.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.hpp"

namespace relsim::cli {
namespace {

constexpr std::int64_t kProgressEvery = 1'000'000;

void merge(fit::ReadStats& into, const fit::ReadStats& from) {
  if (into.format.empty()) into.format = from.format;
  else if (into.format.find(from.format) == std::string::npos) into.format += "+" + from.format;
  into.records += from.records;
  for (const auto& [why, n] : from.skipped) into.skipped[why] += n;
  into.notes.insert(into.notes.end(), from.notes.begin(), from.notes.end());
}

}  // namespace

fit::ReadStats read_logs(const std::vector<std::string>& files, const std::string& format, const LogSink& sink) {
  const fit::Format parsed = fit::parse_format(format);
  const bool progress = terminal_progress();
  std::int64_t records = 0;
  fit::ReadStats stats;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    const std::string prefix = files.size() > 1 ? fmt::format("{}\x1f", i) : "";
    fit::Record keyed;
    const fit::RecordSink each = [&](const fit::Record& r) {
      const fit::Record* use = &r;
      if (!prefix.empty()) {
        keyed = r;
        keyed.task = prefix + r.task;
        use = &keyed;
      }
      sink(*use, path);
      if (progress && ++records % kProgressEvery == 0)
        std::fprintf(stderr, "\rrelsim: %s: %lld records", path.c_str(), static_cast<long long>(records));
    };
    merge(stats, fit::read_records(path, parsed, each));
  }
  if (progress && records >= kProgressEvery) std::fprintf(stderr, "\r\033[K");
  return stats;
}

}  // namespace relsim::cli
