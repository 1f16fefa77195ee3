"""Gated delta net through dnnplan's own engines, as torch custom ops.

Contract (spec: linear-attention §8; shapes THD, states V-major ``[N, HO, V, K]``):
- ``dnnplan::gdn_fwd(...) -> (Tensor, Tensor)``: ``O [T, HO, V]`` in the io dtype and
  ``final_state [N, HO, V, K]`` in ``initial_state``'s dtype (fp32 without one), a zero-element
  tensor of that dtype unless ``output_final_state``. Functional (nothing mutated).
- ``dnnplan::gdn_fwd_overwrite_state(..., Tensor(a!) initial_state, Tensor? state_indices, ...)
  -> Tensor``: inference-only; the final state is written into ``initial_state`` (a pool
  ``[N_pool, HO, V, K]`` under ``state_indices``), which the schema declares mutated.
- ``dnnplan::gdn_bwd(...) -> (Tensor x 8)``: ``dQ, dK, dV, dG, dBeta`` like their inputs, then
  ``d_initial_state``, ``d_a_log``, ``d_dt_bias`` like their parameters, each a zero-element fp32
  tensor when that parameter is absent (fixed arity; the fake follows the same rule).
- The engines index packed row-major tensors, so the launchers pass compact inputs (a copy only
  when an input is not compact). Outputs are allocated compact in launcher and fake.
- ``dnnplan::gdn_fwd_ckpt(..., int checkpoint_every_n_tokens, ScalarType checkpoint_dtype, ...)
  -> (Tensor, Tensor, Tensor)``: ``gdn_fwd`` plus ``state_checkpoints [max(T/c + N, 1), HO, V,
  K]`` (spec §2.2, §3.4: row ``j`` of sequence ``b`` is the state before its token ``j·c``, rows
  past the sequences' blocks unspecified), ``c`` a positive multiple of 64, in
  ``checkpoint_dtype`` (fp32 or the io dtype). ``dnnplan::gdn_bwd_ckpt(..., Tensor
  state_checkpoints, int checkpoint_every_n_tokens, ...)``: ``gdn_bwd`` with the forward's
  checkpoints bound (§8.2; the engine may reuse them instead of recomputing the states).
- ``dnnplan::gdn_fwd_train(...) -> (Tensor, Tensor, Tensor)``: ``gdn_fwd`` plus the chunk factors
  the backward would recompute (dnnplan's ``chunk_factors``: uint8 ``[max(T/64 + N, 1), HO,
  17924]``, opaque); ``dnnplan::gdn_bwd_train(..., Tensor chunk_factors, ...)``: ``gdn_bwd`` reading
  them instead (the same gradients bit for bit). Under autograd at K = V = 128 the forward saves
  them for its backward unless ``DNNPLAN_TORCH_GDN_SAVE_FACTORS=0`` (they cost ~18 KB per 64-token
  chunk and head of memory until the backward runs; the training step is ~5-7 % faster; the
  variable is read at import).
- ``dnnplan::gdn_fwd_train_replay(...) -> (Tensor, Tensor, Tensor, Tensor)``: ``gdn_fwd`` plus
  the saved replay: ``state_checkpoints`` every 64 tokens in the io dtype and ``chunk_factors``
  with each chunk's ``U`` tile (uint8 ``[max(T/64 + N, 1), HO, 17924 + 64·V·2]``);
  ``dnnplan::gdn_bwd_train_replay(..., Tensor state_checkpoints, Tensor chunk_factors, ...)``:
  ``gdn_bwd`` running neither its prep nor its replay (the same gradients bit for bit on uncut
  sequences). Autograd uses them at K = V = 128 under ``DNNPLAN_TORCH_GDN_SAVE_FACTORS=2``
  (~66 KB per chunk and head, about 1 KB per token and head, held until the backward; the
  training step ~12-13 % faster than recomputing).
- ``gated_delta_net`` is the public entry point (arguments and defaults of the reference's
  ``gated_delta_net``); it validates on the host and returns ``GatedDeltaNetOutput``. With the
  C++ launcher, a plain eager inference call (see ``_C.gdn_precheck``) runs the forward op's
  CUDA kernel directly, without the dispatcher round trip; everything else goes through the op.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import torch
from torch import Tensor

from . import _cpp, _launch
import os

from ._graphs import (GdnConfig, gdn_bwd_graph, gdn_checkpoint_rows, gdn_chunk_factor_bytes,
                      gdn_chunk_factor_rows, gdn_fwd_graph)

__all__ = ["GatedDeltaNetOutput", "GatedDeltaNetCheckpointOutput", "gated_delta_net", "gdn_fwd",
           "gdn_fwd_overwrite_state", "gdn_bwd", "gdn_fwd_ckpt", "gdn_bwd_ckpt", "gdn_fwd_train",
           "gdn_bwd_train", "gdn_fwd_train_replay", "gdn_bwd_train_replay"]

# The engines' chunk: state checkpoints come at multiples of it (and autograd passes them to the
# backward, spec §8.2).
CHECKPOINT_CHUNK = 64

_FLAGS = ("float scale, bool use_qk_l2norm, bool use_beta_sigmoid, bool allow_neg_eigval, "
          "bool safe_gate, str gate_domain, bool batch_invariant")

torch.library.define(
    "dnnplan::gdn_fwd",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, "
    "Tensor? initial_state, Tensor? a_log, Tensor? dt_bias, bool output_final_state, "
    f"{_FLAGS}, str? plan_name) -> (Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_fwd_overwrite_state",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, "
    "Tensor(a!) initial_state, Tensor? state_indices, Tensor? a_log, Tensor? dt_bias, "
    f"{_FLAGS}, str? plan_name) -> Tensor",
)
torch.library.define(
    "dnnplan::gdn_bwd",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, Tensor d_o, "
    "Tensor? initial_state, Tensor? d_final_state, Tensor? a_log, Tensor? dt_bias, "
    f"{_FLAGS}) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_fwd_ckpt",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, "
    "Tensor? initial_state, Tensor? a_log, Tensor? dt_bias, bool output_final_state, "
    f"{_FLAGS}, int checkpoint_every_n_tokens, ScalarType checkpoint_dtype, str? plan_name) "
    "-> (Tensor, Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_bwd_ckpt",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, Tensor d_o, "
    "Tensor? initial_state, Tensor? d_final_state, Tensor? a_log, Tensor? dt_bias, "
    f"Tensor state_checkpoints, int checkpoint_every_n_tokens, {_FLAGS}) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_fwd_train",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, "
    "Tensor? initial_state, Tensor? a_log, Tensor? dt_bias, bool output_final_state, "
    f"{_FLAGS}, str? plan_name) -> (Tensor, Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_bwd_train",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, Tensor d_o, "
    "Tensor? initial_state, Tensor? d_final_state, Tensor? a_log, Tensor? dt_bias, "
    f"Tensor chunk_factors, {_FLAGS}) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_fwd_train_replay",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, "
    "Tensor? initial_state, Tensor? a_log, Tensor? dt_bias, bool output_final_state, "
    f"{_FLAGS}, str? plan_name) -> (Tensor, Tensor, Tensor, Tensor)",
)
torch.library.define(
    "dnnplan::gdn_bwd_train_replay",
    "(Tensor q, Tensor k, Tensor v, Tensor g, Tensor beta, Tensor cu_seqlens, Tensor d_o, "
    "Tensor? initial_state, Tensor? d_final_state, Tensor? a_log, Tensor? dt_bias, "
    f"Tensor state_checkpoints, Tensor chunk_factors, {_FLAGS}) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)",
)


def _c(t: Optional[Tensor]) -> Optional[Tensor]:
    return t.contiguous() if t is not None else None


def _heads(q: Tensor, v: Tensor) -> tuple:
    return max(q.shape[1], v.shape[1]), q.shape[2], v.shape[2]


def _state_dtype(initial_state: Optional[Tensor]) -> torch.dtype:
    return initial_state.dtype if initial_state is not None else torch.float32


_fwd_steady = _launch.fast_cache()  # raw (shape, stride, dtype) per input + attrs -> entry


def _meta(t: Optional[Tensor]):
    return (t.shape, t.stride(), t.dtype) if t is not None else None


def _fwd_key(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, output_final_state,
             scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate, gate_domain,
             batch_invariant, plan_name) -> tuple:
    """The steady-state key: raw (shape, stride, dtype) per input, the device, attributes."""
    return (q.shape, q.stride(), q.dtype, k.shape, k.stride(), k.dtype, v.shape, v.stride(),
            v.dtype, g.shape, g.stride(), g.dtype, beta.shape, beta.stride(), beta.dtype,
            cu_seqlens.shape, cu_seqlens.stride(), cu_seqlens.dtype,
            None if initial_state is None else _meta(initial_state),
            None if a_log is None else _meta(a_log), None if dt_bias is None else _meta(dt_bias),
            q.get_device(), output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
            allow_neg_eigval, safe_gate, gate_domain, batch_invariant, plan_name)


_KEY_DEVICE = 21  # index of the device in ``_fwd_key``


def _gdn_fwd_cuda(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                  output_final_state, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval,
                  safe_gate, gate_domain, batch_invariant, plan_name):
    """The Python launcher (the CUDA kernel when the C++ launcher is not active)."""
    key = _fwd_key(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                   output_final_state, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval,
                   safe_gate, gate_domain, batch_invariant, plan_name)
    entry = _fwd_steady.get(key)
    if entry is None:
        return _gdn_fwd_first(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                              output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                              allow_neg_eigval, safe_gate, gate_domain, batch_invariant,
                              plan_name, key)
    plan, o_shape, fs_shape, fs_dtype = entry
    # sizes as separate ints: torch parses them much faster than a tuple
    o = q.new_empty(*o_shape)
    fs = q.new_empty(*fs_shape, dtype=fs_dtype)
    _launch.launch(plan, key[_KEY_DEVICE], q, [
        q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), beta.data_ptr(),
        cu_seqlens.data_ptr(), initial_state.data_ptr() if initial_state is not None else 0, 0,
        a_log.data_ptr() if a_log is not None else 0,
        dt_bias.data_ptr() if dt_bias is not None else 0, o.data_ptr(), fs.data_ptr()])
    return o, fs


def _gdn_fwd_cpp_miss(*args):
    """The C++ launcher's miss (the op's arguments): the Python launcher serves the call, then
    ``(outputs, spec)`` (``spec`` ``None`` when an input had to be copied)."""
    out = _gdn_fwd_cuda(*args)
    entry = _fwd_steady.get(_fwd_key(*args))
    if entry is None:
        return out, None
    plan, o_shape, fs_shape, fs_dtype = entry
    return out, _cpp.spec(plan, ((o_shape, args[0].dtype), (fs_shape, fs_dtype)))


def _gdn_fwd_first(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                   output_final_state, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval,
                   safe_gate, gate_domain, batch_invariant, plan_name, steady_key):
    """The launcher's planning path (first call of a signature, or inputs that need a copy)."""
    given = (q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias)
    ins = tuple(_c(t) for t in given)
    if any(a is not b for a, b in zip(ins, given)):
        steady_key = None  # copied: the steady-state path is for inputs served as given
    q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias = ins
    cfg = GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                    gate_domain, batch_invariant)
    key = ("gdn_fwd", q.device.index, *(_launch.tensor_key(t) for t in ins), output_final_state,
           cfg, plan_name)
    d = _launch.desc
    plan = _launch.prepared(key, lambda: (*gdn_fwd_graph(
        d(q), d(k), d(v), d(g), d(beta), d(cu_seqlens), d(initial_state), d(a_log), d(dt_bias),
        cfg=cfg, output_final_state=output_final_state), plan_name))
    ho, kd, vd = _heads(q, v)
    o_shape = (q.shape[0], ho, vd)
    fs_shape = (cu_seqlens.shape[0] - 1, ho, vd, kd) if output_final_state else (0,)
    sdt = _state_dtype(initial_state)
    o = q.new_empty(*o_shape)
    fs = q.new_empty(*fs_shape, dtype=sdt)
    p = _launch.ptr
    _launch.launch(plan, q.get_device(), q, [
        p(q), p(k), p(v), p(g), p(beta), p(cu_seqlens), p(initial_state), 0, p(a_log),
        p(dt_bias), p(o), p(fs)])
    if steady_key is not None:
        _fwd_steady[steady_key] = (plan, o_shape, fs_shape, sdt)
    return o, fs


def _gdn_fwd_overwrite_cuda(q, k, v, g, beta, cu_seqlens, initial_state, state_indices, a_log,
                            dt_bias, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval,
                            safe_gate, gate_domain, batch_invariant, plan_name):
    if not initial_state.is_contiguous():
        raise ValueError("gdn_fwd_overwrite_state: initial_state is written in place and must be "
                         f"compact; got strides {initial_state.stride()}")
    q, k, v, g, beta, cu_seqlens, state_indices, a_log, dt_bias = (
        _c(t) for t in (q, k, v, g, beta, cu_seqlens, state_indices, a_log, dt_bias))
    cfg = GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                    gate_domain, batch_invariant)
    ins = (q, k, v, g, beta, cu_seqlens, initial_state, state_indices, a_log, dt_bias)
    key = ("gdn_fwd_overwrite", q.device.index, *(_launch.tensor_key(t) for t in ins), cfg,
           plan_name)
    d = _launch.desc
    plan = _launch.prepared(key, lambda: (*gdn_fwd_graph(
        d(q), d(k), d(v), d(g), d(beta), d(cu_seqlens), d(initial_state), d(a_log), d(dt_bias),
        cfg=cfg, output_final_state=True, state_indices=d(state_indices),
        overwrite_initial_state=True), plan_name))
    ho, _, vd = _heads(q, v)
    o = q.new_empty((q.shape[0], ho, vd))
    p = _launch.ptr
    _launch.launch(plan, q.get_device(), q, [
        p(q), p(k), p(v), p(g), p(beta), p(cu_seqlens), p(initial_state), p(state_indices),
        p(a_log), p(dt_bias), p(o), p(initial_state)])
    return o


def _gdn_bwd_cuda(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log,
                  dt_bias, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant):
    return _gdn_bwd_launch(
        (q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant))


def _ckpt_shape(q, v, cu_seqlens, every) -> tuple:
    ho, kd, vd = _heads(q, v)
    return (gdn_checkpoint_rows(q.shape[0], cu_seqlens.shape[0] - 1, every), ho, vd, kd)


def _gdn_fwd_plus(given, cfg, output_final_state, plan_name, graph_kw, *extras):
    """``gdn_fwd`` with more outputs (the state checkpoints, the saved chunk factors, or both in
    that order; ``graph_kw``: ``gdn_fwd_graph``'s arguments for them, part of the plan's key;
    ``extras``: each one's (shape, dtype)): compact inputs (``given``: q, k, v, g, beta,
    cu_seqlens, initial_state, a_log, dt_bias), the plan prepared once per signature, O, the
    final state and the extra outputs allocated compact."""
    ins = tuple(_c(t) for t in given)
    q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias = ins
    key = ("gdn_fwd_plus", q.device.index, *(_launch.tensor_key(t) for t in ins),
           output_final_state, cfg, tuple(sorted(graph_kw.items())), plan_name)
    d = _launch.desc
    plan = _launch.prepared(key, lambda: (*gdn_fwd_graph(
        d(q), d(k), d(v), d(g), d(beta), d(cu_seqlens), d(initial_state), d(a_log), d(dt_bias),
        cfg=cfg, output_final_state=output_final_state, **graph_kw), plan_name))
    ho, kd, vd = _heads(q, v)
    o = q.new_empty((q.shape[0], ho, vd))
    fs_shape = (cu_seqlens.shape[0] - 1, ho, vd, kd) if output_final_state else (0,)
    fs = q.new_empty(fs_shape, dtype=_state_dtype(initial_state))
    more = tuple(q.new_empty(shape, dtype=dtype) for shape, dtype in extras)
    p = _launch.ptr
    _launch.launch(plan, q.get_device(), q, [
        p(q), p(k), p(v), p(g), p(beta), p(cu_seqlens), p(initial_state), 0, p(a_log),
        p(dt_bias), p(o), p(fs), *(p(t) for t in more)])
    return (o, fs, *more)


def _gdn_fwd_ckpt_cuda(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                       output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                       allow_neg_eigval, safe_gate, gate_domain, batch_invariant,
                       checkpoint_every_n_tokens, checkpoint_dtype, plan_name):
    every = int(checkpoint_every_n_tokens)
    return _gdn_fwd_plus(
        (q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant),
        output_final_state, plan_name,
        {"checkpoint_every": every, "checkpoint_dtype": _launch.DTYPE[checkpoint_dtype]},
        (_ckpt_shape(q, v, cu_seqlens, every), checkpoint_dtype))


def _factors_shape(q, v, cu_seqlens, every=0) -> tuple:
    return (gdn_chunk_factor_rows(q.shape[0], cu_seqlens.shape[0] - 1), max(q.shape[1], v.shape[1]),
            gdn_chunk_factor_bytes(v.shape[2], every))


def _gdn_fwd_train_cuda(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                        output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                        allow_neg_eigval, safe_gate, gate_domain, batch_invariant, plan_name):
    return _gdn_fwd_plus(
        (q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant),
        output_final_state, plan_name, {"save_factors": True},
        (_factors_shape(q, v, cu_seqlens), torch.uint8))


def _gdn_fwd_train_replay_cuda(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                               output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                               allow_neg_eigval, safe_gate, gate_domain, batch_invariant,
                               plan_name):
    every = CHECKPOINT_CHUNK
    return _gdn_fwd_plus(
        (q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant),
        output_final_state, plan_name,
        {"checkpoint_every": every, "checkpoint_dtype": _launch.DTYPE[q.dtype],
         "save_factors": True},
        (_ckpt_shape(q, v, cu_seqlens, every), q.dtype),
        (_factors_shape(q, v, cu_seqlens, every), torch.uint8))


def _gdn_bwd_train_replay_cuda(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state,
                               a_log, dt_bias, state_checkpoints, chunk_factors, scale,
                               use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                               gate_domain, batch_invariant):
    return _gdn_bwd_launch(
        (q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant),
        state_checkpoints, CHECKPOINT_CHUNK, chunk_factors=chunk_factors)


def _gdn_bwd_train_cuda(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log,
                        dt_bias, chunk_factors, scale, use_qk_l2norm, use_beta_sigmoid,
                        allow_neg_eigval, safe_gate, gate_domain, batch_invariant):
    return _gdn_bwd_launch(
        (q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant),
        chunk_factors=chunk_factors)


def _gdn_bwd_ckpt_cuda(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log,
                       dt_bias, state_checkpoints, checkpoint_every_n_tokens, scale,
                       use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                       gate_domain, batch_invariant):
    return _gdn_bwd_launch(
        (q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias),
        GdnConfig(scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant),
        state_checkpoints, int(checkpoint_every_n_tokens))


def _gdn_bwd_launch(given, cfg, state_checkpoints=None, every=0, chunk_factors=None) -> tuple:
    """The backward's launch, with or without the forward's ``state_checkpoints`` at cadence
    ``every`` or its saved ``chunk_factors``: compact inputs (``given``: q, k, v, g, beta,
    cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias; then the checkpoints, then the
    factors), the plan prepared once per signature, the gradients allocated by
    ``_gdn_bwd_alloc``."""
    ins = tuple(_c(t) for t in given)
    ck = _c(state_checkpoints)
    cf = _c(chunk_factors)
    q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias = ins
    tkeys = tuple(_launch.tensor_key(t) for t in ins)
    key = ("gdn_bwd", q.device.index, *tkeys, cfg,
           None if ck is None else (_launch.tensor_key(ck), every),
           None if cf is None else _launch.tensor_key(cf))
    d = _launch.desc

    def graph():
        extra = {} if ck is None else {"state_checkpoints": d(ck), "checkpoint_every": every}
        if cf is not None:
            extra["chunk_factors"] = d(cf)
        return (*gdn_bwd_graph(*(d(t) for t in ins), cfg=cfg, **extra), None)

    plan = _launch.prepared(key, graph)
    outs = _gdn_bwd_alloc(q, k, v, g, beta, initial_state, a_log, dt_bias)
    p = _launch.ptr
    _launch.launch(plan, q.get_device(), q, [p(t) for t in ins] + [o.data_ptr() for o in outs]
                   + ([] if ck is None else [ck.data_ptr()])
                   + ([] if cf is None else [cf.data_ptr()]))
    return outs


def _gdn_bwd_alloc(q, k, v, g, beta, initial_state, a_log, dt_bias) -> tuple:
    """Compact gradients; a zero-element fp32 tensor for each absent parameter."""
    like = (q, k, v, g, beta, initial_state, a_log, dt_bias)
    return tuple(t.new_empty(t.shape) if t is not None else q.new_empty((0,), dtype=torch.float32)
                 for t in like)


# With the C++ launcher active, the extension holds the forward's CUDA kernel.
if _cpp.ACTIVE:
    _cpp.set_miss("gdn_fwd", _gdn_fwd_cpp_miss)
else:
    torch.library.impl("dnnplan::gdn_fwd", "CUDA", _gdn_fwd_cuda)
torch.library.impl("dnnplan::gdn_fwd_overwrite_state", "CUDA", _gdn_fwd_overwrite_cuda)
torch.library.impl("dnnplan::gdn_bwd", "CUDA", _gdn_bwd_cuda)
torch.library.impl("dnnplan::gdn_fwd_ckpt", "CUDA", _gdn_fwd_ckpt_cuda)
torch.library.impl("dnnplan::gdn_bwd_ckpt", "CUDA", _gdn_bwd_ckpt_cuda)
torch.library.impl("dnnplan::gdn_fwd_train", "CUDA", _gdn_fwd_train_cuda)
torch.library.impl("dnnplan::gdn_bwd_train", "CUDA", _gdn_bwd_train_cuda)
torch.library.impl("dnnplan::gdn_fwd_train_replay", "CUDA", _gdn_fwd_train_replay_cuda)
torch.library.impl("dnnplan::gdn_bwd_train_replay", "CUDA", _gdn_bwd_train_replay_cuda)


@torch.library.register_fake("dnnplan::gdn_fwd")
def _gdn_fwd_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                  output_final_state, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval,
                  safe_gate, gate_domain, batch_invariant, plan_name):
    ho, kd, vd = _heads(q, v)
    o = q.new_empty((q.shape[0], ho, vd))
    sdt = _state_dtype(initial_state)
    if output_final_state:
        return o, q.new_empty((cu_seqlens.shape[0] - 1, ho, vd, kd), dtype=sdt)
    return o, q.new_empty((0,), dtype=sdt)


@torch.library.register_fake("dnnplan::gdn_fwd_overwrite_state")
def _gdn_fwd_overwrite_fake(q, k, v, g, beta, cu_seqlens, initial_state, state_indices, a_log,
                            dt_bias, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval,
                            safe_gate, gate_domain, batch_invariant, plan_name):
    ho, _, vd = _heads(q, v)
    return q.new_empty((q.shape[0], ho, vd))


@torch.library.register_fake("dnnplan::gdn_bwd")
def _gdn_bwd_fake(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log,
                  dt_bias, scale, use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                  gate_domain, batch_invariant):
    return _gdn_bwd_alloc(q, k, v, g, beta, initial_state, a_log, dt_bias)


@torch.library.register_fake("dnnplan::gdn_fwd_ckpt")
def _gdn_fwd_ckpt_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                       output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                       allow_neg_eigval, safe_gate, gate_domain, batch_invariant,
                       checkpoint_every_n_tokens, checkpoint_dtype, plan_name):
    o, fs = _gdn_fwd_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                          output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                          allow_neg_eigval, safe_gate, gate_domain, batch_invariant, plan_name)
    ck = q.new_empty(_ckpt_shape(q, v, cu_seqlens, checkpoint_every_n_tokens),
                     dtype=checkpoint_dtype)
    return o, fs, ck


@torch.library.register_fake("dnnplan::gdn_bwd_ckpt")
def _gdn_bwd_ckpt_fake(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log,
                       dt_bias, state_checkpoints, checkpoint_every_n_tokens, scale,
                       use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                       gate_domain, batch_invariant):
    return _gdn_bwd_alloc(q, k, v, g, beta, initial_state, a_log, dt_bias)


@torch.library.register_fake("dnnplan::gdn_fwd_train")
def _gdn_fwd_train_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                        output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                        allow_neg_eigval, safe_gate, gate_domain, batch_invariant, plan_name):
    o, fs = _gdn_fwd_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                          output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                          allow_neg_eigval, safe_gate, gate_domain, batch_invariant, plan_name)
    return o, fs, q.new_empty(_factors_shape(q, v, cu_seqlens), dtype=torch.uint8)


@torch.library.register_fake("dnnplan::gdn_bwd_train")
def _gdn_bwd_train_fake(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log,
                        dt_bias, chunk_factors, scale, use_qk_l2norm, use_beta_sigmoid,
                        allow_neg_eigval, safe_gate, gate_domain, batch_invariant):
    return _gdn_bwd_alloc(q, k, v, g, beta, initial_state, a_log, dt_bias)


@torch.library.register_fake("dnnplan::gdn_fwd_train_replay")
def _gdn_fwd_train_replay_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                               output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                               allow_neg_eigval, safe_gate, gate_domain, batch_invariant,
                               plan_name):
    o, fs = _gdn_fwd_fake(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                          output_final_state, scale, use_qk_l2norm, use_beta_sigmoid,
                          allow_neg_eigval, safe_gate, gate_domain, batch_invariant, plan_name)
    ck = q.new_empty(_ckpt_shape(q, v, cu_seqlens, CHECKPOINT_CHUNK))
    cf = q.new_empty(_factors_shape(q, v, cu_seqlens, CHECKPOINT_CHUNK), dtype=torch.uint8)
    return o, fs, ck, cf


@torch.library.register_fake("dnnplan::gdn_bwd_train_replay")
def _gdn_bwd_train_replay_fake(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state,
                               a_log, dt_bias, state_checkpoints, chunk_factors, scale,
                               use_qk_l2norm, use_beta_sigmoid, allow_neg_eigval, safe_gate,
                               gate_domain, batch_invariant):
    return _gdn_bwd_alloc(q, k, v, g, beta, initial_state, a_log, dt_bias)


gdn_fwd = torch.ops.dnnplan.gdn_fwd.default
gdn_fwd_overwrite_state = torch.ops.dnnplan.gdn_fwd_overwrite_state.default
gdn_bwd = torch.ops.dnnplan.gdn_bwd.default
gdn_fwd_ckpt = torch.ops.dnnplan.gdn_fwd_ckpt.default
gdn_bwd_ckpt = torch.ops.dnnplan.gdn_bwd_ckpt.default
gdn_fwd_train = torch.ops.dnnplan.gdn_fwd_train.default
gdn_bwd_train = torch.ops.dnnplan.gdn_bwd_train.default
gdn_fwd_train_replay = torch.ops.dnnplan.gdn_fwd_train_replay.default
gdn_bwd_train_replay = torch.ops.dnnplan.gdn_bwd_train_replay.default


# What autograd forwards save for their backward (``DNNPLAN_TORCH_GDN_SAVE_FACTORS``, read at
# import: ``0`` nothing, ``1`` (default) the chunk factors, ``2`` the saved replay: the factors with
# the U tiles and the state checkpoints every chunk); a module constant, so torch.compile guards
# on it instead of tracing the environment.
_SAVE_FACTORS = {"0": 0, "2": 2}.get(os.environ.get("DNNPLAN_TORCH_GDN_SAVE_FACTORS", "1"), 1)


def _saves_factors(q: Tensor, v: Tensor, cfg: tuple) -> int:
    """What an autograd forward saves for its backward (``_SAVE_FACTORS``'s level; 0: nothing):
    only at K = V = 128 (the engine's slim factors) and without ``batch_invariant`` (whose
    backward runs the full form's prep)."""
    slim = q.shape[2] == 128 and v.shape[2] == 128 and not cfg[6]
    return int(_SAVE_FACTORS) if slim else 0


def _input_grads(grads, initial_state, a_log, dt_bias, n_inputs):
    """The autograd backward's result from a backward op's eight gradients: one entry per forward
    input (``n_inputs`` of them: q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, then
    non-tensor arguments), ``None`` where the input is absent or not differentiable."""
    dq, dk, dv, dg, dbeta, d_init, d_a_log, d_dt_bias = grads
    head = (dq, dk, dv, dg, dbeta, None,
            d_init if initial_state is not None else None,
            d_a_log if a_log is not None else None,
            d_dt_bias if dt_bias is not None else None)
    return head + (None,) * (n_inputs - len(head))


class _GdnFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                output_final_state, cfg, plan_name):
        # The chunk factors (and with level 2 the replay's states and U tiles) saved for the
        # backward (it then skips recomputing them).
        ck = cf = None
        level = _saves_factors(q, v, cfg)
        if level == 2:
            o, fs, ck, cf = gdn_fwd_train_replay(q, k, v, g, beta, cu_seqlens, initial_state,
                                                 a_log, dt_bias, output_final_state, *cfg,
                                                 plan_name)
        elif level == 1:
            o, fs, cf = gdn_fwd_train(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                                      output_final_state, *cfg, plan_name)
        else:
            o, fs = gdn_fwd(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                            output_final_state, *cfg, plan_name)
        ctx.save_for_backward(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, ck, cf)
        ctx.cfg = cfg
        ctx.output_final_state = output_final_state
        if not output_final_state:
            ctx.mark_non_differentiable(fs)
        return o, fs

    @staticmethod
    def backward(ctx, d_o, d_fs):
        q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, ck, cf = ctx.saved_tensors
        d_final_state = d_fs if ctx.output_final_state else None
        if ck is not None:
            grads = gdn_bwd_train_replay(q, k, v, g, beta, cu_seqlens, d_o, initial_state,
                                         d_final_state, a_log, dt_bias, ck, cf, *ctx.cfg)
        elif cf is not None:
            grads = gdn_bwd_train(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state,
                                  a_log, dt_bias, cf, *ctx.cfg)
        else:
            grads = gdn_bwd(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state,
                            a_log, dt_bias, *ctx.cfg)
        return _input_grads(grads, initial_state, a_log, dt_bias, 12)


class _GdnCkptFunction(torch.autograd.Function):
    """The forward with state checkpoints; the backward receives them (non-differentiable) at
    the same cadence (spec §8.2; the cadence is a multiple of ``CHECKPOINT_CHUNK``)."""

    @staticmethod
    def forward(ctx, q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                output_final_state, cfg, every, ck_dtype, plan_name):
        o, fs, ck = gdn_fwd_ckpt(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                                 output_final_state, *cfg, every, ck_dtype, plan_name)
        ctx.save_for_backward(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, ck)
        ctx.cfg = cfg
        ctx.every = every
        ctx.output_final_state = output_final_state
        if not output_final_state:
            ctx.mark_non_differentiable(fs)
        ctx.mark_non_differentiable(ck)
        return o, fs, ck

    @staticmethod
    def backward(ctx, d_o, d_fs, _d_ck):
        q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias, ck = ctx.saved_tensors
        d_final_state = d_fs if ctx.output_final_state else None
        grads = gdn_bwd_ckpt(q, k, v, g, beta, cu_seqlens, d_o, initial_state, d_final_state,
                             a_log, dt_bias, ck, ctx.every, *ctx.cfg)
        return _input_grads(grads, initial_state, a_log, dt_bias, 14)


class GatedDeltaNetOutput(NamedTuple):
    """Result of ``gated_delta_net``.

    ``output``: ``[T, HO, V]`` in the io dtype, compact.
    ``final_state``: ``[N, HO, V, K]`` (V-major) in ``initial_state``'s dtype (fp32 without one)
    when ``output_final_state``; a zero-element tensor otherwise; under
    ``overwrite_initial_state``/``state_indices`` it is the caller's ``initial_state`` buffer,
    updated in place.
    """

    output: Tensor
    final_state: Tensor


class GatedDeltaNetCheckpointOutput(NamedTuple):
    """Result of ``gated_delta_net`` with ``checkpoint_every_n_tokens = c > 0``: ``output`` and
    ``final_state`` as ``GatedDeltaNetOutput``'s, and ``state_checkpoints [max(T/c + N, 1), HO,
    V, K]`` (V-major, ``checkpoint_dtype``: the io dtype by default, or fp32): row ``j`` of
    sequence ``b`` (whose rows start at ``Σ_{b'<b} ceil(T_b'/c)``) is the state before its token
    ``j·c`` (row 0 the initial state or zero); rows past the last sequence's are unspecified."""

    output: Tensor
    final_state: Tensor
    state_checkpoints: Tensor


def _check_checkpoints(q, every, dtype, state_indices, overwrite) -> torch.dtype:
    """Host checks of the checkpoint arguments; returns the checkpoints' dtype."""
    if isinstance(every, bool) or not isinstance(every, int):
        raise TypeError(f"checkpoint_every_n_tokens must be an int; got {every!r}")
    if every < 0 or every % CHECKPOINT_CHUNK:
        raise ValueError("checkpoint_every_n_tokens must be 0 or a positive multiple of "
                         f"{CHECKPOINT_CHUNK}; got {every}")
    if dtype is None:
        dtype = q.dtype
    if dtype not in (torch.float32, q.dtype):
        raise TypeError(f"checkpoint_dtype must be None, torch.float32 or the io dtype {q.dtype}; "
                        f"got {dtype}")
    if state_indices is not None or overwrite:
        raise ValueError("state checkpoints cannot be combined with state_indices / "
                         "overwrite_initial_state")
    return dtype


def _check(q, k, v, g, beta, cu_seqlens, initial_state, state_indices) -> None:
    for name, t, rank in (("q", q, 3), ("k", k, 3), ("v", v, 3), ("g", g, 2), ("beta", beta, 2),
                          ("cu_seqlens", cu_seqlens, 1)):
        if t.dim() != rank:
            raise ValueError(f"{name} must be {rank}-D; got shape {tuple(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device}, q on {q.device}")
    if q.device.type != "cuda":
        raise ValueError(f"q must be a CUDA tensor; got device {q.device}")
    h, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    if hk not in (h, hv):
        raise ValueError(f"k heads ({hk}) must equal q heads ({h}) or v heads ({hv})")
    if max(h, hv) % min(h, hv):
        raise ValueError(f"max(q heads, v heads) must be a multiple of the min; got {h}, {hv}")
    if cu_seqlens.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"cu_seqlens must be int32 or int64; got {cu_seqlens.dtype}")
    if initial_state is not None:
        if initial_state.device != q.device:
            raise ValueError(f"initial_state is on {initial_state.device}, q on {q.device}")
        if state_indices is None and initial_state.shape[0] != cu_seqlens.shape[0] - 1:
            raise ValueError(f"initial_state has {initial_state.shape[0]} rows but cu_seqlens "
                             f"describes {cu_seqlens.shape[0] - 1} sequences")


_precheck = _cpp.C.gdn_precheck if _cpp.ACTIVE else None
_direct = _cpp.C.gdn_fwd if _cpp.ACTIVE else None  # the op's CUDA kernel, no dispatcher
_is_compiling = torch.compiler.is_compiling


def gated_delta_net(q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, cu_seqlens: Tensor,
                    scale: Optional[float] = None, initial_state: Optional[Tensor] = None,
                    output_final_state: bool = False, use_qk_l2norm_in_kernel: bool = False,
                    batch_invariant: bool = False, use_beta_sigmoid_in_kernel: bool = False,
                    allow_neg_eigval: bool = False, safe_gate: bool = False,
                    gate_domain: str = "log", a_log: Optional[Tensor] = None,
                    dt_bias: Optional[Tensor] = None, checkpoint_every_n_tokens: int = 0,
                    checkpoint_dtype: Optional[torch.dtype] = None,
                    plan_name: Optional[str] = None, overwrite_initial_state: bool = False,
                    state_indices: Optional[Tensor] = None) -> GatedDeltaNetOutput:
    """Gated delta net over packed sequences (THD), forward and backward through dnnplan.

    ``q [T, H, K]``, ``k [T, HK, K]``, ``v [T, HV, V]`` (float16/bfloat16), ``g``, ``beta``
    ``[T, HO]`` with ``HO = max(H, HV)``, ``cu_seqlens [N+1]`` (int32/int64) delimiting the
    sequences. ``initial_state [N, HO, V, K]`` (V-major, fp32 or bf16) and ``a_log``/``dt_bias``
    ``[HO]`` (with ``safe_gate``) are optional. ``scale`` defaults to ``1/sqrt(K)``; gate and beta
    transforms as in the reference (``gate_domain`` "log": ``alpha = exp(g)``, "linear":
    ``alpha = g``). ``plan_name`` pins a forward plan by its plan-list name.

    Differentiable in ``q, k, v, g, beta, initial_state, a_log, dt_bias`` (the backward runs
    dnnplan's ``gdn_bwd`` plan list). ``overwrite_initial_state`` / ``state_indices`` select the
    inference-only in-place path (the final state is written into ``initial_state``).
    ``checkpoint_every_n_tokens = c > 0`` (a multiple of 64) also returns the state checkpoints
    (``GatedDeltaNetCheckpointOutput``; ``checkpoint_dtype`` None for the io dtype, or
    ``torch.float32``); under autograd they are saved and passed to the backward.
    """
    if gate_domain != "log" and gate_domain != "linear":
        raise ValueError(f"gate_domain must be 'log' or 'linear'; got {gate_domain!r}")
    if checkpoint_every_n_tokens:
        ck_dtype = _check_checkpoints(q, checkpoint_every_n_tokens, checkpoint_dtype,
                                      state_indices, overwrite_initial_state)
        _check(q, k, v, g, beta, cu_seqlens, initial_state, state_indices)
        scale = float(scale) if scale is not None else 1.0 / math.sqrt(int(q.shape[2]))
        cfg = (scale, bool(use_qk_l2norm_in_kernel), bool(use_beta_sigmoid_in_kernel),
               bool(allow_neg_eigval), bool(safe_gate), gate_domain, bool(batch_invariant))
        every = int(checkpoint_every_n_tokens)
        grad = torch.is_grad_enabled() and any(
            t is not None and t.requires_grad
            for t in (q, k, v, g, beta, initial_state, a_log, dt_bias))
        if grad:
            o, fs, ck = _GdnCkptFunction.apply(q, k, v, g, beta, cu_seqlens, initial_state, a_log,
                                               dt_bias, bool(output_final_state), cfg, every,
                                               ck_dtype, plan_name)
        else:
            o, fs, ck = gdn_fwd_ckpt(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                                     bool(output_final_state), *cfg, every, ck_dtype, plan_name)
        return GatedDeltaNetCheckpointOutput(o, fs, ck)
    del checkpoint_dtype  # only meaningful with checkpoints
    # Eager with the C++ launcher: one C++ pre-check (valid? gradient tracked? plain eager?);
    # the Python validation (the one source of the messages) runs when it cannot vouch, and
    # under tracing. A plain eager inference call calls the C++ launcher directly.
    mode = (_precheck(q, k, v, g, beta, cu_seqlens, initial_state, state_indices, a_log, dt_bias)
            if not _is_compiling() and _precheck is not None else 0)
    if mode == 0:
        _check(q, k, v, g, beta, cu_seqlens, initial_state, state_indices)
        grad = torch.is_grad_enabled() and any(
            t is not None and t.requires_grad
            for t in (q, k, v, g, beta, initial_state, a_log, dt_bias))
    else:
        grad = mode == 2
    # int() specializes K under torch.compile (a guard), so the scale stays a constant.
    scale = float(scale) if scale is not None else 1.0 / math.sqrt(int(q.shape[2]))
    cfg = (scale, bool(use_qk_l2norm_in_kernel), bool(use_beta_sigmoid_in_kernel),
           bool(allow_neg_eigval), bool(safe_gate), gate_domain, bool(batch_invariant))
    if overwrite_initial_state or state_indices is not None:
        if initial_state is None:
            raise ValueError("overwrite_initial_state / state_indices need initial_state")
        if grad:
            raise RuntimeError("the overwrite_initial_state / state_indices path is "
                               "inference-only; run it under torch.no_grad()")
        o = gdn_fwd_overwrite_state(q, k, v, g, beta, cu_seqlens, initial_state, state_indices,
                                    a_log, dt_bias, *cfg, plan_name)
        return GatedDeltaNetOutput(o, initial_state)
    if grad:
        o, fs = _GdnFunction.apply(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                                   bool(output_final_state), cfg, plan_name)
    elif mode == 3:
        o, fs = _direct(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                        bool(output_final_state), *cfg, plan_name)
    else:
        o, fs = gdn_fwd(q, k, v, g, beta, cu_seqlens, initial_state, a_log, dt_bias,
                        bool(output_final_state), *cfg, plan_name)
    return GatedDeltaNetOutput(o, fs)
