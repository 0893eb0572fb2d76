// The C++ builder (include/tilepipe/app.hpp): records what the program says, then assembles the
// AppConfig through the same steps and per-key setters the YAML loader uses (app_config.hpp),
// each value at a Location that names its place in the program ("pipeline[2] (stage acl)").
#include "framework/builder/app_state.hpp"

#include <charconv>

#include "framework/graph/app_plan.hpp"
#include "framework/graph/rank_plan.hpp"

namespace tp {

Value::Value(double v) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    text_.assign(buf, r.ptr);
}

Value::Value(std::initializer_list<Value> items) : Value(std::vector<Value>(items)) {}

Value::Value(const std::vector<Value>& items) {
    for (const Value& v : items) text_ += (text_.empty() ? "" : ", ") + v.text();
}

const NodeCounts* Report::node(const std::string& n) const {
    for (const NodeCounts& c : nodes)
        if (c.name == n) return &c;
    return nullptr;
}

namespace {

// A setting with a dedicated call is recorded under its YAML key; a later call replaces it, as
// the last assignment in a program wins.
void record(std::vector<std::pair<std::string, std::string>>& settings, const std::string& key, const std::string& text) {
    for (auto& [k, v] : settings)
        if (k == key) {
            v = text;
            return;
        }
    settings.emplace_back(key, text);
}

AppBuilderState& checked(AppBuilderState* s) {
    if (s == nullptr) throw AppError("app", "a handle used after its AppBuilder was moved from or destroyed");
    return *s;
}

}  // namespace

Node& Node::set(const std::string& key, const Value& value) {
    record(checked(state_).nodes.at(id_).settings, key, value.text());
    return *this;
}

Node& Node::tile(int x, int y) { return set("tile", "[" + std::to_string(x) + ", " + std::to_string(y) + "]"); }

const std::string& Node::stage() const { return checked(state_).nodes.at(id_).stage; }

Node& Node::out(const std::string& output, const Element& to) {
    checked(state_).add_out(id_, output, to);
    return *this;
}

Farm& Farm::out(const Element& to) {
    checked(state_).add_pattern_out(id_, to);
    return *this;
}

Map& Map::out(const Element& to) {
    checked(state_).add_pattern_out(id_, to);
    return *this;
}

void AppBuilderState::add_pattern_out(size_t pattern, const Element& to) {
    const int kind = to.kind_ == Element::Kind::Node ? int(Step::Node) : int(Step::Pattern);
    patterns.at(pattern).outs.emplace_back(kind, Ref{to.state_, to.id_});
}

void AppBuilderState::add_out(size_t node, const std::string& output, const Element& to) {
    const int kind = to.kind_ == Element::Kind::Node ? int(Step::Node) : int(Step::Pattern);
    nodes.at(node).outs.emplace_back(output, std::make_pair(kind, Ref{to.state_, to.id_}));
}

Farm& Farm::set(const std::string& key, const Value& value) {
    record(checked(state_).patterns.at(id_).settings, key, value.text());
    return *this;
}

Farm& Farm::worker(std::vector<Node> chain) {
    checked(state_).set_worker(id_, chain, false);
    return *this;
}

Farm& Farm::worker_pipeline(std::vector<Node> stages) {
    checked(state_).set_worker(id_, stages, true);
    return *this;
}

Map& Map::set(const std::string& key, const Value& value) {
    record(checked(state_).patterns.at(id_).settings, key, value.text());
    return *this;
}

Map& Map::worker(std::vector<Node> chain) {
    checked(state_).set_worker(id_, chain, false);
    return *this;
}

void AppBuilderState::set_worker(size_t pattern, const std::vector<Node>& chain, bool own_tiles) {
    PatternSpec& p = patterns.at(pattern);
    p.worker.clear();
    p.worker_given = true;
    p.worker_pipeline = own_tiles;
    for (const Node& n : chain) p.worker.push_back(Ref{n.state_, n.id_});
}

AppBuilder::AppBuilder(const std::string& name) : state_(std::make_unique<AppBuilderState>()) { state_->name = name; }
AppBuilder::~AppBuilder() = default;
AppBuilder::AppBuilder(AppBuilder&& other) noexcept = default;
AppBuilder& AppBuilder::operator=(AppBuilder&& other) noexcept = default;

AppBuilder& AppBuilder::set(const std::string& key, const Value& value) {
    record(checked(state_.get()).settings, key, value.text());
    return *this;
}

AppBuilder& AppBuilder::plugin(const std::string& path) {
    checked(state_.get()).plugins.push_back(path);
    return *this;
}

AppBuilder& AppBuilder::pool(uint32_t mbufs, uint32_t cache, uint32_t data_room) {
    if (mbufs != 0) set("pool.mbufs", mbufs);
    set("pool.cache", cache);
    return set("pool.data_room", data_room);
}

AppBuilder& AppBuilder::runtime(const std::string& threads, const std::string& fuse, const std::string& idle) {
    set("runtime.threads", threads);
    set("runtime.fuse", fuse);
    return set("runtime.idle", idle);
}

Node AppBuilder::stage(const std::string& stage, std::initializer_list<Setting> params) {
    AppBuilderState& s = checked(state_.get());
    s.nodes.push_back(AppBuilderState::NodeSpec{stage, {}});
    Node n(&s, s.nodes.size() - 1);
    for (const auto& [key, value] : params) n.set(key, value);
    return n;
}

Farm AppBuilder::farm(const std::string& name) {
    AppBuilderState& s = checked(state_.get());
    s.patterns.push_back(AppBuilderState::PatternSpec{false, {}, {}, false, false});
    Farm f(&s, s.patterns.size() - 1);
    if (!name.empty()) f.set("name", name);
    return f;
}

Map AppBuilder::map(const std::string& name) {
    AppBuilderState& s = checked(state_.get());
    s.patterns.push_back(AppBuilderState::PatternSpec{true, {}, {}, false, false});
    Map m(&s, s.patterns.size() - 1);
    if (!name.empty()) m.set("name", name);
    return m;
}

AppBuilder& AppBuilder::pipeline(std::vector<Element> elements) {
    AppBuilderState& s = checked(state_.get());
    s.pipeline.clear();
    for (const Element& e : elements)
        s.pipeline.push_back(AppBuilderState::Step{
            e.kind_ == Element::Kind::Node ? AppBuilderState::Step::Node : AppBuilderState::Step::Pattern,
            AppBuilderState::Ref{e.state_, e.id_}});
    return *this;
}

const std::string& AppBuilder::name() const { return checked(state_.get()).name; }

std::string AppBuilder::validate() const {
    try {
        const AppConfig app = checked(state_.get()).assemble();
        const AppPlan plan = plan_app(app);
        check_rank_layout(app, plan.graph, plan_ranks(app, plan.graph));
        return describe_app(app);
    } catch (const LocatedError& e) {
        throw to_app_error(e);
    }
}

AppError to_app_error(const LocatedError& e) { return AppError(e.where().str(), e.message()); }

}  // namespace tp
