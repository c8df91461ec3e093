// The workbench's HTTP server over the real commands (relsim::run_command):
// each API path answers the very bytes the relsim executable prints for the
// same command line, and an out-of-range value is a 400 naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "live/ui_server_fixture.hpp"
#include "relsim/cli/cli.hpp"
#include "relsim/ui/ui_server.hpp"
#include "support/files.hpp"
#include "support/run.hpp"

namespace ui_server_commands_test {

using namespace relsim::test::ui_server;

// --- the real commands: the bytes relsim prints -----------------------------------

relsim::ui::CommandRunner real_runner() {
  return [](const Args& args, const CommandHooks& hooks) { return relsim::run_command(args, hooks); };
}

std::string cli_out(const std::string& args) {
  const auto run = relsim::test::run_relsim(args);
  EXPECT_EQ(run.code, 0) << args << ": " << run.err;
  return run.out;
}

TEST(UiServerCommands, ExactAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/exact?p=0.3&q=0.8&r=2&n=2");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, cli_out("exact --p 0.3 --q 0.8 --r 2 --n 2 --json"));
  EXPECT_EQ(fmt::format("{:.6f}", r.json()["success"].get<double>()), "0.763675");
}

TEST(UiServerCommands, SimulateAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/simulate?p=0.3&q=0.8&r=2&n=2&tasks=400&seed=20261001");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, cli_out("simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 400 --seed 20261001 --json"));
  EXPECT_EQ(r.json()["successes"], 310);
}

TEST(UiServerCommands, StreamResultIsTheCliJsonOnOneLine) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/simulate/stream?p=0.3&q=0.8&r=2&n=2&tasks=400&seed=20261001");
  EXPECT_EQ(r.status, 200);
  const auto events = events_of(r.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().first, "result");
  std::string cli = cli_out("simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 400 --seed 20261001 --json");
  while (!cli.empty() && cli.back() == '\n') cli.pop_back();
  EXPECT_EQ(events.back().second, cli);
}

TEST(UiServerCommands, SweepAnswersTheCliCsv) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/sweep?p=0.3&q=0.3,0.8&r=2&n=2&tasks=400&seed=20261001");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/csv; charset=utf-8");
  EXPECT_EQ(r.body, cli_out("sweep --p 0.3 --q 0.3,0.8 --r 2 --n 2 --tasks 400 --seed 20261001"));
  EXPECT_EQ(r.body.rfind("p,q,r,n,b,g,chain", 0), 0u) << r.body;
}

// The trend panel's endpoint: the history file posted as text, the answer
// the bytes of relsim contention trend --json over the same file; a line
// that is not a run is a 400 naming the line.
TEST(UiServerCommands, ContentionTrendAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const std::string file = relsim::test::source_dir() + "/data/notebooks/contention_history.jsonl";
  std::ifstream in(file);
  const std::string history((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(history.empty()) << file;
  const int port = server.port();
  const UiReply r = round_trip(port, ui_request("POST", "/api/contention/trend", port, Json{{"history", history}}.dump()));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_out("contention trend --history " + file + " --json"));
  EXPECT_EQ(r.json()["runs"].size(), 8u);
  // A history of many runs is a large body, as an audit's is (past the 64 KiB of other requests).
  const std::string longer = history + history + history;
  ASSERT_GT(longer.size(), 64u * 1024u);
  const UiReply many = round_trip(port, ui_request("POST", "/api/contention/trend", port, Json{{"history", longer}}.dump()));
  EXPECT_EQ(many.status, 200) << many.body.substr(0, 200);
  EXPECT_EQ(many.json()["runs"].size(), 24u);
  const UiReply bad =
      round_trip(port, ui_request("POST", "/api/contention/trend", port, Json{{"history", history + "{\"x\": 1}\n"}}.dump()));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("line 9 is not a line of relsim contention run --history: it has no scenario"),
            std::string::npos)
      << bad.body;
}

// The fit panel's endpoint: a generated plan posted as text, the answer
// the bytes of relsim fit FILE --json, with the panel's run lengths and
// exact line in it.
TEST(UiServerCommands, FitAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const auto plan = relsim::test::run_relsim("plan --p 0.1 --q 0.6 --n 20 --tasks 200 --seed 7 --max-requests 40");
  ASSERT_EQ(plan.code, 0) << plan.err;
  const std::string file = relsim::test::write_temp("ui-fit", "plan.jsonl", plan.out).string();
  const int port = server.port();
  const UiReply r = round_trip(port, ui_request("POST", "/api/fit?format=auto", port, Json{{"log", plan.out}}.dump()));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_out("fit " + file + " --json"));
  const Json j = r.json();
  EXPECT_EQ(j["exact_command"].get<std::string>().rfind("relsim exact --p ", 0), 0u) << j["exact_command"];
  ASSERT_FALSE(j["run_lengths"]["bad"].empty());
  EXPECT_EQ(j["run_lengths"]["bad"][0]["length"], 1);
  const UiReply bad = round_trip(port, ui_request("POST", "/api/fit?format=csv", port, Json{{"log", "x,y\n1,2\n"}}.dump()));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("\"error\""), std::string::npos) << bad.body;
}

// The explainer's endpoints: GET /api/plan answers the bytes of relsim plan
// (JSON Lines), and POST /api/oracle/plan runs relsim oracle over the
// posted plan, answering what the CLI prints for the same file.
TEST(UiServerCommands, PlanAndTheOracleOverItAnswerWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const int port = server.port();
  const std::string words = "--p 0.3 --q 0.8 --r 2 --n 2 --tasks 50 --seed 20261001 --max-requests 9";
  const UiReply plan = get(port, "/api/plan?p=0.3&q=0.8&r=2&n=2&tasks=50&seed=20261001&max-requests=9");
  EXPECT_EQ(plan.status, 200) << plan.body;
  EXPECT_EQ(plan.header("content-type"), "application/x-ndjson; charset=utf-8");
  EXPECT_EQ(plan.body, cli_out("plan " + words));
  const std::string file = relsim::test::write_temp("ui-oracle-plan", "plan.jsonl", plan.body).string();
  for (const char* policy : {"naive", "layered"}) {
    const UiReply r = round_trip(
        port, ui_request("POST", std::string("/api/oracle/plan?policy=") + policy, port, Json{{"plan", plan.body}}.dump()));
    EXPECT_EQ(r.status, 200) << r.body;
    // The CLI names its file; the endpoint's is a private temporary one.
    Json got = r.json();
    Json want = Json::parse(cli_out("oracle " + file + " --policy " + policy + " --json --per-task"));
    got.erase("plan");
    want.erase("plan");
    EXPECT_EQ(got, want) << policy;
    EXPECT_EQ(got["per_task"].size(), 50u);
  }
  const UiReply bad = get(port, "/api/plan?p=1.2&r=2&n=2");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("1.2"), std::string::npos) << bad.body;
  const UiReply garbage = round_trip(port, ui_request("POST", "/api/oracle/plan", port, Json{{"plan", "not a plan\n"}}.dump()));
  EXPECT_EQ(garbage.status, 400) << garbage.body;
}

// The tune panel's endpoint: the SDK-only search (what maxRetries reaches
// 0.99), the bytes relsim tune prints, with each point's SDK code.
TEST(UiServerCommands, TuneAnswersWhatTheCliPrints) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(),
                        "/api/tune?target=0.99&n=20&t-good=3600&t-bad=120&request-seconds=10&kinds=http_529%3D1&sdk=1");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, cli_out("tune --target 0.99 --n 20 --t-good 3600 --t-bad 120 --request-seconds 10 --kinds "
                            "http_529=1 --sdk --json"));
  const Json j = r.json();
  ASSERT_FALSE(j["front"].empty());
  for (const Json& pt : j["front"])
    EXPECT_NE(pt["snippets"]["typescript"].get<std::string>().find(fmt::format("maxRetries: {}", pt["s"].get<int>())),
              std::string::npos);
  const UiReply missing = get(server.port(), "/api/tune?target=0.99&n=20");
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.body.find("needs the parameter 't-good'"), std::string::npos) << missing.body;
  EXPECT_EQ(get(server.port(), "/api/tune?target=0.99&n=20&t-good=1&t-bad=1&force=1").status, 400);
}

// The fleet panel's endpoint: the 429 storm of 400 agents starting
// together against 240 requests a minute, the bytes of relsim fleet --json
// --series, whose series is the --csv file's, bin by bin.
TEST(UiServerCommands, FleetAnswersWhatTheCliPrintsAndItsSeriesIsTheCsv) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/fleet?agents=400&quota=240&r=4&duration=120&throttle=aws");
  EXPECT_EQ(r.status, 200) << r.body;
  const std::string csv = relsim::test::scratch("ui-fleet").string() + "/series.csv";
  std::filesystem::create_directories(relsim::test::scratch("ui-fleet"));
  EXPECT_EQ(r.body, cli_out("fleet --agents 400 --quota 240 --r 4 --duration 120 --throttle aws --json --series --csv " +
                            csv));
  const Json series = r.json()["series"];
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "t,sent,good,r429,r529,timeouts,started,finished,successes,goodput");
  std::size_t i = 0;
  for (; std::getline(in, line); ++i) {
    ASSERT_LT(i, series["t"].size());
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    ASSERT_EQ(cells.size(), 10u) << line;
    EXPECT_EQ(std::stod(cells[0]), series["t"][i].get<double>());
    EXPECT_EQ(std::stoll(cells[2]), series["good"][i].get<long long>());
    EXPECT_EQ(std::stoll(cells[3]), series["r429"][i].get<long long>());
    EXPECT_NEAR(std::stod(cells[9]), series["goodput"][i].get<double>(), 1e-6 * (1 + std::stod(cells[9])));
  }
  EXPECT_EQ(i, series["t"].size());
  EXPECT_GT(r.json()["rate_429"].get<double>(), 0.3);  // the storm
  EXPECT_EQ(get(server.port(), "/api/fleet?agents=20001").status, 400);
  EXPECT_EQ(get(server.port(), "/api/fleet?live=1").status, 400);
}

TEST(UiServerCommands, OracleCountsNineRequestsForNaiveUnderSlowHeaders) {
  UiServer server(config(), real_runner());
  const UiReply r = get(server.port(), "/api/oracle?fault=slow_headers&times=always&policy=naive&n=1&r=2");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body,
            cli_out("oracle --fault slow_headers --times always --policy naive --n 1 --r 2 --json --per-task"));
  EXPECT_EQ(r.json()["requests"], 9);
}

TEST(UiServerCommands, OutOfRangeValueIs400NamingIt) {
  UiServer server(config(), real_runner());
  expect_error(get(server.port(), "/api/exact?p=1.2&r=2&n=2"), 400, "1.2");
  expect_error(get(server.port(), "/api/exact?p=0.3&r=2&n=2&chain=sideways"), 400, "sideways");
}

}  // namespace ui_server_commands_test
