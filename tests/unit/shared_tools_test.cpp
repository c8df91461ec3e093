// The MCP tools server's shared tools without a network (docs/contention.md,
// "Shared tools"): the scratchpad's versions and compare-and-set, the
// semantic cache's embedding (against trigram counts worked by hand), locks
// and their TTL on a clock the test drives, the result queues' orders, the
// per-tenant quota's windows, and through McpService the tenant and agent of
// every log line, a collision between two tenants' keys and a 429.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "relsim/tools/mcp_service.hpp"
#include "relsim/tools/shared_tools.hpp"
#include "relsim/tools/tool_quota.hpp"
#include "support/files.hpp"
#include "support/input_error.hpp"

namespace relsim::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using relsim::test::input_error;

const Caller kAcme{"acme", "a1"}, kAcme2{"acme", "a2"}, kGlobex{"globex", "g1"};

json result_of(const SharedRun& r) {
  EXPECT_EQ(r.run.stage, ToolStage::done) << r.run.detail;
  return json::parse(r.run.text);
}

TEST(Scratchpad, VersionsCompareAndSetAndPrefixes) {
  SharedTools t({});
  EXPECT_EQ(result_of(t.run("scratch_get", {{"key", "k"}}, kAcme, 0, false)),
            json::parse(R"({"found":false,"value":null,"version":0})"));
  EXPECT_EQ(result_of(t.run("scratch_put", {{"key", "k"}, {"value", "one"}}, kAcme, 0, false))["version"], 1);
  EXPECT_EQ(result_of(t.run("scratch_put", {{"key", "k"}, {"value", "two"}}, kAcme, 0, false))["version"], 2);
  // Compare-and-set: the stale version loses and is told the current one.
  const SharedRun stale = t.run("scratch_cas", {{"key", "k"}, {"version", 1}, {"value", "x"}}, kAcme2, 0, false);
  EXPECT_EQ(result_of(stale), json::parse(R"({"stored":false,"version":2})"));
  EXPECT_EQ(stale.outcome, "conflict");
  EXPECT_EQ(result_of(t.run("scratch_cas", {{"key", "k"}, {"version", 2}, {"value", "three"}}, kAcme2, 0, false)),
            json::parse(R"({"stored":true,"version":3})"));
  EXPECT_EQ(result_of(t.run("scratch_cas", {{"key", "new"}, {"version", 0}, {"value", "v"}}, kAcme, 0, false))["version"], 1);
  EXPECT_EQ(result_of(t.run("scratch_get", {{"key", "k"}}, kAcme, 0, false))["value"], "three");
  for (const char* key : {"acme:b", "acme:a", "acmex", "glob:a"})
    t.run("scratch_put", {{"key", key}, {"value", ""}}, kAcme, 0, false);
  EXPECT_EQ(result_of(t.run("scratch_list", {{"prefix", "acme:"}}, kAcme, 0, false)),
            json::parse(R"({"keys":["acme:a","acme:b"],"more":false})"));
  EXPECT_EQ(result_of(t.run("scratch_list", {{"prefix", ""}}, kAcme, 0, false))["keys"].size(), 6u);
}

TEST(Scratchpad, AKeyWithoutTheTenantCollidesAndSaysSo) {
  SharedTools t({});
  t.run("scratch_put", {{"key", "memory:notes"}, {"value", "acme's"}}, kAcme, 0, false);
  const SharedRun over = t.run("scratch_put", {{"key", "memory:notes"}, {"value", "globex's"}}, kGlobex, 0, false);
  EXPECT_EQ(over.facts["other_tenant"], true);
  EXPECT_EQ(over.facts["owner"], "acme/a1");
  const SharedRun read = t.run("scratch_get", {{"key", "memory:notes"}}, kAcme, 0, false);
  EXPECT_EQ(result_of(read)["value"], "globex's");
  EXPECT_EQ(read.facts["other_tenant"], true);
  // Prefixed keys never meet.
  t.run("scratch_put", {{"key", "acme:memory:notes"}, {"value", "1"}}, kAcme, 0, false);
  EXPECT_EQ(t.run("scratch_get", {{"key", "acme:memory:notes"}}, kAcme2, 0, false).facts["other_tenant"], false);
}

TEST(Scratchpad, AHalfWrittenValueReadsBackUnmarkedAndTheLogKnows) {
  SharedTools t({});
  const SharedRun half = t.run("scratch_put", {{"key", "k"}, {"value", "abcdefgh"}}, kAcme, 0, true);
  EXPECT_EQ(half.run.stage, ToolStage::exec);
  EXPECT_EQ(half.outcome, "half_written");
  const SharedRun read = t.run("scratch_get", {{"key", "k"}}, kAcme2, 0, false);
  EXPECT_EQ(result_of(read)["value"], "abcd");
  EXPECT_EQ(read.facts["partial"], true);
  // A tool that writes nothing fails as with exec_error.
  EXPECT_EQ(t.run("scratch_get", {{"key", "k"}}, kAcme, 0, true).run.text, "Internal error");
}

TEST(SharedToolArguments, AreCheckedTerselyForTheClientAndFullyForTheLog) {
  SharedTools t({});
  const auto refused = [&](const char* tool, const json& args, const std::string& detail) {
    const SharedRun r = t.run(tool, args, kAcme, 0, false);
    EXPECT_EQ(r.run.stage, ToolStage::validate) << tool << " " << args;
    EXPECT_EQ(r.run.text, "Invalid arguments");
    EXPECT_NE(r.run.detail.find(detail), std::string::npos) << r.run.detail;
    EXPECT_EQ(r.outcome, "refused");
  };
  refused("scratch_get", json::object(), "missing parameter 'key'");
  refused("scratch_get", {{"key", ""}}, "1 to 256");
  refused("scratch_get", {{"key", std::string(257, 'k')}}, "257 bytes");
  refused("scratch_get", {{"key", 3}}, "must be a string, got integer");
  refused("scratch_put", {{"key", "k"}, {"value", "v"}, {"tenant", "x"}}, "unexpected parameter 'tenant'");
  refused("scratch_cas", {{"key", "k"}, {"version", -1}, {"value", "v"}}, "integer in [0, 9007199254740992], got -1");
  refused("scratch_cas", {{"key", "k"}, {"version", 1.5}, {"value", "v"}}, "got number");
  refused("lock_acquire", {{"name", "l"}, {"ttl_ms", 3'600'001}}, "[0, 3600000]");
  refused("cache_get", {{"scope", "s"}, {"query", ""}}, "'query' has 0 bytes");
  refused("job_submit", {{"queue", "q"}, {"input", std::string(16385, 'x')}}, "16385 bytes");
}

// The embedding worked by hand: "ab" is " ab " (trigrams " ab", "ab "), "abc"
// is " abc " (" ab", "abc", "bc "); sharing one trigram, their cosine is
// 1 / sqrt(2 * 3) when no two of those trigrams share a bucket.
TEST(SemanticCache, SimilarityIsTheCosineOfTrigramCounts) {
  EXPECT_NEAR(similarity(embed("ab"), embed("abc")), 1.0 / std::sqrt(6.0), 1e-6);
  EXPECT_NEAR(similarity(embed("Hello, World"), embed("hello world")), 1.0, 1e-6);  // case and punctuation
  EXPECT_NEAR(similarity(embed("abc"), embed("xyz")), 0.0, 1e-6);
  EXPECT_GT(similarity(embed("What is the refund policy for order 1234?"),
                       embed("what's the refund policy for order 1234")), 0.8);
}

TEST(SemanticCache, HitsWithinAScopeAndSeesAnotherTenantsAnswer) {
  SharedTools t({0.8, QueueOrder::fifo, 1});
  t.run("cache_put", {{"scope", "faq"}, {"query", "What is the refund policy for order 1234?"}, {"answer", "acme: 30 days"}},
        kAcme, 0, false);
  const SharedRun other = t.run("cache_get", {{"scope", "faq"}, {"query", "what's the refund policy for order 1234"}},
                                kGlobex, 0, false);
  EXPECT_EQ(result_of(other)["answer"], "acme: 30 days");
  EXPECT_EQ(other.outcome, "hit");
  EXPECT_EQ(other.facts["other_tenant"], true);
  EXPECT_EQ(t.run("cache_get", {{"scope", "globex:faq"}, {"query", "What is the refund policy for order 1234?"}},
                  kGlobex, 0, false).outcome, "miss");
  EXPECT_EQ(t.run("cache_get", {{"scope", "faq"}, {"query", "ship a parcel to Oslo"}}, kGlobex, 0, false).outcome,
            "miss");
}

TEST(Locks, BusyExpireOnTheirTtlAndReleaseByToken) {
  SharedTools t({});
  const json a = result_of(t.run("lock_acquire", {{"name", "doc"}, {"ttl_ms", 1000}}, kAcme, 0, false));
  EXPECT_EQ(a["acquired"], true);
  EXPECT_EQ(a["expires_in_ms"], 1000);
  const SharedRun busy = t.run("lock_acquire", {{"name", "doc"}, {"ttl_ms", 1000}}, kAcme2, 400, false);
  EXPECT_EQ(result_of(busy), json::parse(R"({"acquired":false,"token":null,"expires_in_ms":600})"));
  EXPECT_EQ(busy.outcome, "busy");
  // At its TTL the lock goes to the next to ask.
  const SharedRun taken = t.run("lock_acquire", {{"name", "doc"}, {"ttl_ms", 0}}, kAcme2, 1000, false);
  EXPECT_EQ(taken.outcome, "took_expired");
  EXPECT_EQ(taken.facts["expired_ms"], 0);
  // The first holder's release comes too late; the second's token works.
  EXPECT_EQ(t.run("lock_release", {{"name", "doc"}, {"token", a["token"]}}, kAcme, 1200, false).outcome, "not_held");
  const std::string token = result_of(taken)["token"];
  EXPECT_EQ(t.locks().held(1'000'000).size(), 1u);  // TTL 0: held for good
  EXPECT_EQ(t.run("lock_release", {{"name", "doc"}, {"token", token}}, kAcme2, 5000, false).outcome, "released");
  EXPECT_TRUE(t.locks().held(5000).empty());
  // A holder that releases after its TTL, before anyone took the lock over.
  const json b = result_of(t.run("lock_acquire", {{"name", "x"}, {"ttl_ms", 10}}, kAcme, 0, false));
  EXPECT_EQ(result_of(t.run("lock_release", {{"name", "x"}, {"token", b["token"]}}, kAcme, 11, false)),
            json::parse(R"({"released":true,"reason":"expired"})"));
}

std::vector<std::uint64_t> tickets_taken(SharedTools& t, const std::string& queue, int n) {
  for (int i = 0; i < n; ++i) t.run("job_submit", {{"queue", queue}, {"input", std::to_string(i)}}, kAcme, 0, false);
  std::vector<std::uint64_t> out;
  for (int i = 0; i <= n; ++i) {
    const json r = result_of(t.run("job_next", {{"queue", queue}}, kAcme, 0, false));
    if (r["ticket"].is_null()) break;
    EXPECT_EQ(r["result"], "result(" + r["input"].get<std::string>() + ")");
    out.push_back(r["ticket"]);
  }
  return out;
}

TEST(ResultQueues, FifoInOrderShuffledBySeedEachResultOnce) {
  SharedTools fifo({0.8, QueueOrder::fifo, 1});
  EXPECT_EQ(tickets_taken(fifo, "q", 5), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  SharedTools a({0.8, QueueOrder::shuffled, 7}), b({0.8, QueueOrder::shuffled, 7}), c({0.8, QueueOrder::shuffled, 8});
  const auto x = tickets_taken(a, "q", 20), y = tickets_taken(b, "q", 20), z = tickets_taken(c, "q", 20);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  EXPECT_EQ(std::set<std::uint64_t>(x.begin(), x.end()).size(), 20u);
  // A delivery older than the queue's newest ticket is marked stale.
  SharedTools s({0.8, QueueOrder::fifo, 1});
  s.run("job_submit", {{"queue", "q"}, {"input", "v1"}}, kAcme, 0, false);
  s.run("job_submit", {{"queue", "q"}, {"input", "v2"}}, kAcme, 0, false);
  EXPECT_EQ(s.run("job_next", {{"queue", "q"}}, kAcme, 0, false).facts["stale"], true);
  EXPECT_EQ(s.run("job_next", {{"queue", "q"}}, kAcme, 0, false).facts["stale"], false);
  EXPECT_EQ(s.run("job_next", {{"queue", "q"}}, kAcme, 0, false).outcome, "empty");
  EXPECT_NE(input_error([] { parse_queue_order("random"); }).find("fifo or shuffled"), std::string::npos);
}

TEST(ToolQuotaWindows, CountPerTenantAndSayWhenToRetry) {
  EXPECT_EQ(parse_quota("5000/3600").calls, 5000);
  EXPECT_EQ(parse_quota("5000/3600").window_ms, 3'600'000);
  EXPECT_EQ(parse_quota("3/0.5").window_ms, 500);
  for (const char* bad : {"0/60", "5000", "5000/0", "-1/60", "5/x", "5/60s", "1/100000"})
    EXPECT_NE(input_error([&] { parse_quota(bad); }).find("CALLS/SECONDS"), std::string::npos) << bad;
  ToolQuota q({3, 10'000});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(q.take("acme", 100).allowed);
  const QuotaDecision no = q.take("acme", 2'500);
  EXPECT_FALSE(no.allowed);
  EXPECT_EQ(no.retry_after_s, 8);  // 7.5 s left, rounded up
  EXPECT_TRUE(q.take("globex", 2'500).allowed);  // another tenant's count
  EXPECT_TRUE(q.take("acme", 10'000).allowed);   // the next window
}

class SharedServiceTest : public ::testing::Test {
 protected:
  McpService make(std::optional<QuotaSpec> quota = std::nullopt, std::vector<ToolFault> plan = {}) {
    dir = relsim::test::scratch("shared_tools") / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir);
    ToolsConfig c;
    c.sandbox = dir / "box";
    c.log = dir / "calls.jsonl";
    c.quota = quota;
    return McpService(c, ToolFaultSource(std::move(plan)));
  }
  static std::string call(const std::string& tool, const json& args) {
    return json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", args}}}}
        .dump();
  }
  std::vector<json> log() const {
    std::vector<json> out;
    std::ifstream in(dir / "calls.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
  fs::path dir;
};

TEST_F(SharedServiceTest, ListsTheSharedToolsAndLogsWhoTouchedWhat) {
  McpService s = make(std::nullopt, {ToolFault::ok, ToolFault::partial_write});
  const json list = json::parse(s.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})").body);
  std::vector<std::string> names;
  for (const json& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"note_write", "dump", "add", "scratch_get", "scratch_put", "scratch_cas",
                                             "scratch_list", "cache_put", "cache_get", "lock_acquire", "lock_release",
                                             "job_submit", "job_next"}));
  s.handle(call("scratch_put", {{"key", "notes"}, {"value", "acme plan"}}), kAcme);
  const McpAnswer half = s.handle(call("scratch_put", {{"key", "notes"}, {"value", "globex!"}}), kGlobex);
  EXPECT_EQ(json::parse(half.body)["result"]["isError"], true);
  s.handle(call("scratch_get", {{"key", "notes"}}), kAcme2);
  const auto lines = log();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["tenant"], "acme");
  EXPECT_EQ(lines[0]["agent"], "a1");
  EXPECT_EQ(lines[0]["key"], "notes");
  EXPECT_EQ(lines[0]["outcome"], "stored");
  EXPECT_EQ(lines[1]["fault"], "partial_write");
  EXPECT_EQ(lines[1]["outcome"], "half_written");
  EXPECT_EQ(lines[1]["facts"]["other_tenant"], true);  // globex wrote over acme's key
  EXPECT_EQ(lines[2]["facts"]["partial"], true);
  EXPECT_EQ(lines[2]["facts"]["owner"], "globex/g1");
}

TEST_F(SharedServiceTest, ATenantOverItsQuotaGets429AndNoFault) {
  McpService s = make(QuotaSpec{2, 3'600'000}, {ToolFault::ok, ToolFault::ok, ToolFault::exec_error});
  for (int i = 0; i < 2; ++i) EXPECT_EQ(s.handle(call("add", {{"a", 1}, {"b", 2}}), kAcme).status, 200);
  const McpAnswer refused = s.handle(call("add", {{"a", 1}, {"b", 2}}), kAcme2);
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.retry_after_s, 3600);
  EXPECT_EQ(json::parse(refused.body)["error"]["code"], -32029);
  EXPECT_NE(json::parse(refused.body)["error"]["message"].get<std::string>().find("tenant 'acme'"), std::string::npos);
  // Another tenant's call takes the next fault: the refused one took none.
  const McpAnswer other = s.handle(call("add", {{"a", 1}, {"b", 2}}), kGlobex);
  EXPECT_EQ(json::parse(other.body)["result"]["content"][0]["text"], "Internal error");
  const auto lines = log();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(lines[2]["call"].is_null());
  EXPECT_EQ(lines[2]["stage"], "quota");
  EXPECT_EQ(lines[2]["answer"], "http_429");
  EXPECT_EQ(lines[3]["call"], 2);
  EXPECT_EQ(s.calls(), 3u);
}

TEST_F(SharedServiceTest, RefusesABadThresholdOrQuota) {
  ToolsConfig c;
  c.sandbox = relsim::test::scratch("shared_tools") / "bad" / "box";
  c.shared.cache_threshold = 0.0;
  EXPECT_NE(input_error([&] { McpService(c, {}); }).find("(0, 1]"), std::string::npos);
  c.shared.cache_threshold = 0.5;
  c.quota = QuotaSpec{0, 1000};
  EXPECT_NE(input_error([&] { McpService(c, {}); }).find(">= 1"), std::string::npos);
}

}  // namespace
}  // namespace relsim::tools
