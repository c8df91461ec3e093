// relsim fit (docs/fit.md, Speed): 10^7 request records of a 2-state chain
// (p = 0.3, q = 0.8, 10^6 tasks of 10 requests) through ChainCounter and
// estimate in memory, and the same records as a 10^7-row CSV file (written
// once to a temporary file) through read_records, counted and fitted: the
// whole of `relsim fit log.csv` but the printing. Goal (issue 14): the CSV
// in under 5 s on 2 cores, memory independent of the number of records.
// Times in seconds; items are records.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "relsim/fit/counts.hpp"
#include "relsim/fit/estimate.hpp"
#include "relsim/fit/records.hpp"

namespace {

constexpr int kTasks = 1'000'000, kLength = 10;

// The chain's draws as one byte per record, task after task.
const std::vector<std::uint8_t>& draws() {
  static const std::vector<std::uint8_t> d = [] {
    std::vector<std::uint8_t> out;
    out.reserve(std::size_t(kTasks) * kLength);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double p = 0.3, q = 0.8, p0 = p * (1 - q) / (1 - p);
    for (int t = 0; t < kTasks; ++t) {
      int s = u(rng) < p;
      out.push_back(std::uint8_t(s));
      for (int i = 1; i < kLength; ++i) out.push_back(std::uint8_t(s = u(rng) < (s ? q : p0)));
    }
    return out;
  }();
  return d;
}

const std::vector<std::string>& task_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (int t = 0; t < kTasks; ++t) k.push_back("t" + std::to_string(t));
    return k;
  }();
  return keys;
}

void BM_CountAndEstimateInMemory(benchmark::State& state) {
  const auto& d = draws();
  const auto& keys = task_keys();
  for (auto _ : state) {
    relsim::fit::ChainCounter counter;
    relsim::fit::Record r;
    for (std::size_t i = 0; i < d.size(); ++i) {
      r.task = keys[i / kLength];
      r.order = std::int64_t(i % kLength);
      r.bad = d[i] != 0;
      r.kind = r.bad ? "cut" : "";
      counter.add(r);
    }
    benchmark::DoNotOptimize(relsim::fit::estimate(counter.counts()));
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(d.size()));
}
BENCHMARK(BM_CountAndEstimateInMemory)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

std::string csv_file() {
  static const std::string path = [] {
    const auto p = std::filesystem::temp_directory_path() / "relsim_bench_fit.csv";
    std::ofstream out(p);
    out << "task,request,outcome\n";
    const auto& d = draws();
    const auto& keys = task_keys();
    for (std::size_t i = 0; i < d.size(); ++i)
      out << keys[i / kLength] << ',' << i % kLength << ',' << (d[i] ? "cut" : "ok") << '\n';
    return p.string();
  }();
  return path;
}

void BM_ReadCsvCountAndEstimate(benchmark::State& state) {
  const std::string path = csv_file();
  for (auto _ : state) {
    relsim::fit::ChainCounter counter;
    relsim::fit::read_records(path, relsim::fit::Format::csv, [&](const relsim::fit::Record& r) { counter.add(r); });
    benchmark::DoNotOptimize(relsim::fit::estimate(counter.counts()));
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(draws().size()));
  state.counters["file_MB"] = double(std::filesystem::file_size(path)) / 1e6;
}
BENCHMARK(BM_ReadCsvCountAndEstimate)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::remove((std::filesystem::temp_directory_path() / "relsim_bench_fit.csv").c_str());
  return 0;
}
