#pragma once
// For tests that hold thousands of sockets: raises the process's soft limit
// on open descriptors for the object's life, when it is below what the test
// needs (to the hard limit, or to 4 x needed when that is unlimited).
// Header-only.
#include <sys/resource.h>

namespace relsim::test {

class FdLimit {
 public:
  explicit FdLimit(rlim_t needed) {
    ::getrlimit(RLIMIT_NOFILE, &old_);
    soft_ = old_.rlim_cur;
    if (soft_ >= needed) return;
    rlimit raised = old_;
    raised.rlim_cur = old_.rlim_max == RLIM_INFINITY ? 4 * needed : old_.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      soft_ = raised.rlim_cur;
      changed_ = true;
    }
  }
  ~FdLimit() {
    if (changed_) ::setrlimit(RLIMIT_NOFILE, &old_);
  }
  FdLimit(const FdLimit&) = delete;
  FdLimit& operator=(const FdLimit&) = delete;
  rlim_t soft() const { return soft_; }
  rlim_t hard() const { return old_.rlim_max; }

 private:
  rlimit old_{};
  rlim_t soft_ = 0;
  bool changed_ = false;
};

}  // namespace relsim::test
