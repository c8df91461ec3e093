#pragma once
// Reading and writing whole files. Output files are written atomically (a
// temporary file in the same folder, then rename), so a failed run leaves no
// half-written output.
#include <string>

namespace relsim {

// The whole file as bytes. Throws InputError "cannot open WHAT 'PATH'".
std::string read_file(const std::string& path, const std::string& what);

// Writes `text` to `path` through a temporary file in the same folder and a
// rename. Throws InputError naming the path when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

// A file that grows by one line a run (a history): checked before the run
// (that it can be opened for appending, or made in an existing folder; a
// new one is not made yet), then the line and its newline written in one
// write(2) to a descriptor opened with O_APPEND, so two runs appending at
// once never interleave their lines and a failed run adds nothing. Both
// throw InputError "cannot append to WHAT 'PATH': REASON".
void check_appendable(const std::string& path, const std::string& what);
void append_line(const std::string& path, const std::string& line, const std::string& what);

}  // namespace relsim
