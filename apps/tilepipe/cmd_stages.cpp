// `tilepipe stages`: every registered stage with its parameters, read from the declarations
// the stages make where they register.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/tilepipe/commands.hpp"
#include "apps/tilepipe/app_args.hpp"
#include "framework/plugin/plugin_loader.hpp"
#include "framework/stage/registry.hpp"

namespace tp::cli {

namespace {
int list_stages(const std::string& only, const std::vector<std::string>& plugins) {
    try {
        load_plugins(plugins);
    } catch (const LocatedError& e) {
        std::fprintf(stderr, "tilepipe: %s\n", e.what());
        return kExitUsage;
    }
    bool found = false;
    for (const StageInfo* s : StageRegistry::instance().all()) {
        if (!only.empty() && s->name != only) continue;
        found = true;
        std::printf("%s (%s%s%s)\n    %s\n", s->name.c_str(), stage_kind_name(s->kind),
                    s->origin.empty() ? "" : ", plugin ", s->origin.c_str(), s->description.c_str());
        // Columns as wide as this stage's longest entry, so long names never shift the rest.
        struct Row { std::string name, type, def, help; };
        std::vector<Row> rows;
        size_t w_name = 0, w_type = 0, w_def = 0;
        for (const ParamSpec& p : s->params) {
            std::string type = param_type_name(p.type);
            if (!p.choices.empty()) {
                type.clear();
                for (const auto& c : p.choices) type += (type.empty() ? "" : "|") + c;
            }
            if (!p.range_text().empty()) type += " " + p.range_text();
            std::string def = p.required ? "required" : "default " + (p.default_text.empty() ? "\"\"" : p.default_text);
            rows.push_back({p.name, type, def, p.help});
            w_name = std::max(w_name, p.name.size());
            w_type = std::max(w_type, type.size());
            w_def = std::max(w_def, def.size());
        }
        for (const Row& r : rows)
            std::printf("    %-*s  %-*s  %-*s  %s\n", int(w_name), r.name.c_str(), int(w_type), r.type.c_str(),
                        int(w_def), r.def.c_str(), r.help.c_str());
        if (s->notes) std::printf("%s", s->notes().c_str());
        std::printf("\n");
    }
    if (!found) {
        std::fprintf(stderr, "tilepipe: unknown stage '%s' (run 'tilepipe stages' for the list)\n", only.c_str());
        return kExitUsage;
    }
    return kExitOk;
}
}  // namespace

void add_stages(CLI::App& app, Action& action) {
    auto only = std::make_shared<std::string>();
    auto plugins = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand("stages", "list every stage with its parameters (type, default, meaning)");
    cmd->add_option("STAGE", *only, "show only this stage");
    add_plugin_option(cmd, *plugins);
    cmd->callback([only, plugins, &action] { action = [only, plugins] { return list_stages(*only, *plugins); }; });
}

}  // namespace tp::cli
