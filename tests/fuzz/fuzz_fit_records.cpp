// libFuzzer target: the readers of `relsim fit` (records.hpp, read_records
// with --format auto) on arbitrary bytes. InputError is their answer to bad
// input; anything else escaping, a crash or a sanitizer report is a bug. A
// file that reads must keep the promises the counter relies on: as many
// records delivered as ReadStats says, each with a task, a bad record with a
// kind and a good one without, and, for the formats the readers sort, every
// task's records together and in increasing order.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "relsim/core/error.hpp"
#include "relsim/fit/records.hpp"

namespace {

// read_records reads a path: the input goes to this process's own file.
const std::string& input_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/fuzz_fit_records." + std::to_string(::getpid());
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(input_path().c_str(), "wb");
  if (!f) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  std::int64_t delivered = 0;
  bool sorted_ok = true;
  std::string last_task;
  std::int64_t last_order = 0;
  std::set<std::string> done;  // tasks already left behind
  relsim::fit::ReadStats stats;
  try {
    stats = relsim::fit::read_records(input_path(), relsim::fit::Format::automatic, [&](const relsim::fit::Record& r) {
      if (r.task.empty() || r.bad == r.kind.empty()) std::abort();
      if (delivered > 0 && r.task == last_task) {
        sorted_ok = sorted_ok && r.order >= last_order;
      } else {
        if (delivered > 0) done.insert(last_task);
        sorted_ok = sorted_ok && !done.count(r.task);
      }
      last_task = r.task;
      last_order = r.order;
      ++delivered;
    });
  } catch (const relsim::InputError&) {
    return 0;
  }
  if (stats.records != delivered || delivered == 0) std::abort();
  const bool sorts = stats.format != "csv" && stats.format != "jsonl";
  if (sorts && !sorted_ok) std::abort();
  return 0;
}
