// The JSON report: one document with "schema_version": 1 holding the machines, sessions, every
// tuned problem (winner, GFLOP/s, % of roofline, speed-up over the default, search history per
// session, parameter landscape) and the bench comparison. The schema is documented in
// docs/report.md; a change that renames or removes a field raises `kReportSchemaVersion`.
// The HTML report embeds this same document for its charts.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "reports/report_data.h"

namespace mmtune {

inline constexpr int kReportSchemaVersion = 1;

nlohmann::json ReportJson(const ReportData& data);

// Indented, with invalid UTF-8 from the DB replaced rather than thrown. Fails only when the
// stream does.
Status WriteJsonReport(const ReportData& data, std::ostream& out);

}  // namespace mmtune
