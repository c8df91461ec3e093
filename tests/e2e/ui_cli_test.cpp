// relsim ui as a command (the page itself: tests/browser): its first line
// names the address, its API answers with the command line's bytes, SIGTERM
// ends it with exit 0, and bad options are exit 2 with one line. A build
// without node and npm has no page: the command then refuses, saying so.
#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "relsim/ui/assets.hpp"
#include "support/raw_client.hpp"
#include "support/run.hpp"

namespace {

using relsim::test::run_relsim;
using relsim::test::RunResult;

// The body of GET target from 127.0.0.1:port (the server closes or sends a
// content-length; the test reads to the end of the headers and the body).
std::string get(int port, const std::string& target) {
  relsim::test::RawClient client(port);
  EXPECT_TRUE(client.connected);
  client.send("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
              "\r\nConnection: close\r\n\r\n");
  client.drain();
  const auto at = client.buf.find("\r\n\r\n");
  return at == std::string::npos ? client.buf : client.buf.substr(at + 4);
}

TEST(UiCli, ListensPrintsItsAddressAnswersAsTheCliAndStopsOnSigterm) {
  if (!relsim::ui::assets_built()) {
    const RunResult r = run_relsim("ui --port 0");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("built without node and npm"), std::string::npos) << r.err;
    return;
  }
  relsim::test::Background ui({relsim::test::relsim_exe(), "ui", "--port", "0", "--threads", "2"});
  const std::string banner = ui.read_line();
  const std::string head = "relsim ui: listening on http://127.0.0.1:";
  ASSERT_EQ(banner.rfind(head, 0), 0u) << banner;
  ASSERT_EQ(banner.back(), '/') << banner;
  const int port = std::stoi(banner.substr(head.size()));
  const std::string cli = run_relsim("exact --p=0.3 --q=0.8 --r=2 --n=2 --json").out;
  EXPECT_EQ(get(port, "/api/exact?p=0.3&q=0.8&r=2&n=2"), cli);
  EXPECT_EQ(ui.stop(SIGTERM), 0);
  EXPECT_FALSE(ui.signaled());
}

TEST(UiCli, BadOptionsAreOneLineAndExitTwo) {
  for (const char* args : {"ui --port 70000", "ui --threads 0", "ui --port 0 --bogus"}) {
    const RunResult r = run_relsim(std::string(args));
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": " << r.err;
  }
  EXPECT_NE(run_relsim("ui --port 70000").err.find("70000"), std::string::npos);
}

}  // namespace
