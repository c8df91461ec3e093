// --input-tokens, --output-tokens, --price-in, --price-out and --break-at
// (billing_args.hpp): what a request costs, read strictly.
#include "relsim/options/billing_args.hpp"

#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "relsim/options/option_rules.hpp"

namespace relsim::cli {

std::optional<Billing> BillingArgs::parsed() const {
  if (!price_in_option->count()) return std::nullopt;
  Billing b = billing;
  if (!break_at.empty()) b.break_at = parse_break_at(break_at);
  if (cached_option != nullptr && cached_option->count()) {
    // Anthropic's prompt caching: a read at a tenth of the input price, a write (5-minute cache) at 1.25 times it.
    if (!cache_read_option->count()) b.cache_read = b.price_in / 10.0;
    if (!cache_write_option->count()) b.cache_write = 1.25 * b.price_in;
  } else {
    b.cached_tokens = 0.0;
  }
  validate(b);
  return b;
}

void add_billing_options(CLI::App& cmd, BillingArgs& args, bool cache) {
  auto* input = cmd.add_option("--input-tokens", args.billing.input_tokens,
                               "cost: input tokens of every request (the prompt with the context so far), a whole "
                               "number in [0, 1e9]");
  auto* output = cmd.add_option("--output-tokens", args.billing.output_tokens,
                                "cost: output tokens of a whole answer, a whole number in [0, 1e9]");
  args.price_in_option = cmd.add_option("--price-in", args.billing.price_in,
                                        "cost: USD per million input tokens, in [0, 1e6]; a request refused before the "
                                        "model starts is not billed (docs/model.md, Cost)");
  auto* price_out = cmd.add_option("--price-out", args.billing.price_out,
                                   "cost: USD per million output tokens, in [0, 1e6]");
  auto* break_at = cmd.add_option("--break-at", args.break_at,
                                  "cost: share of the answer streamed before each in-stream fault breaks it, "
                                  "KIND=FRACTION,... in [0, 1]; default where relsim's mock breaks it: "
                                  "cut=0.5,no_stop=1,malformed=0,overloaded=0,stall=0");
  const std::vector<CLI::Option*> all = {input, output, args.price_in_option, price_out, break_at};
  const std::string need = "the cost needs all four of --input-tokens, --output-tokens, --price-in and --price-out";
  const std::vector<CLI::Option*> four = {input, output, args.price_in_option, price_out};
  for (CLI::Option* option : all)
    for (const CLI::Option* other : four)
      if (option != other) needs_option(option, other, fmt::format("{}: {} is missing", need, other->get_name()));
  for (CLI::Option* option : {input, output})
    check_value<double>(option, [name = option->get_name()](double v) {
      Billing b;
      (name == "--input-tokens" ? b.input_tokens : b.output_tokens) = v;
      validate(b);
    });
  for (CLI::Option* option : {args.price_in_option, price_out})
    check_value<double>(option, [name = option->get_name()](double v) {
      Billing b;
      (name == "--price-in" ? b.price_in : b.price_out) = v;
      validate(b);
    });
  check_value<std::string>(break_at, [](const std::string& spec) { parse_break_at(spec); });
  if (!cache) return;
  args.cached_option = cmd.add_option("--cached-tokens", args.billing.cached_tokens,
                                      "cost: of --input-tokens, the prefix every request of a task repeats, cached by "
                                      "the provider after the task's first billed request, a whole number");
  args.cache_read_option = cmd.add_option("--cache-read", args.billing.cache_read,
                                          "cost: USD per million cached tokens read; default 0.1 x --price-in");
  args.cache_write_option = cmd.add_option("--cache-write", args.billing.cache_write,
                                           "cost: USD per million cached tokens written; default 1.25 x --price-in");
  needs_option(args.cached_option, args.price_in_option, "--cached-tokens needs the prices (--price-in, ...)");
  for (CLI::Option* one : {args.cache_read_option, args.cache_write_option})
    needs_option(one, args.cached_option, fmt::format("{} needs --cached-tokens", one->get_name()));
}

}  // namespace relsim::cli
