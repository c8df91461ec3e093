// find_asset over the table that the build generates (sim/ui/web/embed_assets.cmake
// writes assets() and assets_built() into the build folder); kept here so the
// generated file is data only.
#include "relsim/ui/assets.hpp"

namespace relsim::ui {

const Asset* find_asset(std::string_view path) {
  for (const Asset& asset : assets())
    if (asset.path == path) return &asset;
  return nullptr;
}

}  // namespace relsim::ui
