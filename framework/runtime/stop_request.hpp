// A process-wide request to end a run early (Ctrl-C, a duration limit): sources see it on
// their next poll and end their stream as if their input were exhausted, so everything in
// flight still drains to a sink and the accounting stays exact.
//
// A second signal during that drain asks for a cut (with SecondSignal::CutShort): the tiles
// stop where they are and every packet still in flight is freed and counted as lost to the
// cut, so the run still ends with a report. A third signal ends the process at once.
#pragma once

namespace tp {

void request_stop();
bool stop_requested();
// The signal that asked to stop (SIGINT, SIGTERM), 0 when none did (a failed tile, a limit).
int stop_signal();
// A second signal asked to end the drain at once (see above).
bool cut_requested();
void clear_stop_request();

enum class SecondSignal {
    Exit,      // ends the process at once with 128 + the signal (benches)
    CutShort,  // cut_requested(): the run ends now, with a report (tilepipe run)
};
// SIGINT/SIGTERM call request_stop(); a second one does what `second` says.
void install_stop_signal_handlers(SecondSignal second = SecondSignal::Exit);

}  // namespace tp
