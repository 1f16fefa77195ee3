"""Independent torch reference for the gated delta net (spec: linear-attention §1.1-§1.3, §3.1):
a per-token recurrence in fp64, differentiable (autograd gives the gradient oracle), with
consecutive head grouping, V-major states at the boundary, varlen sequences over cu_seqlens, and
the gate/beta/l2norm transforms. Written from the spec, sharing no code with dnnplan."""

from __future__ import annotations

import math
from typing import Optional

import torch
import torch.nn.functional as F

L2_NORM_EPS = 1e-6


def _expand(x: torch.Tensor, ho: int) -> torch.Tensor:
    """[T, H_in, D] -> [T, HO, D]: output head h reads input head h // (HO / H_in)."""
    return x.repeat_interleave(ho // x.shape[1], dim=1)


def gdn_reference(q, k, v, g, beta, cu_seqlens, *, scale: Optional[float] = None,
                  initial_state=None, use_qk_l2norm: bool = False,
                  use_beta_sigmoid: bool = False, allow_neg_eigval: bool = False,
                  safe_gate: bool = False, gate_domain: str = "log", a_log=None,
                  dt_bias=None, checkpoint_every: int = 0):
    """Returns ``(o [T, HO, V], final_state [N, HO, V, K])`` in fp64; with
    ``checkpoint_every = c > 0`` also the state series ``[Σ_b ceil(T_b/c), HO, V, K]`` (§3.4: row
    ``j`` of sequence ``b`` is its V-major state before token ``j·c``)."""
    q, k, v, g, beta = (t.double() for t in (q, k, v, g, beta))
    t_total, h, kd = q.shape
    hv, vd = v.shape[1], v.shape[2]
    ho = max(h, hv)
    scale = 1.0 / math.sqrt(kd) if scale is None else scale
    if use_qk_l2norm:
        q = q * torch.rsqrt((q * q).sum(-1, keepdim=True) + L2_NORM_EPS)
        k = k * torch.rsqrt((k * k).sum(-1, keepdim=True) + L2_NORM_EPS)
    q, k, v = _expand(q, ho), _expand(k, ho), _expand(v, ho)
    if safe_gate:
        a = a_log.double() if a_log is not None else torch.zeros(ho, dtype=torch.float64,
                                                                 device=g.device)
        b = dt_bias.double() if dt_bias is not None else torch.zeros_like(a)
        log_alpha = -torch.exp(a) * F.softplus(g + b)
        alpha = torch.exp(log_alpha)
    elif gate_domain == "log":
        alpha = torch.exp(g)
    else:
        alpha = g
    if use_beta_sigmoid:
        beta = torch.sigmoid(beta) * (2.0 if allow_neg_eigval else 1.0)
    cu = [int(x) for x in cu_seqlens.tolist()]
    n = len(cu) - 1
    outs = []
    finals = []
    series = []
    for i in range(n):
        if initial_state is not None:
            s = initial_state[i].double().transpose(-1, -2)  # [HO, K, V] math domain
        else:
            s = torch.zeros(ho, kd, vd, dtype=torch.float64, device=q.device)
        for t in range(cu[i], cu[i + 1]):
            if checkpoint_every and (t - cu[i]) % checkpoint_every == 0:
                series.append(s.transpose(-1, -2))
            s = alpha[t].view(ho, 1, 1) * s
            r = v[t] - torch.einsum("hkv,hk->hv", s, k[t])
            s = s + beta[t].view(ho, 1, 1) * torch.einsum("hk,hv->hkv", k[t], r)
            outs.append(torch.einsum("hkv,hk->hv", s, q[t] * scale))
        finals.append(s.transpose(-1, -2))
    o = torch.stack(outs) if outs else q.new_zeros((0, ho, vd))
    if o.shape[0] != t_total:  # rows not covered by any sequence
        full = q.new_zeros((t_total, ho, vd))
        rows = [t for i in range(n) for t in range(cu[i], cu[i + 1])]
        full[rows] = o
        o = full
    if checkpoint_every:
        ck = torch.stack(series) if series else q.new_zeros((0, ho, vd, kd))
        return o, torch.stack(finals), ck
    return o, torch.stack(finals)


def rms_ratio(out: torch.Tensor, ref: torch.Tensor) -> float:
    """``RMS(out - ref) / RMS(ref)`` in fp64 (0 when both are ~0)."""
    out, ref = out.double(), ref.double()
    den = ref.pow(2).mean().sqrt().item()
    num = (out - ref).pow(2).mean().sqrt().item()
    if den <= 1e-12:
        return num
    return num / den
