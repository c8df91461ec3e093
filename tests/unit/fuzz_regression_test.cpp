// What fuzzing (tests/fuzz, scripts/fuzz.sh) and the review around it found,
// each kept as a test of the behaviour that is right now. The inputs that
// crashed a fuzz target are also kept under tests/fuzz/regressions/TARGET/,
// where scripts/fuzz.sh replays them under ASan and UBSan. The findings that
// need the server over loopback or the relsim executable are
// tests/live/fuzz_regression_server_test.cpp and
// tests/e2e/fuzz_regression_cli_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "relsim/core/error.hpp"
#include "relsim/core/json.hpp"
#include "relsim/client/sse.hpp"
#include "relsim/formats/plan.hpp"
#include "relsim/server/server.hpp"
#include "relsim/sweep/grid.hpp"
#include "relsim/sweep/known_values.hpp"

namespace relsim {
namespace {

// A JSON array nested `depth` deep: a megabyte of it overflowed the stack of
// whatever serialised it recursively for an error message.
std::string nested_array(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// --- sweep axes (grid.hpp) ---------------------------------------------------

TEST(FuzzRegression, IntegerRangeOverTheWholeLongLongRangeDoesNotOverflow) {
  // start + 3 step passed 2^63 - 1 (signed overflow, UBSan) before.
  const auto v = parse_integer_axis("-9223372036854775808:9223372036854775807:4611686018427387904", "n");
  EXPECT_EQ(v, (std::vector<long long>{-4611686018427387904LL * 2, -4611686018427387904LL, 0, 4611686018427387904LL}));
}

TEST(FuzzRegression, IntegerRangeOfTwoToThe64ValuesIsRefusedNotEmpty) {
  EXPECT_THROW(parse_integer_axis("-9223372036854775808:9223372036854775807:1", "n"), InputError);
  EXPECT_THROW(parse_integer_axis("0:1000000:1", "n"), InputError);  // 1000001 values
  EXPECT_EQ(parse_integer_axis("1:1000000:1", "n").size(), kMaxAxisValues);
}

TEST(FuzzRegression, RealRangeThroughASubnormalValueIsAccepted) {
  // -1e-309 is subnormal: std::stod of its rounding threw std::out_of_range.
  const auto v = parse_real_axis("-4.4e-308:4.4e-308:4.3e-308", "p");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_LT(v[1], 0.0);
  EXPECT_GT(v[1], -1e-308);
}

TEST(FuzzRegression, RealRangeOfNineHundredThousandTinyStepsIsRefused) {
  // 1e-300 to 1e-299 in steps of 1e-305: 900,001 distinct values, each
  // rounded through its decimal text; the fuzzer timed out on it. A real
  // axis takes at most kMaxRealAxisValues.
  EXPECT_THROW(parse_real_axis("1e-300:1e-299:1e-305", "p"), InputError);
  EXPECT_EQ(parse_real_axis("0:0.99:0.01", "p").size(), 100u);
  EXPECT_EQ(parse_real_axis("0:0.99999:0.00001", "p").size(), kMaxRealAxisValues);
  EXPECT_THROW(parse_real_axis("0:1:0.00001", "p"), InputError);  // 100,001 values
  EXPECT_THROW(parse_real_axis("0.5,0.1:0.5:0.1", "p"), InputError);  // 0.5 twice, across items
}

TEST(FuzzRegression, RealRangeThatStepsToInfinityIsRefused) {
  // 0, s, 2s, 3s with 3s = inf: an infinite value came back before.
  EXPECT_THROW(parse_real_axis("0:1.7976931348623157e308:5.992310449541053e307", "p"), InputError);
}

// --- server-sent events (sse.hpp) ------------------------------------------------

TEST(FuzzRegression, SseEventOfManyShortDataLinesIsBounded) {
  // Each line is short, but without a blank line they used to pile up
  // without end (a naive client has no idle timeout to stop them).
  SseParser parser;
  const std::string line = "data: " + std::string(1000, 'x') + "\n";
  std::size_t lines = 0;
  EXPECT_THROW(
      {
        for (; lines < 20'000; ++lines) parser.feed(line, [](const SseEvent&) {});
      },
      std::length_error);
  EXPECT_EQ(lines, SseParser::kMaxEvent / 1001);  // 1000 bytes and a joining newline each
  // Just under the bound is still one event.
  std::string bytes;
  for (std::size_t i = 0; i < 16; ++i) bytes += "data: " + std::string((1 << 20) - 8, 'y') + "\n";
  const auto events = parse_sse(bytes + "\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data.size(), 16u * ((1 << 20) - 8) + 15);
}

// --- JSON in error messages --------------------------------------------------

TEST(FuzzRegression, JsonExcerptOfADeepValueNamesItWithoutRecursing) {
  const Json deep = Json::parse(nested_array(1'000'000));
  EXPECT_EQ(json_excerpt(deep), "(an array nested more than 32 deep)");
  EXPECT_EQ(json_excerpt(Json::parse(nested_array(32))), nested_array(32));
  EXPECT_EQ(json_excerpt(Json(std::string(500, 'x'))).size(), 203u);  // 200 characters and "..."
  EXPECT_EQ(json_excerpt(Json("a\xff")), "\"a\xEF\xBF\xBD\"");           // invalid UTF-8 replaced
}

// Built by parsing, never by copying: Json's copy constructor recurses too.
TEST(FuzzRegression, ScriptEntryNestedAMillionDeepIsAnInputError) {
  const std::string deep = nested_array(1'000'000);
  EXPECT_THROW(parse_script_entry(Json::parse(deep)), InputError);
  EXPECT_THROW(parse_script(Json::parse("[" + deep + "]")), InputError);
  for (const char* key : {"chunk_delay_ms", "slice_bytes", "bytes_per_second", "gate"}) {
    const Json entry = Json::parse("{\"kind\": \"ok\", \"" + std::string(key) + "\": " + deep + "}");
    EXPECT_THROW(parse_script_entry(entry), InputError) << key;
  }
}

// Found by fuzz_plan: nlohmann::json throws out_of_range (406), not
// parse_error, for a number past the doubles, and it escaped parse_plan.
TEST(FuzzRegression, PlanNumberPastTheDoublesIsAnInputError) {
  EXPECT_THROW(parse_plan("{\"relsim_plan\": 922337203685477580719223371e06854775807, \"tasks\": 1}\n"
                          "{\"task\": 0, \"requests\": []}\n",
                          "fuzz.plan"),
               InputError);
  EXPECT_THROW(parse_plan("{\"relsim_plan\": 1, \"tasks\": 1}\n{\"task\": 0, \"requests\": [\"ok\"], \"x\": -1e400}\n",
                          "fuzz.plan"),
               InputError);
}

TEST(FuzzRegression, PlanRequestNestedAMillionDeepIsAnInputError) {
  const std::string text =
      "{\"relsim_plan\": 1, \"tasks\": 1}\n{\"task\": 0, \"requests\": [" + nested_array(1'000'000) + "]}\n";
  EXPECT_THROW(parse_plan(text, "deep.plan"), InputError);
}

// --- known values ----------------------------------------------------------------

TEST(FuzzRegression, KnownValuesFromTextMatchTheFileReader) {
  const std::string path = std::string(RELSIM_SOURCE_DIR) + "/data/known_values.csv";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const auto from_file = read_known_values(path);
  const auto from_text = parse_known_values(text.str(), path);
  ASSERT_EQ(from_file.size(), from_text.size());
  for (std::size_t i = 0; i < from_file.size(); ++i) {
    EXPECT_EQ(from_file[i].line, from_text[i].line);
    EXPECT_EQ(from_file[i].expected, from_text[i].expected);
    EXPECT_EQ(from_file[i].source, from_text[i].source);
  }
  EXPECT_THROW(parse_known_values("", "empty.csv"), InputError);
}

}  // namespace
}  // namespace relsim
