// OpenMetrics text (1.0.0) for metric families: what `/metrics` answers a scraper whose Accept
// header asks for `application/openmetrics-text` (Prometheus does when it can); everyone else
// gets prometheus-cpp's text format 0.0.4. The differences a scraper relies on: a counter's
// family is named without `_total` (its samples keep it), and the exposition ends in `# EOF`.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <vector>

namespace tp {

inline constexpr const char* kOpenMetricsType = "application/openmetrics-text; version=1.0.0; charset=utf-8";

std::string openmetrics_text(const std::vector<prometheus::MetricFamily>& families);

// Whether an HTTP Accept header asks for OpenMetrics.
bool accepts_openmetrics(const char* accept);

}  // namespace tp
