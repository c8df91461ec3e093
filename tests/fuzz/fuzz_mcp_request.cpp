// libFuzzer target: the MCP tools server's message handling
// (relsim/tools/mcp_service.hpp): one input is one POST /mcp body, fed
// to McpService::handle with faults drawn for every call (p = 0.5, all six
// kinds) and a real sandbox.
//
// Whatever the bytes, the answer must be 202 with no body, or 200 with one
// JSON-RPC 2.0 object that has exactly one of "result" and "error"; nothing
// may escape handle(); and nothing may be written beside the sandbox (its
// parent folder must hold the sandbox alone), whatever path a note_write
// names. A crash, a sanitizer report or a broken promise is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "relsim/tools/mcp_service.hpp"

namespace {

namespace fs = std::filesystem;

struct Fixture {
  fs::path parent;
  fs::path box;
  std::unique_ptr<relsim::tools::McpService> service;

  Fixture() {
    std::string name = (fs::temp_directory_path() / "relsim-fuzz-mcp-XXXXXX").string();
    if (!::mkdtemp(name.data())) std::abort();
    parent = name;
    box = parent / "box";
    relsim::Model model;
    model.p = 0.5;
    model.q = 0.5;
    relsim::tools::ToolsConfig config;
    config.sandbox = box;
    service = std::make_unique<relsim::tools::McpService>(
        config, relsim::tools::ToolFaultSource(model, relsim::tools::ToolFaultWeights{}, 20261203));
  }
  ~Fixture() {
    std::error_code ignored;
    fs::remove_all(parent, ignored);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Fixture& f = fixture();
  const relsim::tools::McpAnswer answer =
      f.service->handle(std::string_view(reinterpret_cast<const char*>(data), size));
  if (answer.status == 202) {
    if (!answer.body.empty()) std::abort();
  } else {
    if (answer.status != 200) std::abort();
    const auto reply = nlohmann::json::parse(answer.body, nullptr, false);
    if (reply.is_discarded() || !reply.is_object() || reply.value("jsonrpc", "") != "2.0") std::abort();
    if (reply.contains("result") == reply.contains("error")) std::abort();
    if (!reply.contains("id")) std::abort();
  }
  // Nothing beside the sandbox; the sandbox emptied for the next input.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(f.parent, ec))
    if (entry.path().filename() != "box") std::abort();
  for (const auto& entry : fs::directory_iterator(f.box, ec)) fs::remove_all(entry.path(), ec);
  return 0;
}
