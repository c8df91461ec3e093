// The one way tests run a program: the relsim executable (RELSIM_EXE), or
// another (mpirun, node, npm) given as an argument vector. No shell is
// involved unless the program is /bin/sh, so arguments need no quoting.
// Output is captured whole; a child still running after `timeout` seconds is
// killed (SIGKILL; its whole process group with new_process_group) and
// reported as exit code 128 + 9.
//
// Linked into every test executable as the static library
// relsim_test_support (tests/CMakeLists.txt).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace relsim::test {

// What a finished child did. (Not named Run: inside a TEST body that name is
// testing::Test::Run.)
struct RunResult {
  int code = -1;          // exit status, or 128 + signal number
  bool signaled = false;  // ended by a signal (code is then 128 + it)
  std::string out;        // everything the child wrote to stdout
  std::string err;        // everything the child wrote to stderr
};
using Run = RunResult;  // the first name; outside TEST bodies only

struct RunOptions {
  std::string input;                // written to the child's stdin, then closed
  std::vector<std::string> env;     // NAME=VALUE entries added to (or replacing in) the test's environment
  std::string cwd;                  // working directory; empty: the test's own
  double timeout = 600;             // seconds before the child is killed
  bool new_process_group = false;   // the child leads a process group of its own, and a
                                    // kill (timeout, stop, destructor) reaches all of it
};

// Splits on runs of spaces: "exact --p 0.3" -> {"exact", "--p", "0.3"}.
std::vector<std::string> split_args(const std::string& line);

// Runs argv[0] (searched on PATH when it has no '/') with argv. A program
// that cannot be started is exit code 127, as in the shell.
RunResult run_program(const std::vector<std::string>& argv, const RunOptions& options = {});

// Runs the relsim executable under test with these arguments; under
// sanitizers, in-process when it can (run.cpp says when and why).
RunResult run_relsim(const std::vector<std::string>& args, const RunOptions& options = {});
RunResult run_relsim(const std::string& args, const RunOptions& options = {});

// The relsim executable's path, and the source tree's (for data files).
std::string relsim_exe();
std::string source_dir();

// The full path of `name` on PATH (as `command -v` finds it), or "" when
// there is none: for tests to say which prerequisite is missing.
std::string find_program(const std::string& name);

// A program left running (relsim serve, mpirun): its stdout is a pipe the
// test reads line by line; stdin is /dev/null and stderr is inherited (it
// shows in the test's log). The destructor sends SIGTERM (SIGKILL after
// 10 s) and reaps it unless wait() already did. Of RunOptions, env, cwd and
// new_process_group apply; input and timeout do not.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv, const RunOptions& options = {});
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of stdout without its newline; empty at end of file or
  // when no whole line came within `timeout` seconds.
  std::string read_line(double timeout = 30);
  // The rest of stdout, up to end of file or `timeout` seconds.
  std::string read_rest(double timeout = 30);
  // Sends `signal` (to the group with new_process_group) and waits; returns
  // the exit code (128 + signal if killed).
  int stop(int signal);
  // Waits for the child to exit by itself; returns its exit code.
  int wait();
  // After stop() or wait(): whether a signal ended it.
  bool signaled() const { return signaled_; }

 private:
  bool fill(double timeout);  // reads what is there into buffer_; false at end of file or timeout
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool group_ = false;
  bool reaped_ = false;
  bool signaled_ = false;
  int code_ = -1;
  std::string buffer_;
};

// Reads relsim serve's first line ("relsim serve: listening on
// http://127.0.0.1:PORT") and returns PORT, or -1 when it has none.
int port_from_banner(const std::string& line);

// True when the test runs under CI (CI=true): a skip is then a failure.
bool under_ci();

}  // namespace relsim::test

// Skips the test with a reason, except under CI=true, where a missing
// prerequisite fails it instead (CI must run everything). Use it for missing
// prerequisites only, in the test body (it returns from the function).
#define RELSIM_SKIP_OR_FAIL(reason)                                  \
  do {                                                               \
    if (::relsim::test::under_ci()) FAIL() << "CI=true: " << reason; \
    GTEST_SKIP() << reason;                                          \
  } while (0)
