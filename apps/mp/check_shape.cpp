#include <cmath>
#include <stdexcept>
#include <string>

#include "apps/mp/kernels.hpp"

namespace tp::mp::kernels {

void check_shape(const std::string& kernel, int ranks, int n) {
    auto bad = [&](const std::string& why) {
        throw std::invalid_argument(kernel + ": --size " + std::to_string(n) + " on " + std::to_string(ranks) +
                                    " ranks: " + why);
    };
    if (n < 1) bad("the size must be positive");
    // The kernels count an n x n grid's elements in int.
    if (n > 46340) bad("the size must be at most 46340");
    if (kernel == "mp-sgemm") {
        const int q = static_cast<int>(std::lround(std::sqrt(double(ranks))));
        if (q * q != ranks) bad("Cannon's grid is q x q, so the rank count must be a square");
        if (n % q != 0) bad("the size must be a multiple of " + std::to_string(q));
    } else if (kernel == "mp-nbody") {
        if (n % ranks != 0) bad("the size must be a multiple of the rank count");
    } else if (kernel == "mp-stencil") {
        if (n < ranks) bad("every rank needs at least one row and column");
    } else if (kernel == "mp-fft") {
        if ((n & (n - 1)) != 0) bad("the size must be a power of two");
        if (n % ranks != 0) bad("the size must be a multiple of the rank count");
    }
}

}  // namespace tp::mp::kernels
