// dnnplan_torch._C: the C++ launcher of dnnplan's forward torch ops.
//
// Contract:
// - Registers the CUDA kernels of `dnnplan::sdpa_fwd` and `dnnplan::gdn_fwd` (schemas stay the
//   hand-written Python `torch.library.define` ones; the C++ signatures below match them).
//   The Python side imports this module only when the C++ launcher is enabled, and then registers
//   no Python CUDA kernel for these two ops.
// - Steady state, entirely in C++ (no GIL): a key of the raw sizes, strides and dtype of every
//   tensor argument, the device and the attributes -> the cached entry (plan-list pointer,
//   operand order, workspace size, output sizes and dtypes); outputs by `at::empty` (compact);
//   torch's current stream -> the dnnplan handle of (device, stream); the workspace cached per
//   (device, stream) as the Python launcher does (per call under CUDA-graph capture or above the
//   cache limit); one `dnnp_plan_list_execute` through a pointer resolved with dlsym on the
//   dlopen handle of the libdnnplan.so the package loaded (no link-time dependency on it).
// - A cache miss calls the op's Python miss function under the GIL: it runs the Python launcher
//   for this call (planning through the existing ctypes code) and returns `(outputs, spec)`, spec
//   being `None` when this signature is not servable as given (inputs copied: every such call is
//   then served by Python) or `(plan_list_ptr, order, workspace_bytes, ((sizes, dtype), ...),
//   plan)`; `plan` (the PreparedPlan) is referenced by the entry, so it stays alive. Python
//   exceptions (planning errors, capture guidance) propagate unchanged.
// - Handles come from the Python side (`new_handle(device, stream) -> pointer`), which owns them;
//   an execute failure calls `execute_failed(status, plan)`, which raises the package's error.
// - `clear()` forgets entries (kept alive, like Python's retired plans: captured CUDA graphs may
//   still use them) and cached workspaces. Nothing is torn down at process exit.

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include "dnnplan.h"

namespace py = pybind11;

namespace {

using ExecuteFn = decltype(&dnnp_plan_list_execute);

// Launcher-argument counts (the Python launchers' pointer lists).
constexpr size_t kMaxArgs = 32;

enum Op : int64_t { kSdpaFwd = 1, kGdnFwd = 2, kNumOps = 3 };

struct OutSpec {
  std::vector<int64_t> sizes;
  at::ScalarType dtype;
};

// What the steady state needs for one signature.
struct Entry {
  bool python = false;  // not servable as given: the Python launcher serves every call
  const dnnp_plan_list_t* list = nullptr;
  std::vector<int> order;  // launcher-argument index of each operand, in operand order
  size_t workspace_bytes = 0;
  std::vector<OutSpec> outs;
  py::object plan;  // the PreparedPlan (keeps the plan list alive)
};

using Key = std::vector<int64_t>;

struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ k.size();
    for (int64_t x : k) {
      h ^= static_cast<uint64_t>(x) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return static_cast<size_t>(h);
  }
};

struct StreamKey {
  int64_t device;
  uintptr_t stream;
  bool operator==(const StreamKey& o) const { return device == o.device && stream == o.stream; }
};

struct StreamKeyHash {
  size_t operator()(const StreamKey& k) const noexcept {
    return std::hash<uintptr_t>()(k.stream) ^
           (static_cast<size_t>(k.device) * 0x9e3779b97f4a7c15ull);
  }
};

struct State {
  std::mutex mu;  // guards the maps; never held while taking the GIL
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> entries;
  std::vector<std::shared_ptr<Entry>> retired;
  std::unordered_map<StreamKey, void*, StreamKeyHash> handles;
  std::unordered_map<StreamKey, at::Tensor, StreamKeyHash> workspaces;
  std::atomic<ExecuteFn> execute{nullptr};
  std::atomic<int64_t> workspace_cache_bytes{16 << 20};
  // Python callables (set once by the package, under the GIL; never destroyed).
  py::object miss[kNumOps];
  py::object new_handle;
  py::object execute_failed;
  std::atomic<uint64_t> hits{0}, misses{0}, python_calls{0};
};

// Leaked on purpose: no destructor runs at exit (Python, CUDA and cuDNN may be gone by then).
State& state() {
  static State* s = new State();
  return *s;
}

// ------------------------------------------------------------------------------------------
// Keys

void put_tensor(Key& k, const at::Tensor& t) {
  auto sizes = t.sizes();
  auto strides = t.strides();
  k.push_back(static_cast<int64_t>(sizes.size()));
  k.insert(k.end(), sizes.begin(), sizes.end());
  k.insert(k.end(), strides.begin(), strides.end());
  k.push_back(static_cast<int64_t>(t.scalar_type()));
}

void put_opt(Key& k, const std::optional<at::Tensor>& t) {
  if (t.has_value() && t->defined()) {
    put_tensor(k, *t);
  } else {
    k.push_back(-1);
  }
}

void put_double(Key& k, double x) {
  int64_t bits;
  static_assert(sizeof(bits) == sizeof(x));
  std::memcpy(&bits, &x, sizeof(bits));
  k.push_back(bits);
}

void put_str(Key& k, std::string_view s) {
  k.push_back(static_cast<int64_t>(s.size()));
  for (size_t i = 0; i < s.size(); i += 8) {
    int64_t w = 0;
    std::memcpy(&w, s.data() + i, std::min<size_t>(8, s.size() - i));
    k.push_back(w);
  }
}

std::shared_ptr<Entry> lookup(const Key& key) {
  State& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  auto it = s.entries.find(key);
  return it == s.entries.end() ? nullptr : it->second;
}

// Parses a miss function's spec (under the GIL) and caches it under `key`.
void remember(const Key& key, const py::handle& spec) {
  State& s = state();
  auto e = std::make_shared<Entry>();
  if (spec.is_none() || s.execute.load() == nullptr) {
    e->python = true;
  } else {
    auto t = spec.cast<py::tuple>();
    if (t.size() != 5) throw std::runtime_error("dnnplan_torch._C: malformed plan spec");
    e->list = reinterpret_cast<const dnnp_plan_list_t*>(t[0].cast<uintptr_t>());
    for (auto o : t[1].cast<py::tuple>()) e->order.push_back(o.cast<int>());
    e->workspace_bytes = t[2].cast<size_t>();
    for (auto o : t[3].cast<py::tuple>()) {
      auto pair = o.cast<py::tuple>();
      OutSpec out;
      for (auto d : pair[0].cast<py::tuple>()) out.sizes.push_back(d.cast<int64_t>());
      out.dtype = pair[1].cast<at::ScalarType>();
      e->outs.push_back(std::move(out));
    }
    e->plan = py::reinterpret_borrow<py::object>(t[4]);
    if (e->order.size() > kMaxArgs) e->python = true;
  }
  std::lock_guard<std::mutex> g(s.mu);
  s.entries.emplace(key, std::move(e));  // a concurrent miss may have won: keep the first
}

// ------------------------------------------------------------------------------------------
// Streams, handles, workspaces

void* handle_for(c10::DeviceIndex device, cudaStream_t stream) {
  State& s = state();
  StreamKey sk{device, reinterpret_cast<uintptr_t>(stream)};
  {
    std::lock_guard<std::mutex> g(s.mu);
    auto it = s.handles.find(sk);
    if (it != s.handles.end()) return it->second;
  }
  void* h;
  {
    py::gil_scoped_acquire gil;
    if (!s.new_handle) throw std::runtime_error("dnnplan_torch._C: not configured (new_handle)");
    h = reinterpret_cast<void*>(
        s.new_handle(static_cast<int64_t>(device), sk.stream).cast<uintptr_t>());
  }
  std::lock_guard<std::mutex> g(s.mu);
  s.handles.emplace(sk, h);
  return h;
}

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
    cudaGetLastError();  // clear it; treat as capturing (a per-call workspace is always safe)
    return true;
  }
  return st != cudaStreamCaptureStatusNone;
}

at::Tensor workspace_for(c10::DeviceIndex device, cudaStream_t stream, size_t nbytes,
                         const at::TensorOptions& like) {
  State& s = state();
  auto opts = like.dtype(at::kByte);
  if (static_cast<int64_t>(nbytes) > s.workspace_cache_bytes.load() || capturing(stream)) {
    // Per call (under capture: from the graph's private pool, alive as long as the graph).
    return at::empty({static_cast<int64_t>(nbytes)}, opts);
  }
  StreamKey sk{device, reinterpret_cast<uintptr_t>(stream)};
  {
    std::lock_guard<std::mutex> g(s.mu);
    auto it = s.workspaces.find(sk);
    if (it != s.workspaces.end() && it->second.numel() >= static_cast<int64_t>(nbytes)) {
      return it->second;
    }
  }
  // Allocated outside the lock (an allocator hook may take the GIL). Grow-only: a larger block
  // replaces the cached one; the old block returns to the allocator once its last user is done.
  at::Tensor ws = at::empty({static_cast<int64_t>(nbytes)}, opts);
  at::Tensor old;
  {
    std::lock_guard<std::mutex> g(s.mu);
    at::Tensor& slot = s.workspaces[sk];
    if (!slot.defined() || slot.numel() < ws.numel()) {
      old = std::move(slot);
      slot = ws;
    }
  }
  return ws;
}

[[noreturn]] void execute_failed(dnnp_status_t status, const Entry& e) {
  State& s = state();
  py::gil_scoped_acquire gil;
  s.execute_failed(static_cast<int>(status), e.plan);  // raises the package's error
  throw std::runtime_error("dnnplan_torch._C: dnnp_plan_list_execute failed with status " +
                           std::to_string(status));
}

// One execute of `e` on torch's current stream of `device`; `args` in launcher-argument order.
void launch(const Entry& e, c10::DeviceIndex device, const at::TensorOptions& like,
            void* const* args) {
  State& s = state();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device).stream();
  void* handle = handle_for(device, stream);
  void* operands[kMaxArgs];
  const size_t n = e.order.size();
  for (size_t i = 0; i < n; ++i) operands[i] = args[e.order[i]];
  at::Tensor ws;  // referenced until the execute returned
  void* wsp = nullptr;
  if (e.workspace_bytes) {
    ws = workspace_for(device, stream, e.workspace_bytes, like);
    wsp = ws.data_ptr();
  }
  dnnp_status_t st = s.execute.load()(e.list, static_cast<const dnnp_handle_t*>(handle), operands,
                                      n, wsp, e.workspace_bytes, nullptr, 0);
  if (st != 0) execute_failed(st, e);
}

void* in_ptr(const at::Tensor& t) { return const_cast<void*>(t.const_data_ptr()); }

void* opt_ptr(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? in_ptr(*t) : nullptr;
}

py::object opt_py(const std::optional<at::Tensor>& t) {
  if (t.has_value() && t->defined()) return py::cast(*t);
  return py::none();
}

// The miss path: the op's Python miss function under the GIL; caches its spec (on a first miss).
template <typename... Args>
py::tuple call_python(Op op, const Key& key, bool first, Args&&... args) {
  State& s = state();
  py::gil_scoped_acquire gil;
  if (!s.miss[op]) {
    throw std::runtime_error("dnnplan_torch._C: no Python miss function for this op");
  }
  py::tuple r = s.miss[op](std::forward<Args>(args)...).template cast<py::tuple>();
  if (first) {
    s.misses++;
    remember(key, r[1]);
  } else {
    s.python_calls++;
  }
  return r[0].cast<py::tuple>();
}

// ------------------------------------------------------------------------------------------
// Kernels

std::tuple<at::Tensor, at::Tensor> sdpa_fwd(const at::Tensor& q, const at::Tensor& k,
                                            const at::Tensor& v, double scale, bool is_causal,
                                            bool generate_stats) {
  thread_local Key key;
  key.clear();
  key.push_back(kSdpaFwd);
  put_tensor(key, q);
  put_tensor(key, k);
  put_tensor(key, v);
  const c10::DeviceIndex device = q.device().index();
  key.push_back(device);
  put_double(key, scale);
  key.push_back(is_causal);
  key.push_back(generate_stats);
  std::shared_ptr<Entry> e = lookup(key);
  if (!e || e->python) {
    Key owned(key);
    py::gil_scoped_acquire gil;  // held while Python objects live in this scope
    py::tuple outs = call_python(kSdpaFwd, owned, !e, q, k, v, scale, is_causal, generate_stats);
    return {outs[0].cast<at::Tensor>(), outs[1].cast<at::Tensor>()};
  }
  state().hits++;
  const auto opts = q.options();
  at::Tensor o = at::empty(e->outs[0].sizes, opts.dtype(e->outs[0].dtype));
  at::Tensor stats = at::empty(e->outs[1].sizes, opts.dtype(e->outs[1].dtype));
  void* args[5] = {in_ptr(q), in_ptr(k), in_ptr(v), o.data_ptr(), stats.data_ptr()};
  launch(*e, device, opts, args);
  return {std::move(o), std::move(stats)};
}

std::tuple<at::Tensor, at::Tensor> gdn_fwd(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
    const at::Tensor& beta, const at::Tensor& cu_seqlens,
    const std::optional<at::Tensor>& initial_state, const std::optional<at::Tensor>& a_log,
    const std::optional<at::Tensor>& dt_bias, bool output_final_state, double scale,
    bool use_qk_l2norm, bool use_beta_sigmoid, bool allow_neg_eigval, bool safe_gate,
    c10::string_view gate_domain, bool batch_invariant,
    std::optional<c10::string_view> plan_name) {
  thread_local Key key;
  key.clear();
  key.push_back(kGdnFwd);
  put_tensor(key, q);
  put_tensor(key, k);
  put_tensor(key, v);
  put_tensor(key, g);
  put_tensor(key, beta);
  put_tensor(key, cu_seqlens);
  put_opt(key, initial_state);
  put_opt(key, a_log);
  put_opt(key, dt_bias);
  const c10::DeviceIndex device = q.device().index();
  key.push_back(device);
  key.push_back(output_final_state);
  put_double(key, scale);
  key.push_back(use_qk_l2norm | (use_beta_sigmoid << 1) | (allow_neg_eigval << 2) |
                (safe_gate << 3) | (batch_invariant << 4));
  put_str(key, gate_domain);
  if (plan_name.has_value()) {
    put_str(key, *plan_name);
  } else {
    key.push_back(-1);
  }
  std::shared_ptr<Entry> e = lookup(key);
  if (!e || e->python) {
    Key owned(key);
    py::gil_scoped_acquire gil;  // the py::str / optional conversions below need it
    py::object name = plan_name.has_value()
                          ? py::object(py::str(plan_name->data(), plan_name->size()))
                          : py::object(py::none());
    py::tuple outs = call_python(
        kGdnFwd, owned, !e, q, k, v, g, beta, cu_seqlens, opt_py(initial_state), opt_py(a_log),
        opt_py(dt_bias), output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
        allow_neg_eigval, safe_gate, py::str(gate_domain.data(), gate_domain.size()),
        batch_invariant, name);
    return {outs[0].cast<at::Tensor>(), outs[1].cast<at::Tensor>()};
  }
  state().hits++;
  const auto opts = q.options();
  at::Tensor o = at::empty(e->outs[0].sizes, opts.dtype(e->outs[0].dtype));
  at::Tensor fs = at::empty(e->outs[1].sizes, opts.dtype(e->outs[1].dtype));
  void* args[12] = {in_ptr(q),      in_ptr(k),          in_ptr(v),      in_ptr(g),
                    in_ptr(beta),   in_ptr(cu_seqlens), opt_ptr(initial_state), nullptr,
                    opt_ptr(a_log), opt_ptr(dt_bias),   o.data_ptr(),   fs.data_ptr()};
  launch(*e, device, opts, args);
  return {std::move(o), std::move(fs)};
}

// ------------------------------------------------------------------------------------------
// Public-API pre-checks, on the Python objects the public function received. They return
//   0  not known valid: the Python validation runs (it stays the one source of the messages),
//   1  valid, no gradient needed: the registered op serves,
//   2  valid, a gradient is tracked: the autograd.Function serves,
//   3  valid, no gradient, and a plain eager call: the C++ launcher may be called directly.
// "Plain eager": every tensor an exact torch.Tensor (no subclass, so no __torch_function__ or
// __torch_dispatch__ of its own) whose dispatch keys are a plain CUDA tensor's (no functorch,
// functionalization, inference-only or other wrapper keys), no torch-function or
// torch-dispatch mode active, no thread-local dispatch keys included, no RecordFunction
// callbacks (the profiler sees the op when it is on). Anything the dispatcher would route
// differently from the CUDA kernel takes the op. They accept only what the Python validation
// accepts, and never raise (anything unexpected is 0).

// The dispatch keys of a plain (autograd-capable, not inference) CUDA tensor.
c10::DispatchKeySet plain_cuda_keys() {
  static const c10::DispatchKeySet keys =
      at::empty({0}, at::TensorOptions().device(at::kCUDA).dtype(at::kByte)).key_set();
  return keys;
}

// Each condition of a plain eager context, by name (also exposed for diagnostics).
struct EagerContext {
  bool dispatch_mode;        // a TorchDispatchMode is active
  bool function_mode;        // a TorchFunctionMode is active
  bool extra_included_keys;  // thread-local included dispatch keys beyond the defaults
  bool record_callbacks;     // RecordFunction callbacks (profiler, observers)
  bool plain() const {
    return !dispatch_mode && !function_mode && !extra_included_keys && !record_callbacks;
  }
};

EagerContext eager_context() {
  // The thread-local included set always holds the defaults (BackendSelect, ADInplaceOrView).
  return EagerContext{
      c10::impl::TorchDispatchModeTLS::any_modes_set(),
      at::impl::torch_function_mode_enabled(),
      c10::impl::tls_local_dispatch_key_set().included_ != c10::default_included_set,
      at::hasCallbacks(),
  };
}

bool plain_eager_context() { return eager_context().plain(); }

// Python arguments as tensors; `exact` stays true while every tensor is an exact torch.Tensor.
struct Unpacked {
  bool ok = true;
  bool exact = true;
  const at::Tensor* get(py::handle h) {
    if (!THPVariable_Check(h.ptr())) {
      ok = false;
      return nullptr;
    }
    exact = exact && THPVariable_CheckExact(h.ptr());
    return &THPVariable_Unpack(h.ptr());
  }
  std::optional<at::Tensor> opt(py::handle h) {
    if (h.is_none()) return std::nullopt;
    const at::Tensor* t = get(h);
    return t ? std::optional<at::Tensor>(*t) : std::nullopt;
  }
};

bool plain_keys(std::initializer_list<const at::Tensor*> ts) {
  const c10::DispatchKeySet keys = plain_cuda_keys();
  for (const at::Tensor* t : ts) {
    if (t && t->defined() && t->key_set() != keys) return false;
  }
  return true;
}

bool half_or_bf16(const at::Tensor& t) {
  auto s = t.scalar_type();
  return s == at::kHalf || s == at::kBFloat16;
}

int sdpa_precheck(py::handle hq, py::handle hk, py::handle hv, bool gqa) {
  Unpacked u;
  const at::Tensor* pq = u.get(hq);
  const at::Tensor* pk = u.get(hk);
  const at::Tensor* pv = u.get(hv);
  if (!u.ok) return 0;
  const at::Tensor &q = *pq, &k = *pk, &v = *pv;
  for (const at::Tensor* t : {pq, pk, pv}) {
    if (!t->defined() || t->dim() != 4 || !t->is_cuda() || !half_or_bf16(*t)) return 0;
  }
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type()) return 0;
  if (k.device() != q.device() || v.device() != q.device()) return 0;
  auto qs = q.sizes(), ks = k.sizes(), vs = v.sizes();
  if (qs[0] != ks[0] || qs[0] != vs[0] || qs[3] != ks[3] || ks[2] != vs[2]) return 0;
  const int64_t hq_ = qs[1], hk_ = ks[1], hv_ = vs[1];
  if (hk_ == 0 || hv_ == 0) return 0;
  if ((hq_ != hk_ || hq_ != hv_) && !gqa) return 0;
  if (hq_ % hk_ || hq_ % hv_) return 0;
  if (c10::GradMode::is_enabled() &&
      (q.requires_grad() || k.requires_grad() || v.requires_grad())) {
    return 2;
  }
  return u.exact && plain_eager_context() && plain_keys({pq, pk, pv}) ? 3 : 1;
}

bool requires_grad(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() && t->requires_grad();
}

const at::Tensor* ptr_of(const std::optional<at::Tensor>& t) {
  return t.has_value() ? &*t : nullptr;
}

int gdn_precheck(py::handle hq, py::handle hk, py::handle hv, py::handle hg, py::handle hbeta,
                 py::handle hcu, py::handle hinit, py::handle hidx, py::handle ha_log,
                 py::handle hdt_bias) {
  Unpacked u;
  const at::Tensor* pq = u.get(hq);
  const at::Tensor* pk = u.get(hk);
  const at::Tensor* pv = u.get(hv);
  const at::Tensor* pg = u.get(hg);
  const at::Tensor* pbeta = u.get(hbeta);
  const at::Tensor* pcu = u.get(hcu);
  const std::optional<at::Tensor> initial_state = u.opt(hinit);
  const std::optional<at::Tensor> state_indices = u.opt(hidx);
  const std::optional<at::Tensor> a_log = u.opt(ha_log);
  const std::optional<at::Tensor> dt_bias = u.opt(hdt_bias);
  if (!u.ok) return 0;
  const at::Tensor &q = *pq, &k = *pk, &v = *pv, &g = *pg, &beta = *pbeta, &cu_seqlens = *pcu;
  const std::pair<const at::Tensor*, int64_t> ranked[] = {
      {pq, 3}, {pk, 3}, {pv, 3}, {pg, 2}, {pbeta, 2}, {pcu, 1}};
  if (!q.defined() || !q.is_cuda()) return 0;
  for (const auto& [t, rank] : ranked) {
    if (!t->defined() || t->dim() != rank || t->device() != q.device()) return 0;
  }
  const int64_t h = q.size(1), hk_ = k.size(1), hv_ = v.size(1);
  if (hk_ != h && hk_ != hv_) return 0;
  const int64_t lo = std::min(h, hv_), hi = std::max(h, hv_);
  if (lo == 0 || hi % lo) return 0;
  auto cu = cu_seqlens.scalar_type();
  if (cu != at::kInt && cu != at::kLong) return 0;
  if (initial_state.has_value()) {
    if (!initial_state->defined() || initial_state->device() != q.device() ||
        initial_state->dim() == 0) {
      return 0;
    }
    if (!state_indices.has_value() && initial_state->size(0) != cu_seqlens.size(0) - 1) return 0;
  }
  if (c10::GradMode::is_enabled() &&
      (q.requires_grad() || k.requires_grad() || v.requires_grad() || g.requires_grad() ||
       beta.requires_grad() || requires_grad(initial_state) || requires_grad(a_log) ||
       requires_grad(dt_bias))) {
    return 2;
  }
  const bool plain = u.exact && plain_eager_context() &&
                     plain_keys({pq, pk, pv, pg, pbeta, pcu, ptr_of(initial_state),
                                 ptr_of(state_indices), ptr_of(a_log), ptr_of(dt_bias)});
  return plain ? 3 : 1;
}

// ------------------------------------------------------------------------------------------
// Python-facing configuration

// `handle`: the dlopen handle of the loaded libdnnplan (ctypes' CDLL._handle); `path` names it in
// messages. dlsym on that very handle: the entry point of the library the package loaded.
void bind_library(uintptr_t handle, const std::string& path) {
  void* lib = reinterpret_cast<void*>(handle);
  if (lib == nullptr) {
    throw std::invalid_argument("dnnplan_torch._C: NULL library handle for '" + path + "'");
  }
  dlerror();
  void* fn = dlsym(lib, "dnnp_plan_list_execute");
  if (fn == nullptr) {
    const char* why = dlerror();
    throw std::runtime_error("dnnplan_torch._C: dnnp_plan_list_execute not found in '" + path +
                             "' (" + (why ? why : "no symbol") + ")");
  }
  state().execute.store(reinterpret_cast<ExecuteFn>(fn));
}

Op op_named(const std::string& name) {
  if (name == "sdpa_fwd") return kSdpaFwd;
  if (name == "gdn_fwd") return kGdnFwd;
  throw std::invalid_argument("dnnplan_torch._C: unknown op '" + name + "'");
}

void clear() {
  State& s = state();
  std::unordered_map<StreamKey, at::Tensor, StreamKeyHash> workspaces;
  {
    std::lock_guard<std::mutex> g(s.mu);
    for (auto& kv : s.entries) s.retired.push_back(std::move(kv.second));
    s.entries.clear();
    workspaces.swap(s.workspaces);
  }
  // the workspaces are released here, outside the lock
}

}  // namespace

TORCH_LIBRARY_IMPL(dnnplan, CUDA, m) {
  m.impl("sdpa_fwd", TORCH_FN(sdpa_fwd));
  m.impl("gdn_fwd", TORCH_FN(gdn_fwd));
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "dnnplan_torch's C++ launcher (CUDA kernels of dnnplan::sdpa_fwd and dnnplan::gdn_fwd)";
  m.def(
      "configure",
      [](py::object new_handle, py::object execute_failed, int64_t workspace_cache_bytes) {
        State& s = state();
        s.new_handle = std::move(new_handle);
        s.execute_failed = std::move(execute_failed);
        s.workspace_cache_bytes.store(workspace_cache_bytes);
      },
      py::arg("new_handle"), py::arg("execute_failed"), py::arg("workspace_cache_bytes"),
      "Sets the handle factory new_handle(device, stream) -> pointer, the error raiser "
      "execute_failed(status, plan) and the per-stream workspace cache limit.");
  m.def(
      "set_miss",
      [](const std::string& op, py::object fn) { state().miss[op_named(op)] = std::move(fn); },
      py::arg("op"), py::arg("fn"),
      "Sets the Python miss function of 'sdpa_fwd' or 'gdn_fwd': (op arguments) -> "
      "(outputs, spec or None).");
  m.def("bind_library", &bind_library, py::arg("handle"), py::arg("path"),
        "Resolves dnnp_plan_list_execute (dlsym) in the already loaded libdnnplan, given its "
        "dlopen handle (ctypes CDLL._handle) and, for messages, its path.");
  m.def("is_bound", []() { return state().execute.load() != nullptr; });
  m.def("clear", &clear, "Forgets cached entries (kept alive) and per-stream workspaces.");
  m.def("stats", []() {
    State& s = state();
    size_t entries;
    {
      std::lock_guard<std::mutex> g(s.mu);
      entries = s.entries.size();
    }
    py::dict d;
    d["hits"] = s.hits.load();
    d["misses"] = s.misses.load();
    d["python_calls"] = s.python_calls.load();
    d["entries"] = entries;
    return d;
  });
  // The launchers called directly (no dispatcher): by the public functions for plain eager
  // inference calls (pre-check 3), and by benchmarks and tests.
  m.def("sdpa_fwd", &sdpa_fwd, "The C++ launcher of dnnplan::sdpa_fwd, called directly.");
  m.def("gdn_fwd", &gdn_fwd, "The C++ launcher of dnnplan::gdn_fwd, called directly.");
  // Pre-checks never raise: anything unexpected (symbolic sizes of a fake tensor, ...) is 0.
  m.def(
      "sdpa_precheck",
      [](py::handle q, py::handle k, py::handle v, bool gqa) {
        try {
          return sdpa_precheck(q, k, v, gqa);
        } catch (const std::exception&) {
          return 0;
        }
      },
      py::arg("q"), py::arg("k"), py::arg("v"), py::arg("enable_gqa"));
  m.def(
      "eager_context",
      []() {
        EagerContext c = eager_context();
        py::dict d;
        d["dispatch_mode"] = c.dispatch_mode;
        d["function_mode"] = c.function_mode;
        d["extra_included_keys"] = c.extra_included_keys;
        d["record_callbacks"] = c.record_callbacks;
        d["plain"] = c.plain();
        return d;
      },
      "The conditions of a plain eager context, as the pre-checks see them on this thread.");
  m.def("gdn_precheck",
        [](py::handle q, py::handle k, py::handle v, py::handle g, py::handle beta,
           py::handle cu_seqlens, py::handle initial_state, py::handle state_indices,
           py::handle a_log, py::handle dt_bias) {
          try {
            return gdn_precheck(q, k, v, g, beta, cu_seqlens, initial_state, state_indices,
                                a_log, dt_bias);
          } catch (const std::exception&) {
            return 0;
          }
        });
}
