// Writing a finished report to its file. The text goes to a temporary file next to the final
// path and is renamed over it at the end, so a reader (a browser reloading the page, a CI job
// picking up the JSON) never sees half a report, and a failure leaves an older report as it was.
#pragma once

#include <string>
#include <string_view>

#include "mmtune/result.h"

namespace mmtune {

// A directory that does not exist is kNotFound; anything else the OS refuses is kIo. Both name
// the path.
Status WriteReportFile(const std::string& path, std::string_view text);

}  // namespace mmtune
