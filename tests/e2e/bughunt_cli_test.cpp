// relsim bughunt serve (docs/bughunt.md): the shop over raw HTTP, its cart's
// totals worked out here from the items it sends (487.00 with the
// quantities, 288.00 without: what the healthy and buggy pages show), its
// page and script, and what it refuses.
#include <gtest/gtest.h>

#include <signal.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "support/input_error_cli.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::RawClient;

// One GET (or `method`) on a fresh connection that asks to be closed: the whole reply.
std::string ask(int port, const std::string& target, const std::string& method = "GET") {
  RawClient c(port);
  c.send(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  c.drain();
  return c.buf;
}

using relsim::test::body_of;

TEST(BugHuntCli, ServesThePageItsScriptAndACartOf487) {
  relsim::test::Background shop({relsim::test::relsim_exe(), "bughunt", "serve", "--port", "0"});
  const std::string banner = shop.read_line(30);
  EXPECT_EQ(banner.rfind("relsim bughunt: listening on http://127.0.0.1:", 0), 0u) << banner;
  const int port = relsim::test::port_from_banner(banner);
  ASSERT_GT(port, 0);

  const std::string cart = ask(port, "/api/cart");
  EXPECT_EQ(cart.rfind("HTTP/1.1 200", 0), 0u) << cart;
  const nlohmann::json j = nlohmann::json::parse(body_of(cart));
  double total = 0.0, prices = 0.0;
  for (const auto& item : j["items"]) {
    total += item["price"].get<double>() * item["quantity"].get<int>();
    prices += item["price"].get<double>();
  }
  EXPECT_NEAR(total, 487.00, 1e-9);
  EXPECT_NEAR(prices, 288.00, 1e-9);

  const std::string page = ask(port, "/?v=buggy");
  EXPECT_EQ(page.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_NE(page.find("<script type=\"module\" src=\"/shop.js\"></script>"), std::string::npos);
  EXPECT_NE(page.find("content-security-policy"), std::string::npos);
  const std::string script = ask(port, "/shop.js");
  EXPECT_NE(script.find("text/javascript"), std::string::npos);
  EXPECT_NE(script.find("const TIMEOUT_MS = 1000;"), std::string::npos);

  EXPECT_EQ(ask(port, "/v1/messages").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(ask(port, "/api/cart", "POST").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(ask(port, "/api/exact?p=0.3").rfind("HTTP/1.1 404", 0), 0u);  // the workbench's API is not here
  EXPECT_EQ(shop.stop(SIGTERM), 0);
}

TEST(BugHuntCli, BadInputIsOneLineAndExitTwo) {
  relsim::test::expect_input_error("bughunt serve --port 70000", "port");
  relsim::test::expect_input_error("bughunt", "serve");
  // relsim bughunt run: every value is checked before a browser starts (the
  // driver folder here does not exist, so a run that got past them would fail
  // on it instead).
  const std::string run = "bughunt run --driver /nonexistent --p 0.1";
  relsim::test::expect_input_error("bughunt run --q 0.5", "--p");
  relsim::test::expect_input_error("bughunt run --driver /nonexistent --p 1.2", "p = 1.2");
  relsim::test::expect_input_error("bughunt run --p 0.1 --colour red", "--colour is not an option of relsim bughunt run");
  relsim::test::expect_input_error(run + " --reloads -1", "reloads = -1");
  relsim::test::expect_input_error(run + " --tester naive --reloads 2", "never reloads");
  relsim::test::expect_input_error(run + " --tester lazy", "'lazy'");
  relsim::test::expect_input_error(run + " --version broken", "'broken'");
  relsim::test::expect_input_error(run + " --kinds timeout=1", "'timeout'");
  relsim::test::expect_input_error(run + " --kinds reset=1,reset=1", "twice");
  relsim::test::expect_input_error(run + " --runs 0", "runs = 0");
  relsim::test::expect_input_error(run + " --runs 10001", "[1, 10000]");
  relsim::test::expect_input_error(run + " --workers 17", "workers = 17");
  relsim::test::expect_input_error(run + " --seed -1", "seed");
  relsim::test::expect_input_error(run + " --r 2", "--r");
  relsim::test::expect_input_error(run, "driver = '/nonexistent' has no runs.mjs");
}

}  // namespace
