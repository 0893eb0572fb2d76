// `tilepipe stages`: every registered stage with its parameters, read from the declarations
// the stages make where they register.
#include <cstdio>

#include "apps/tilepipe/commands.hpp"
#include "framework/stage/registry.hpp"

namespace tp::cli {

namespace {
int list_stages(const std::string& only) {
    bool found = false;
    for (const StageInfo* s : StageRegistry::instance().all()) {
        if (!only.empty() && s->name != only) continue;
        found = true;
        std::printf("%s (%s)\n    %s\n", s->name.c_str(), stage_kind_name(s->kind), s->description.c_str());
        for (const ParamSpec& p : s->params) {
            std::string type = param_type_name(p.type);
            if (!p.choices.empty()) {
                type.clear();
                for (const auto& c : p.choices) type += (type.empty() ? "" : "|") + c;
            }
            const std::string def = p.required ? "required" : "default " + (p.default_text.empty() ? "\"\"" : p.default_text);
            std::printf("    %-12s %-10s %-18s %s\n", p.name.c_str(), type.c_str(), def.c_str(), p.help.c_str());
        }
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
    CLI::App* cmd = app.add_subcommand("stages", "list every stage with its parameters (type, default, meaning)");
    cmd->add_option("STAGE", *only, "show only this stage");
    cmd->callback([only, &action] { action = [only] { return list_stages(*only); }; });
}

}  // namespace tp::cli
