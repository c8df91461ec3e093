#pragma once
// Errors at the edges, assertions inside: check input where it enters, trust it past there.
//
// InputError is a value the user gave us that we refuse: its message is one
// line that names the value and the valid range, and `main` prints it and
// exits non-zero. RELSIM_ASSERT guards invariants of our own code; a failure
// is a bug in relsim, so it names the file and line.
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

namespace relsim {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Work stopped on request (a progress callback throws it when the one who
// asked has gone, e.g. a browser that moved a slider): not an error of the
// input nor of relsim.
struct Cancelled : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line);

// A server's last-resort catch (an exception that escaped a connection's
// handler: a bug of ours) reports it and keeps serving; it calls
// internal_error_caught() after reporting, which aborts once
// abort_on_internal_errors() was called. The fuzz targets call it before
// their first input, so that the fuzzer keeps the input as a crash; the
// same library serves the tests, where the servers keep serving.
void abort_on_internal_errors();
void internal_error_caught();

// Carries the first exception out of a parallel region. An exception that
// escapes an OpenMP region (or a thread) is std::terminate: a core dump
// where the command line promises one line on stderr and a non-zero exit.
// So each iteration runs its body through run(); the first exception is
// kept, later iterations skip their work once one is kept, and after the
// region rethrow() throws it on the calling thread.
//
//   FirstError error;
//   #pragma omp parallel for
//   for (int i = 0; i < n; ++i) error.run([&] { work(i); });
//   error.rethrow();
class FirstError {
 public:
  template <class Body>
  void run(Body&& body) noexcept {
    if (failed()) return;
    try {
      body();
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  }
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace relsim

#define RELSIM_ASSERT(cond) \
  ((cond) ? static_cast<void>(0) : ::relsim::assertion_failed(#cond, __FILE__, __LINE__))
