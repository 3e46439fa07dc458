// Text files compiled into mmtune so that an HTML report needs nothing at run time: Chart.js from
// Debian's libjs-chart.js and the report page's own script and style. Each function is defined in
// a source file that reports/embed_text.cmake generates at build time from the file it names.
#pragma once

#include <string>

namespace mmtune {

std::string EmbeddedChartJs();       // Chart.js (UMD build), as installed by libjs-chart.js
std::string EmbeddedReportScript();  // reports/report_page.js
std::string EmbeddedReportStyle();   // reports/report_page.css

}  // namespace mmtune
