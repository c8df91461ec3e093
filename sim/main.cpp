// The relsim executable: everything lives in the library; main only hands
// the command line to it.
#include "relsim/cli/cli.hpp"

int main(int argc, char** argv) { return relsim::run_cli(argc, argv); }
