// The report as a packet engineer reads it: rates and durations in units that fit (never
// 0.000), columns as wide as their content, sinks saying what they did, emitters and collectors
// listed, an interrupted run saying so, and a labelled progress line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "framework/metrics/progress_line.hpp"
#include "framework/metrics/run_report.hpp"
#include "framework/metrics/text_table.hpp"
#include "framework/metrics/units.hpp"

namespace tp {
namespace {

TEST(Units, RatesPickTheUnitThatFitsWithFourSignificantDigits) {
    EXPECT_EQ(format_packet_rate(51.303e6), "51.30 Mpps");
    EXPECT_EQ(format_packet_rate(1000), "1.000 kpps");
    EXPECT_EQ(format_packet_rate(998.44), "998.4 pps");
    EXPECT_EQ(format_packet_rate(999.96), "1.000 kpps") << "rounding carries into the next unit";
    EXPECT_EQ(format_packet_rate(0.5), "0.500 pps");
    EXPECT_EQ(format_packet_rate(0), "0 pps");
    EXPECT_EQ(format_bit_rate(26.267e9), "26.27 Gb/s");
    EXPECT_EQ(format_bit_rate(512e3), "512.0 kb/s");
    EXPECT_EQ(format_bit_rate(0), "0 b/s");
}

TEST(Units, DurationsAndCountsPickTheirUnitToo) {
    EXPECT_EQ(format_duration(0.390), "390.0 ms");
    EXPECT_EQ(format_duration(1.2345), "1.234 s");  // %.3f of 1.2345 rounds to even
    EXPECT_EQ(format_duration(0.00085), "850.0 us");
    EXPECT_EQ(format_duration(0), "0 s");
    EXPECT_EQ(format_count(4631), "4631");
    EXPECT_EQ(format_count(20000000), "20.00 M");
}

// Where each column starts in a line of the table: the offset of every cell's first character.
std::vector<size_t> starts(const std::string& line, const std::vector<std::string>& cells) {
    std::vector<size_t> at;
    size_t from = 0;
    for (const auto& c : cells) {
        from = line.find(c, from);
        at.push_back(from);
        from += c.size();
    }
    return at;
}

TEST(TextTable, ColumnsWidenToTheirLongestCellAndStayAligned) {
    TextTable t;
    t.add_column("node", TextTable::Align::Left);
    t.add_column("in", TextTable::Align::Right);
    t.add_row({"a_very_long_node_name_from_a_farm.worker.12/flow_table", "7"}, {"drop no_route: 3"});
    t.add_row({"src", "123456789012"});
    std::istringstream lines(t.str());
    std::string header, first, note, second;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, note);
    std::getline(lines, second);
    EXPECT_EQ(note, "    drop no_route: 3");
    // Right-aligned numbers end in the same column; the header sits over them.
    EXPECT_EQ(first.size(), second.size()) << t.str();
    EXPECT_EQ(header.size(), second.size()) << t.str();
    EXPECT_EQ(starts(second, {"src", "123456789012"})[1], first.size() - 12) << t.str();
    EXPECT_EQ(first.find("  "), std::string("a_very_long_node_name_from_a_farm.worker.12/flow_table").size());
}

RunReport small_report() {
    RunReport r;
    r.app = "paced";
    r.packets = r.delivered = 102;
    r.bytes = r.delivered_bytes = 102 * 64;
    r.seconds = r.offered_seconds = 0.1;
    r.setup_s = 0.2;
    StageReport src;
    src.name = src.stage = "synth";
    src.kind = "source";
    src.out = 102;
    StageReport out;
    out.name = "out";
    out.stage = "pcap_out";
    out.kind = "sink";
    out.in = out.out = 100;
    out.output = "x.pcap";
    StageReport tx = out;
    tx.name = tx.stage = "port_out";
    tx.in = tx.out = 2;
    tx.output = "net_null0";
    tx.output_is_device = true;
    StageReport drop = out;
    drop.name = drop.stage = "drop";
    drop.output.clear();
    r.stages = {src, out, tx, drop};
    TileReport e;
    e.node = "farm.emitter";
    e.role = "emitter";
    e.packets = 102;
    r.tiles.push_back(e);
    r.pools.push_back(PoolReport{"p", 4095, 4095});
    return r;
}

TEST(RunReportText, SmallRatesAndShortRunsNeverPrintAsZero) {
    const std::string table = format_table(small_report());
    EXPECT_EQ(table.find("0.000"), std::string::npos) << table;
    EXPECT_NE(table.find("102 packets delivered in 100.0 ms: 1.020 kpps"), std::string::npos) << table;
    EXPECT_NE(table.find("setup 200.0 ms"), std::string::npos) << table;
}

TEST(RunReportText, SinksSayWhatTheyDidAndEmittersAreListed) {
    const std::string table = format_table(small_report());
    EXPECT_NE(table.find("    wrote 100 packets to x.pcap\n"), std::string::npos) << table;
    EXPECT_NE(table.find("    transmitted 2 packets on net_null0\n"), std::string::npos) << table;
    EXPECT_NE(table.find("    dropped 100 packets (a drop sink: counted as delivered)\n"), std::string::npos) << table;
    EXPECT_NE(table.find("farm.emitter"), std::string::npos) << table;
    EXPECT_NE(table.find("(emitter)"), std::string::npos) << table;
    EXPECT_NE(table.find("pools full (every mbuf back: 4095 of 4095)"), std::string::npos) << table;
}

TEST(RunReportText, PoolsNotFullSayHowManyMbufsWereNeverReturned) {
    RunReport r = small_report();
    r.pools[0].available = 4000;
    EXPECT_NE(format_table(r).find("pools NOT FULL: 95 of 4095 mbufs never returned (leaked)"), std::string::npos);
}

TEST(RunReportText, AnInterruptedRunSaysSoInTheTableAndTheJson) {
    RunReport r = small_report();
    EXPECT_EQ(format_table(r).find("interrupted"), std::string::npos);
    EXPECT_FALSE(to_json(r)["header"]["interrupted"].get<bool>());
    r.header.interrupted = true;
    r.header.exit_status = 130;
    const std::string table = format_table(r);
    EXPECT_EQ(table.rfind("app paced (interrupted): ", 0), 0u) << table;
    EXPECT_NE(table.find("\ninterrupted: "), std::string::npos) << table;
    EXPECT_TRUE(to_json(r)["header"]["interrupted"].get<bool>());
    EXPECT_EQ(to_json(r)["header"]["exit_status"], 130);
}

TEST(RunReportJson, TheHeadlineIsDeliveredAndOfferedHasItsOwnFields) {
    RunReport r = small_report();
    r.packets = 100000;
    r.offered_seconds = 0.002;
    const nlohmann::json j = to_json(r);
    EXPECT_DOUBLE_EQ(j["mpps"].get<double>(), 102 / 0.1 / 1e6);
    EXPECT_DOUBLE_EQ(j["offered_mpps"].get<double>(), 100000 / 0.002 / 1e6);
}

TEST(ProgressLine, SaysWhatEachNumberIs) {
    const ProgressSample before{2.0, 100'000'000, 6'400'000'000};
    const ProgressSample now{3.0, 150'000'000, 9'600'000'000};
    const std::string line = format_progress(now, before, EmitPlan{500'000'000, 50'000'000, 10});
    EXPECT_EQ(line, "3.000 s: 150.0 M packets; last 1.000 s 50.00 Mpps 25.60 Gb/s; average 50.00 Mpps; "
                    "loop 4 of 10; 7.000 s left");
    // A source that does not know its length: no loop, no time left.
    EXPECT_EQ(format_progress(now, before, EmitPlan{}).find("left"), std::string::npos);
    EXPECT_EQ(format_progress(ProgressSample{}, ProgressSample{}, EmitPlan{}), "waiting for the first packet");
    // Everything emitted, the rest still on its way to the sinks.
    const std::string last = format_progress(ProgressSample{10.0, 500'000'000, 0}, now, EmitPlan{500'000'000, 50'000'000, 10});
    EXPECT_NE(last.find("; loop 10 of 10; all emitted, draining"), std::string::npos) << last;
}

}  // namespace
}  // namespace tp
