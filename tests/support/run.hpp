// The one way tests run a program: the relsim executable (RELSIM_EXE), or
// another (mpirun, node, a shell pipeline) given as an argument vector. No
// shell is involved unless the program is /bin/sh, so arguments need no
// quoting. Output is captured whole; a child still running after `timeout`
// seconds is killed (SIGKILL) and reported as exit code 128 + 9.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace relsim::test {

struct Run {
  int code = -1;    // exit status, or 128 + signal number
  std::string out;  // everything the child wrote to stdout
  std::string err;  // everything the child wrote to stderr
};

struct RunOptions {
  std::string input;                  // written to the child's stdin, then closed
  std::vector<std::string> env;       // extra NAME=VALUE entries
  std::string cwd;                    // working directory; empty: the test's own
  double timeout = 600;               // seconds before the child is killed
};

// Splits on runs of spaces: "exact --p 0.3" -> {"exact", "--p", "0.3"}.
std::vector<std::string> split_args(const std::string& line);

// Runs argv[0] (searched on PATH when it has no '/') with argv.
Run run_program(const std::vector<std::string>& argv, const RunOptions& options = {});

// Runs the relsim executable under test with these arguments.
Run run_relsim(const std::vector<std::string>& args, const RunOptions& options = {});
Run run_relsim(const std::string& args, const RunOptions& options = {});

// The relsim executable's path, and the source tree's (for data files).
std::string relsim_exe();
std::string source_dir();

// A program left running (relsim serve, an MPI rank): its stdout is a pipe
// the test reads line by line; stderr is inherited. The destructor sends
// SIGTERM and reaps it unless wait() already did.
class Background {
 public:
  explicit Background(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of stdout without its newline; empty at end of file.
  std::string read_line();
  // Sends `signal` and waits; returns the exit status (128 + signal if killed).
  int stop(int signal);
  // Waits for the child to exit by itself.
  int wait();

 private:
  pid_t pid_ = -1;
  std::FILE* out_ = nullptr;
  bool reaped_ = false;
  int status_ = -1;
};

// Reads from relsim serve's first line ("... http://127.0.0.1:PORT ...") its port.
int port_from_banner(const std::string& line);

// True when the test runs under CI (CI=true): a skip is then a failure.
bool under_ci();

}  // namespace relsim::test

// Skips the test with a reason, except under CI=true, where a missing
// prerequisite fails it instead (CI must run everything).
#define RELSIM_SKIP_OR_FAIL(reason)                                  \
  do {                                                               \
    if (::relsim::test::under_ci()) FAIL() << "CI=true: " << reason; \
    GTEST_SKIP() << reason;                                          \
  } while (0)
