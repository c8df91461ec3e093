// Reading a log line by line in large blocks (read_common.hpp): one fread per
// few MiB and memchr for the line ends, so a 10^7-row CSV costs no more than
// its bytes, and nothing per line is allocated.
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "fit/read_common.hpp"
#include "relsim/core/error.hpp"

namespace relsim::fit {

namespace {
constexpr std::size_t kBlock = std::size_t{4} << 20;
}

LineReader::LineReader(const std::string& path) : path_(path), buffer_(kBlock) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw InputError(fmt::format("cannot open log '{}': {}", path, std::strerror(errno)));
  fill();
  if (end_ >= 3 && std::memcmp(buffer_.data(), "\xEF\xBB\xBF", 3) == 0) begin_ = 3;
}

LineReader::~LineReader() {
  if (file_) std::fclose(file_);
}

bool LineReader::fill() {
  if (eof_) return false;
  // Keep the unfinished line, at the front; a line longer than the buffer grows it.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const std::size_t got = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
  if (got == 0) {
    if (std::ferror(file_)) throw InputError(fmt::format("cannot read log '{}'", path_));
    eof_ = true;
    return false;
  }
  end_ += got;
  return true;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = 0;  // bytes of the current line already searched for '\n'
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const std::size_t have = end_ - begin_;
    const void* nl = have > scanned ? std::memchr(start + scanned, '\n', have - scanned) : nullptr;
    if (nl || (eof_ && have > 0)) {
      std::size_t len = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - start) : have;
      begin_ += nl ? len + 1 : len;
      if (len > 0 && start[len - 1] == '\r') --len;
      line = std::string_view(start, len);
      ++number_;
      return true;
    }
    if (eof_) return false;
    scanned = have;  // counted from the line's start, which fill() moves to the front
    fill();          // at the end of the file the loop returns the last unterminated line
  }
}

}  // namespace relsim::fit
