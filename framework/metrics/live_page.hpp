// The live page of `tilepipe run --metrics` (served at `/`): one self-contained HTML file, its
// script and styles inline, nothing fetched from elsewhere (the host may have no internet).
// Once a second it reads `/live.json` (live_json.hpp) and draws:
//   - the app's graph on its tiles (positions from the report's `tiles`), each tile with its
//     nodes' rate (Mpps) and busy share, the links between tiles with their queued items;
//   - the delivered Mpps over time, the latency percentiles and a table per stage instance.
// Rates are differences between two reads over the run time between them; on the first read,
// and once the run is done, they are averages over the run.
// The rendered figures carry ids and data attributes (`#delivered`, `#mpps`, `#p50`,
// `tr[data-node=NAME] td.out|.rate|.busy`) so that a browser test reads them from the DOM.
#pragma once

#include <string>

namespace tp {

const std::string& live_page_html();

}  // namespace tp
