// The bench entry points tp::bench::main dispatches to; each parses its own options.
#pragma once

namespace tp::bench {

int run_pingpong(int argc, char** argv);
int run_stream(int argc, char** argv);
int run_asym(int argc, char** argv);
int run_mapvec(int argc, char** argv);
int run_latency(int argc, char** argv);
int run_mp(int argc, char** argv);
int run_accel(int argc, char** argv);  // accelerator mode against FastFlow's
int run_ff_grain(int argc, char** argv);   // the FastFlow study's Fig. 6 on the accelerator
int run_ff_matmul(int argc, char** argv);  // its Fig. 9
int run_ff_homing(int argc, char** argv);  // its Fig. 7: the memory policies

}  // namespace tp::bench
