/// @file
/// tp::PacketAccelerator: a running app whose source is the caller's thread. The caller
/// offloads packets into the app, which processes them as any app does (a pipeline, a farm),
/// and reads the packets that reach its end back:
///
///     tp::AppBuilder app("filter");
///     app.pipeline({app.stage("offload"), app.stage("parse"),
///                   app.stage("bpf_filter", {{"expr", "udp"}}), app.stage("results")});
///     tp::Runtime runtime;
///     tp::PacketAccelerator acc(app, runtime);  // the app runs from here on
///     rte_mbuf* m = acc.alloc();                // from the app's own pool
///     ... fill m (data_len, pkt_len) ...
///     acc.offload(m);                           // the app owns it now
///     acc.end_of_stream();
///     rte_mbuf* r;
///     while (acc.get_result(r)) rte_pktmbuf_free(r);  // the caller owns each result
///     tp::Report report = acc.wait();           // as Runtime::run reports
///
///  - The app's first node is the `offload` source and its last the `results` sink; those two
///    stages run only inside an accelerator (`tilepipe run` refuses them).
///  - Every offloaded packet reaches `results` (the caller gets it) or is a counted drop of a
///    stage; the report says so (packets = delivered + drops). Results the caller still holds
///    at wait() show as a pool not full.
///  - Offload blocks while the offload source's channel is full; meanwhile the accelerator
///    keeps the results that arrive (get_result returns them later, in order), so a caller that
///    offloads everything before reading never deadlocks with the app.
///  - Errors, not hangs (PacketAcceleratorError): offloading after end_of_stream(); offloading or
///    reading after the app failed (a stage threw: the message names the node and its error)
///    or ended; a blocking get_result that could only wait forever (no end of stream and every
///    offloaded packet already read back or dropped by a stage, as the stages' counters show
///    once the wait lasts). Packets a stage drops never come back: call end_of_stream() before
///    waiting for the last results, or use try_get_result.
///
/// Thread-safety: one caller thread drives an accelerator (every call, wait() and the
/// destructor); the app runs on threads of its own. Free the results before destroying the
/// accelerator: the app's pool goes with it.
#pragma once

#include <memory>
#include <stdexcept>

#include "tilepipe/app.hpp"

struct rte_mbuf;

namespace tp {

/// A misuse of a PacketAccelerator or the failure of its app; what() says which.
class PacketAcceleratorError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What a PacketAccelerator holds, internal (pimpl).
struct PacketAcceleratorState;

/// An app fed packets by the caller's thread (see the file's comment).
class PacketAccelerator {
public:
    /// Validates `app` (its first node `offload`, its last `results`), starts EAL through
    /// `runtime` when it is not up, builds the app and starts it on a thread of its own.
    /// Throws AppError for bad input or an app that cannot start.
    PacketAccelerator(const AppBuilder& app, Runtime& runtime);
    /// Ends the stream when the caller did not, frees results nobody read, waits for the app.
    ~PacketAccelerator();
    /// Not copyable: one app, one run.
    PacketAccelerator(const PacketAccelerator&) = delete;
    /// Not copyable: one app, one run.
    PacketAccelerator& operator=(const PacketAccelerator&) = delete;

    /// An mbuf from the app's own pool (reset, empty), or nullptr when the pool is empty right
    /// now (its mbufs are in flight or held by the caller). Offload it, or free it.
    rte_mbuf* alloc();
    /// Hands `m` to the app (its data_len and pkt_len set; a chain or an mbuf of another pool
    /// is accepted too), waiting while the app's input is full. Throws PacketAcceleratorError after
    /// end_of_stream() or once the app failed or ended; `m` is then still the caller's.
    void offload(rte_mbuf* m);
    /// As offload(), but returns false at once, `m` still the caller's, when the input is full.
    bool try_offload(rte_mbuf* m);
    /// Nothing more will be offloaded: the app drains and ends. A second call throws.
    void end_of_stream();
    /// The next result (the caller owns `m` then), waiting for it; false once end_of_stream()
    /// was called and every result was read. Throws PacketAcceleratorError once the app failed, or
    /// when it could only wait forever (see the file's comment).
    bool get_result(rte_mbuf*& m);
    /// A result if one is ready now; false otherwise (and after the last). Throws as get_result.
    bool try_get_result(rte_mbuf*& m);
    /// Ends the stream when the caller did not, frees the results nobody read, waits for the
    /// app's end and returns its report, as Runtime::run would (a failed stage in
    /// exit_status and text). Callable once; throws AppError when the run could not start.
    Report wait();

private:
    std::unique_ptr<PacketAcceleratorState> state_;
};

}  // namespace tp
