// Header only. Whether the code under test is instrumented by a sanitizer
// (scripts/sanitize.sh): under AddressSanitizer only the library and relsim
// are (RELSIM_ASAN_LIBRARY, CMakeLists.txt), under ThreadSanitizer the tests
// too. Tests whose cost is a count of replicates or tasks run fewer of them
// then: the sanitizer needs every code path taken, not the statistics, and
// the Release run keeps the full count and its assertions.
#pragma once

namespace relsim::test {

#if defined(RELSIM_ASAN_LIBRARY) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace relsim::test
