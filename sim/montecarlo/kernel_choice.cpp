// Which chunk kernel runs (simulate.hpp's Kernel; montecarlo/kernel.hpp's
// fresh_kernel): the one named, checked against this CPU, or the fastest it
// runs.
#include <fmt/format.h>

#include "relsim/core/error.hpp"
#include "montecarlo/kernel.hpp"

namespace relsim {

std::string_view kernel_name(Kernel k) {
  switch (k) {
    case Kernel::automatic: return "auto";
    case Kernel::scalar: return "scalar";
    case Kernel::avx2: return "avx2";
    case Kernel::avx512: return "avx512";
  }
  return "auto";
}

Kernel parse_kernel(std::string_view name) {
  for (const Kernel k : {Kernel::automatic, Kernel::scalar, Kernel::avx2, Kernel::avx512})
    if (name == kernel_name(k)) return k;
  throw InputError(fmt::format("kernel = '{}' is not one: give auto, scalar, avx2 or avx512", name.substr(0, 40)));
}

bool kernel_available(Kernel k) {
  if (k == Kernel::avx2) return detail::cpu_has_avx2();
  if (k == Kernel::avx512) return detail::cpu_has_avx512();
  return true;
}

namespace detail {

void check_available(Kernel k) {
  if (!kernel_available(k))
    throw InputError(fmt::format("kernel = {}: this CPU has no {} (give auto, scalar{})", kernel_name(k),
                                 k == Kernel::avx2 ? "AVX2" : "AVX-512", kernel_available(Kernel::avx2) ? " or avx2" : ""));
}

Kernel fresh_kernel(const DrawScheme& s, Kernel asked) {
  check_available(asked);
  if (asked == Kernel::scalar || !vector_scheme(s)) return Kernel::scalar;
  if (asked != Kernel::automatic) return asked;
  if (cpu_has_avx512()) return Kernel::avx512;
  return cpu_has_avx2() ? Kernel::avx2 : Kernel::scalar;
}

}  // namespace detail
}  // namespace relsim
