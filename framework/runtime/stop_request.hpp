// A process-wide request to end a run early (Ctrl-C, a duration limit): sources see it on
// their next poll and end their stream as if their input were exhausted, so everything in
// flight still drains to a sink and the accounting stays exact.
#pragma once

namespace tp {

void request_stop();
bool stop_requested();
// The signal that asked to stop (SIGINT, SIGTERM), 0 when none did (a failed tile, a limit).
int stop_signal();
void clear_stop_request();
// SIGINT/SIGTERM call request_stop(); a second signal exits at once.
void install_stop_signal_handlers();

}  // namespace tp
