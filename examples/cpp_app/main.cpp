// farm_app [--count N] [CAPTURE]: builds conf/farm.yaml's app in C++, runs it on CAPTURE (or on
// N generated packets, default 2M) and prints the report `tilepipe run` would print.
#include <cstdio>
#include <cstring>
#include <string>

#include <tilepipe/app.hpp>

#include "farm_app.hpp"

int main(int argc, char** argv) {
    std::string capture, count = "2M";
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--count") == 0 && i + 1 < argc) count = argv[++i];
        else if (argv[i][0] != '-' && capture.empty()) capture = argv[i];
        else {
            std::fprintf(stderr, "usage: %s [--count N] [CAPTURE]\n", argv[0]);
            return 2;
        }
    }
    try {
        tp::AppBuilder app = farm_example::farm_app(capture, count);
        std::printf("%s: %s\n", app.name().c_str(), app.validate().c_str());
        tp::Runtime runtime;  // DPDK's EAL, once per process
        const tp::Report report = runtime.run(app);
        std::fputs(report.text.c_str(), stdout);
        const tp::NodeCounts* drop = report.node("drop");
        std::printf("drop delivered %llu of %llu packets\n", (unsigned long long)(drop ? drop->delivered : 0),
                    (unsigned long long)report.packets);
        return report.exit_status;  // 0 when every packet and mbuf is accounted for
    } catch (const tp::AppError& e) {
        std::fprintf(stderr, "farm_app: %s\n", e.what());
        return 2;
    }
}
