"""Compiles the bundled gdn_fwd and gdn_bwd modules with NVRTC (no GPU needed) for several architectures, as
dnnplan does at run time off the bundled sm_90a path. NVRTC_LIB: path of libnvrtc.so.13 (its
directory must also hold libnvrtc-builtins, e.g. via LD_LIBRARY_PATH). Exit code 1 on any failure."""
import ctypes
import os
import sys
lib = ctypes.CDLL(os.environ.get('NVRTC_LIB', 'libnvrtc.so.13'))
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'kernels')
failed = False
for module, headers in [('gdn_fwd', ['gdn_fwd.cuh', 'gdn_fwd_fast.cuh', 'gdn_fwd_prep3.cuh', 'gdn_fwd_tcinv.cuh', 'gdn_fwd_prep10.cuh', 'gdn_fwd_prep13.cuh', 'gdn_fwd_prep15.cuh', 'gdn_fwd_slim.cuh', 'dnnp_overlap.cuh']),
                        ('gdn_bwd', ['gdn_fwd.cuh', 'gdn_fwd_fast.cuh', 'gdn_bwd.cuh', 'gdn_bwd_chain.cuh', 'gdn_fwd_prep3.cuh', 'gdn_fwd_tcinv.cuh', 'gdn_fwd_prep10.cuh', 'gdn_fwd_prep13.cuh', 'gdn_fwd_prep15.cuh',
                                     'dnnp_overlap.cuh', 'gdn_bwd_overlap.cuh'])]:
    src = open(f'{root}/src/{module}.cu').read().encode()
    hdrs = [open(f'{root}/include/{h}').read().encode() for h in headers]
    for arch in [b'sm_90a', b'sm_100a', b'sm_80']:
        prog = ctypes.c_void_p()
        names = (ctypes.c_char_p * len(headers))(*[h.encode() for h in headers])
        srcs = (ctypes.c_char_p * len(headers))(*hdrs)
        r = lib.nvrtcCreateProgram(ctypes.byref(prog), src, f'{module}.cu'.encode(), len(headers), srcs, names)
        opts = [b'--gpu-architecture=' + arch, b'-std=c++17', b'-DDNNP_NVRTC=1']
        arr = (ctypes.c_char_p * len(opts))(*opts)
        r = lib.nvrtcCompileProgram(prog, len(opts), arr)
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        print(module, arch.decode(), 'ok' if r == 0 else f'FAILED ({r})', log.value.decode()[:1500])
        failed = failed or r != 0
sys.exit(1 if failed else 0)
