// relsim fit over relsim proxy's recordings (docs/fit.md, docs/replay.md):
// a mock with its own bursty faults (its plan: p = 0.3, q = 0.8, in-stream
// and pre-response kinds, both dialects) is the upstream; a proxy that adds
// none records what it answered while relsim's client runs 200 tasks
// through it. Fitting the recording directory, which knows nothing of the
// plan, gives the same records, kinds and estimates as fitting the
// upstream's own request log, which names each request's entry.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "live_client_support.hpp"
#include "relsim/montecarlo/plan_gen.hpp"
#include "server_wire.hpp"
#include "support/files.hpp"
#include "support/run.hpp"

// Named, not anonymous: the live tests build as unity batches.
namespace relsim {
namespace fit_recording_live_test {

using namespace relsim::test::server_wire;

TEST(FitRecordingsLive, TheRecordingsFitAsTheUpstreamsOwnLog) {
  const std::filesystem::path dir = test::scratch("fit_recording_live");
  const std::filesystem::path log = dir / "upstream.jsonl", recordings = dir / "recordings";
  const Policy policy{.n = 3, .r = 2, .kind = PolicyKind::layered};
  SimConfig sim;
  sim.tasks = 200;
  sim.seed = 7;
  sim.kinds = parse_fault_weights("cut=1,no_stop=1,malformed=1,overloaded=1,http_529=1,http_500=1,reset=1");
  const Plan plan = generate_plan(Model{.p = 0.3, .q = 0.8}, policy, sim);
  {
    ServerConfig uc = config_with();
    uc.log_path = log.string();
    Server upstream(uc, plan);
    ServerConfig pc = config_with();
    pc.chain = RequestChainConfig{0.0, 0.0};  // the proxy adds no fault
    pc.upstream = parse_upstream(fmt::format("http://127.0.0.1:{}/t/{{task}}", upstream.port()));
    pc.record_dir = recordings.string();
    Server proxy(pc);
    ClientConfig client = test::live_client::config_for(policy, proxy.port());
    client.concurrency = 16;
    // No fault here waits out a timeout: long ones, so that no answer slowed
    // by a sanitizer is given up on (the proxy would record it cut short).
    client.timing.header_timeout = 5.0;
    client.timing.idle_timeout = 5.0;
    for (const Dialect d : {Dialect::anthropic, Dialect::openai}) {
      client.dialect = d;
      for (const LiveTask& t : run_live(client, d == Dialect::openai ? 100 : 0, 100))
        ASSERT_TRUE(proxy.wait_finished(t.task, static_cast<std::size_t>(t.requests), kLimit));
    }
  }
  const test::RunResult from_log = test::run_relsim({"fit", log.string(), "--json"});
  const test::RunResult from_dir = test::run_relsim({"fit", recordings.string(), "--json"});
  ASSERT_EQ(from_log.code, 0) << from_log.err;
  ASSERT_EQ(from_dir.code, 0) << from_dir.err;
  const Json a = Json::parse(from_log.out), b = Json::parse(from_dir.out);
  for (const char* key : {"records", "tasks", "p", "q", "p_ci", "q_ci", "run_lengths", "kinds"})
    EXPECT_EQ(a[key], b[key]) << key;
  EXPECT_GT(a["records"].get<int>(), 600);
  EXPECT_EQ(a["kinds"]["counts"].size(), 7u) << a["kinds"].dump();
}

}  // namespace fit_recording_live_test
}  // namespace relsim
