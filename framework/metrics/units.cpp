#include "framework/metrics/units.hpp"

#include <cmath>
#include <cstdio>

namespace tp {

namespace {
struct Unit {
    double scale;
    const char* name;
};

// The largest unit the value reaches once rounded to four significant digits (999.96 pps is
// "1.000 kpps", not "1000.0 pps"); the smallest unit below that.
template <size_t N>
std::string scaled(double v, const Unit (&units)[N], const char* zero) {
    if (!(v > 0) || !std::isfinite(v)) return zero;
    const Unit* u = &units[N - 1];
    for (const Unit& c : units)
        if (v >= c.scale * 0.99995) {
            u = &c;
            break;
        }
    const double x = v / u->scale;
    const int decimals = x >= 99.995 ? 1 : x >= 9.9995 ? 2 : 3;
    char s[64];
    std::snprintf(s, sizeof s, "%.*f %s", decimals, x, u->name);
    return s;
}
}  // namespace

std::string format_packet_rate(double pps) {
    static const Unit units[] = {{1e9, "Gpps"}, {1e6, "Mpps"}, {1e3, "kpps"}, {1, "pps"}};
    return scaled(pps, units, "0 pps");
}

std::string format_bit_rate(double bps) {
    static const Unit units[] = {{1e12, "Tb/s"}, {1e9, "Gb/s"}, {1e6, "Mb/s"}, {1e3, "kb/s"}, {1, "b/s"}};
    return scaled(bps, units, "0 b/s");
}

std::string format_duration(double s) {
    static const Unit units[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
    return scaled(s, units, "0 s");
}

std::string format_count(uint64_t n) {
    if (n < 1000000) return std::to_string(n);
    static const Unit units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}};
    return scaled(double(n), units, "0");
}

}  // namespace tp
