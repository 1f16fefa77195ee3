//! GPU tests of the CUDA layer (feature `gpu-tests`, run on the H200 machine):
//! - the bundled sm_90a axpy/fill kernels loaded from their cubin, launched on a caller stream,
//!   checked exactly against a CPU reference (fp32 fma, bf16 with round-to-nearest-even);
//! - cluster launches (cluster ranks read back from the GPU);
//! - the context rules (stream's context, caller's current context, named device, none);
//! - the same kernel through NVRTC, cold in one process, then warm from the compiled-plan cache in
//!   a second process (both times printed), and an unbundled knob specialization through NVRTC;
//! - NVRTC compiling a source that includes the toolkit's cuda_bf16.h;
//! - tensor maps (`dnnplan::cuda::tma`, `kernels/include/dnnp_tma.cuh`): a box loaded under the
//!   128-byte swizzle lands in `slim_wg_elem`'s layout with zeros past the tensor, and a stored
//!   box writes exactly its rows inside the tensor.
#![cfg(feature = "gpu-tests")]

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};
use dnnplan::Error;
use dnnplan::cuda::{
    ContextGuard, CurrentContext, Function, KernelArgs, LaunchConfig, Module, compile_nvrtc,
    compile_or_load, launch, nvrtc, probe,
};

fn ok(call: &str, r: sys::CUresult) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "{call}");
}

/// The test plays the framework: it owns a context and a stream and hands the stream to dnnplan.
struct Caller {
    ctx: sys::CUcontext,
    stream: CUstream,
}

impl Caller {
    fn new() -> Caller {
        probe::driver().expect("CUDA driver");
        let mut ctx = std::ptr::null_mut();
        let mut stream = std::ptr::null_mut();
        // SAFETY: plain driver calls with valid out pointers.
        unsafe {
            ok("retain", sys::cuDevicePrimaryCtxRetain(&mut ctx, 0));
            ok("set current", sys::cuCtxSetCurrent(ctx));
            ok("stream", sys::cuStreamCreate(&mut stream, 1)); // non-blocking
        }
        Caller { ctx, stream }
    }

    fn upload<T: Copy>(&self, host: &[T]) -> CUdeviceptr {
        let bytes = std::mem::size_of_val(host).max(1);
        let mut d: CUdeviceptr = 0;
        // SAFETY: `host` is valid for `bytes`; the context is current.
        unsafe {
            ok("alloc", sys::cuMemAlloc_v2(&mut d, bytes));
            ok(
                "htod",
                sys::cuMemcpyHtoD_v2(d, host.as_ptr().cast(), std::mem::size_of_val(host)),
            );
            ok("sync", sys::cuCtxSynchronize());
        }
        d
    }

    fn download<T: Copy + Default>(&self, d: CUdeviceptr, n: usize) -> Vec<T> {
        let mut host = vec![T::default(); n];
        // SAFETY: `d` holds `n` elements; the stream is synchronized first.
        unsafe {
            ok("stream sync", sys::cuStreamSynchronize(self.stream));
            ok(
                "dtoh",
                sys::cuMemcpyDtoH_v2(
                    host.as_mut_ptr().cast(),
                    d,
                    std::mem::size_of_val(&host[..]),
                ),
            );
            ok("free", sys::cuMemFree_v2(d));
        }
        host
    }
}

fn hopper() -> probe::DeviceInfo {
    let d = probe::driver().expect("driver").devices[0].clone();
    assert_eq!(
        d.compute_capability,
        (9, 0),
        "these tests expect an H100/H200"
    );
    d
}

/// Deterministic pseudo-random floats in [-4, 4).
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 8.0 - 4.0
        })
        .collect()
}

const N: usize = (1 << 20) + 37; // a tail that no unroll factor divides

fn run_axpy_f32(caller: &Caller, f: &Function, alpha: f32) -> (Vec<f32>, Vec<f32>) {
    let (x, y) = (data(N, 1), data(N, 2));
    let (dx, dy) = (caller.upload(&x), caller.upload(&y));
    let mut args = KernelArgs::new();
    args.push(N as i64).push(alpha).push(dx).push(dy);
    // SAFETY: the arguments match dnnp_axpy_f32(i64, float, const float*, float*).
    unsafe {
        launch(
            f,
            &LaunchConfig::linear(264, 256),
            caller.stream,
            None,
            &mut args,
        )
    }
    .expect("launch");
    let got = caller.download::<f32>(dy, N);
    // SAFETY: frees the input.
    unsafe { ok("free", sys::cuMemFree_v2(dx)) };
    let want = x
        .iter()
        .zip(&y)
        .map(|(a, b)| alpha.mul_add(*a, *b))
        .collect();
    (got, want)
}

#[test]
fn bundled_kernels_run_from_their_cubin_with_exact_results() {
    let caller = Caller::new();
    let device = hopper();
    let module = compile_or_load("axpy", &device, &[]).expect("bundled axpy");
    assert!(module.origin().contains("sm_90a"), "{}", module.origin());
    assert!(!module.origin().contains("NVRTC"), "{}", module.origin());

    let (got, want) = run_axpy_f32(
        &caller,
        &module.function("dnnp_axpy_f32").expect("f32"),
        1.5,
    );
    assert_eq!(got, want, "fp32 axpy is one fma per element");

    // bf16 storage, fp32 math, round to nearest even.
    let f = module.function("dnnp_axpy_bf16").expect("bf16");
    let to_bf16 = |v: &[f32]| {
        v.iter()
            .map(|x| half::bf16::from_f32(*x).to_bits())
            .collect::<Vec<u16>>()
    };
    let (x, y) = (to_bf16(&data(N, 3)), to_bf16(&data(N, 4)));
    let (dx, dy) = (caller.upload(&x), caller.upload(&y));
    let alpha = -0.3f32;
    let mut args = KernelArgs::new();
    args.push(N as i64).push(alpha).push(dx).push(dy);
    // SAFETY: matches dnnp_axpy_bf16(i64, float, const u16*, u16*).
    unsafe {
        launch(
            &f,
            &LaunchConfig::linear(132, 128),
            caller.stream,
            None,
            &mut args,
        )
    }
    .expect("launch");
    let got: Vec<u16> = caller.download(dy, N);
    let want: Vec<u16> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| {
            let (a, b) = (
                half::bf16::from_bits(*a).to_f32(),
                half::bf16::from_bits(*b).to_f32(),
            );
            half::bf16::from_f32(alpha.mul_add(a, b)).to_bits()
        })
        .collect();
    let mismatches = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    assert_eq!(
        mismatches, 0,
        "bf16 axpy differs from the RNE reference in {mismatches} elements"
    );

    // fill
    let f = module.function("dnnp_fill_f32").expect("fill");
    let dy = caller.upload(&vec![0f32; 1000]);
    let mut args = KernelArgs::new();
    args.push(1000i64).push(2.5f32).push(dy);
    // SAFETY: matches dnnp_fill_f32(i64, float, float*).
    unsafe {
        launch(
            &f,
            &LaunchConfig::linear(2, 128),
            caller.stream,
            None,
            &mut args,
        )
    }
    .expect("launch");
    assert!(caller.download::<f32>(dy, 1000).iter().all(|v| *v == 2.5));

    assert!(matches!(
        module.function("no_such_kernel"),
        Err(Error::NotFound { .. })
    ));
    println!("bundled: fp32, bf16 and fill exact over {N} elements");
}

#[test]
fn cluster_dimensions_reach_the_kernel() {
    let caller = Caller::new();
    let module = compile_or_load("axpy", &hopper(), &[]).expect("axpy");
    let f = module
        .function("dnnp_cluster_ranks")
        .expect("cluster kernel");
    for (cluster, size) in [(Some((2, 1, 1)), 2u32), (Some((4, 1, 1)), 4), (None, 1)] {
        let blocks = 8u32;
        let out = caller.upload(&vec![0xdeadu32; 2 * blocks as usize]);
        let mut args = KernelArgs::new();
        args.push(out);
        let config = LaunchConfig {
            cluster,
            ..LaunchConfig::linear(blocks, 64)
        };
        // SAFETY: matches dnnp_cluster_ranks(u32*), 2 words per block.
        unsafe { launch(&f, &config, caller.stream, None, &mut args) }.expect("cluster launch");
        let got: Vec<u32> = caller.download(out, 2 * blocks as usize);
        for b in 0..blocks as usize {
            assert_eq!(
                (got[2 * b], got[2 * b + 1]),
                (b as u32 % size, size),
                "block {b}, cluster {cluster:?}"
            );
        }
    }
    let bad = LaunchConfig {
        cluster: Some((3, 1, 1)),
        programmatic: false,
        ..LaunchConfig::linear(8, 64)
    };
    let mut args = KernelArgs::new();
    args.push(0u64);
    // SAFETY: rejected before any launch.
    let r = unsafe { launch(&f, &bad, caller.stream, None, &mut args) };
    assert!(matches!(r, Err(Error::BadParam { .. })), "{r:?}");
    println!("clusters: ranks and sizes read back for 2x1x1, 4x1x1 and none");
}

#[test]
fn the_context_comes_from_the_stream_the_caller_or_the_named_device() {
    let caller = Caller::new();
    let module = compile_or_load("axpy", &hopper(), &[]).expect("axpy");
    let f = module.function("dnnp_fill_f32").expect("fill");
    let current = CurrentContext::current()
        .expect("query")
        .expect("a current context");
    assert_eq!(current.context, caller.ctx);
    assert_eq!(current.ordinal, 0);
    assert_eq!(current.device().expect("props").sm_count, hopper().sm_count);

    // The caller's current context with the legacy default stream.
    let d = caller.upload(&[0f32; 64]);
    let mut args = KernelArgs::new();
    args.push(64i64).push(7f32).push(d);
    // SAFETY: matches dnnp_fill_f32.
    unsafe {
        launch(
            &f,
            &LaunchConfig::linear(1, 64),
            std::ptr::null_mut(),
            None,
            &mut args,
        )
    }
    .expect("default stream");
    // SAFETY: waits for the legacy stream.
    unsafe { ok("ctx sync", sys::cuCtxSynchronize()) };
    assert!(caller.download::<f32>(d, 64).iter().all(|v| *v == 7.0));

    // A thread with no current context: the stream names it; with the default stream only a named
    // device does, and with neither the call fails cleanly.
    let stream = caller.stream as usize;
    let dev = caller.upload(&[0f32; 64]) as usize;
    let f2 = f.clone();
    std::thread::spawn(move || {
        assert_eq!(CurrentContext::current().expect("query"), None);
        let mut args = KernelArgs::new();
        args.push(64i64).push(3f32).push(dev as CUdeviceptr);
        // SAFETY: matches dnnp_fill_f32; the stream is live.
        unsafe {
            launch(
                &f2,
                &LaunchConfig::linear(1, 64),
                stream as CUstream,
                None,
                &mut args,
            )
        }
        .expect("the stream's context");
        assert_eq!(
            CurrentContext::current().expect("query"),
            None,
            "the caller's state is restored"
        );
        // SAFETY: a default-stream sentinel.
        let none = unsafe { ContextGuard::for_stream(std::ptr::null_mut(), None) };
        assert!(matches!(none, Err(Error::InvalidState(_))), "{none:?}");
        // SAFETY: as above.
        let named =
            unsafe { ContextGuard::for_stream(std::ptr::null_mut(), Some(0)) }.expect("device 0");
        assert_eq!(named.context().ordinal, 0);
    })
    .join()
    .expect("thread");
    assert!(
        caller
            .download::<f32>(dev as CUdeviceptr, 64)
            .iter()
            .all(|v| *v == 3.0)
    );
    println!("contexts: stream's, caller's current, named device, none -> InvalidState");
}

/// Child process body: compile through NVRTC with the compiled-plan cache, run it, print timings.
/// Ignored in normal runs; the parent test runs it with `--ignored --exact`.
#[test]
#[ignore]
fn nvrtc_child_process() {
    let caller = Caller::new();
    let device = hopper();
    let t = Instant::now();
    let module: Arc<Module> = compile_nvrtc("axpy", &device, &[]).expect("NVRTC axpy");
    let same_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let knob =
        compile_or_load("axpy", &device, &[("DNNP_AXPY_UNROLL", "8")]).expect("unbundled knob");
    let knob_ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(module.origin().contains("NVRTC") && knob.origin().contains("NVRTC"));
    for m in [&module, &knob] {
        let (got, want) = run_axpy_f32(&caller, &m.function("dnnp_axpy_f32").expect("f32"), 1.5);
        assert_eq!(got, want, "{}", m.origin());
    }
    let stats = dnnplan::cuda::cache::CompiledCache::global().stats();
    println!(
        "CHILD_RESULT same_ms={same_ms:.2} knob_ms={knob_ms:.2} hits={} misses={} invalid={} bypassed={}",
        stats.hits, stats.misses, stats.invalid, stats.bypassed
    );
}

fn run_child(cache_dir: &std::path::Path) -> (f64, f64, u64, u64) {
    let exe = std::env::current_exe().expect("test exe");
    let out = Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            "nvrtc_child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("DNNPLAN_COMPILED_CACHE", cache_dir)
        .env_remove("DNNPLAN_DISABLE_COMPILED_CACHE")
        .output()
        .expect("spawn child");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{text}");
    let line = text
        .lines()
        .find_map(|l| l.find("CHILD_RESULT").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no result:\n{text}"));
    let field = |name: &str| -> f64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line}"))
    };
    assert_eq!(field("invalid"), 0.0);
    assert_eq!(field("bypassed"), 0.0);
    (
        field("same_ms"),
        field("knob_ms"),
        field("hits") as u64,
        field("misses") as u64,
    )
}

#[test]
fn nvrtc_is_paid_once_per_machine_cold_then_warm_in_a_second_process() {
    let dir = std::env::temp_dir().join(format!("dnnplan-gpu-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (cold, cold_knob, hits, misses) = run_child(&dir);
    assert_eq!((hits, misses), (0, 2), "first process: both compiles miss");
    let (warm, warm_knob, hits, misses) = run_child(&dir);
    assert_eq!(
        (hits, misses),
        (2, 0),
        "second process: both come from the cache"
    );
    println!(
        "NVRTC axpy: cold {cold:.1} ms, warm (second process, from the cache) {warm:.1} ms; \
         knob DNNP_AXPY_UNROLL=8: cold {cold_knob:.1} ms, warm {warm_knob:.1} ms"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn nvrtc_compiles_sources_that_include_toolkit_headers() {
    let include = nvrtc::cuda_include_dir();
    let source = "#include <cuda_bf16.h>\n\
                  extern \"C\" __global__ void k(__nv_bfloat16* y, float v) { y[threadIdx.x] = __float2bfloat16_rn(v); }\n";
    // What dnnplan's own NVRTC path passes must also serve libcu++ (the C++ library under NVRTC).
    let libcu = "#include <cuda_bf16.h>\n#include <cuda/std/type_traits>\n#include <cuda/std/cstdint>\n\
                 extern \"C\" __global__ void k2(cuda::std::uint32_t* y) {\n\
                   static_assert(cuda::std::is_same_v<cuda::std::uint32_t, unsigned int>, \"\");\n\
                   y[threadIdx.x] = threadIdx.x; }\n";
    let arch = dnnplan::cuda::GpuArch { major: 9, minor: 0 };
    let cubin = nvrtc::compile(&nvrtc::Program {
        name: "libcu.cu",
        source: libcu,
        headers: vec![],
        options: dnnplan::cuda::compile::nvrtc_options(arch, &[]),
    })
    .unwrap_or_else(|e| panic!("libcu++ under dnnplan's NVRTC options: {e}"));
    Module::load(&cubin, "libcu++ test")
        .expect("load")
        .function("k2")
        .expect("k2");
    let mut options = vec![
        "--gpu-architecture=sm_90a".to_owned(),
        "--std=c++17".to_owned(),
    ];
    let bare = nvrtc::compile(&nvrtc::Program {
        name: "bf16.cu",
        source,
        headers: vec![],
        options: options.clone(),
    });
    println!(
        "NVRTC cuda_bf16.h without -I: {}",
        if bare.is_ok() {
            "ok (built-in headers)"
        } else {
            "needs the toolkit include dir"
        }
    );
    if let Some(dir) = &include {
        options.push(format!("-I{}", dir.display()));
    }
    let cubin = nvrtc::compile(&nvrtc::Program {
        name: "bf16.cu",
        source,
        headers: vec![],
        options,
    })
    .unwrap_or_else(|e| panic!("with include dir {include:?}: {e}"));
    let module = Module::load(&cubin, "bf16 test").expect("load");
    module.function("k").expect("k");
    println!(
        "NVRTC origin: {:?}, toolkit include: {include:?}",
        nvrtc::ensure_library().expect("nvrtc")
    );
}

/// Child process body: report where NVRTC was found. Ignored in normal runs.
#[test]
#[ignore]
fn nvrtc_probe_child() {
    let origin = nvrtc::ensure_library().expect("NVRTC found");
    let version = probe::nvrtc_version().expect("NVRTC version");
    let cubin = nvrtc::compile(&nvrtc::Program {
        name: "k.cu",
        source: "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }",
        headers: vec![],
        options: vec!["--gpu-architecture=sm_90a".to_owned()],
    })
    .expect("compile with the preloaded NVRTC");
    assert!(cubin.starts_with(b"\x7fELF"));
    println!("CHILD_NVRTC origin={origin:?} version={version:?}");
}

#[test]
fn nvrtc_is_loaded_by_full_path_from_the_named_directory() {
    let cuda_home = std::env::var("CUDA_HOME").unwrap_or_else(|_| "/usr/local/cuda".into());
    let lib64 = format!("{}/lib64", cuda_home.trim_end_matches('/'));
    let trimmed: Vec<String> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|p| !p.is_empty() && p.trim_end_matches('/') != lib64)
        .map(str::to_owned)
        .collect();
    let out = Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--ignored",
            "--exact",
            "nvrtc_probe_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LD_LIBRARY_PATH", trimmed.join(":"))
        .env("CUDA_HOME", &cuda_home)
        .env("DNNPLAN_NVRTC_LIB_DIR", &lib64)
        .output()
        .expect("spawn");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "NVRTC not found once {lib64} left LD_LIBRARY_PATH:\n{text}"
    );
    let line = text
        .lines()
        .find_map(|l| l.find("CHILD_NVRTC").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no result:\n{text}"));
    assert!(
        line.contains("Preloaded"),
        "DNNPLAN_NVRTC_LIB_DIR wins over the search path: {line}"
    );
    println!("without {lib64} on LD_LIBRARY_PATH, DNNPLAN_NVRTC_LIB_DIR set: {line}");
}

/// The producer/consumer hand-over of `kernels/include/dnnp_overlap.cuh` (NVRTC-compiled from
/// the header itself): a persistent producer (one block per SM, all resident) writes units of 128
/// floats slowly (a ~20 us spin per unit) and publishes each; a consumer launched right after it
/// with `LaunchConfig::programmatic` copies every unit out. With the per-unit wait the copy is
/// exact and the consumer started before the producer ended (the pair ran at the same time);
/// without the wait the consumer reads units the producer has not written yet (garbage), which
/// shows that the overlap is real and that the wait is what makes it correct. Then the pair runs
/// again while a long kernel on another stream occupies part of every SM: it still completes
/// (the producer never waits on the consumer) and the copy is exact.
const OVERLAP_TEST_SRC: &str = r#"
#include "dnnp_overlap.cuh"
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
extern "C" __global__ void producer(unsigned* flags, float* data, int units, long long spin_ns,
                                    unsigned long long* times) {
  dnnp_launch_dependents();
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < (unsigned long long)spin_ns) {}
    data[u * 128 + threadIdx.x] = (float)(u * 128 + threadIdx.x);  // exact
    dnnp_flag_publish_block(&flags[u], 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&times[1], now_ns());  // the producer's end
}
extern "C" __global__ void consumer(const unsigned* flags, const float* data, float* out, int units,
                                    int wait, unsigned long long* times) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    times[0] = now_ns();  // the consumer's start
    unsigned long long seen = 0;  // units already published then
    for (int u = 0; u < units; ++u) seen += dnnp_flag_load_acquire(&flags[u]);
    times[2] = seen;
  }
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    if (wait) dnnp_flag_wait_block(&flags[u], 1u);
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(&data[u * 128 + threadIdx.x]));
    out[u * 128 + threadIdx.x] = v;
  }
  dnnp_wait_prerequisites();
}
extern "C" __global__ void blocker(long long spin_ns) {
  const unsigned long long t0 = now_ns();
  while (now_ns() - t0 < (unsigned long long)spin_ns) {}
}
"#;

#[test]
fn overlapped_pair_hands_over_per_unit_and_never_deadlocks() {
    use dnnplan::cuda::Launcher;
    let caller = Caller::new();
    let info = hopper();
    let sms = info.sm_count.max(1) as u32;
    let cubin = nvrtc::compile(&nvrtc::Program {
        name: "overlap_test.cu",
        source: OVERLAP_TEST_SRC,
        headers: vec![(
            "dnnp_overlap.cuh",
            include_str!("../kernels/include/dnnp_overlap.cuh"),
        )],
        options: dnnplan::cuda::compile::nvrtc_options(
            dnnplan::cuda::GpuArch { major: 9, minor: 0 },
            &[],
        ),
    })
    .expect("NVRTC overlap test");
    let module = Module::load(&cubin, "overlap test").expect("load");
    let (prod, cons, block) = (
        module.function("producer").expect("producer"),
        module.function("consumer").expect("consumer"),
        module.function("blocker").expect("blocker"),
    );
    let units = 4 * sms as i32;
    let n = units as usize * 128;
    let want: Vec<f32> = (0..n).map(|i| i as f32).collect();
    // SAFETY: the caller's live stream.
    let launcher = unsafe { Launcher::bind(caller.stream, Some(0)) }.expect("launcher");
    let run = |wait: bool| -> (Vec<f32>, u64, u64, u64) {
        let flags = caller.upload(&vec![7u32; units as usize]); // not zero: the memset must clear
        let data = caller.upload(&vec![f32::NAN; n]);
        let out = caller.upload(&vec![0f32; n]);
        let times = caller.upload(&[0u64; 3]);
        // SAFETY: `flags` holds `units` words.
        unsafe { launcher.memset_u32(flags, 0, units as usize) }.expect("memset");
        let (mut f, mut d, mut o, mut t) = (flags, data, out, times);
        let (mut un, mut spin, mut w) = (units, 20_000i64, i32::from(wait));
        let mut pp = [
            (&raw mut f).cast::<std::ffi::c_void>(),
            (&raw mut d).cast(),
            (&raw mut un).cast(),
            (&raw mut spin).cast(),
            (&raw mut t).cast(),
        ];
        let mut cp = [
            (&raw mut f).cast::<std::ffi::c_void>(),
            (&raw mut d).cast(),
            (&raw mut o).cast(),
            (&raw mut un).cast(),
            (&raw mut w).cast(),
            (&raw mut t).cast(),
        ];
        let mut pcfg = LaunchConfig::linear(sms, 128);
        let mut ccfg = LaunchConfig::linear(4, 128);
        pcfg.programmatic = false;
        ccfg.programmatic = true;
        // SAFETY: the parameters match producer(...) / consumer(...) above; every buffer is
        // sized for `units` units.
        unsafe {
            launcher
                .launch_raw(&prod, &pcfg, &mut pp)
                .expect("producer");
            launcher
                .launch_raw(&cons, &ccfg, &mut cp)
                .expect("consumer");
        }
        let got = caller.download::<f32>(out, n);
        let tm = caller.download::<u64>(times, 3);
        // SAFETY: frees this run's buffers.
        unsafe {
            ok("free", sys::cuMemFree_v2(flags));
            ok("free", sys::cuMemFree_v2(data));
        }
        (got, tm[0], tm[1], tm[2])
    };
    // Once unmeasured: the first launch of each kernel loads it (lazy module loading), which
    // would serialise the pair.
    let _ = run(true);
    // Values that differ bitwise from what the producer wrote.
    let mismatches = |got: &[f32]| {
        got.iter()
            .zip(&want)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count()
    };
    let (got, c_start, p_end, seen) = run(true);
    let exact = mismatches(&got) == 0;
    println!(
        "overlap with wait: {units} units, exact {exact}, consumer started {:.1} us before the producer ended, {seen} units published then",
        (p_end as f64 - c_start as f64) / 1e3
    );
    assert!(exact, "the consumer must read every unit after its publish");
    assert!(
        c_start < p_end,
        "the consumer grid must start while the producer runs (programmatic launch)"
    );
    let (got, _, _, _) = run(false);
    let stale = mismatches(&got);
    println!("overlap without wait: {stale} of {n} values read before they were written");
    assert!(
        stale > 0,
        "without the wait the early consumer must see unwritten units"
    );
    // A long kernel on another stream holds part of every SM while the pair runs.
    let mut other: CUstream = std::ptr::null_mut();
    // SAFETY: a plain driver call with a valid out pointer.
    unsafe { ok("stream", sys::cuStreamCreate(&mut other, 1)) };
    // SAFETY: the new live stream.
    let side = unsafe { Launcher::bind(other, Some(0)) }.expect("launcher");
    let mut spin = 30_000_000i64; // 30 ms
    let mut bp = [(&raw mut spin).cast::<std::ffi::c_void>()];
    // SAFETY: blocker(long long).
    unsafe { side.launch_raw(&block, &LaunchConfig::linear(sms, 1024), &mut bp) }.expect("blocker");
    let t0 = Instant::now();
    let (got, _, _, _) = run(true);
    let exact = mismatches(&got) == 0;
    println!(
        "overlap beside a 30 ms kernel on another stream: exact {exact}, {:.1} ms",
        t0.elapsed().as_secs_f64() * 1e3
    );
    assert!(exact);
    // SAFETY: drains and destroys the side stream.
    unsafe {
        ok("sync", sys::cuStreamSynchronize(other));
        ok("destroy", sys::cuStreamDestroy_v2(other));
    }
}

/// NVRTC source of the tensor-map test: one box global -> shared (dumped as it landed), one box
/// shared -> global, through dnnp_tma.cuh's wrappers.
const TMA_TEST_SRC: &str = r#"
#include "dnnp_async.cuh"
#include "dnnp_tma.cuh"
#include "dnnp_wgmma.cuh"
struct Args { dnnp::TmaDesc map; int c0, c1, c2; };
extern "C" __global__ void load_box(const __grid_constant__ Args a, unsigned short* out) {
  __shared__ __align__(1024) unsigned short tile[64 * 64];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    dnnp::mbar_init(&bar, 1);
    dnnp::mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    dnnp::tma_prefetch(&a.map);
    dnnp::mbar_arrive_expect_tx(&bar, sizeof(tile));
    dnnp::tma_load_3d(tile, &a.map, a.c0, a.c1, a.c2, &bar);
  }
  dnnp::mbar_wait(&bar, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[i] = tile[i];
}
extern "C" __global__ void store_box(const __grid_constant__ Args a, const unsigned short* src) {
  __shared__ __align__(128) unsigned short tile[64 * 16];
  for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) tile[i] = src[i];
  dnnp::fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    dnnp::tma_store_3d(&a.map, a.c0, a.c1, a.c2, tile);
    dnnp::tma_store_commit();
    dnnp::tma_store_wait<0>();
  }
}
"#;

/// `Args` of TMA_TEST_SRC: the map, then the box's coordinates (innermost first).
#[repr(C, align(128))]
struct TmaArgs {
    map: dnnplan::cuda::tma::TensorMap,
    c: [i32; 3],
}

#[test]
fn tensor_maps_load_the_swizzled_box_and_store_only_inside_the_tensor() {
    use dnnplan::cuda::Launcher;
    use dnnplan::cuda::tma::{TiledMapSpec, TmaDtype, TmaSwizzle};
    let caller = Caller::new();
    hopper();
    let cubin = nvrtc::compile(&nvrtc::Program {
        name: "tma_test.cu",
        source: TMA_TEST_SRC,
        headers: vec![
            (
                "dnnp_async.cuh",
                include_str!("../kernels/include/dnnp_async.cuh"),
            ),
            (
                "dnnp_int.cuh",
                include_str!("../kernels/include/dnnp_int.cuh"),
            ),
            (
                "dnnp_tma.cuh",
                include_str!("../kernels/include/dnnp_tma.cuh"),
            ),
            (
                "dnnp_wgmma.cuh",
                include_str!("../kernels/include/dnnp_wgmma.cuh"),
            ),
        ],
        options: dnnplan::cuda::compile::nvrtc_options(
            dnnplan::cuda::GpuArch { major: 9, minor: 0 },
            &[],
        ),
    })
    .expect("NVRTC tma test");
    let module = Module::load(&cubin, "tma test").expect("load");
    let (load, store) = (
        module.function("load_box").expect("load_box"),
        module.function("store_box").expect("store_box"),
    );
    // SAFETY: the caller's live stream.
    let launcher = unsafe { Launcher::bind(caller.stream, Some(0)) }.expect("launcher");
    // A [T, H, D] 16-bit tensor (the maps move bits; the dtype only sizes them), T = 100 so a box
    // of 64 tokens from token 50 reaches past the end.
    let (t, h, d) = (100usize, 3usize, 128usize);
    let spec = |boxes: [u32; 3], swizzle| TiledMapSpec {
        what: "tma test",
        dtype: TmaDtype::Bf16,
        dims: [d as u64, h as u64, t as u64],
        strides: [2 * d as u64, 2 * (h * d) as u64],
        boxes,
        swizzle,
    };
    let src: Vec<u16> = (0..t * h * d).map(|i| (i % 65521) as u16 + 1).collect();
    let at = |tok: usize, head: usize, e: usize| src[(tok * h + head) * d + e];

    // Load: the second 64-element atom (c0 = 64) of head 2, tokens 50 .. 113.
    let q = caller.upload(&src);
    let mut args = TmaArgs {
        map: spec([64, 1, 64], TmaSwizzle::B128)
            .encode(q)
            .expect("encode"),
        c: [64, 2, 50],
    };
    let out = caller.upload(&vec![0xFFFFu16; 64 * 64]);
    let mut o = out;
    let mut params = [
        (&raw mut args).cast::<std::ffi::c_void>(),
        (&raw mut o).cast(),
    ];
    // SAFETY: load_box(Args, unsigned short*), `out` holds 64 x 64 elements.
    unsafe { launcher.launch_raw(&load, &LaunchConfig::linear(1, 128), &mut params) }
        .expect("load_box");
    let got = caller.download::<u16>(out, 64 * 64);
    let mut wrong = 0;
    for tok in 0..64 {
        for j in 0..64 {
            // slim_wg_elem within one atom: row tok, 16-byte piece (j / 8) ^ (tok % 8).
            let landed = got[tok * 64 + (((j / 8) ^ (tok % 8)) << 3) + (j & 7)];
            let want = if 50 + tok < t {
                at(50 + tok, 2, 64 + j)
            } else {
                0
            };
            wrong += usize::from(landed != want);
        }
    }
    println!("tma load: {wrong} of 4096 elements differ from slim_wg_elem's layout");
    assert_eq!(
        wrong, 0,
        "the swizzled box must land in slim_wg_elem's layout, zeros past T"
    );

    // Store: 16 columns (32 .. 47) of head 1, tokens 50 .. 113 (only 50 .. 99 exist).
    let dst = caller.upload(&vec![0u16; t * h * d]);
    let tile: Vec<u16> = (0..64 * 16).map(|i| 40_000 + i as u16).collect();
    let tile_d = caller.upload(&tile);
    let mut args = TmaArgs {
        map: spec([16, 1, 64], TmaSwizzle::None)
            .encode(dst)
            .expect("encode"),
        c: [32, 1, 50],
    };
    let mut s = tile_d;
    let mut params = [
        (&raw mut args).cast::<std::ffi::c_void>(),
        (&raw mut s).cast(),
    ];
    // SAFETY: store_box(Args, const unsigned short*), `tile_d` holds 64 x 16 elements.
    unsafe { launcher.launch_raw(&store, &LaunchConfig::linear(1, 128), &mut params) }
        .expect("store_box");
    let got = caller.download::<u16>(dst, t * h * d);
    let mut wrong = 0;
    for tok in 0..t {
        for head in 0..h {
            for e in 0..d {
                let inside = head == 1 && (32..48).contains(&e) && tok >= 50;
                let want = if inside {
                    tile[(tok - 50) * 16 + e - 32]
                } else {
                    0
                };
                wrong += usize::from(got[(tok * h + head) * d + e] != want);
            }
        }
    }
    println!("tma store: {wrong} of {} elements differ", t * h * d);
    assert_eq!(wrong, 0, "the box's rows inside the tensor, nothing else");
    // Host cost of one encode (a plan whose kernels read maps encodes them at every execute):
    // printed, never asserted.
    let reps = 2000u32;
    let t0 = Instant::now();
    for i in 0..reps {
        let m = spec([64, 1, 64], TmaSwizzle::B128)
            .encode(q + 16 * u64::from(i % 4))
            .expect("encode");
        std::hint::black_box(m);
    }
    println!(
        "tma encode: {:.0} ns per map (mean of {reps})",
        t0.elapsed().as_secs_f64() * 1e9 / f64::from(reps)
    );
    // SAFETY: frees the test's remaining buffers.
    unsafe {
        ok("free", sys::cuMemFree_v2(q));
        ok("free", sys::cuMemFree_v2(tile_d));
    }
}
