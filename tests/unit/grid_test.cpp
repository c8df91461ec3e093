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

TEST(Grid, PolicyAxisIsAListOfWordsEachOnce) {
  EXPECT_EQ(relsim::parse_policy_axis("simple,layered"),
            (std::vector<relsim::PolicyKind>{relsim::PolicyKind::simple, relsim::PolicyKind::layered}));
  for (const char* bad : {"", "simple,", "bogus", "naive,naive"})
    EXPECT_THROW(relsim::parse_policy_axis(bad), relsim::InputError) << bad;
}

TEST(Grid, BackoffAxisSplitsWhereALetterStartsTheNextSchedule) {
  const auto axis = relsim::parse_backoff_axis("sdk,none,exp:1,30,0,list:1,2,4");
  ASSERT_EQ(axis.size(), 4u);
  EXPECT_EQ(relsim::to_string(axis[0]), "sdk");
  EXPECT_EQ(relsim::to_string(axis[1]), "none");
  EXPECT_EQ(axis[2].kind, relsim::Backoff::Kind::exp);
  EXPECT_EQ(axis[2].base, 1.0);
  EXPECT_EQ(axis[2].cap, 30.0);
  EXPECT_EQ(axis[2].jitter, 0.0);
  EXPECT_EQ(axis[3].list, (std::vector<double>{1, 2, 4}));
  // exp:0.5,8,0.25 is sdk: the same schedule twice.
  for (const char* bad : {"", "sdk,exp:0.5,8,0.25", "list:1,-2", "exp:0.5,8,1.5", "sdk,bogus", "1,2"})
    EXPECT_THROW(relsim::parse_backoff_axis(bad), relsim::InputError) << bad;
}

}  // namespace
