// The sweep grid's axes (grid.hpp): ranges, lists and the errors that name
// them. relsim sweep end to end is tests/e2e/sweep_test.cpp.
#include <gtest/gtest.h>

#include <vector>

#include "relsim/core/error.hpp"
#include "relsim/sweep/grid.hpp"

namespace {

TEST(Grid, RangesListsAndErrors) {
  EXPECT_EQ(relsim::parse_real_axis("0.05:0.5:0.05", "p").size(), 10u);
  EXPECT_EQ(relsim::parse_real_axis("0.05:0.5:0.05", "p")[2], 0.15);
  EXPECT_EQ(relsim::parse_integer_axis("1,2,4", "n"), (std::vector<long long>{1, 2, 4}));
  EXPECT_EQ(relsim::parse_integer_axis("0:10:5", "b"), (std::vector<long long>{0, 5, 10}));
  for (const char* bad : {"", "0.1,,0.2", "0.5:0.1:0.1", "0.1:0.5:0", "0.1:0.5", "abc", "0.1,0.1", "0:1e9:1e-9"})
    EXPECT_THROW(relsim::parse_real_axis(bad, "p"), relsim::InputError) << bad;
}

}  // namespace
