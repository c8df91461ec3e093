// relsim proxy over TLS (docs/proxy.md): an https:// upstream
// (tests/support/tls_upstream.py, Python's ssl module) whose certificate is
// signed by a CA this test makes with the openssl command. With that CA the
// stream comes through byte for byte; with another CA, or a certificate for
// another name, the hop fails verification and the client gets a 502 naming
// it; a CA file that does not load is refused before anything listens.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/formats/plan.hpp"
#include "server_wire.hpp"
#include "support/files.hpp"
#include "support/run.hpp"

namespace relsim {
namespace proxy_tls_test {

using namespace relsim::test::server_wire;
namespace fs = std::filesystem;

// openssl: a CA, a certificate it signs for the name localhost only, and another CA.
struct Pki {
  fs::path dir;
  std::string error;  // "" when made
  bool make(const std::string& tag) {
    dir = relsim::test::scratch(tag);
    const std::string d = dir.string();
    std::ofstream(dir / "san.ext") << "subjectAltName=DNS:localhost\n";
    const std::vector<std::vector<std::string>> steps = {
        {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/ca.key", "-out", d + "/ca.pem",
         "-days", "2", "-subj", "/CN=relsim test CA"},
        {"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/server.key", "-out", d + "/server.csr",
         "-subj", "/CN=localhost"},
        {"openssl", "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key",
         "-CAcreateserial", "-out", d + "/server.pem", "-days", "2", "-extfile", d + "/san.ext"},
        {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/other.key", "-out",
         d + "/other.pem", "-days", "2", "-subj", "/CN=another CA"}};
    for (const auto& argv : steps) {
      const relsim::test::RunResult r = relsim::test::run_program(argv);
      if (r.code != 0) {
        error = argv[1] + " " + argv[2] + ": " + r.err;
        return false;
      }
    }
    return true;
  }
};

Plan plan_of(const std::vector<std::string>& entries) {
  std::string list;
  for (const auto& e : entries) list += (list.empty() ? "\"" : ", \"") + e + "\"";
  return parse_plan(R"({"relsim_plan": 1, "tasks": 1, "source": "scripted", "n": 1, "b": 0, "g": 0})"
                    "\n"
                    R"({"task": 0, "requests": [)" + list + "]}\n",
                    "plan.jsonl");
}

std::string body_of(const Response& r) {
  std::string out;
  for (const auto& c : r.chunks) out += c;
  return out;
}

class ProxyTls : public ::testing::Test {
 protected:
  void SetUp() override {
    if (relsim::test::find_program("openssl").empty()) RELSIM_SKIP_OR_FAIL("the openssl command is not on PATH");
    if (relsim::test::find_program("python3").empty()) RELSIM_SKIP_OR_FAIL("python3 is not on PATH");
    ASSERT_TRUE(pki.make("proxy_tls")) << pki.error;
    upstream.emplace(std::vector<std::string>{"python3", relsim::test::source_dir() + "/tests/support/tls_upstream.py",
                                              (pki.dir / "server.pem").string(), (pki.dir / "server.key").string()});
    port = relsim::test::port_from_banner(upstream->read_line(10));
    ASSERT_GT(port, 0);
  }
  ServerConfig proxy_config(const std::string& host, const fs::path& ca) const {
    ServerConfig c = config_with();
    c.upstream = parse_upstream(fmt::format("https://{}:{}", host, port));
    c.upstream_ca = ca.string();
    c.upstream_timeout = std::chrono::milliseconds(5000);
    return c;
  }
  Pki pki;
  std::optional<relsim::test::Background> upstream;
  int port = 0;
};

TEST_F(ProxyTls, WithItsCaTheStreamComesThroughAndFaultsStillApply) {
  Server proxy(proxy_config("localhost", pki.dir / "ca.pem"), plan_of({"ok", "no_stop", "http_529"}));
  Client c(proxy.port());
  const Response ok = roundtrip(c, message(0));
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_TRUE(ok.complete);
  EXPECT_NE(body_of(ok).find("Hello "), std::string::npos);
  EXPECT_EQ(body_of(ok).substr(0, 21), "event: message_start\n");
  const Response no_stop = roundtrip(c, message(0));
  EXPECT_TRUE(no_stop.complete);
  EXPECT_EQ(body_of(no_stop).find("message_stop"), std::string::npos);
  EXPECT_EQ(body_of(no_stop), body_of(ok).substr(0, body_of(no_stop).size()));
  expect_api_error(roundtrip(c, message(0)), 529, "overloaded_error");
}

TEST_F(ProxyTls, AnotherCaIsRefusedWithA502ThatSaysWhy) {
  Server proxy(proxy_config("localhost", pki.dir / "other.pem"), plan_of({"ok"}));
  const Response r = one_request(proxy.port(), message(0));
  expect_api_error(r, 502, "api_error");
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("certificate verify failed"), std::string::npos)
      << r.body;
}

TEST_F(ProxyTls, ACertificateForAnotherNameIsRefused) {
  // The certificate names localhost only; the same server asked as 127.0.0.1.
  Server proxy(proxy_config("127.0.0.1", pki.dir / "ca.pem"), plan_of({"ok"}));
  const Response r = one_request(proxy.port(), message(0));
  expect_api_error(r, 502, "api_error");
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("certificate verify failed"), std::string::npos)
      << r.body;
}

TEST(ProxyTlsOptions, ACaFileThatDoesNotLoadIsRefusedBeforeListening) {
  ServerConfig c = config_with();
  c.upstream = parse_upstream("https://localhost:1");
  c.upstream_ca = relsim::test::source_dir() + "/README.md";
  EXPECT_THROW(Server(c, plan_of({"ok"})), InputError);
  c.upstream_ca = "/nonexistent/ca.pem";
  EXPECT_THROW(Server(c, plan_of({"ok"})), InputError);
}

}  // namespace proxy_tls_test
}  // namespace relsim
