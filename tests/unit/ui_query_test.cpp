// The workbench's query strings (relsim/ui/query.hpp): every rule of
// parse_target, and each endpoint's allow-list as command_args applies it.
// The server answers any InputError here with 400 and its message, so the
// messages are checked too: one line, naming the value and what is valid.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/ui/query.hpp"
#include "support/input_error.hpp"

namespace {

using relsim::InputError;
using relsim::test::input_error;
using relsim::ui::command_args;
using relsim::ui::parse_target;
using Params = std::vector<std::pair<std::string, std::string>>;
using Args = std::vector<std::string>;

bool one_line(const std::string& message) { return message.find('\n') == std::string::npos && !message.empty(); }

// --- parse_target ---------------------------------------------------------------

TEST(UiParseTarget, SplitsPathAndParametersInOrder) {
  const auto t = parse_target("/api/exact?p=0.3&q=0.8&r=2&n=2");
  EXPECT_EQ(t.path, "/api/exact");
  EXPECT_EQ(t.params, (Params{{"p", "0.3"}, {"q", "0.8"}, {"r", "2"}, {"n", "2"}}));
}

TEST(UiParseTarget, NoQueryOrAnEmptyOneHasNoParameters) {
  EXPECT_TRUE(parse_target("/").params.empty());
  EXPECT_TRUE(parse_target("/api/exact?").params.empty());
  EXPECT_EQ(parse_target("/api/exact?").path, "/api/exact");
}

TEST(UiParseTarget, PercentDecodesPathKeysAndValues) {
  const auto t = parse_target("/api/%65xact?kinds=cut%3D1%2Cstall%3d2&t%2Dgood=3600");
  EXPECT_EQ(t.path, "/api/exact");
  EXPECT_EQ(t.params, (Params{{"kinds", "cut=1,stall=2"}, {"t-good", "3600"}}));
  EXPECT_EQ(parse_target("/?v=%C3%A9").params[0].second, "\xC3\xA9");  // bytes past ASCII pass through
}

TEST(UiParseTarget, PlusIsASpaceInTheQueryOnly) {
  const auto t = parse_target("/a+b?x=1+2&y=%2B");
  EXPECT_EQ(t.path, "/a+b");
  EXPECT_EQ(t.params, (Params{{"x", "1 2"}, {"y", "+"}}));
}

TEST(UiParseTarget, KeyWithoutEqualsHasAnEmptyValueAndValueMayHoldEquals) {
  EXPECT_EQ(parse_target("/api/audit?infer&s=2").params, (Params{{"infer", ""}, {"s", "2"}}));
  EXPECT_EQ(parse_target("/x?kinds=cut=1").params, (Params{{"kinds", "cut=1"}}));
  EXPECT_EQ(parse_target("/x?p=").params, (Params{{"p", ""}}));
}

TEST(UiParseTarget, RefusesBadPercentEscapes) {
  for (const char* t : {"/x?p=%", "/x?p=%4", "/x?p=%4g", "/x?p=%g4", "/%zz", "/x?%=1", "/x?p=0.3%"}) {
    const std::string m = input_error([&] { parse_target(t); });
    EXPECT_NE(m.find("percent escape"), std::string::npos) << t << ": " << m;
    EXPECT_TRUE(one_line(m)) << m;
  }
}

TEST(UiParseTarget, RefusesControlBytesRawOrDecoded) {
  for (const char* t : {"/x?p=%00", "/x?p=%0a", "/x?p=%7F", "/%0d", "/x?a%01=1", "/x?p=%1f"}) {
    const std::string m = input_error([&] { parse_target(t); });
    EXPECT_NE(m.find("control byte"), std::string::npos) << t << ": " << m;
    EXPECT_TRUE(one_line(m)) << m;
  }
  for (const std::string& t : {std::string("/x?p=1\n"), std::string("/x?p=1 2"), std::string("/x\0y", 4),
                              std::string("/x?p=\x7f"), std::string("/x?p=\xc3\xa9")}) {
    const std::string m = input_error([&] { parse_target(t); });
    EXPECT_NE(m.find("printable ASCII"), std::string::npos) << m;
    EXPECT_TRUE(one_line(m)) << m;
  }
}

TEST(UiParseTarget, RefusesATargetNotStartingWithASlash) {
  for (const char* t : {"", "api/exact", "http://127.0.0.1:1/api/exact", "*"})
    EXPECT_NE(input_error([&] { parse_target(t); }).find("does not start with '/'"), std::string::npos) << t;
}

TEST(UiParseTarget, RefusesEmptyKeys) {
  for (const char* t : {"/x?=1", "/x?p=1&", "/x?&p=1", "/x?p=1&&q=2", "/x?&"}) {
    const std::string m = input_error([&] { parse_target(t); });
    EXPECT_NE(m.find("empty name"), std::string::npos) << t << ": " << m;
  }
}

TEST(UiParseTarget, RefusesKeysThatAreNotOptionNames) {
  for (const char* t : {"/x?1p=1", "/x?-p=1", "/x?p_q=1", "/x?p.q=1", "/x?p%20q=1", "/x?%C3%A9=1",
                        "/x?abcdefghijklmnopqrstuvwxyz0123456=1"}) {
    const std::string m = input_error([&] { parse_target(t); });
    EXPECT_NE(m.find("[A-Za-z][A-Za-z0-9-]{0,31}"), std::string::npos) << t << ": " << m;
    EXPECT_TRUE(one_line(m)) << m;
  }
  // 32 characters is the longest name allowed.
  EXPECT_EQ(parse_target("/x?abcdefghijklmnopqrstuvwxyz012345=1").params.size(), 1u);
  EXPECT_EQ(parse_target("/x?t-good=1&B=2&a-=3").params.size(), 3u);
}

TEST(UiParseTarget, RefusesARepeatedKeyNamingIt) {
  const std::string m = input_error([] { parse_target("/api/exact?p=0.3&q=0.8&p=0.4"); });
  EXPECT_NE(m.find("'p' is given twice"), std::string::npos) << m;
  // Decoded names are compared, and case matters (B and b are two options).
  EXPECT_THROW(parse_target("/x?p=1&%70=2"), InputError);
  EXPECT_EQ(parse_target("/x?B=1&b=2").params.size(), 2u);
}

TEST(UiParseTarget, RefusesMoreThanTheMaximumOfParameters) {
  std::string t = "/x?";
  for (std::size_t i = 0; i < relsim::ui::kMaxParameters; ++i) t += (i ? "&k" : "k") + std::to_string(i) + "=1";
  EXPECT_EQ(parse_target(t).params.size(), relsim::ui::kMaxParameters);
  const std::string m = input_error([&] { parse_target(t + "&extra=1"); });
  EXPECT_NE(m.find("more than 64 parameters"), std::string::npos) << m;
}

TEST(UiParseTarget, RefusesATargetOverTheLimit) {
  const std::string base = "/api/exact?p=";
  const std::string at_limit = base + std::string(relsim::ui::kMaxTargetBytes - base.size(), '1');
  EXPECT_EQ(parse_target(at_limit).params[0].second.size(), relsim::ui::kMaxTargetBytes - base.size());
  const std::string m = input_error([&] { parse_target(at_limit + "1"); });
  EXPECT_NE(m.find("8193 bytes long: at most 8192"), std::string::npos) << m;
}

TEST(UiParseTarget, QuotesAClientsBytesSafelyAndShortly) {
  const std::string m = input_error([] { parse_target("/x?" + std::string(500, 'a') + "%ZZ"); });
  EXPECT_TRUE(one_line(m));
  EXPECT_LT(m.size(), 300u) << m;
}

// --- command_args ---------------------------------------------------------------

TEST(UiCommandArgs, MapsParametersToEqualsFormOptionsAndAppendsTheFixedOnes) {
  EXPECT_EQ(command_args("exact", {{"p", "0.3"}, {"q", "0.8"}, {"r", "2"}, {"n", "2"}}),
            (Args{"exact", "--p=0.3", "--q=0.8", "--r=2", "--n=2", "--json"}));
  // A value like -1 stays attached, so it reaches the command's range check.
  EXPECT_EQ(command_args("exact", {{"p", "-1"}}), (Args{"exact", "--p=-1", "--json"}));
  EXPECT_EQ(command_args("simulate", {{"tasks", "400"}, {"seed", "20261001"}}),
            (Args{"simulate", "--tasks=400", "--seed=20261001", "--json"}));
  EXPECT_EQ(command_args("oracle", {{"fault", "slow_headers"}, {"times", "always"}}),
            (Args{"oracle", "--fault=slow_headers", "--times=always", "--json", "--per-task"}));
  EXPECT_EQ(command_args("live", {{"fault", "stall"}, {"seed", "1"}}),
            (Args{"live", "--fault=stall", "--seed=1", "--json", "--timeline"}));
  EXPECT_EQ(command_args("sweep", {{"p", "0.1,0.2"}, {"q", "0.1:0.9:0.1"}}),
            (Args{"sweep", "--p=0.1,0.2", "--q=0.1:0.9:0.1"}));
  EXPECT_EQ(command_args("audit", {{"policy", "layered"}, {"infer", ""}}),
            (Args{"audit", "--policy=layered", "--infer", "--json", "--per-task"}));
  // The explainer's two: a plan on stdout, and the oracle over a posted plan
  // (its file, a positional, is added by the upload).
  EXPECT_EQ(command_args("plan", {{"p", "0.3"}, {"q", "0.8"}, {"tasks", "400"}, {"max-requests", "9"}}),
            (Args{"plan", "--p=0.3", "--q=0.8", "--tasks=400", "--max-requests=9"}));
  EXPECT_EQ(command_args("oracle/plan", {{"policy", "naive"}}),
            (Args{"oracle", "--policy=naive", "--json", "--per-task"}));
}

// Every name of each endpoint's allow-list in the contract maps to --name=value.
TEST(UiCommandArgs, EveryEndpointTakesEachNameOfItsAllowList) {
  const std::vector<std::pair<std::string, std::string>> lists = {
      {"exact", "p q r n b g chain policy s B kinds method distribution-work t-good t-bad request-seconds "
                "fault-seconds think-seconds backoff retry-after"},
      {"simulate", "p q r n b g chain policy s B kinds t-good t-bad request-seconds fault-seconds think-seconds "
                   "backoff retry-after tasks seed lanes interval confidence"},
      {"oracle", "fault times tasks policy n r s B connect-timeout header-timeout idle-timeout call-timeout "
                 "task-timeout backoff-base backoff-cap time-scale"},
      {"live", "fault times tasks policy n r s B connect-timeout header-timeout idle-timeout call-timeout "
               "task-timeout backoff-base backoff-cap time-scale seed"},
      {"sweep", "p q r n b g chain policy s B kinds tasks seed lanes interval confidence t-good t-bad "
                "request-seconds think-seconds backoff retry-after fault-seconds"},
      {"audit", "policy s r B n wait-tolerance backoff-base backoff-cap time-scale"},
  };
  for (const auto& [endpoint, names] : lists) {
    std::size_t start = 0;
    while (start < names.size()) {
      const std::size_t end = std::min(names.find(' ', start), names.size());
      const std::string name = names.substr(start, end - start);
      start = end + 1;
      Params params = {{name, "1"}};
      if (name != "fault" && (endpoint == "oracle" || endpoint == "live")) params.push_back({"fault", "cut"});
      const Args args = command_args(endpoint, params);
      ASSERT_GE(args.size(), 2u);
      EXPECT_EQ(args[0], endpoint);
      EXPECT_EQ(args[1], "--" + name + "=1") << endpoint;
    }
  }
}

// Names that another endpoint takes are still unknown here.
TEST(UiCommandArgs, EachEndpointRefusesTheOthersNames) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"exact", "tasks"},   {"exact", "fault"},  {"simulate", "method"}, {"simulate", "distribution-work"},
      {"oracle", "seed"},   {"oracle", "p"},     {"live", "q"},          {"sweep", "method"},
      {"sweep", "infer"},   {"audit", "tasks"},  {"audit", "fault"},     {"exact", "strict"},
  };
  // Plain references, not a structured binding: clang 14 (the TSan and fuzz
  // builds) refuses a lambda's capture of one.
  for (const auto& pair : refused) {
    const std::string& endpoint = pair.first;
    const std::string& name = pair.second;
    const std::string m = input_error([&] { command_args(endpoint, {{name, "1"}, {"fault", "cut"}}); });
    EXPECT_NE(m.find("unknown parameter '" + name + "' for /api/" + endpoint), std::string::npos) << m;
  }
}

TEST(UiCommandArgs, UnknownParameterNamesTheEndpointAndWhatItTakes) {
  const std::string m = input_error([] { command_args("exact", {{"p", "0.3"}, {"x", "1"}}); });
  EXPECT_EQ(m.rfind("unknown parameter 'x' for /api/exact: it takes p, q, r, n, b, g, chain, policy, s, B, kinds, "
                    "method, distribution-work, t-good",
                    0),
            0u)
      << m;
  EXPECT_TRUE(one_line(m));
  EXPECT_NE(input_error([] { command_args("audit", {{"tasks", "1"}}); }).find("for /api/audit: it takes policy"),
            std::string::npos);
}

TEST(UiCommandArgs, FixedAndFileOptionsCannotBeGivenByTheClient) {
  for (const char* endpoint : {"exact", "simulate", "oracle", "live", "sweep", "audit"})
    for (const char* name : {"json", "per-task", "timeline", "csv", "out", "seconds-csv", "hidden-chain", "plan",
                             "log", "threads", "outcomes", "max-length"}) {
      const std::string m = input_error([&] { command_args(endpoint, {{name, "1"}}); });
      EXPECT_NE(m.find(std::string("unknown parameter '") + name + "' for /api/" + endpoint), std::string::npos)
          << m;
    }
}

TEST(UiCommandArgs, FlagsTakeEmptyOneOrTrueOnly) {
  for (const char* v : {"", "1", "true"}) {
    EXPECT_EQ(command_args("sweep", {{"strict", v}}), (Args{"sweep", "--strict"}));
    EXPECT_EQ(command_args("audit", {{"no-wait-check", v}}), (Args{"audit", "--no-wait-check", "--json", "--per-task"}));
  }
  for (const char* v : {"0", "false", "yes", "TRUE", " 1", "2"}) {
    const std::string m = input_error([&] { command_args("audit", {{"infer", v}}); });
    EXPECT_NE(m.find("is a flag: its value must be empty, 1 or true, not '" + std::string(v) + "'"),
              std::string::npos)
        << m;
  }
}

TEST(UiCommandArgs, AnOptionNeedsAValue) {
  const std::string m = input_error([] { command_args("exact", {{"p", ""}}); });
  EXPECT_NE(m.find("'p' of /api/exact needs a value"), std::string::npos) << m;
}

TEST(UiCommandArgs, UnknownEndpointIsRefusedNamingTheKnownOnes) {
  const std::string m = input_error([] { command_args("serve", {}); });
  EXPECT_NE(m.find("unknown endpoint 'serve': the endpoints are exact, simulate, oracle, live, sweep, audit"),
            std::string::npos)
      << m;
}

TEST(UiCommandArgs, WorkIsBoundedPerEndpoint) {
  EXPECT_NO_THROW(command_args("simulate", {{"tasks", "10000000"}}));
  EXPECT_NO_THROW(command_args("sweep", {{"tasks", "0"}}));
  EXPECT_NO_THROW(command_args("live", {{"fault", "cut"}, {"tasks", "20"}}));
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"simulate", "10000001", "[1, 10000000]"}, {"simulate", "0", "[1, 10000000]"},
      {"simulate", "1e9", "[1, 10000000]"},      {"simulate", "0x10", "[1, 10000000]"},
      {"sweep", "1000001", "[0, 1000000]"},      {"live", "21", "[1, 20]"},
      {"oracle", "100001", "[1, 100000]"},       {"simulate", "99999999999999999999", "[1, 10000000]"},
      {"plan", "20001", "[1, 20000]"},           {"plan", "0", "[1, 20000]"},
  };
  for (const auto& c : cases) {
    const auto& [endpoint, tasks, range] = c;
    Params params = {{"tasks", tasks}};
    if (endpoint == "live" || endpoint == "oracle") params.push_back({"fault", "cut"});
    const std::string m = input_error([&] { command_args(std::get<0>(c), params); });
    EXPECT_NE(m.find("tasks = '" + tasks + "' is out of range for /api/" + endpoint), std::string::npos) << m;
    EXPECT_NE(m.find(range), std::string::npos) << m;
  }
}

TEST(UiCommandArgs, OracleAndLiveNeedAFault) {
  for (const char* endpoint : {"oracle", "live"}) {
    const std::string m = input_error([&] { command_args(endpoint, {{"times", "once"}}); });
    EXPECT_NE(m.find("needs the parameter 'fault'"), std::string::npos) << m;
  }
}

TEST(UiCommandArgs, MessagesQuoteOddBytesEscaped) {
  const std::string m = input_error([] { command_args("exact", {{std::string("x\n\xff", 3), "1"}}); });
  EXPECT_NE(m.find("'x\\x0a\\xff'"), std::string::npos) << m;
  EXPECT_TRUE(one_line(m));
}

}  // namespace
