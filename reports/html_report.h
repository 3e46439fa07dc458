// The HTML report: ONE self-contained page that opens offline. Chart.js, the page's script and
// style are compiled into mmtune (reports/CMakeLists.txt) and inlined; a Content-Security-Policy
// forbids every fetch, so the page cannot reach the network even by mistake. The machine
// section, the winners, bench and sessions tables are written here as HTML (every string from
// the DB or the bench file through `HtmlEscape`); the charts are drawn by the page's script from
// the JSON report embedded with `JsonForScript`.
#pragma once

#include <ostream>

#include "mmtune/result.h"
#include "reports/report_data.h"

namespace mmtune {

// Fails only when the stream does.
Status WriteHtmlReport(const ReportData& data, std::ostream& out);

}  // namespace mmtune
