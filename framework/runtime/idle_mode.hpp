// How a tile thread that found no work waits (`runtime: { idle: ... }`), as an IdleBackoff.
//
//   auto   spin with pause for a few microseconds (only when each thread has a CPU of its own),
//          then sched_yield a few times, then park on the thread's doorbell until a neighbour
//          rings it: low latency while traffic flows, no CPU burnt while it does not. Under
//          light load a packet may find its tile parked: a futex wake-up (a few to tens of
//          microseconds, more when the CPU is busy with other processes).
//   spin   poll without ever giving the CPU away: the lowest latency at any load, a full CPU
//          per thread even when idle; with more threads than CPUs a spinning thread holds its
//          CPU until the kernel preempts it, which costs the other threads far more.
//   park   park as soon as nothing moved: the least CPU, every packet after a pause pays a
//          wake-up.
#pragma once

#include <string>
#include <vector>

#include "framework/runtime/scheduler.hpp"

namespace tp {

const std::vector<std::string>& idle_modes();

// `mode` is one of idle_modes(); `shared_cpus`: more threads than CPUs.
IdleBackoff idle_backoff(const std::string& mode, bool shared_cpus);

}  // namespace tp
