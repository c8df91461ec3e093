#pragma once
// Files for tests: a scratch folder per test process, the build folder,
// writing and reading whole files, and the tail of a long output for a
// failure message.
#include <cstddef>
#include <filesystem>
#include <string>

namespace relsim::test {

// A folder of this process's own (ctest may run test processes in parallel),
// made on first use and removed when the process ends: TMPDIR/relsim_{tag}.{pid}.
std::filesystem::path scratch(const std::string& tag);
// Writes `text` to scratch(tag)/name and returns the path.
std::filesystem::path write_temp(const std::string& tag, const std::string& name, const std::string& text);
// The folder the relsim under test was built in (relsim_exe()'s), where tests
// keep what outlives one run (installed packages, copied examples).
std::filesystem::path build_dir();
// The whole file ("" when it cannot be read).
std::string slurp(const std::filesystem::path& path);
// The last `lines` lines of `text`.
std::string tail(const std::string& text, std::size_t lines = 15);

}  // namespace relsim::test
