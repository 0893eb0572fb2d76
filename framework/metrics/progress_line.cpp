#include "framework/metrics/progress_line.hpp"

#include "framework/metrics/units.hpp"

namespace tp {

std::string format_progress(const ProgressSample& now, const ProgressSample& before, const EmitPlan& plan) {
    if (now.packets == 0) return "waiting for the first packet";
    std::string s = format_duration(now.seconds) + ": " + format_count(now.packets) + " packets";
    const double dt = now.seconds - before.seconds;
    if (dt > 0)
        s += "; last " + format_duration(dt) + " " + format_packet_rate(double(now.packets - before.packets) / dt) +
             " " + format_bit_rate(double(now.bytes - before.bytes) * 8 / dt);
    const double average = now.seconds > 0 ? double(now.packets) / now.seconds : 0.0;
    s += "; average " + format_packet_rate(average);
    if (plan.per_loop != 0) {
        uint64_t loop = now.packets / plan.per_loop + 1;
        if (plan.loops != 0 && loop > plan.loops) loop = plan.loops;  // the last packet ends the last loop
        s += "; loop " + std::to_string(loop);
        if (plan.loops != 0) s += " of " + std::to_string(plan.loops);
    }
    // Time left at the average rate: steadier than the last interval's.
    if (plan.packets > now.packets && average > 0)
        s += "; " + format_duration(double(plan.packets - now.packets) / average) + " left";
    else if (plan.packets != 0 && now.packets >= plan.packets)
        s += "; all emitted, draining";
    return s;
}

}  // namespace tp
