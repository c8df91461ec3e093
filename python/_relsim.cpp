// _relsim: the CPython module under `import relsim` (python/relsim/,
// docs/python.md). One relsim command runs in-process (cli.hpp,
// run_command: the very parsing and code of the command line), with the GIL
// released while it works; at each of its progress reports the GIL is taken
// back for a moment to look for Ctrl-C (and to call the caller's progress
// function), and either stops the command as the workbench's cancel does.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "relsim/cli/cli.hpp"
#include "relsim/core/error.hpp"
#include "relsim/ui/command.hpp"

namespace py = pybind11;

namespace {

// (code, stdout, message): the command's exit code, what it printed and, for
// a code other than 0, its one-line message. A pending Python exception (a
// KeyboardInterrupt from Ctrl-C, or one the progress function raised)
// cancels the command and is raised here once it has stopped.
py::tuple run(const std::vector<std::string>& args, const py::object& progress) {
  bool raised = false;
  relsim::ui::CommandHooks hooks;
  hooks.progress = [&](std::int64_t done, std::int64_t total) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      raised = true;  // the exception stays set in the interpreter
      throw relsim::Cancelled("interrupted");
    }
    if (progress.is_none()) return;
    try {
      progress(done, total);
    } catch (py::error_already_set& e) {
      e.restore();
      raised = true;
      throw relsim::Cancelled("the progress function raised");
    }
  };
  relsim::ui::CommandResult result;
  {
    py::gil_scoped_release release;
    result = relsim::run_command(args, hooks);
  }
  if (raised) throw py::error_already_set();
  return py::make_tuple(result.code, py::str(result.out), py::str(result.err));
}

}  // namespace

PYBIND11_MODULE(_relsim, m) {
  m.doc() = "relsim's commands in-process: the engine under the relsim package (import relsim)";
  m.def("run", &run, py::arg("args"), py::arg("progress") = py::none(),
        "Runs one relsim command, e.g. ['exact', '--p=0.3', '--json'], and returns (code, stdout, message).");
}
