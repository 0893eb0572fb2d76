// tilepipe-bench: the benches without the rest of the CLI (`tilepipe-bench pingpong ...` is
// `tilepipe bench pingpong ...`).
#include <vector>

#include "apps/bench/bench.hpp"

int main(int argc, char** argv) {
    static char bench[] = "bench";
    std::vector<char*> args{bench};
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    return tp::bench::main(argc, args.data());
}
