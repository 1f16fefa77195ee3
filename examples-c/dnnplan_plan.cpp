// dnnplan from C++17 through dnnplan.hpp (the header-only layer over the C ABI): read a graph's
// JSON document, plan it for an SM 9.0 GPU, walk the ranked plan list, try to build it, and see
// failures come back as dnnplan::Error with the library's message. Needs no GPU: planning is host
// work (a build needs one and, without, says why). Exits 0 when everything behaves as documented.
//
//   dnnplan_plan [GRAPH.json]   (default: ../examples/graphs/gdn_forward.json from examples-c/)
#include <dnnplan.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_file(const char* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error(std::string("cannot read ") + path);
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool contains(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }

int fail(const char* what) {
    std::fprintf(stderr, "dnnplan_plan: %s\n", what);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "../examples/graphs/gdn_forward.json";
    try {
        std::printf("dnnplan %s\n", dnnplan::version().c_str());

        // A graph from its document, planned for a 132-SM SM 9.0 GPU whatever this machine has.
        dnnplan::Graph graph = dnnplan::Graph::from_json(read_file(path));
        graph.set_target(132, 90);
        graph.validate();
        const auto key = graph.key();
        std::printf("graph key %02x%02x%02x%02x...\n", key[0], key[1], key[2], key[3]);

        // Why the list will be what it is, before planning (the graph stays mutable).
        if (!contains(graph.explain(), "\"candidates\"")) {
            return fail("an explanation without its candidates");
        }
        dnnplan::PlanList plans(graph);  // freezes the graph; the list keeps its own snapshot
        plans.create_execution_plans();
        std::printf("%zu plan(s), %zu operands:\n", plans.size(), plans.operand_count());
        for (size_t i = 0; i < plans.size(); ++i) {
            std::printf("  [%zu] %s\n", i, plans.plan_name(i).c_str());
        }
        if (plans.size() == 0 || !contains(plans.explain(), "\"plans\"")) {
            return fail("an empty list or an explanation without plans");
        }

        // Failures are dnnplan::Error: the status, the call and the library's message.
        try {
            (void)plans.plan_name(plans.size());
            return fail("plan_name past the end did not throw");
        } catch (const dnnplan::Error& e) {
            std::printf("expected: %s\n", e.what());
            if (e.status() != DNNP_STATUS_BAD_PARAM || e.message().empty()) {
                return fail("plan_name past the end: not BAD_PARAM with a message");
            }
        }
        try {
            (void)dnnplan::Graph::from_json("{\"format\": \"dnnplan.graph\"}");
            return fail("a document without its schema version did not throw");
        } catch (const dnnplan::Error& e) {
            std::printf("expected: %s\n", e.what());
            if (!contains(e.what(), "dnnp_graph_from_json: DNNP_STATUS_BAD_PARAM: ")) {
                return fail("the error does not name the call and its status");
            }
        }
        // Building needs the GPU the list was planned for: on a machine without one it throws,
        // naming why. Built or not, an execute whose required operands are NULL is refused.
        dnnplan::Handle stream;  // the legacy default stream
        try {
            plans.build_plans();
            std::printf("built plan %zu, workspace %llu bytes\n", plans.selected(),
                        static_cast<unsigned long long>(plans.workspace_size()));
        } catch (const dnnplan::Error& e) {
            std::printf("not built here: %s\n", e.what());
        }
        try {
            plans.execute(stream, std::vector<void*>(plans.operand_count(), nullptr), nullptr, 0);
            return fail("an execute without operands did not throw");
        } catch (const dnnplan::Error& e) {
            std::printf("expected: %s\n", e.what());
        }
        // A frozen graph refuses mutation; a clone is mutable again.
        try {
            graph.set_target(132, 90);
            return fail("a frozen graph accepted a mutation");
        } catch (const dnnplan::Error&) {
        }
        dnnplan::Graph copy = graph.clone();
        copy.set_target(66, 90);
        if (copy.key() == key) {
            return fail("another target kept the key");
        }
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    std::printf("ok\n");
    return 0;
}
