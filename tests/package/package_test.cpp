// The Debian package (CPack, CMakeLists.txt): cpack in this build folder
// makes relsim_<version>_amd64.deb; unpacked outside the build tree, its
// relsim says which version and commit it is and runs the reference
// experiment, it names the shared libraries relsim links in Depends, and no
// file in it holds the path of the source or build tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/files.hpp"
#include "support/run.hpp"

namespace fs = std::filesystem;
using relsim::test::run_program;
using relsim::test::RunResult;

namespace {

// The build folder: the one relsim was built into (RELSIM_EXE = BUILD/relsim).
fs::path build_dir() { return fs::path(relsim::test::relsim_exe()).parent_path(); }

std::string project_version() {
  std::ifstream in(fs::path(relsim::test::source_dir()) / "CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  return std::regex_search(s, m, std::regex(R"(project\(relsim VERSION ([0-9.]+))")) ? m[1].str() : "";
}

std::string missing_tool() {
  for (const char* tool : {"cpack", "dpkg-deb", "dpkg-shlibdeps", "strings"})
    if (relsim::test::find_program(tool).empty())
      return std::string(tool) + " is not on PATH (scripts/install-deps.sh --tests installs cmake, dpkg-dev, binutils)";
  return "";
}

// Every file under `root` in which `needle` occurs (as `strings` shows it).
std::vector<std::string> files_holding(const fs::path& root, const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const RunResult s = run_program({"strings", "-a", entry.path().string()});
    if (s.out.find(needle) != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

}  // namespace

TEST(Package, DebInstallsARelsimThatRunsWithoutTheBuildTree) {
  if (const std::string why = missing_tool(); !why.empty()) RELSIM_SKIP_OR_FAIL(why);
  const std::string version = project_version();
  ASSERT_FALSE(version.empty()) << "no project(relsim VERSION ...) in CMakeLists.txt";
  const fs::path work = relsim::test::scratch("package");

  // cpack's own staging and output in a folder of the test's: the build
  // folder's package/ is left to whoever runs cpack by hand.
  const RunResult pack = run_program({"cpack", "--config", (build_dir() / "CPackConfig.cmake").string(), "-B",
                                      (work / "out").string()});
  ASSERT_EQ(pack.code, 0) << pack.out << pack.err;
  const fs::path deb = work / "out" / ("relsim_" + version + "_amd64.deb");
  ASSERT_TRUE(fs::exists(deb)) << "no " << deb << " after cpack:\n" << pack.out;

  // Depends names the libraries relsim links (read by dpkg-shlibdeps).
  const RunResult depends = run_program({"dpkg-deb", "--field", deb.string(), "Depends"});
  ASSERT_EQ(depends.code, 0) << depends.err;
  for (const char* lib : {"libc6", "libstdc++6", "libgomp1", "libfmt9"})
    EXPECT_NE(depends.out.find(lib), std::string::npos) << "Depends lacks " << lib << ": " << depends.out;

  const fs::path root = work / "root";
  const RunResult unpack = run_program({"dpkg-deb", "-x", deb.string(), root.string()});
  ASSERT_EQ(unpack.code, 0) << unpack.err;
  const fs::path relsim = root / "usr" / "bin" / "relsim";
  ASSERT_TRUE(fs::exists(relsim));
  EXPECT_TRUE(fs::exists(root / "usr/share/doc/relsim/README.md"));
  EXPECT_TRUE(fs::exists(root / "usr/share/doc/relsim/docs/model.md"));
  EXPECT_TRUE(fs::exists(root / "usr/share/doc/relsim/examples/harnesses/naive_loop.mjs"));
  EXPECT_FALSE(fs::exists(root / "usr/share/doc/relsim/examples/harnesses/node_modules"));

  // No path of the source or build tree in any file of the package.
  for (const fs::path& tree : {fs::path(relsim::test::source_dir()), build_dir()}) {
    const std::vector<std::string> holding = files_holding(root, fs::canonical(tree).string());
    EXPECT_TRUE(holding.empty()) << tree << " occurs in " << ::testing::PrintToString(holding);
  }

  // The unpacked relsim, started from elsewhere, with nothing of the build on its way.
  relsim::test::RunOptions elsewhere;
  elsewhere.cwd = work.string();
  const RunResult v = run_program({relsim.string(), "--version"}, elsewhere);
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(std::regex_match(v.out, std::regex("relsim " + std::regex_replace(version, std::regex("\\."), "\\.") +
                                                 R"( \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)\n)")))
      << v.out;
  const RunResult demo = run_program({relsim.string(), "demo", "--no-live"}, elsewhere);
  EXPECT_EQ(demo.code, 0) << demo.err;
  EXPECT_NE(demo.out.find("0.946729"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("0.763675"), std::string::npos) << demo.out;

  // import relsim from the package's dist-packages, by Debian's python3
  // (docs/python.md), when this build makes the module (RELSIM_PYTHON).
  std::ifstream cache(build_dir() / "CMakeCache.txt");
  const std::string settings((std::istreambuf_iterator<char>(cache)), std::istreambuf_iterator<char>());
  if (settings.find("\nRELSIM_PYTHON:BOOL=ON\n") == std::string::npos) return;
  const fs::path packages = root / "usr/lib/python3/dist-packages";
  ASSERT_TRUE(fs::exists(packages / "relsim/__init__.py"));
  relsim::test::RunOptions python = elsewhere;
  python.env = {"PYTHONPATH=" + packages.string()};
  const RunResult imported = run_program(
      {"/usr/bin/python3", "-c", "import relsim; print(round(relsim.exact(p=0.3, r=2, n=2)['success'], 6))"}, python);
  EXPECT_EQ(imported.code, 0) << imported.err;
  EXPECT_EQ(imported.out, "0.946729\n");
  // Its pytest plugin, registered for pytest to load with no -p.
  const RunResult plugins = run_program(
      {"/usr/bin/python3", "-c",
       "import importlib.metadata as m; print(sorted(e.value for e in m.entry_points(group='pytest11')))"},
      python);
  EXPECT_NE(plugins.out.find("relsim.pytest_plugin"), std::string::npos) << plugins.out << plugins.err;
}
