#pragma once
// Internal to the CLI: a program relsim starts and reads, line by line, from
// its standard output (`relsim bughunt run` drives the browser this way).
// Its standard input is /dev/null and its standard error is relsim's; no
// other descriptor of relsim's (a server's sockets, a log) is passed on.
#include <sys/types.h>

#include <string>
#include <vector>

namespace relsim::cli {

class ChildProcess {
 public:
  // Starts argv (argv[0] looked up on PATH) with `env` ("NAME=value") added
  // to this process's environment. Throws InputError naming the program when
  // it cannot be started.
  // With `own_group`, it leads a process group of its own, and signal()
  // reaches the programs it starts too.
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env, bool own_group = false);
  // A child still running is sent SIGTERM and waited for.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The next line of its output, without the newline; false at its end.
  bool read_line(std::string& line);
  // Waits for it to end: its exit code, or 128 + the signal that ended it.
  int wait();
  // Whether it has ended, without waiting; if so `code` is as wait() gives it
  // (and, with own_group, what it left running in its group is killed).
  bool ended(int& code);
  // Sends it (its group, with own_group) `signal` while it runs.
  void signal(int signal);
  // Reads what its output holds now without waiting, so that a program
  // that writes much is not blocked on a full pipe; read_line then gives it.
  void drain();

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buffer_;
  bool eof_ = false;
  bool group_ = false;
  int code_ = -1;
};

}  // namespace relsim::cli
