/*
 * dnnplan.hpp: a thin, header-only C++17 layer over dnnplan's C ABI (dnnplan.h), for C++
 * integrators. Hand-written (dnnplan.h is generated); it adds no entry point and no state:
 *
 *   - dnnplan::Error (a std::runtime_error carrying the status, the call and this thread's
 *     last-error message) and dnnplan::check(status, call), which throws it on failure;
 *   - dnnplan::text(call): the two-call string protocol (size, then text) in one call;
 *   - owners that destroy what they hold: Graph, PlanList, Handle (move-only; get() gives the C
 *     handle for every function not wrapped here, release() gives up ownership);
 *   - the calls of the usual path: graph from JSON or empty, validate, target, plan list, rank,
 *     names, select, build, workspace, explain, execute with raw pointers.
 *
 * Thread-safety and lifetimes are the C API's (see dnnplan.h). Link dnnplan::dnnplan (CMake) or
 * `pkg-config --libs dnnplan`; tests/c_header.rs compiles and runs a consumer of this header.
 */
#ifndef DNNPLAN_HPP
#define DNNPLAN_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dnnplan.h"

namespace dnnplan {

/// This thread's last-error message (empty after a successful call).
inline std::string last_error() {
    size_t needed = 0;
    if (dnnp_get_last_error_string(nullptr, 0, &needed) != DNNP_STATUS_BUFFER_TOO_SMALL || needed == 0) {
        return {};
    }
    std::string text(needed, '\0');
    if (dnnp_get_last_error_string(&text[0], text.size(), nullptr) != DNNP_STATUS_SUCCESS) {
        return {};
    }
    text.resize(needed - 1);
    return text;
}

/// A failed dnnplan call: its status, the call's name and the library's message (which names the
/// argument, node, port or rule involved).
class Error : public std::runtime_error {
public:
    Error(dnnp_status_t status, const char* call)
        : Error(status, call, last_error()) {}

    /// The status the call returned.
    dnnp_status_t status() const noexcept { return status_; }
    /// The library's message for it.
    const std::string& message() const noexcept { return message_; }

private:
    Error(dnnp_status_t status, const char* call, std::string message)
        : std::runtime_error(std::string(call) + ": " + dnnp_status_name(status) + ": " + message),
          status_(status),
          message_(std::move(message)) {}

    dnnp_status_t status_;
    std::string message_;
};

/// Throws dnnplan::Error unless `status` is DNNP_STATUS_SUCCESS.
inline void check(dnnp_status_t status, const char* call) {
    if (status != DNNP_STATUS_SUCCESS) {
        throw Error(status, call);
    }
}

/// Runs a two-call string function: `call(buf, cap, needed)` with a NULL buffer for the size, then
/// with a buffer of that size (again, larger, if the text grew in between); returns the text
/// without its NUL.
template <class Call>
std::string text(Call&& call, const char* what) {
    size_t needed = 0;
    dnnp_status_t status = call(nullptr, 0, &needed);
    std::string out;
    for (int attempt = 0; status == DNNP_STATUS_BUFFER_TOO_SMALL && attempt < 4; ++attempt) {
        out.assign(needed, '\0');
        status = call(&out[0], out.size(), &needed);
    }
    check(status, what);
    out.resize(needed > 0 ? needed - 1 : 0);
    return out;
}

/// The library's version string, e.g. "0.1.0" (compare dnnp_get_version() with DNNP_VERSION).
inline std::string version() { return dnnp_get_version_string(); }

/// What dnnplan makes of this process's DNNPLAN_* variables, as JSON (dnnp_settings_json).
inline std::string settings_json() {
    return text([](char* b, size_t c, size_t* n) { return dnnp_settings_json(b, c, n); }, "dnnp_settings_json");
}

namespace detail {
struct GraphDeleter {
    void operator()(dnnp_graph_t* p) const noexcept { dnnp_graph_destroy(p); }
};
struct PlanListDeleter {
    void operator()(dnnp_plan_list_t* p) const noexcept { dnnp_plan_list_destroy(p); }
};
struct HandleDeleter {
    void operator()(dnnp_handle_t* p) const noexcept { dnnp_handle_destroy(p); }
};
}  // namespace detail

/// A graph (dnnp_graph_t) it owns.
class Graph {
public:
    /// An empty graph with the context data types (dnnp_graph_create).
    explicit Graph(dnnp_data_type_t io, dnnp_data_type_t intermediate = DNNP_DATA_TYPE_FLOAT,
                   dnnp_data_type_t compute = DNNP_DATA_TYPE_FLOAT) {
        dnnp_graph_t* g = nullptr;
        check(dnnp_graph_create(io, intermediate, compute, &g), "dnnp_graph_create");
        g_.reset(g);
    }
    /// Takes ownership of `owned` (may be NULL).
    explicit Graph(dnnp_graph_t* owned) noexcept : g_(owned) {}

    /// A graph read from its JSON document (dnnp_graph_from_json).
    static Graph from_json(const std::string& json) {
        dnnp_graph_t* g = nullptr;
        check(dnnp_graph_from_json(json.c_str(), &g), "dnnp_graph_from_json");
        return Graph(g);
    }

    /// The C handle (still owned here).
    dnnp_graph_t* get() const noexcept { return g_.get(); }
    /// Gives up ownership: the caller destroys the returned handle.
    dnnp_graph_t* release() noexcept { return g_.release(); }

    /// A mutable copy (dnnp_graph_clone; planning freezes a graph, clone it to plan again).
    Graph clone() const {
        dnnp_graph_t* g = nullptr;
        check(dnnp_graph_clone(get(), &g), "dnnp_graph_clone");
        return Graph(g);
    }
    /// Validates (dnnp_graph_validate); a broken rule throws, naming the node, port and rule.
    void validate() { check(dnnp_graph_validate(get()), "dnnp_graph_validate"); }
    /// Plans for another GPU than this machine's (dnnp_graph_set_target).
    void set_target(int64_t sm_count, int64_t sm_version, const char* name = nullptr) {
        check(dnnp_graph_set_target(get(), name, sm_count, sm_version), "dnnp_graph_set_target");
    }
    /// The graph's JSON document (dnnp_graph_to_json).
    std::string to_json() const {
        const dnnp_graph_t* g = get();
        return text([g](char* b, size_t c, size_t* n) { return dnnp_graph_to_json(g, b, c, n); }, "dnnp_graph_to_json");
    }
    /// Why its plan list would be what it is, as JSON (dnnp_graph_explain; empty modes: A, FALLBACK).
    std::string explain(const std::vector<dnnp_heur_mode_t>& modes = {}) const {
        const dnnp_graph_t* g = get();
        return text(
            [&](char* b, size_t c, size_t* n) { return dnnp_graph_explain(g, modes.data(), modes.size(), b, c, n); },
            "dnnp_graph_explain");
    }
    /// The graph key: blake3 of the canonical document, stable across processes (dnnp_graph_key).
    std::array<uint8_t, 32> key() const {
        std::array<uint8_t, 32> k{};
        check(dnnp_graph_key(get(), k.data()), "dnnp_graph_key");
        return k;
    }

private:
    std::unique_ptr<dnnp_graph_t, detail::GraphDeleter> g_;
};

/// A handle (dnnp_handle_t) it owns: the CUDA stream executions run on (the stream is not owned).
class Handle {
public:
    /// On `stream` (NULL: the legacy default stream), dnnp_handle_create.
    explicit Handle(void* stream = nullptr) {
        dnnp_handle_t* h = nullptr;
        check(dnnp_handle_create(stream, &h), "dnnp_handle_create");
        h_.reset(h);
    }
    /// On `stream` of device `device` (dnnp_handle_create_on_device).
    static Handle on_device(int32_t device, void* stream = nullptr) {
        dnnp_handle_t* h = nullptr;
        check(dnnp_handle_create_on_device(device, stream, &h), "dnnp_handle_create_on_device");
        return Handle(h, Adopt{});
    }
    /// The C handle (still owned here).
    dnnp_handle_t* get() const noexcept { return h_.get(); }

private:
    struct Adopt {};
    Handle(dnnp_handle_t* h, Adopt) noexcept : h_(h) {}
    std::unique_ptr<dnnp_handle_t, detail::HandleDeleter> h_;
};

/// A plan list (dnnp_plan_list_t) it owns: every way to run one frozen graph, ranked.
class PlanList {
public:
    /// The plan list of `graph` (dnnp_graph_create_plan_list: validates and freezes it; the list
    /// keeps its own snapshot, so the graph may go first). Nothing is planned yet.
    explicit PlanList(Graph& graph) {
        dnnp_plan_list_t* p = nullptr;
        check(dnnp_graph_create_plan_list(graph.get(), &p), "dnnp_graph_create_plan_list");
        p_.reset(p);
    }
    /// The plan list of the graph in `json` (dnnp_plan_list_create_from_json).
    static PlanList from_json(const std::string& json) {
        dnnp_plan_list_t* p = nullptr;
        check(dnnp_plan_list_create_from_json(json.c_str(), &p), "dnnp_plan_list_create_from_json");
        return PlanList(p);
    }
    /// Takes ownership of `owned` (may be NULL).
    explicit PlanList(dnnp_plan_list_t* owned) noexcept : p_(owned) {}

    /// The C handle (still owned here).
    dnnp_plan_list_t* get() const noexcept { return p_.get(); }

    /// Ranks every bundled engine and backend config into the list (one-shot; empty modes: A,
    /// FALLBACK). An empty list throws DNNP_STATUS_NOT_SUPPORTED with every engine's reason.
    void create_execution_plans(const std::vector<dnnp_heur_mode_t>& modes = {}) {
        check(dnnp_plan_list_create_execution_plans(get(), modes.data(), modes.size()),
              "dnnp_plan_list_create_execution_plans");
    }
    /// The number of plans.
    size_t size() const {
        size_t n = 0;
        check(dnnp_plan_list_get_count(get(), &n), "dnnp_plan_list_get_count");
        return n;
    }
    /// Plan `index`'s name (`engine[KNOB=v, ...]`, or `engN_kX=Y` for backend configs).
    std::string plan_name(size_t index) const {
        const dnnp_plan_list_t* p = get();
        return text([&](char* b, size_t c, size_t* n) { return dnnp_plan_list_get_plan_name(p, index, b, c, n); },
                    "dnnp_plan_list_get_plan_name");
    }
    /// Selects plan `index` (built later by build_plans).
    void select(size_t index) { check(dnnp_plan_list_select_plan(get(), index), "dnnp_plan_list_select_plan"); }
    /// Builds plans by `policy`; the first that builds is selected unless one is pinned.
    void build_plans(dnnp_build_policy_t policy = DNNP_BUILD_POLICY_HEURISTICS_CHOICE) {
        check(dnnp_plan_list_build_plans(get(), policy), "dnnp_plan_list_build_plans");
    }
    /// Builds plan `index` and selects it.
    void build_plan_at_index(size_t index) {
        check(dnnp_plan_list_build_plan_at_index(get(), index), "dnnp_plan_list_build_plan_at_index");
    }
    /// The selected plan's index.
    size_t selected() const {
        size_t i = 0;
        check(dnnp_plan_list_get_selected_index(get(), &i), "dnnp_plan_list_get_selected_index");
        return i;
    }
    /// The selected, built plan's workspace in bytes.
    uint64_t workspace_size() const {
        uint64_t bytes = 0;
        check(dnnp_plan_list_get_workspace_size(get(), &bytes), "dnnp_plan_list_get_workspace_size");
        return bytes;
    }
    /// The number of operands execute() takes (in the graph's operand order).
    size_t operand_count() const {
        size_t n = 0;
        check(dnnp_plan_list_get_operand_count(get(), &n), "dnnp_plan_list_get_operand_count");
        return n;
    }
    /// Why the list is what it is, as JSON (dnnp_plan_list_explain).
    std::string explain() const {
        const dnnp_plan_list_t* p = get();
        return text([p](char* b, size_t c, size_t* n) { return dnnp_plan_list_explain(p, b, c, n); },
                    "dnnp_plan_list_explain");
    }
    /// Runs the selected plan on `handle`'s stream with device pointers in operand order and the
    /// caller's workspace (dnnp_plan_list_execute; asynchronous on the stream).
    void execute(const Handle& handle, const std::vector<void*>& device_ptrs, void* workspace,
                 size_t workspace_bytes) const {
        check(dnnp_plan_list_execute(get(), handle.get(), device_ptrs.data(), device_ptrs.size(), workspace,
                                     workspace_bytes, nullptr, 0),
              "dnnp_plan_list_execute");
    }

private:
    std::unique_ptr<dnnp_plan_list_t, detail::PlanListDeleter> p_;
};

}  // namespace dnnplan

#endif /* DNNPLAN_HPP */
