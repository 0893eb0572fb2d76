#include <chrono>
#include <stdexcept>
#include <vector>

#include "apps/mp/kernels.hpp"

namespace tp::mp::kernels {

std::vector<PingRow> pingpong(Comm& c, const std::vector<size_t>& sizes, int reps) {
    if (c.size() < 2) throw std::invalid_argument("mp-pingpong needs 2 ranks, not " + std::to_string(c.size()));
    std::vector<PingRow> rows;
    size_t most = 0;
    for (size_t s : sizes) most = std::max(most, s);
    std::vector<char> buf(most, 1);
    for (size_t bytes : sizes) {
        // Fewer round trips for long messages: about the same bytes moved per size.
        const int n = std::max(10, static_cast<int>(std::min<double>(reps, reps * 4096.0 / double(bytes))));
        const int count = static_cast<int>(bytes);
        double seconds = 0;
        for (int round = -1; round < 1; ++round) {  // round -1 warms up
            c.barrier();
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < (round < 0 ? 10 : n); ++i) {
                if (c.rank() == 0) {
                    c.send(buf.data(), count, 1, 1);
                    c.recv(buf.data(), count, 1, 1);
                } else if (c.rank() == 1) {
                    c.recv(buf.data(), count, 0, 1);
                    c.send(buf.data(), count, 0, 1);
                }
            }
            seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        c.bcast(&seconds, 1, 0);
        const double one_way = seconds / (2.0 * n);
        rows.push_back(PingRow{bytes, one_way * 1e6, double(bytes) / one_way / 1e9});
    }
    return rows;
}

}  // namespace tp::mp::kernels
