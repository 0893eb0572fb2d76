// conf/farm.yaml composed in C++: generated traffic (or a capture) is parsed, then
//  1. a run-to-completion farm: the emitter dispatches by flow hash to 4 workers that each run
//     the whole chain, and the collector restores the input order;
//  2. a farm whose workers are pipelines (each stage on its own tile), fed on demand and
//     collected without order;
// then everything is dropped.
#pragma once

#include <string>

#include <tilepipe/app.hpp>

namespace farm_example {

// `capture` empty: the synth source of conf/farm.yaml, `count` packets; otherwise a pcap source
// replaying `capture`, named as the file names its source (as `tilepipe run conf/farm.yaml
// --pcap FILE` names it), so the two reports read alike.
inline tp::AppBuilder farm_app(const std::string& capture, const std::string& count = "2M") {
    tp::AppBuilder app("farm");
    tp::Node source = capture.empty() ? app.stage("synth", {{"count", count}, {"flows", 4096}, {"size", "imix"}})
                                      : app.stage("pcap", {{"file", capture}, {"name", "synth"}});

    tp::Farm rtc = app.farm("rtc")
                       .workers(4)
                       .dispatch("flow_hash")  // one flow, one worker: per-flow state needs no locks
                       .collect("ordered")     // the collector restores the input order
                       .worker({app.stage("pass"), app.stage("pass")});  // each worker runs the chain

    tp::Farm piped = app.farm("piped")
                         .workers(2)
                         .dispatch("on_demand")                                      // the first worker with room
                         .worker_pipeline({app.stage("pass"), app.stage("pass")});  // one tile per stage

    app.pipeline({source, app.stage("parse"), rtc, piped, app.stage("drop")});
    return app;
}

}  // namespace farm_example
