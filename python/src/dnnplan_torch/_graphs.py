"""Single-node graphs of the package's op contracts, and the prepared (planned + built) plan that
executes one of them (torch-free).

Contract:
- Each ``*_graph`` function takes tensor descriptions ``Desc(dims, strides, dtype)`` (dtype a
  ``DataType`` code) plus the op's attributes, builds a one-node dnnplan graph whose non-virtual
  tensors are exactly the launcher's buffers, and returns ``(graph, arg_uids)``: the uid of each
  launcher argument in the launcher's argument order (inputs, then outputs; ``None`` for an
  absent optional). Outputs are always declared compact row-major: the launchers allocate them
  so, and the fakes describe them so.
- Attributes equal to the op's default are left unset (as the reference does), so two spellings
  of one request give one graph.
- ``PreparedPlan`` plans (default heuristic modes), optionally pins a plan by name, builds, and
  records the workspace size and the operand order; ``run`` is the per-call path: one pointer
  array in operand order and one ``dnnp_plan_list_execute`` call, nothing else.
"""

from __future__ import annotations

import ctypes
import math
import operator
from typing import NamedTuple, Optional, Sequence

from ._lib import DataType, DnnplanError, Graph, PlanList, Status, _error, library


class Desc(NamedTuple):
    """A tensor as the graph declares it."""

    dims: tuple
    strides: tuple
    dtype: int


def compact(dims: Sequence[int]) -> tuple:
    """Row-major strides of ``dims``."""
    strides, acc = [], 1
    for d in reversed(tuple(dims)):
        strides.append(acc)
        acc *= max(int(d), 1)
    return tuple(reversed(strides))


def out_desc(dims: Sequence[int], dtype: int) -> Desc:
    """A compact output description."""
    dims = tuple(int(d) for d in dims)
    return Desc(dims, compact(dims), dtype)


def _add(g: Graph, name: str, d: Optional[Desc], uid: int) -> Optional[int]:
    if d is None:
        return None
    return g.tensor(name, d.dtype, d.dims, d.strides, uid)


# ------------------------------------------------------------------------------------------------
# SDPA


def sdpa_fwd_graph(q: Desc, k: Desc, v: Desc, *, scale: float, is_causal: bool,
                   generate_stats: bool) -> tuple:
    """``sdpa`` node; args ``(q, k, v, O, Stats)`` (Stats ``None`` for inference)."""
    b, hq, sq, _ = q.dims
    dv = v.dims[3]
    g = Graph(q.dtype, DataType.FLOAT, DataType.FLOAT)
    uq, uk, uv = _add(g, "q", q, 1), _add(g, "k", k, 2), _add(g, "v", v, 3)
    uo = _add(g, "O", out_desc((b, hq, sq, dv), q.dtype), 4)
    us = _add(g, "Stats", out_desc((b, hq, sq, 1), DataType.FLOAT), 5) if generate_stats else None
    attrs = {"attn_scale": float(scale), "generate_stats": bool(generate_stats)}
    if is_causal:
        attrs["use_causal_mask"] = True
    g.add_node("sdpa", {"q": uq, "k": uk, "v": uv}, {"O": uo, "Stats": us}, attrs, name="sdpa",
               compute=DataType.FLOAT)
    return g, [uq, uk, uv, uo, us]


def sdpa_bwd_graph(q: Desc, k: Desc, v: Desc, o: Desc, d_o: Desc, stats: Desc, *, scale: float,
                   is_causal: bool) -> tuple:
    """``sdpa_backward`` node; args ``(q, k, v, o, dO, stats, dQ, dK, dV)``."""
    g = Graph(q.dtype, DataType.FLOAT, DataType.FLOAT)
    ins = [_add(g, n, d, i + 1) for i, (n, d) in
           enumerate([("q", q), ("k", k), ("v", v), ("o", o), ("dO", d_o), ("stats", stats)])]
    outs = [_add(g, n, out_desc(d.dims, d.dtype), 7 + i) for i, (n, d) in
            enumerate([("dQ", q), ("dK", k), ("dV", v)])]
    attrs = {"attn_scale": float(scale)}
    if is_causal:
        attrs["use_causal_mask"] = True
    ports = dict(zip(["q", "k", "v", "o", "dO", "stats"], ins))
    g.add_node("sdpa_backward", ports, dict(zip(["dQ", "dK", "dV"], outs)), attrs,
               name="sdpa_backward", compute=DataType.FLOAT)
    return g, ins + outs


# ------------------------------------------------------------------------------------------------
# Gated delta net


class GdnConfig(NamedTuple):
    """Attributes of a GDN node (forward and backward share them)."""

    scale: float
    use_qk_l2norm: bool = False
    use_beta_sigmoid: bool = False
    allow_neg_eigval: bool = False
    safe_gate: bool = False
    gate_domain: str = "log"
    batch_invariant: bool = False

    def attrs(self) -> dict:
        """The node attributes (defaults left unset; ``scale`` always set)."""
        a = {"scale": float(self.scale)}
        for name in ("use_qk_l2norm", "use_beta_sigmoid", "allow_neg_eigval", "safe_gate",
                     "batch_invariant"):
            if getattr(self, name):
                a[name] = True
        if self.gate_domain != "log":
            a["gate_domain"] = self.gate_domain
        return a


def default_gdn_scale(head_dim: int) -> float:
    """``1/sqrt(K)``."""
    return 1.0 / math.sqrt(head_dim)


def gdn_heads(q: Desc, v: Desc) -> tuple:
    """``(N-independent) (HO, K, V)`` from q and v."""
    return max(q.dims[1], v.dims[1]), q.dims[2], v.dims[2]


# Bytes per (chunk slot, head) of GDN's saved ``chunk_factors`` (the library's
# ``GDN_CHUNK_FACTOR_BYTES``; tests/test_graphs.py checks the two agree).
GDN_CHUNK_FACTOR_BYTES = 17924


def gdn_chunk_factor_bytes(v: int, checkpoint_every: int) -> int:
    """Bytes per (chunk slot, head) of ``chunk_factors`` (the library's
    ``gdn_chunk_factor_bytes``): ``GDN_CHUNK_FACTOR_BYTES``, plus each chunk's ``U`` tile
    (``64·V`` io elements) when the forward also checkpoints every chunk (the saved replay)."""
    return GDN_CHUNK_FACTOR_BYTES + (64 * v * 2 if checkpoint_every == 64 else 0)


def gdn_chunk_factor_rows(total_tokens: int, n_seqs: int) -> int:
    """Chunk slots of a ``chunk_factors`` tensor: ``max(T/64 + N, 1)``."""
    return max(total_tokens // 64 + n_seqs, 1)


def gdn_checkpoint_rows(total_tokens: int, n_seqs: int, every: int) -> int:
    """Rows of the ``state_checkpoints`` allocation (spec §2.2): ``max(T/c + N, 1)``."""
    return max(total_tokens // every + n_seqs, 1)


def gdn_fwd_graph(q: Desc, k: Desc, v: Desc, gate: Desc, beta: Desc, cu_seqlens: Desc,
                  initial_state: Optional[Desc], a_log: Optional[Desc], dt_bias: Optional[Desc],
                  *, cfg: GdnConfig, output_final_state: bool, state_indices: Optional[Desc] = None,
                  overwrite_initial_state: bool = False, checkpoint_every: int = 0,
                  checkpoint_dtype: Optional[DataType] = None, save_factors: bool = False) -> tuple:
    """``gdn`` node; args ``(q, k, v, g, beta, cu_seqlens, initial_state, state_indices, a_log,
    dt_bias, O, final_state)``, then ``state_checkpoints`` when ``checkpoint_every > 0`` (rows
    ``max(T/c + N, 1)``, ``checkpoint_dtype``, default the io dtype), then ``chunk_factors``
    (UINT8 ``[max(T/64 + N, 1), HO, gdn_chunk_factor_bytes(V, checkpoint_every)]``) when
    ``save_factors``. Under
    ``overwrite_initial_state`` the final state is declared with the initial state's (pool) dims
    and the launcher passes the same buffer for both."""
    ho, _, vd = gdn_heads(q, v)
    t = q.dims[0]
    n = cu_seqlens.dims[0] - 1
    g = Graph(q.dtype, DataType.FLOAT, DataType.FLOAT)
    names = ["q", "k", "v", "g", "beta", "cu_seqlens", "initial_state", "state_indices", "a_log",
             "dt_bias"]
    descs = [q, k, v, gate, beta, cu_seqlens, initial_state, state_indices, a_log, dt_bias]
    ins = [_add(g, nm, d, i + 1) for i, (nm, d) in enumerate(zip(names, descs))]
    uo = _add(g, "O", out_desc((t, ho, vd), q.dtype), 11)
    ufs = None
    if output_final_state:
        state_dtype = initial_state.dtype if initial_state is not None else DataType.FLOAT
        if overwrite_initial_state:
            assert initial_state is not None
            fs = Desc(initial_state.dims, initial_state.strides, state_dtype)
        else:
            fs = out_desc((n, ho, vd, q.dims[2]), state_dtype)
        ufs = _add(g, "final_state", fs, 12)
    attrs = cfg.attrs()
    if output_final_state:
        attrs["output_final_state"] = True
    if overwrite_initial_state:
        attrs["overwrite_initial_state"] = True
    outs = {"O": uo, "final_state": ufs}
    if checkpoint_every > 0:
        rows = gdn_checkpoint_rows(t, n, checkpoint_every)
        ck = out_desc((rows, ho, vd, q.dims[2]), checkpoint_dtype or q.dtype)
        outs["state_checkpoints"] = _add(g, "state_checkpoints", ck, 13)
        attrs["checkpoint_every_n_tokens"] = int(checkpoint_every)
    if save_factors:
        cf = out_desc((gdn_chunk_factor_rows(t, n), ho, gdn_chunk_factor_bytes(vd, checkpoint_every)),
                      DataType.UINT8)
        outs["chunk_factors"] = _add(g, "chunk_factors", cf, 14)
        attrs["output_chunk_factors"] = True
    g.add_node("gdn", dict(zip(names, ins)), outs, attrs, name="gdn", compute=DataType.FLOAT)
    return g, ins + list(outs.values())


def gdn_bwd_graph(q: Desc, k: Desc, v: Desc, gate: Desc, beta: Desc, cu_seqlens: Desc,
                  d_o: Desc, initial_state: Optional[Desc], d_final_state: Optional[Desc],
                  a_log: Optional[Desc], dt_bias: Optional[Desc], *, cfg: GdnConfig,
                  state_checkpoints: Optional[Desc] = None, checkpoint_every: int = 0,
                  chunk_factors: Optional[Desc] = None) -> tuple:
    """``gdn_bwd`` node; args ``(q, k, v, g, beta, cu_seqlens, dO, initial_state, d_final_state,
    a_log, dt_bias, dQ, dK, dV, dG, dBeta, d_initial_state, d_a_log, d_dt_bias)``, then
    ``state_checkpoints`` (the forward's, every ``checkpoint_every`` tokens) when given, then
    ``chunk_factors`` (the saving forward's) when given."""
    g = Graph(q.dtype, DataType.FLOAT, DataType.FLOAT)
    names = ["q", "k", "v", "g", "beta", "cu_seqlens", "dO", "initial_state", "d_final_state",
             "a_log", "dt_bias"]
    descs = [q, k, v, gate, beta, cu_seqlens, d_o, initial_state, d_final_state, a_log, dt_bias]
    ins = [_add(g, nm, d, i + 1) for i, (nm, d) in enumerate(zip(names, descs))]
    out_names = ["dQ", "dK", "dV", "dG", "dBeta", "d_initial_state", "d_a_log", "d_dt_bias"]
    like = [q, k, v, gate, beta, initial_state, a_log, dt_bias]
    outs = [_add(g, nm, out_desc(d.dims, d.dtype) if d is not None else None, 12 + i)
            for i, (nm, d) in enumerate(zip(out_names, like))]
    attrs = cfg.attrs()
    node_ins = dict(zip(names, ins))
    extra = []
    if state_checkpoints is not None:
        extra = [_add(g, "state_checkpoints", state_checkpoints, 20)]
        node_ins["state_checkpoints"] = extra[0]
        attrs["checkpoint_every_n_tokens"] = int(checkpoint_every)
    if chunk_factors is not None:
        extra.append(_add(g, "chunk_factors", chunk_factors, 21))
        node_ins["chunk_factors"] = extra[-1]
    g.add_node("gdn_bwd", node_ins, dict(zip(out_names, outs)), attrs, name="gdn_bwd",
               compute=DataType.FLOAT)
    return g, ins + outs + extra


# ------------------------------------------------------------------------------------------------
# Prepared plans


class PreparedPlan:
    """A planned, built plan list and how launcher arguments map onto its operands."""

    __slots__ = ("plan_list", "plan_name", "workspace_bytes", "n_operands", "order", "_array",
                 "_execute", "_list_ptr", "_identity", "_pick")

    def __init__(self, graph: Graph, arg_uids: Sequence[Optional[int]], *,
                 plan_name: Optional[str] = None, modes: Sequence[int] = ()):
        with graph:
            pl = graph.plan_list()
        try:
            pl.create_execution_plans(modes)
            if plan_name is not None:
                names = pl.plan_names()
                if plan_name not in names:
                    raise ValueError(
                        f"plan_name {plan_name!r} is not in this graph's plan list {names}")
                pl.select(names.index(plan_name))
            pl.build()
        except BaseException:
            pl.close()
            raise
        self._adopt(pl, arg_uids)

    @classmethod
    def from_built(cls, pl: PlanList, arg_uids: Sequence[Optional[int]]) -> "PreparedPlan":
        """Adopts an already built plan list (it is closed with this object)."""
        self = cls.__new__(cls)
        self._adopt(pl, arg_uids)
        return self

    def _adopt(self, pl: PlanList, arg_uids: Sequence[Optional[int]]) -> None:
        try:
            self.workspace_bytes = pl.workspace_size()
            self.plan_name = pl.plan_name(pl.selected_index())
            position = {uid: i for i, uid in enumerate(arg_uids) if uid is not None}
            operands = pl.operand_uids()
            missing = [u for u in operands if u not in position]
            if missing:
                raise DnnplanError(Status.INTERNAL, "DNNP_STATUS_INTERNAL",
                                   f"operands {missing} have no launcher argument")
        except BaseException:
            pl.close()
            raise
        self.plan_list = pl
        self.n_operands = len(operands)
        self.order = tuple(position[u] for u in operands)
        # operands are the leading launcher arguments in order (the usual case): no reordering
        self._identity = self.order == tuple(range(self.n_operands))
        # picks the operands out of the launcher arguments as one tuple (C-level, no list)
        self._pick = (operator.itemgetter(*self.order) if self.n_operands > 1
                      else (lambda args, i=self.order[0]: (args[i],)) if self.n_operands
                      else (lambda args: ()))
        self._array = ctypes.c_void_p * self.n_operands
        self._execute = library().dnnp_plan_list_execute
        self._list_ptr = pl.ptr

    def run(self, handle_ptr: int, pointers: Sequence[int], workspace_ptr: int = 0) -> None:
        """Executes with ``pointers`` in launcher-argument order (absent optionals: anything)."""
        arr = self._array(*self._pick(pointers))
        st = self._execute(self._list_ptr, handle_ptr, arr, self.n_operands,
                           workspace_ptr or None, self.workspace_bytes, None, 0)
        if st:
            raise _error(st, f"dnnp_plan_list_execute [{self.plan_name}]")

    def close(self) -> None:
        """Destroys the plan list."""
        self.plan_list.close()


__all__ = [
    "Desc",
    "compact",
    "out_desc",
    "sdpa_fwd_graph",
    "sdpa_bwd_graph",
    "GdnConfig",
    "default_gdn_scale",
    "gdn_fwd_graph",
    "gdn_bwd_graph",
    "PreparedPlan",
]

