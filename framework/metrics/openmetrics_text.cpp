#include "framework/metrics/openmetrics_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace tp {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricType;

std::string escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string number(double v) {
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (std::isnan(v)) return "NaN";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    // Shortest form that reads back the same (counts print as integers, 0.5e-6 as 5e-07).
    for (int digits = 1; digits < 17; ++digits) {
        char shorter[40];
        std::snprintf(shorter, sizeof shorter, "%.*g", digits, v);
        if (std::strtod(shorter, nullptr) == v) return shorter;
    }
    return buf;
}

// `name{labels,extra} value`
void write_sample(std::string& out, const std::string& name, const std::vector<ClientMetric::Label>& labels,
            const ClientMetric::Label* extra, double value) {
    out += name;
    if (!labels.empty() || extra != nullptr) {
        out += '{';
        bool first = true;
        for (const ClientMetric::Label& l : labels) {
            out += (first ? "" : ",") + l.name + "=\"" + escaped(l.value) + '"';
            first = false;
        }
        if (extra != nullptr) out += (first ? "" : ",") + extra->name + "=\"" + escaped(extra->value) + '"';
        out += '}';
    }
    out += ' ' + number(value) + '\n';
}

const char* type_name(MetricType t) {
    switch (t) {
        case MetricType::Counter: return "counter";
        case MetricType::Gauge: return "gauge";
        case MetricType::Histogram: return "histogram";
        case MetricType::Summary: return "summary";
        default: return "unknown";
    }
}

}  // namespace

std::string openmetrics_text(const std::vector<prometheus::MetricFamily>& families) {
    std::string out;
    for (const prometheus::MetricFamily& f : families) {
        std::string family = f.name;
        if (f.type == MetricType::Counter && family.size() > 6 && family.compare(family.size() - 6, 6, "_total") == 0)
            family.resize(family.size() - 6);
        out += "# TYPE " + family + ' ' + type_name(f.type) + '\n';
        if (!f.help.empty()) out += "# HELP " + family + ' ' + escaped(f.help) + '\n';
        for (const ClientMetric& m : f.metric) {
            switch (f.type) {
                case MetricType::Counter: write_sample(out, family + "_total", m.label, nullptr, m.counter.value); break;
                case MetricType::Gauge: write_sample(out, family, m.label, nullptr, m.gauge.value); break;
                case MetricType::Histogram:
                    for (const ClientMetric::Bucket& b : m.histogram.bucket) {
                        const ClientMetric::Label le{"le", number(b.upper_bound)};
                        write_sample(out, family + "_bucket", m.label, &le, double(b.cumulative_count));
                    }
                    write_sample(out, family + "_count", m.label, nullptr, double(m.histogram.sample_count));
                    write_sample(out, family + "_sum", m.label, nullptr, m.histogram.sample_sum);
                    break;
                default: write_sample(out, family, m.label, nullptr, m.untyped.value); break;
            }
        }
    }
    return out + "# EOF\n";
}

bool accepts_openmetrics(const char* accept) {
    return accept != nullptr && std::strstr(accept, "application/openmetrics-text") != nullptr;
}

}  // namespace tp
