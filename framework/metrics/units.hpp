// Numbers as a reader takes them in: a rate or a duration in the unit that fits its size
// (Mpps, kpps or pps; Gb/s down to b/s; s, ms or us) with four significant digits, so a slow or
// short run never prints as 0.000. Zero prints as "0 pps", "0 b/s", "0 s".
#pragma once

#include <cstdint>
#include <string>

namespace tp {

std::string format_packet_rate(double packets_per_second);  // "51.30 Mpps", "998.4 pps"
std::string format_bit_rate(double bits_per_second);         // "26.27 Gb/s", "512.0 kb/s"
std::string format_duration(double seconds);                 // "1.234 s", "12.35 ms", "850.0 us"
// A packet count with a metric suffix beyond a million: "4631", "1.234 M", "20.00 M".
std::string format_count(uint64_t n);

}  // namespace tp
