// Linked into every fuzz target: before the first input, the servers' last-
// resort catch (an exception that escaped a connection: a bug of ours) is
// made an abort, so that libFuzzer keeps the input as a crash. The tests
// link the same instrumented library without this file, and there the
// servers keep serving, as the released relsim does.
#include "relsim/core/error.hpp"

namespace {

const bool aborting = (relsim::abort_on_internal_errors(), true);

}  // namespace
