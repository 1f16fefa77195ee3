// The reference's C++ frontend side of the cuDNN-backend benchmark (issue 6): the same graphs as
// tests/gpu_cudnn.rs `bench_cudnn_backend` and bench/cudnn_reference.py, built with
// nvidia-cudnn-frontend 1.32.0's header-only C++ graph API (the wheel's include/), planned with
// the same heuristic modes [A, FALLBACK], built with HEURISTICS_CHOICE, then timed the way the
// dnnplan side is timed:
//   * host time per execute = wall time of the execute calls alone (enqueue only), bursts of 50
//     with a stream synchronize between bursts, after 100 warm-up calls; printed as the mean over
//     all calls and the fastest burst's mean; with the same pointers every call and with two
//     pointer sets alternating;
//   * plan creation = validate + build_operation_graph + create_execution_plans([A, FALLBACK])
//     on a fresh graph object, library initialised: the first call, then the median of 5 more
//     (and the heuristics part, create_execution_plans alone, as a median of 5), before the
//     graph's plan was built, and again (median of 5) after it was built and executed.
// Two execute entry points are timed: the uid map (`execute(handle, uid->ptr map, ws)`, the
// documented one) and the sorted user pointers (`execute(handle, void**, n, ws)`, the raw path).
// Prints `CPP | case | plan | creation first; median ms | heuristics median ms | execute ... us |
// creation after build + execute ms | heuristics ms`.
// Built and run on the device by bench/run_cudnn_bench.sh:
//   g++ -O2 -std=c++17 -I<frontend>/include -I<cudnn>/include -I<cuda>/include \
//       bench/cudnn_cpp_reference.cpp -L<cudnn>/lib -l:libcudnn.so.9 -L<cuda>/lib64 -lcudart -lnvrtc
#include <cudnn_frontend.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace fe = cudnn_frontend;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

#define CUDA_OK(x)                                                                            \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

// Throws the frontend's message when a call fails (caught per case).
void fe_ok(fe::error_t e, char const* what) {
    if (e.is_bad()) {
        throw std::runtime_error(std::string(what) + ": " + e.get_message());
    }
}

struct Tensor {
    int64_t uid;
    int64_t elems;
};

// A graph description: how to add the ops to a fresh graph, and its user tensors.
struct Case {
    std::string name;
    std::function<void(fe::graph::Graph&)> build;
    std::vector<Tensor> tensors;
};

std::vector<int64_t> packed(std::vector<int64_t> const& dims) {
    std::vector<int64_t> s(dims.size(), 1);
    for (int i = (int)dims.size() - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
    return s;
}

int64_t count(std::vector<int64_t> const& dims) {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
}

// Causal (top-left) SDPA forward for inference, bf16 [b,h,s,d] packed, scale 1/sqrt(d);
// uids q 1, k 2, v 3, O 4 (as bench_graphs.rs).
Case sdpa_case(std::string name, int64_t b, int64_t h, int64_t s, int64_t d) {
    std::vector<int64_t> dims{b, h, s, d};
    Case c;
    c.name  = std::move(name);
    c.build = [=](fe::graph::Graph& g) {
        auto Q = g.tensor(fe::graph::Tensor_attributes().set_name("q").set_uid(1).set_dim(dims).set_stride(packed(dims)));
        auto K = g.tensor(fe::graph::Tensor_attributes().set_name("k").set_uid(2).set_dim(dims).set_stride(packed(dims)));
        auto V = g.tensor(fe::graph::Tensor_attributes().set_name("v").set_uid(3).set_dim(dims).set_stride(packed(dims)));
        auto opts = fe::graph::SDPA_attributes()
                        .set_name("sdpa")
                        .set_generate_stats(false)
                        .set_attn_scale(1.0f / std::sqrt((float)d))
                        .set_causal_mask(true);
        auto [O, stats] = g.sdpa(Q, K, V, opts);
        (void)stats;
        O->set_output(true).set_uid(4).set_dim(dims).set_stride(packed(dims));
    };
    for (int64_t u = 1; u <= 4; ++u) c.tensors.push_back({u, count(dims)});
    return c;
}

// C[1,m,n] = A[1,m,k] . B[1,k,n], bf16 in and out, FLOAT compute; uids A 1, B 2, C 3.
Case matmul_case(std::string name, int64_t m, int64_t n, int64_t k) {
    Case c;
    c.name  = std::move(name);
    c.build = [=](fe::graph::Graph& g) {
        std::vector<int64_t> ad{1, m, k}, bd{1, k, n}, cd{1, m, n};
        auto A = g.tensor(fe::graph::Tensor_attributes().set_name("A").set_uid(1).set_dim(ad).set_stride(packed(ad)));
        auto B = g.tensor(fe::graph::Tensor_attributes().set_name("B").set_uid(2).set_dim(bd).set_stride(packed(bd)));
        auto C = g.matmul(A, B, fe::graph::Matmul_attributes().set_name("mm").set_compute_data_type(fe::DataType_t::FLOAT));
        C->set_output(true).set_uid(3).set_data_type(fe::DataType_t::BFLOAT16).set_dim(cd).set_stride(packed(cd));
    };
    c.tensors = {{1, m * k}, {2, k * n}, {3, m * n}};
    return c;
}

std::vector<fe::HeurMode_t> const MODES{fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK};

std::unique_ptr<fe::graph::Graph> fresh_graph(Case const& c) {
    auto g = std::make_unique<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    c.build(*g);
    return g;
}

// validate + build_operation_graph + create_execution_plans; returns ms, and the heuristics
// part (create_execution_plans alone) in `heur_ms`.
std::unique_ptr<fe::graph::Graph> plan(Case const& c, cudnnHandle_t handle, double& ms, double& heur_ms) {
    auto t0 = Clock::now();
    auto g  = fresh_graph(c);
    fe_ok(g->validate(), "validate");
    fe_ok(g->build_operation_graph(handle), "build_operation_graph");
    auto t1 = Clock::now();
    fe_ok(g->create_execution_plans(MODES), "create_execution_plans");
    heur_ms = ms_since(t1);
    ms      = ms_since(t0);
    return g;
}

struct Timing {
    double mean_us, min_us;
};

Timing host_time(cudaStream_t stream, int total, std::function<void(int)> const& exec) {
    for (int i = 0; i < 100; ++i) exec(i);
    int const burst  = 50;
    int const rounds = (total + burst - 1) / burst;
    double sum = 0, best = 1e300;
    int i = 0;
    for (int r = 0; r < rounds; ++r) {
        CUDA_OK(cudaStreamSynchronize(stream));
        auto t = Clock::now();
        for (int k = 0; k < burst; ++k) exec(i++);
        double s = std::chrono::duration<double>(Clock::now() - t).count();
        sum += s;
        best = std::min(best, s / burst);
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    return {sum * 1e6 / (rounds * burst), best * 1e6};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void run_case(Case const& c, cudnnHandle_t handle, cudaStream_t stream, int host_iters) {
    double first = 0, first_heur = 0;
    auto g = plan(c, handle, first, first_heur);
    std::vector<double> warm, heur;
    for (int i = 0; i < 5; ++i) {
        double ms = 0, h = 0;
        plan(c, handle, ms, h);
        warm.push_back(ms);
        heur.push_back(h);
    }
    fe_ok(g->check_support(handle), "check_support");
    fe_ok(g->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans");
    std::string name = "?";
    // The plan name of the built candidate (the plan list's tag at the selected index).
    {
        std::string tag;
        if (g->get_plan_name(tag).is_good()) name = tag;
    }
    int64_t ws_bytes = 0;
    fe_ok(g->get_workspace_size(ws_bytes), "workspace");
    void* ws = nullptr;
    CUDA_OK(cudaMalloc(&ws, std::max<int64_t>(ws_bytes, 256)));

    // Two operand sets (zero-filled bf16; the host time does not depend on values).
    std::vector<void*> bufs;
    std::unordered_map<int64_t, void*> maps[2];
    std::vector<void*> sorted[2];
    auto uids = c.tensors;
    std::sort(uids.begin(), uids.end(), [](Tensor const& a, Tensor const& b) { return a.uid < b.uid; });
    for (int s = 0; s < 2; ++s) {
        for (auto const& t : uids) {
            void* p = nullptr;
            CUDA_OK(cudaMalloc(&p, std::max<int64_t>(t.elems * 2, 256)));
            CUDA_OK(cudaMemset(p, 0, std::max<int64_t>(t.elems * 2, 256)));
            bufs.push_back(p);
            maps[s][t.uid] = p;
            sorted[s].push_back(p);
        }
    }
    auto by_map = [&](int i) {
        fe::error_t e = g->execute(handle, maps[i & 1], ws);
        if (e.is_bad()) throw std::runtime_error("execute (uid map): " + e.get_message());
    };
    auto by_ptrs = [&](int i) {
        fe::error_t e = g->execute(handle, sorted[i & 1].data(), (int)sorted[i & 1].size(), ws);
        if (e.is_bad()) throw std::runtime_error("execute (sorted ptrs): " + e.get_message());
    };
    // Same pointers: always set 0.
    auto map_same  = host_time(stream, host_iters, [&](int) { by_map(0); });
    auto map_alt   = host_time(stream, host_iters, [&](int i) { by_map(i); });
    auto ptrs_same = host_time(stream, host_iters, [&](int) { by_ptrs(0); });
    auto ptrs_alt  = host_time(stream, host_iters, [&](int i) { by_ptrs(i); });
    // Creation again, now that this graph's plan was built and executed (the state the Python
    // reference measures its warm creation in).
    std::vector<double> warm_after, heur_after;
    for (int i = 0; i < 5; ++i) {
        double ms = 0, h = 0;
        plan(c, handle, ms, h);
        warm_after.push_back(ms);
        heur_after.push_back(h);
    }
    std::printf(
        "CPP | %s | %s | %.1f; %.3f | %.3f | uid map same ptrs %.2f (%.2f), alternating %.2f (%.2f); "
        "sorted ptrs same ptrs %.2f (%.2f), alternating %.2f (%.2f) | %.3f | %.3f\n",
        c.name.c_str(), name.c_str(), first, median(warm), median(heur), map_same.mean_us, map_same.min_us,
        map_alt.mean_us, map_alt.min_us, ptrs_same.mean_us, ptrs_same.min_us, ptrs_alt.mean_us, ptrs_alt.min_us,
        median(warm_after), median(heur_after));
    std::fflush(stdout);
    CUDA_OK(cudaStreamSynchronize(stream));
    for (auto p : bufs) CUDA_OK(cudaFree(p));
    CUDA_OK(cudaFree(ws));
}

}  // namespace

int main() {
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaFree(nullptr));
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudnnHandle_t handle = nullptr;
    if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS || cudnnSetStream(handle, stream) != CUDNN_STATUS_SUCCESS) {
        std::printf("CPP | cudnnCreate failed\n");
        return 1;
    }
    std::printf("CPP | cudnn frontend %d, backend %zu\n", (int)CUDNN_FRONTEND_VERSION, cudnnGetVersion());
    std::printf(
        "CPP | columns: case | plan | creation ms before any build (first; median of 5) | heuristics ms "
        "(median of 5) | host us/execute mean (min burst) | creation ms after build + execute (median of 5) | "
        "heuristics ms\n");
    std::vector<std::pair<Case, int>> cases;
    cases.push_back({sdpa_case("tiny sdpa (1,1,64,64)", 1, 1, 64, 64), 5000});
    cases.push_back({matmul_case("matmul 256x256x128 bf16", 256, 256, 128), 5000});
    cases.push_back({sdpa_case("sdpa fwd causal bf16 (4,16,4096,128)", 4, 16, 4096, 128), 200});
    cases.push_back({sdpa_case("sdpa fwd causal bf16 (2,16,8192,128)", 2, 16, 8192, 128), 200});
    cases.push_back({sdpa_case("sdpa fwd causal bf16 (8,16,2048,64)", 8, 16, 2048, 64), 200});
    for (auto const& [c, iters] : cases) {
        try {
            run_case(c, handle, stream, iters);
        } catch (std::exception const& e) {
            std::printf("CPP | %s | failed: %s\n", c.name.c_str(), e.what());
            std::fflush(stdout);
        }
    }
    cudnnDestroy(handle);
    cudaStreamDestroy(stream);
    return 0;
}
