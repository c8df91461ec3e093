// The content faults (docs/model.md, Content faults): max_tokens,
// bad_tool_args and duplicate_event, whole 200 streams whose answer is
// wrong, and stall_first, a stall before the first event. What each policy
// does with them (react through TaskRunner), and what relsim's client sees
// of them in each dialect (MessageStream's checks). The bytes written here
// are the wire's as docs/wire.md gives them, typed out, not the mock's.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "relsim/client/client.hpp"
#include "relsim/client/sse.hpp"
#include "relsim/core/error.hpp"
#include "relsim/core/faults.hpp"
#include "relsim/core/policy.hpp"
#include "relsim/exact/exact.hpp"

namespace relsim::content_faults_test {

constexpr FaultKind kContent[] = {FaultKind::max_tokens, FaultKind::bad_tool_args, FaultKind::duplicate_event};

// A task fed `requests` (nullopt good) until it ends; its outcome's name and request count.
std::pair<std::string, std::int64_t> run(const Policy& policy, std::initializer_list<std::optional<FaultKind>> requests) {
  TaskRunner t(policy);
  for (const auto& r : requests)
    if (!t.feed(r)) break;
  EXPECT_TRUE(t.ended()) << "the task outran its requests";
  return {t.outcome().name(), t.requests()};
}

TEST(ContentFaults, HaveTheirStagesAndNamesAndStayOutOfTheDefaultMix) {
  for (const FaultKind k : kContent) {
    EXPECT_EQ(stage_of(k), Stage::content) << to_string(k);
    EXPECT_TRUE(streams_answer(k));
    EXPECT_EQ(parse_fault_kind(to_string(k)), k);
  }
  EXPECT_EQ(stage_of(FaultKind::stall_first), Stage::in_stream);
  EXPECT_EQ(to_string(FaultKind::stall_first), "stall_first");
  // The reference experiment's mix is the five kinds cut .. stall, as before.
  EXPECT_EQ(to_string(FaultWeights::in_stream_uniform()), "cut=1,no_stop=1,malformed=1,overloaded=1,stall=1");
  // Appended at the end: the kinds' numbers, which the seeded draws use, are unchanged.
  EXPECT_EQ(static_cast<int>(FaultKind::http_400), 11);
  EXPECT_EQ(static_cast<int>(FaultKind::stall_first), 15);
}

TEST(ContentFaults, NaiveTakesEachAsItsAnswerAndTheTaskEndsPartialDone) {
  const Policy naive{.n = 2, .r = 2, .kind = PolicyKind::naive};
  for (const FaultKind k : kContent) {
    SCOPED_TRACE(to_string(k));
    EXPECT_EQ(run(naive, {k, std::nullopt}), (std::pair<std::string, std::int64_t>{"partial_done", 2}));
    EXPECT_EQ(run(naive, {std::nullopt, k}), (std::pair<std::string, std::int64_t>{"partial_done", 2}));
    // Taken, and then a fault that ends the task: the task ends as that fault says.
    EXPECT_EQ(run(naive, {k, FaultKind::overloaded}), (std::pair<std::string, std::int64_t>{"crash:overloaded", 2}));
    EXPECT_EQ(run(naive, {k, FaultKind::stall}), (std::pair<std::string, std::int64_t>{"hang", 2}));
  }
  EXPECT_EQ(run(naive, {std::nullopt, std::nullopt}), (std::pair<std::string, std::int64_t>{"done", 2}));
}

TEST(ContentFaults, LayeredRetriesWhatItsChecksSeeAndTakesADuplicatedEvent) {
  const Policy layered{.n = 1, .r = 1, .s = 2, .kind = PolicyKind::layered};
  for (const FaultKind k : {FaultKind::max_tokens, FaultKind::bad_tool_args}) {
    SCOPED_TRACE(to_string(k));
    EXPECT_EQ(run(layered, {k, std::nullopt}), (std::pair<std::string, std::int64_t>{"done", 2}));
    // The stream layer's r = 1 retry, not the HTTP layer's s = 2.
    EXPECT_EQ(run(layered, {k, k}), (std::pair<std::string, std::int64_t>("env_error:" + std::string(to_string(k)), 2)));
  }
  EXPECT_EQ(run(layered, {FaultKind::duplicate_event}), (std::pair<std::string, std::int64_t>{"partial_done", 1}));
  const Policy budgeted{.n = 1, .r = 3, .s = 0, .B = 2, .kind = PolicyKind::budgeted};
  EXPECT_EQ(run(budgeted, {FaultKind::max_tokens, FaultKind::max_tokens}),
            (std::pair<std::string, std::int64_t>{"env_error:max_tokens", 2}));
  EXPECT_EQ(run(budgeted, {FaultKind::max_tokens, FaultKind::duplicate_event}),
            (std::pair<std::string, std::int64_t>{"partial_done", 2}));
}

TEST(ContentFaults, SimpleRetriesEveryOneAsAFailedAttempt) {
  const Policy simple{.n = 1, .r = 1, .kind = PolicyKind::simple};
  for (const FaultKind k : kContent) {
    EXPECT_EQ(run(simple, {k, std::nullopt}), (std::pair<std::string, std::int64_t>{"done", 2}));
    EXPECT_EQ(run(simple, {k, k}), (std::pair<std::string, std::int64_t>("env_error:" + std::string(to_string(k)), 2)));
  }
}

TEST(ContentFaults, StallFirstHangsNaiveAndIsAStreamRetryUnderLayered) {
  EXPECT_EQ(run(Policy{.n = 1, .r = 2, .kind = PolicyKind::naive}, {FaultKind::stall_first}),
            (std::pair<std::string, std::int64_t>{"hang", 1}));
  EXPECT_EQ(run(Policy{.n = 1, .r = 1, .s = 2, .kind = PolicyKind::layered}, {FaultKind::stall_first, FaultKind::stall_first}),
            (std::pair<std::string, std::int64_t>{"env_error:stall_first", 2}));
}

TEST(ContentFaults, TheIndependentFormulaCountsADuplicateLayeredTakesAsNoSuccess) {
  // Independent faults: the closed form against the transfer matrix, with
  // the content kinds in the mix; layered takes a duplicate (never done).
  const FaultWeights kinds = parse_fault_weights("duplicate_event=1,max_tokens=2,cut=1,http_529=1");
  for (const PolicyKind kind : {PolicyKind::simple, PolicyKind::layered})
    for (const double p : {0.05, 0.3, 0.7}) {
      const Policy policy{.n = 3, .r = 2, .s = 1, .kind = kind};
      ExactOptions opt;
      opt.kinds = kinds;
      const double matrix = exact_matrix(Model{.p = p, .q = p}, policy, opt).success;
      const std::optional<double> formula = independent_success(p, policy, kinds);
      ASSERT_TRUE(formula.has_value());
      EXPECT_NEAR(*formula, matrix, 1e-12) << to_string(kind) << " p " << p;
    }
}

// ---- relsim's client: what a stream's checks see ------------------------------

std::string event(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

std::string anthropic(const std::string& middle, const std::string& stop_reason = "end_turn") {
  return event("message_start", R"({"type":"message_start","message":{"id":"m","content":[]}})") +
         event("content_block_start", R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})") +
         middle + event("content_block_stop", R"({"type":"content_block_stop","index":0})") +
         event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":")" + stop_reason +
                                    R"(","stop_sequence":null},"usage":{"output_tokens":5}})") +
         event("message_stop", R"({"type":"message_stop"})");
}

std::string text(const std::string& t) {
  return event("content_block_delta", R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" +
                                          t + R"("}})");
}

std::string tool_call(const std::string& head, const std::string& tail) {
  const auto piece = [](const std::string& p) {
    return event("content_block_delta",
                 R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":")" + p + R"("}})");
  };
  return event("content_block_start",
               R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"lookup","input":{}}})") +
         piece(head) + piece(tail) + event("content_block_stop", R"({"type":"content_block_stop","index":1})");
}

std::string chunk(const std::string& delta, const std::string& finish = "null") {
  return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" + delta +
         ",\"finish_reason\":" + finish + "}]}\n\n";
}

// The stream folded with `checks`: the kind a check threw, or nullopt; the stream's wrong().
struct Folded {
  std::optional<FaultKind> thrown, wrong;
  std::string text;
};
Folded fold(const std::string& bytes, Dialect dialect, AnswerChecks checks) {
  MessageStream m(dialect, checks);
  SseParser parser;
  Folded out;
  try {
    parser.feed(bytes, [&](const SseEvent& e) { m.on_event(e); });
    m.on_end();
  } catch (const StreamError& e) {
    out.thrown = e.kind();
  }
  out.wrong = m.wrong();
  out.text = m.text();
  return out;
}

TEST(ContentFaults, TheClientsChecksCatchTheTokenLimitAndBadToolArgumentsInBothDialects) {
  const std::string healthy = anthropic(text("Hello ") + text("world."));
  const std::string cut_at_limit = anthropic(text("Hello "), "max_tokens");
  const std::string bad_args = anthropic(text("Hello ") + text("world."), "tool_use");
  const std::string with_bad_tool = anthropic(text("Hello ") + text("world.") + tool_call(R"({\"city\": )", "Paris}"), "tool_use");
  const std::string with_good_tool = anthropic(text("Hi.") + tool_call(R"({\"city\": )", R"(\"Paris\"})"), "tool_use");
  const std::string doubled = anthropic(text("Hello ") + text("Hello ") + text("world."));
  for (const AnswerChecks checks : {AnswerChecks::none, AnswerChecks::stop_and_tools, AnswerChecks::all}) {
    SCOPED_TRACE(static_cast<int>(checks));
    const bool on = checks != AnswerChecks::none;
    EXPECT_EQ(fold(healthy, Dialect::anthropic, checks).thrown, std::nullopt);
    EXPECT_EQ(fold(healthy, Dialect::anthropic, checks).wrong, std::nullopt);
    EXPECT_EQ(fold(bad_args, Dialect::anthropic, checks).wrong, std::nullopt);  // tool_use with no tool block is no fault here
    EXPECT_EQ(fold(with_good_tool, Dialect::anthropic, checks).wrong, std::nullopt);
    const Folded limit = fold(cut_at_limit, Dialect::anthropic, checks);
    EXPECT_EQ(limit.wrong, FaultKind::max_tokens);
    EXPECT_EQ(limit.thrown, on ? std::optional(FaultKind::max_tokens) : std::nullopt);
    const Folded tool = fold(with_bad_tool, Dialect::anthropic, checks);
    EXPECT_EQ(tool.wrong, FaultKind::bad_tool_args);
    EXPECT_EQ(tool.thrown, on ? std::optional(FaultKind::bad_tool_args) : std::nullopt);
    const Folded twice = fold(doubled, Dialect::anthropic, checks);
    EXPECT_EQ(twice.wrong, FaultKind::duplicate_event);
    EXPECT_EQ(twice.thrown, checks == AnswerChecks::all ? std::optional(FaultKind::duplicate_event) : std::nullopt);
    if (!twice.thrown) { EXPECT_EQ(twice.text, "Hello Hello world."); }

    const std::string role = chunk(R"({"role":"assistant","content":""})");
    const std::string ok = role + chunk(R"({"content":"Hello "})") + chunk("{}", "\"stop\"") + "data: [DONE]\n\n";
    const std::string length = role + chunk(R"({"content":"Hello "})") + chunk("{}", "\"length\"") + "data: [DONE]\n\n";
    const std::string tools =
        role + chunk(R"({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"city\": "}}]})") +
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"Paris}"}}]})") + chunk("{}", "\"tool_calls\"") +
        "data: [DONE]\n\n";
    const std::string again = role + chunk(R"({"content":"Hello "})") + chunk(R"({"content":"Hello "})") +
                              chunk("{}", "\"stop\"") + "data: [DONE]\n\n";
    EXPECT_EQ(fold(ok, Dialect::openai, checks).wrong, std::nullopt);
    EXPECT_EQ(fold(ok, Dialect::openai, checks).thrown, std::nullopt);
    EXPECT_EQ(fold(length, Dialect::openai, checks).wrong, FaultKind::max_tokens);
    EXPECT_EQ(fold(length, Dialect::openai, checks).thrown, on ? std::optional(FaultKind::max_tokens) : std::nullopt);
    EXPECT_EQ(fold(tools, Dialect::openai, checks).wrong, FaultKind::bad_tool_args);
    EXPECT_EQ(fold(tools, Dialect::openai, checks).thrown, on ? std::optional(FaultKind::bad_tool_args) : std::nullopt);
    EXPECT_EQ(fold(again, Dialect::openai, checks).wrong, FaultKind::duplicate_event);
    EXPECT_EQ(fold(again, Dialect::openai, checks).thrown,
              checks == AnswerChecks::all ? std::optional(FaultKind::duplicate_event) : std::nullopt);
  }
}

TEST(ContentFaults, AHealthyAnswerThatRepeatsAShortOrBlankTokenIsNoDuplicate) {
  // Models repeat tokens: two "\n\n" deltas, or "ha" twice, are an answer.
  for (const std::string& token : {std::string("\\n\\n"), std::string("ha"), std::string("    ")}) {
    const Folded f = fold(anthropic(text(token) + text(token)), Dialect::anthropic, AnswerChecks::all);
    EXPECT_EQ(f.thrown, std::nullopt) << token;
    EXPECT_EQ(f.wrong, std::nullopt) << token;
  }
}

TEST(ContentFaults, TheClientsChecksSurviveOddToolCallFields) {
  // Fields of the wrong type are not the client's to crash on.
  const std::string odd = chunk(R"({"tool_calls":[{"index":"zero","function":{"arguments":7}}, 3]})") +
                          chunk("{}", "\"tool_calls\"") + "data: [DONE]\n\n";
  EXPECT_EQ(fold(odd, Dialect::openai, AnswerChecks::stop_and_tools).thrown, std::nullopt);
  const std::string odd_block =
      event("content_block_start", R"({"type":"content_block_start","index":"x","content_block":{"type":7}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":[1]})") +
      event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":5}})") +
      event("message_stop", R"({"type":"message_stop"})");
  const Folded f = fold(odd_block, Dialect::anthropic, AnswerChecks::all);
  EXPECT_EQ(f.thrown, std::nullopt);
  EXPECT_EQ(f.wrong, std::nullopt);
}

}  // namespace relsim::content_faults_test
