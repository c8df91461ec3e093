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

}  // namespace relsim
