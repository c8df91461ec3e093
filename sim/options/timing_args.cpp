#include "relsim/options/timing_args.hpp"

namespace relsim::cli {

void add_timing_options(CLI::App& cmd, ClientTiming& t) {
  cmd.add_option("--connect-timeout", t.connect_timeout, "seconds to connect")->capture_default_str();
  cmd.add_option("--header-timeout", t.header_timeout, "seconds from request to response headers")
      ->capture_default_str();
  cmd.add_option("--idle-timeout", t.idle_timeout, "seconds between two stream events")->capture_default_str();
  cmd.add_option("--call-timeout", t.call_timeout, "seconds for one model call with its retries")
      ->capture_default_str();
  cmd.add_option("--task-timeout", t.task_timeout, "seconds for a whole task (its deadline)")->capture_default_str();
  cmd.add_option("--backoff-base", t.backoff_schedule.base, "backoff before retry k: min(base 2^k, cap) (1 - U/4)")
      ->capture_default_str();
  cmd.add_option("--backoff-cap", t.backoff_schedule.cap, "largest backoff, seconds")->capture_default_str();
  cmd.add_option("--time-scale", t.time_scale, "multiplies every backoff (tests use small values)")
      ->capture_default_str();
}

}  // namespace relsim::cli
