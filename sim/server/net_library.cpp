// Asio and Beast compiled once for the whole program. Both are header-only
// by default, which recompiles their non-template parts (the I/O context,
// sockets, error categories, the HTTP parser) in every file that includes
// them; with BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION (set for every target that links the
// library, sim/CMakeLists.txt) those parts are declared there and defined
// here, once. Boost's own way: boost/asio/impl/src.hpp, boost/beast/src.hpp,
// and boost/asio/ssl/impl/src.hpp for the TLS of relsim proxy's upstream.
#include <utility>  // before Asio: 1.74's awaitable.hpp uses std::exchange without it

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
