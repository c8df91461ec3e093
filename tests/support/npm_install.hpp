#pragma once
// npm packages for tests (the official SDK, the example harnesses,
// playwright-core): pinned by a committed package-lock.json and installed
// with `npm ci --ignore-scripts` into the build folder, never the sources.
// No install scripts run: none of these packages needs one, and a browser's
// download is exactly what must not happen.
#include <filesystem>
#include <string>
#include <vector>

namespace relsim::test {

// Copies `files` of `source` (every regular file when empty) into `dir` and
// installs the packages its package-lock.json pins, unless node_modules
// already holds that very lock (a copy of the lock installed last is kept
// there, so a run with the packages in place needs no network). Under a file
// lock: ctest may run such tests side by side. `package` names one installed
// package whose presence shows the install worked. Returns "" on success,
// else why not (node or npm missing, npm ci failed), for RELSIM_SKIP_OR_FAIL.
std::string npm_install(const std::filesystem::path& source, const std::filesystem::path& dir,
                        const std::vector<std::string>& files, const std::string& package);

// The version of an installed package of `dir`'s node_modules ("?" if unknown).
std::string npm_version(const std::filesystem::path& dir, const std::string& package);

}  // namespace relsim::test
