#pragma once
// No version.cpp in the tree: the build writes it (sim/core/version_stamp.cmake).
// Which relsim this is: the project's version (CMakeLists.txt) and the git
// commit the build was made from ("unknown" outside a checkout, "-dirty"
// after it when tracked files had uncommitted changes). Both are written
// into a generated source at build time (sim/core/version_stamp.cmake), so
// an installed copy says what it was built from without its build tree.
#include <string_view>

namespace relsim {

std::string_view version();
std::string_view commit();

}  // namespace relsim
