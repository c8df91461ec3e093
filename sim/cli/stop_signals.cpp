// StopSignals (stop_signals.hpp).
#include "cli/stop_signals.hpp"

#include <pthread.h>

namespace relsim::cli {

StopSignals::StopSignals() {
  sigemptyset(&stop_);
  sigaddset(&stop_, SIGINT);
  sigaddset(&stop_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_, &previous_);
}

StopSignals::~StopSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

int StopSignals::wait() {
  int signal = 0;
  sigwait(&stop_, &signal);
  return signal;
}

}  // namespace relsim::cli
