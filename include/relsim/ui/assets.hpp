#pragma once
// The workbench's page (index.html, its script and style), built at build
// time from sim/ui/web/ (npm ci, then esbuild) and compiled into the library,
// so `relsim ui` serves it offline with no second process and no CDN.
#include <span>
#include <string_view>

namespace relsim::ui {

struct Asset {
  std::string_view path;          // as requested: "/", "/assets/app.js", "/assets/app.css"
  std::string_view content_type;  // e.g. "text/html; charset=utf-8"
  std::string_view body;
};

// Every asset of the page. When the build had no node and npm, this is one
// page at "/" that says so, and assets_built() is false.
std::span<const Asset> assets();
bool assets_built();

// The asset served at this path, or nullptr.
const Asset* find_asset(std::string_view path);

}  // namespace relsim::ui
