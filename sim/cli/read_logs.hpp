#pragma once
// The request logs that `relsim fit` and `relsim advise` read: every file in
// order into one stream of records, with progress on a terminal.
#include <functional>
#include <string>
#include <vector>

#include "relsim/fit/records.hpp"

namespace relsim::cli {

// Each record and the file it came from (for messages).
using LogSink = std::function<void(const fit::Record&, const std::string& path)>;

// Reads `files` in the given --format; with several files a task key is
// prefixed by its file's index, so task "1" of two logs stays two tasks.
// Returns the files' stats merged. Throws InputError for a bad file.
fit::ReadStats read_logs(const std::vector<std::string>& files, const std::string& format, const LogSink& sink);

}  // namespace relsim::cli
