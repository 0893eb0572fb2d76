// One messaging network per app: an app's `udn` links share one network whose tiles have a
// few demux queues of 128 words, as on the TILEPro64. A farm's collector receives every
// worker through one queue (the asymmetric interface) exactly once and in order where asked;
// a tile with more interfaces than queues multiplexes them as logical channels; a message
// whose tag nothing is bound to lands in the catch-all and is counted; links that cannot fit
// are refused before anything runs, at their place in the config and with the numbers.
#include <gtest/gtest.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "framework/channel/asymmetric_receiver.hpp"
#include "framework/channel/blocking.hpp"
#include "framework/channel/transport_lock_gather.hpp"
#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/graph/app_network.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/graph/app_runner.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/stage/registry.hpp"
#include "tests/support/order_check.hpp"

namespace tp {
namespace {

test::OrderCheckCounts& order_counts = test::order_check_counts();

std::string farm_app(uint32_t workers, const std::string& collect, const std::string& head = "",
                     uint64_t packets = 30000) {
    return head + "transport: udn\nruntime: { threads: per_tile, fuse: never }\npipeline:\n"
                  "  - { stage: synth, count: " + std::to_string(packets) + ", flows: 65536 }\n"
                  "  - farm:\n      name: f\n      workers: " + std::to_string(workers) +
           "\n      dispatch: round_robin\n      collect: " + collect + "\n      worker: [pass]\n"
           "  - test_order_check\n";
}

size_t node_named(const AppPlan& plan, const std::string& name) {
    for (size_t n = 0; n < plan.graph.nodes.size(); ++n)
        if (plan.graph.nodes[n].name == name) return n;
    ADD_FAILURE() << "no node " << name;
    return 0;
}

const NetworkGroupPlan& group_into(const NetworkPlan& np, size_t node) {
    for (const NetworkGroupPlan& g : np.groups)
        if (g.receiver == node) return g;
    ADD_FAILURE() << "no interface into node " << node;
    return np.groups.front();
}

// The TILEPro64's fixed queues: every queue holds 128 words, which bounds K.
const char* const kUdnQueues = "network: { queue_words: 128 }\n";

TEST(AppNetwork, AFarmOfEightCollectsThroughOneQueueWithAnAckQueuePerWorker) {
    const AppConfig app = parse_app_config(farm_app(8, "ordered", kUdnQueues), "farm.yaml");
    AppPlan plan = plan_app(app);
    ASSERT_EQ(plan.networks.size(), 1u);
    const NetworkPlan& np = plan.networks[0];
    EXPECT_EQ(np.transport, "udn");
    EXPECT_EQ(np.config.queues, 4u);
    EXPECT_EQ(np.config.queue_words, 128u);
    const NetworkGroupPlan& c = group_into(np, node_named(plan, "f.collector"));
    ASSERT_EQ(c.edges.size(), 8u);
    EXPECT_TRUE(c.asymmetric());
    EXPECT_FALSE(c.data_shared);
    // K <= 128/((1 + 2) x 8): eight senders of descriptors (two payload words) in one queue.
    EXPECT_EQ(c.credits, 5u);
    for (size_t e : c.edges) {
        EXPECT_EQ(plan.links[e].capacity, 5u);
        const NetworkLinkPlan& l = np.links[static_cast<size_t>(np.link_of_edge[e])];
        EXPECT_FALSE(l.ack_shared) << "a worker has a queue of its own for the collector's credits";
    }
    EXPECT_FALSE(np.notes.empty()) << "lowering K is said";
}

TEST(AppNetwork, ByDefaultEachQueueIsSizedToTheCreditsItsLinksAskFor) {
    // network.queue_words: auto: a collector of 8 workers gets K = the links' queue, not
    // 128/(3 x 8), so a worker can hand on whole bursts however wide the farm is.
    const AppConfig app = parse_app_config(farm_app(8, "ordered", "queue: 256\n"), "farm.yaml");
    AppPlan plan = plan_app(app);
    const NetworkPlan& np = plan.networks.at(0);
    const size_t collector = node_named(plan, "f.collector");
    const NetworkGroupPlan& c = group_into(np, collector);
    EXPECT_EQ(c.credits, 256u);
    for (size_t e : c.edges) EXPECT_EQ(plan.links[e].capacity, 256u);
    EXPECT_TRUE(np.notes.empty()) << np.notes.front();
    const auto tile = static_cast<noc::TileId>(np.tile_of_node[collector]);
    // 8 senders x 256 credits x (1 + 2) words = 6144, rounded up to a power of two.
    EXPECT_EQ(np.config.words_of(tile, c.data_queue), 8192u);
    // A worker's queue for the collector's credits: 256 credit messages of 2 words at most.
    const size_t w0 = node_named(plan, "f.0");
    const NetworkLinkPlan& l = np.links[static_cast<size_t>(np.link_of_edge[c.edges[0]])];
    EXPECT_EQ(np.config.words_of(static_cast<noc::TileId>(np.tile_of_node[w0]), l.ack_queue), 512u);
    // The catch-all of a tile stays small: only strays land there.
    EXPECT_EQ(np.config.words_of(tile, np.config.queues), 128u);
    AppNetworks nets(plan);  // the network builds with those sizes and every reservation fits
    ASSERT_NE(nets.message_network(), nullptr);
    EXPECT_EQ(nets.message_network()->config().words_of(tile, c.data_queue), 8192u);
}

TEST(AppNetwork, ACollectorsQueueTakesOnlyItsWorkersCreditedPushes) {
    // Eight workers share the collector's queue and each push spends a credit whose room is
    // set aside, so a push reserves its words with one fetch_add (no CAS loop that fails
    // once per competing worker, no look at the receiver's head). That holds only while no
    // other push lands there: the network refuses one, naming the queue.
    const AppConfig app = parse_app_config(farm_app(8, "unordered", kUdnQueues), "farm.yaml");
    AppPlan plan = plan_app(app);
    AppNetworks nets(plan);
    const NetworkPlan& np = plan.networks.at(0);
    const size_t collector = node_named(plan, "f.collector");
    const NetworkGroupPlan& c = group_into(np, collector);
    ASSERT_EQ(c.edges.size(), 8u);
    ASSERT_FALSE(c.data_shared);
    noc::MessageNetwork* net = nets.message_network();
    ASSERT_NE(net, nullptr);
    const auto rx = static_cast<noc::TileId>(np.tile_of_node[collector]);
    const auto w0 = static_cast<noc::TileId>(np.tile_of_node[node_named(plan, "f.0")]);
    const uint64_t words[2] = {1, 2};
    try {
        net->try_push(w0, rx, c.data_tag, words, 2);
        FAIL() << "a push without a credit went into the collector's queue";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("pushed without a credit into tile " + std::to_string(rx) + "'s queue " +
                                             std::to_string(c.data_queue) + ", which credit interfaces share"),
                  std::string::npos)
            << e.what();
    }
    // The workers' own sends go through, every one of them, into the one queue.
    std::vector<std::unique_ptr<Channel<PacketDesc>>> in;
    for (size_t e : c.edges) in.push_back(nets.desc_channel(e));
    PacketDesc d{};
    for (auto& link : in) ASSERT_EQ(link->try_send_burst(&d, 1), 1u);
    EXPECT_EQ(net->queued_words(rx, c.data_queue), 8u * 3u);
    PacketDesc out[8];
    uint32_t got = 0;
    for (auto& link : in) got += link->try_recv_burst(out, 8);
    EXPECT_EQ(got, 8u);
}

// The links into the collector of an unordered udn farm of `workers`, on the app's network.
struct CollectorLinks {
    explicit CollectorLinks(uint32_t workers)
        : plan(plan_app(parse_app_config(farm_app(workers, "unordered"), "farm.yaml"))), nets(plan) {
        for (size_t e : plan.graph.inputs_of(node_named(plan, "f.collector"))) in.push_back(nets.desc_channel(e));
    }
    AppPlan plan;
    AppNetworks nets;
    std::vector<std::unique_ptr<Channel<PacketDesc>>> in;
};

TEST(AppNetwork, AReceiveWakesOnlyTheSendersItReturnedCreditsTo) {
    // Eight workers, all parked (announced on their doorbells); one sends all its K, as a
    // worker that then parks for credits. The collector's receive returns them and wakes
    // that one, and leaves the seven idle ones asleep: its cost does not grow with idle senders.
    CollectorLinks links(8);
    auto& in = links.in;
    ASSERT_EQ(in.size(), 8u);
    std::vector<Doorbell> bells(9);
    for (uint32_t s = 0; s < 8; ++s) in[s]->set_bells(&bells[s], &bells[8]);
    for (uint32_t s = 0; s < 8; ++s) bells[s].prepare_park();
    const uint32_t k = in[3]->capacity();
    std::vector<PacketDesc> d(k);
    for (uint32_t i = 0; i < k; ++i) d[i] = PacketDesc{nullptr, 3, static_cast<uint16_t>(i), 0, 0};
    ASSERT_EQ(in[3]->try_send_burst(d.data(), k), k);
    std::vector<PacketDesc> got(k);
    uint32_t taken = 0;
    for (uint32_t n; taken < k && (n = in[0]->try_recv_burst(got.data() + taken, k - taken)) != 0;) taken += n;
    ASSERT_EQ(taken, k) << "any link of the side pops the shared queue";
    for (uint32_t s = 0; s < 8; ++s) EXPECT_EQ(bells[s].wakeups(), s == 3 ? 1u : 0u) << "sender " << s;
    // Nothing more came: a receive that returned no credit wakes nobody.
    EXPECT_EQ(in[0]->try_recv_burst(got.data(), k), 0u);
    bells[3].prepare_park();
    EXPECT_EQ(in[5]->try_recv_burst(got.data(), k), 0u);
    EXPECT_EQ(bells[3].wakeups(), 1u);
    for (uint32_t s = 0; s < 8; ++s) bells[s].cancel_park();
}

TEST(AppNetwork, EightSendersIntoOneQueueDeliverEveryItemExactlyOnceInEachSendersOrder) {
    // The network's channels driven directly: eight worker threads send numbered items to the
    // collector, which receives through any of its links (they share its one queue).
    CollectorLinks links(8);
    auto& in = links.in;
    ASSERT_EQ(in.size(), 8u);
    for (const auto& c : in) ASSERT_NE(c, nullptr);
    constexpr uint32_t kPerSender = 20000;
    std::vector<std::thread> senders;
    for (uint32_t s = 0; s < 8; ++s)
        senders.emplace_back([&, s] {
            for (uint32_t i = 0; i < kPerSender;) {
                const PacketDesc d{nullptr, s, static_cast<uint16_t>(i), 0, 0};
                if (in[s]->try_send(d)) ++i;
                else std::this_thread::yield();
            }
            in[s]->close();
        });
    std::vector<uint32_t> next(8, 0);
    uint64_t got = 0, wrong = 0;
    PacketDesc b[32];
    for (;;) {
        bool any = false;
        for (auto& c : in) {
            const uint32_t m = c->try_recv_burst(b, 32);
            any |= m != 0;
            for (uint32_t k = 0; k < m; ++k) {
                const uint32_t s = b[k].flow_hash;
                wrong += s >= 8 || b[k].length != next[s];
                if (s < 8) next[s] = b[k].length + 1u;
                ++got;
            }
        }
        if (any) continue;
        bool closed = true;
        for (auto& c : in) closed = closed && c->closed();
        if (closed && [&] {
                for (auto& c : in)
                    if (c->try_recv_burst(b, 1) != 0) return false;
                return true;
            }())
            break;
        std::this_thread::yield();
    }
    for (auto& t : senders) t.join();
    EXPECT_EQ(got, 8u * kPerSender);
    EXPECT_EQ(wrong, 0u);
    for (uint32_t s = 0; s < 8; ++s) EXPECT_EQ(next[s], kPerSender) << "sender " << s;
    // Every item went through the collector's one data queue.
    const size_t collector = node_named(links.plan, "f.collector");
    const NetworkGroupPlan& c = group_into(links.plan.networks[0], collector);
    const auto tile = static_cast<noc::TileId>(links.plan.networks[0].tile_of_node[collector]);
    ASSERT_NE(links.nets.message_network(), nullptr);
    EXPECT_EQ(links.nets.message_network()->counters(tile, c.data_queue).messages, 8u * kPerSender);
}

// Senders 0..n-1 each send `per` numbered words (sender << 32 | i) through `gather`; the
// receiver takes them with blocking receives through `policy`. Returns the items out of
// their sender's order (or from no sender) and checks every sender's count.
uint64_t gather_in_order(AsymmetricReceiver<uint64_t>& gather, uint32_t per, const WaitPolicy& policy) {
    const uint32_t n = gather.senders();
    std::vector<std::thread> senders;
    for (uint32_t s = 0; s < n; ++s)
        senders.emplace_back([&, s] {
            for (uint32_t i = 0; i < per; ++i) send(gather.sender(s), (uint64_t{s} << 32) | i, policy);
            gather.sender(s).close();
        });
    std::vector<uint64_t> next(n, 0);
    uint64_t wrong = 0, item = 0;
    while (recv(gather, item, policy)) {
        const uint64_t s = item >> 32;
        if (s >= n || (item & 0xffffffffu) != next[s]) ++wrong;
        else ++next[s];
    }
    for (auto& t : senders) t.join();
    for (uint32_t s = 0; s < n; ++s) EXPECT_EQ(next[s], per) << "sender " << s;
    return wrong;
}

TEST(AppNetwork, ALockedGatherSharedBySendersDeliversOnceInEachSendersOrderWithBlockingWaits) {
    // The paper's lck_queue gather: one mutex-protected queue, condition-variable waits only.
    AsymmetricReceiver<uint64_t> gather(locked_gather<uint64_t>(8, 4));
    WaitPolicy blocking;
    blocking.spin_rounds = blocking.yield_rounds = 0;
    EXPECT_EQ(gather_in_order(gather, 20000, blocking), 0u);
}

TEST(AppNetwork, AMapsGatherOnTheNetworkWithFenceFreeDoorbellsDeliversOnceInEachSendersOrder) {
    // A map's workers send their partials into the collector's one queue; every wait parks
    // at once, on doorbells whose senders ring without a fence (Doorbell::ring_light).
    const AppConfig app = parse_app_config(
        "transport: udn\nnetwork: { queue_words: 128 }\npipeline:\n  - { stage: synth, count: 10 }\n"
        "  - map:\n      name: m\n      workers: 4\n      worker: [pass]\n  - drop\n", "map.yaml");
    AppPlan plan = plan_app(app);
    AppNetworks nets(plan);
    const size_t collector = node_named(plan, "m.collector");
    std::vector<std::unique_ptr<Channel<uint64_t>>> in;
    for (size_t e : plan.graph.inputs_of(collector))
        if (plan.graph.edges[e].words && !plan.graph.edges[e].freed) in.push_back(nets.word_channel(e));
    ASSERT_EQ(in.size(), 4u);
    for (const auto& c : in) EXPECT_EQ(c->capacity(), 16u);  // K <= 128/(2 x 4)
    AsymmetricReceiver<uint64_t> gather(std::move(in));
    std::vector<Doorbell> bells(5);
    for (Doorbell& b : bells) b.make_light();
    gather.set_receiver_bell(&bells[4]);
    for (uint32_t s = 0; s < 4; ++s) gather.sender(s).set_bells(&bells[s], &bells[4]);
    WaitPolicy parking;
    parking.spin_rounds = parking.yield_rounds = 0;
    EXPECT_EQ(gather_in_order(gather, 20000, parking), 0u);
    // A lost wake-up costs its sleeper a whole park timeout: every wait here parks, so a ring
    // that missed its sleeper would show as timeouts by the thousand. A few are a thread
    // descheduled past the timeout while its partner slept (about 1 % here on a loaded
    // 2-CPU machine).
    uint64_t parks = 0, timeouts = 0;
    for (const Doorbell& b : bells) parks += b.parks(), timeouts += b.park_timeouts();
    EXPECT_GT(parks, 1000u);
    EXPECT_LE(timeouts * 20, parks) << timeouts << " of " << parks << " parks timed out: wake-ups lost";
}

TEST(AppNetwork, OnAFullEventDeviceRefusedCreditsAreRepaidWithoutSleepingOutAPark) {
    // udn_eventdev with the smallest event device the network accepts, kept nearly full by a
    // farm's traffic, and a link a -> b of K = 2: b's credits are refused now and then and
    // owed, and a runs out of them at once. Were a receiver that owes credits and finds no
    // data to sleep out its park (the sender, out of credits, sleeping too: nobody would
    // ring either), each such refusal would cost both a whole park timeout. It naps briefly
    // and repays instead, and rings the sender then.
    AppPlan plan = plan_app(parse_app_config(
        "transport: udn_eventdev\nnetwork: { queues: 1, queue_words: 1024 }\n"
        "runtime: { threads: per_tile, fuse: never }\npipeline:\n  - { stage: synth, count: 10 }\n"
        "  - { stage: pass, name: a }\n  - { stage: pass, name: b, queue: 2 }\n"
        "  - farm:\n      name: h\n      workers: 4\n      queue: 256\n      worker: [pass]\n  - drop\n",
        "hog.yaml"));
    NetworkPlan& np = plan.networks.at(0);
    const uint32_t ports = np.config.tiles * (np.config.queues + 1);
    np.config.device_events = ports * 16 + 8;  // what the ports' credit caches may keep, and a quantum
    AppNetworks nets(plan);
    const size_t b_node = node_named(plan, "b"), hog_emitter = node_named(plan, "h.emitter");
    ASSERT_EQ(plan.graph.inputs_of(b_node).size(), 1u);
    const size_t ab = plan.graph.inputs_of(b_node)[0];
    std::unique_ptr<Channel<PacketDesc>> link = nets.desc_channel(ab);
    ASSERT_EQ(link->capacity(), 2u);
    // The farm's emitter and workers (tiles nobody else drives here) fill the device: their
    // links take 4 x 256 events, more than it holds.
    std::vector<std::unique_ptr<Channel<PacketDesc>>> hog;
    for (size_t e : plan.graph.outputs_of(hog_emitter)) hog.push_back(nets.desc_channel(e));
    ASSERT_EQ(hog.size(), 4u);
    Doorbell tx_bell, rx_bell;
    link->set_bells(&tx_bell, &rx_bell);
    WaitPolicy parking;  // every wait parks at once: a wait nobody ends shows as a timeout
    parking.spin_rounds = parking.yield_rounds = 0;
    std::atomic<bool> stop{false};
    std::thread hogger([&] {  // fills the device until it refuses, takes a little out, again
        PacketDesc b[8]{};
        while (!stop.load(std::memory_order_relaxed)) {
            bool full = true;
            for (auto& c : hog) full = c->try_send_burst(b, 8) < 8 && full;
            if (full)
                for (auto& c : hog) c->try_recv_burst(b, 1);
            std::this_thread::yield();
        }
        for (auto& c : hog) while (c->try_recv_burst(b, 8) != 0) {}
    });
    constexpr uint32_t kItems = 4000;
    std::thread sender([&] {
        for (uint32_t i = 0; i < kItems; ++i) send(*link, PacketDesc{nullptr, i, 0, 0, 0}, parking);
        link->close();
    });
    uint32_t next = 0, wrong = 0;
    PacketDesc d;
    while (recv(*link, d, parking)) wrong += d.flow_hash != next++;
    sender.join();
    stop.store(true, std::memory_order_relaxed);
    hogger.join();
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(next, kItems);
    // The credits the device refused: pushes to a's ack queue it turned down.
    const NetworkLinkPlan& l = np.links[static_cast<size_t>(np.link_of_edge[ab])];
    const uint64_t refused = nets.counters(0, static_cast<uint32_t>(np.tile_of_node[node_named(plan, "a")]), l.ack_queue).stalls;
    ASSERT_GT(refused, 0u) << "the device never refused a credit: nothing was repaid";
    // A sender's park that times out waited for credits nobody repaid for 2 ms. Some do while
    // the device stays full that long (about 1 in 100 refusals here); sleeping out the
    // receiver's park instead of repaying makes it a third or more.
    EXPECT_LE(tx_bell.park_timeouts() * 20, refused)
        << tx_bell.park_timeouts() << " sender parks timed out for " << refused << " refused credits (the receiver's: "
        << rx_bell.park_timeouts() << " of " << rx_bell.parks() << ", " << rx_bell.retry_naps() << " short naps)";
}

TEST(AppNetwork, AFarmOfEightOnUdnDeliversEveryPacketOnceAndInOrderWhereOrdered) {
    for (const char* collect : {"ordered", "unordered"}) {
        SCOPED_TRACE(collect);
        order_counts.reset();
        AppRunner runner(parse_app_config(farm_app(8, collect, kUdnQueues), "farm.yaml"));  // K = 5: a small K's stress
        const RunReport r = runner.run();
        EXPECT_EQ(r.packets, 30000u);
        EXPECT_EQ(r.delivered, 30000u);
        EXPECT_EQ(r.unaccounted, 0);
        EXPECT_TRUE(r.pools_full());
        EXPECT_EQ(order_counts.seen.load(), 30000u);
        if (std::string(collect) == "ordered") EXPECT_EQ(order_counts.out_of_order.load(), 0u);
        for (const ChannelReport& c : r.channels)
            if (c.to == "f.collector") EXPECT_EQ(c.capacity, 5u) << c.from;
    }
}

TEST(AppNetwork, ATileWithMoreInterfacesThanQueuesMultiplexesThemAsLogicalChannels) {
    // One queue per tile: the emitter takes its input and the four workers' credits there.
    order_counts.reset();
    const AppConfig app = parse_app_config(farm_app(4, "ordered", "network: { queues: 1, queue_words: 128 }\n"), "farm.yaml");
    AppPlan plan = plan_app(app);
    const NetworkPlan& np = plan.networks.at(0);
    const auto emitter = static_cast<size_t>(np.tile_of_node[node_named(plan, "f.emitter")]);
    ASSERT_EQ(np.tiles[emitter].queues.size(), 1u);
    EXPECT_TRUE(np.tiles[emitter].queues[0].shared);
    EXPECT_EQ(np.tiles[emitter].queues[0].carries.size(), 5u);  // data from synth, credits of 4 links
    EXPECT_LE(np.tiles[emitter].queues[0].reserved_words, 128u);
    AppRunner runner(app);
    const RunReport r = runner.run();
    EXPECT_EQ(r.delivered, 30000u);
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_EQ(order_counts.seen.load(), 30000u);
    EXPECT_EQ(order_counts.out_of_order.load(), 0u);
}

TEST(AppNetwork, LogicalChannelsCanRideTheCatchAll) {
    order_counts.reset();
    const AppConfig app =
        parse_app_config(farm_app(4, "ordered", "network: { queues: 2, catch_all: shared }\n"), "farm.yaml");
    AppPlan plan = plan_app(app);
    const NetworkPlan& np = plan.networks.at(0);
    const auto emitter = static_cast<size_t>(np.tile_of_node[node_named(plan, "f.emitter")]);
    ASSERT_EQ(np.tiles[emitter].queues.size(), 3u);
    EXPECT_EQ(np.tiles[emitter].queues[2].index, np.config.queues);  // the catch-all
    EXPECT_TRUE(np.tiles[emitter].queues[2].shared);
    AppRunner runner(app);
    const RunReport r = runner.run();
    EXPECT_EQ(r.delivered, 30000u);
    EXPECT_EQ(order_counts.out_of_order.load(), 0u);
}

TEST(AppNetwork, AMessageWithAnUnboundTagLandsInTheCatchAllAndIsCounted) {
    const AppConfig app = parse_app_config(farm_app(2, "unordered"), "farm.yaml");
    AppPlan plan = plan_app(app);
    AppNetworks nets(plan);
    noc::MessageNetwork* net = nets.message_network();
    ASSERT_NE(net, nullptr);
    EXPECT_EQ(nets.strays(), 0u);
    const uint64_t word = 42;
    const noc::Tag unbound = 0xfff0;
    ASSERT_EQ(net->queue_of(1, unbound), net->catch_all());
    ASSERT_TRUE(net->try_push(0, 1, unbound, &word, 1));
    ASSERT_TRUE(net->try_push(2, 1, unbound, &word, 1));
    EXPECT_EQ(net->queued_words(1, net->catch_all()), 4u);
    EXPECT_EQ(nets.strays(), 2u);
    EXPECT_EQ(nets.strays(), 2u) << "counted once";
}

// Too many tiles for event_sw's 64 ports: the refusal names where the count was decided
// (network.queues, else the app's nodes), not the last network setting given, which may be
// one that has nothing to do with ports.
TEST(AppNetwork, TooManyEventPortsAreRefusedWhereTheQueuesWereSet) {
    auto eventdev_farm = [](const std::string& network) {
        std::string yaml = farm_app(12, "unordered", network);  // 16 tiles x 5 = 80 ports
        yaml.replace(yaml.find("transport: udn"), 14, "transport: udn_eventdev");
        return parse_app_config(yaml, "farm.yaml");
    };
    const auto refusal = [](const AppConfig& app) {
        try {
            plan_app(app);
        } catch (const LocatedError& e) {
            return std::string(e.what());
        }
        ADD_FAILURE() << "80 event ports accepted";
        return std::string();
    };
    AppConfig app = eventdev_farm("");
    apply_overrides(app, {.sets = {"network.catch_all=strays"}});
    std::string m = refusal(app);
    EXPECT_NE(m.find("need 80 event ports"), std::string::npos) << m;
    EXPECT_EQ(m.find("network.catch_all"), std::string::npos) << m;
    EXPECT_EQ(m.rfind("farm.yaml:", 0), 0u) << m;
    app = eventdev_farm("network:\n  catch_all: strays\n  queues: 4\n");
    apply_overrides(app, {.sets = {"network.queue_words=128"}});
    m = refusal(app);
    EXPECT_EQ(m.rfind("farm.yaml:3:", 0), 0u) << m;
    app = eventdev_farm("");
    apply_overrides(app, {.sets = {"network.queues=4", "network.credits=fit"}});
    m = refusal(app);
    EXPECT_EQ(m.rfind("--set network.queues=4:", 0), 0u) << m;
}

TEST(AppNetwork, LinksThatCannotFitAreRefusedAtTheirPlaceWithTheNumbers) {
    // A queue too small for one descriptor message: the network setting is the place.
    try {
        plan_app(parse_app_config(farm_app(2, "unordered", "network:\n  queue_words: 2\n"), "farm.yaml"));
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("farm.yaml:1:"), std::string::npos) << m;
        EXPECT_NE(m.find("network.queue_words (now 2)"), std::string::npos) << m;
        EXPECT_NE(m.find("at least 3 words"), std::string::npos) << m;
    }
    // K asked exactly: refused at the link's node with what fits.
    try {
        plan_app(parse_app_config(farm_app(8, "unordered", "network: { credits: exact, queue_words: 128 }\nqueue: 64\n"), "farm.yaml"));
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("farm.yaml:"), std::string::npos) << m;
        EXPECT_NE(m.find("asks for K = 64"), std::string::npos) << m;
        // A queue is a power of two: the advice is one the config takes (42 fit).
        EXPECT_NE(m.find("lower the link's queue to 32 (a power of two)"), std::string::npos) << m;
    }
    // Eight senders into a queue of 16 words: not even K = 1 fits.
    try {
        plan_app(parse_app_config(farm_app(8, "unordered", "network: { queue_words: 16 }\n"), "farm.yaml"));
        FAIL() << "accepted";
    } catch (const LocatedError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("'f.collector' cannot receive"), std::string::npos) << m;
        EXPECT_NE(m.find("8 sender(s)"), std::string::npos) << m;
        EXPECT_NE(m.find("at least 24 words"), std::string::npos) << m;
    }
}

TEST(AppNetwork, TheNetworkSettingIsCheckedWhereItIsWritten) {
    for (const char* bad : {"network: { queue_words: 100 }\n", "network: { queues: 0 }\n", "network: { credits: some }\n",
                            "network: { catch_all: maybe }\n", "network: { depth: 3 }\n"}) {
        SCOPED_TRACE(bad);
        EXPECT_THROW(parse_app_config(farm_app(2, "unordered", bad), "farm.yaml"), LocatedError);
    }
}

TEST(AppNetwork, PrivatePairsStayOffTheNetwork) {
    const AppConfig app = parse_app_config(
        "transport: udn_pair\npipeline:\n  - { stage: synth, count: 1000 }\n  - pass\n  - drop\n", "t.yaml");
    EXPECT_TRUE(plan_app(app).networks.empty());
    AppRunner runner(app);
    EXPECT_EQ(runner.run().delivered, 1000u);
}

}  // namespace
}  // namespace tp
