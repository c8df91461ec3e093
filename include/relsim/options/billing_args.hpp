#pragma once
// The billing options (docs/model.md, Cost).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "relsim/core/billing.hpp"

namespace relsim::cli {

// --input-tokens --output-tokens --price-in --price-out --break-at: what a
// request costs (billing.hpp; docs/model.md, Cost), for exact.
struct BillingArgs {
  Billing billing;
  std::string break_at;
  CLI::Option* price_in_option = nullptr;
  CLI::Option *cached_option = nullptr, *cache_read_option = nullptr, *cache_write_option = nullptr;

  // The validated billing, or nullopt when no price was given. Throws
  // InputError for a bad value.
  std::optional<Billing> parsed() const;
};
// Declares the five options; any of them needs the other four but
// --break-at (whose default is the mock server's break positions). With
// `cache`, also --cached-tokens, --cache-read and --cache-write (their
// prices default to Anthropic's rates: 0.1 and 1.25 times --price-in).
void add_billing_options(CLI::App& cmd, BillingArgs& args, bool cache = true);

}  // namespace relsim::cli
