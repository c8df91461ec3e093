#pragma once
// Internal to the CLI: how `relsim serve` and `relsim ui` run until SIGINT or
// SIGTERM. The signals are taken by sigwait, never by a handler: they are
// blocked before the server's threads start, so that those inherit the mask
// and none of them is picked to receive a signal.
#include <csignal>

namespace relsim::cli {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM on this thread (and the threads it starts).
  StopSignals();
  // Restores the mask this thread had.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Returns when SIGINT or SIGTERM comes; the signal's number.
  int wait();

 private:
  sigset_t stop_{}, previous_{};
};

}  // namespace relsim::cli
