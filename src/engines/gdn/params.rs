//! The kernel parameter block of the bundled `gdn_fwd` module and its workspace layout.
//!
//! [`FwdParams`] is `gdn::FwdParams` of `kernels/include/gdn_fwd.cuh`, field for field
//! (`#[repr(C)]`, device addresses as `u64`): every launch of the module takes it by value.
//! [`WorkspaceLayout`] carves the caller's workspace: regions in order, each start rounded up to
//! 256 bytes.

use crate::cuda::tma::TensorMap;

/// Chunk length of the GDN kernels (tokens).
pub const CHUNK: u64 = 64;

/// Alignment of every workspace region.
const REGION_ALIGN: u64 = 256;

/// Dtype codes understood by the kernels (`gdn::DType`).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelDtype {
    /// fp32.
    F32 = 0,
    /// bf16.
    Bf16 = 1,
    /// fp16.
    F16 = 2,
}

/// Flag bits of `FwdParams::flags` (`gdn::Flags`; the `mirror` tests check every value here and
/// below against the kernel sources).
pub mod flags {
    /// In-kernel q/k L2 normalisation.
    pub const L2NORM: i32 = 1;
    /// `β = sigmoid(beta)`.
    pub const BETA_SIGMOID: i32 = 2;
    /// `β = 2·sigmoid(beta)`.
    pub const NEG_EIGVAL: i32 = 4;
    /// `log α = −exp(a_log)·softplus(g + dt_bias)`.
    pub const SAFE_GATE: i32 = 8;
    /// `α = g`.
    pub const LINEAR_GATE: i32 = 16;
    /// Longest-first dispatch (`gdn::FLAG_SEQ_ORDER`, session 34, [`super::super::seq_order`]):
    /// the chunk-table kernel also writes `seq_order` and the uncut scans serve sequence
    /// `seq_order[blockIdx.z]`. Speed only.
    pub const SEQ_ORDER: i32 = 1 << 11;
    /// Backward only (`gdn::FLAG_BWD_DIRECT`, set with `gdn_bwd_tokens_tc`): `dQ` / `dK` / `dV`
    /// of a port with `HO` heads are written by the token stage, and the fold skips that port.
    pub const BWD_DIRECT: i32 = 1 << 12;
    /// Backward only (`gdn::FLAG_BWD_S_IO`, set with `gdn_bwd_tokens_tc4` / `tc5` / `tc11` / `tc12`): the forward-state
    /// replays store the state entering every chunk in the io dtype (2 bytes) instead of fp32.
    pub const BWD_S_IO: i32 = 1 << 13;
    /// Launch chain (`gdn::FLAG_PDL_TRIGGER`, [`super::super::pdl::PdlMode::Early`]): every
    /// kernel triggers the next kernel's programmatic launch right after its entry wait.
    pub const PDL_TRIGGER: i32 = 1 << 14;
}

/// `gdn::FwdParams`: pointers are device addresses (0 = absent).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FwdParams {
    /// `[T, H, K]`.
    pub q: u64,
    /// `[T, HK, K]`.
    pub k: u64,
    /// `[T, HV, V]`.
    pub v: u64,
    /// `[T, HO]`.
    pub g: u64,
    /// `[T, HO]`.
    pub beta: u64,
    /// `[N + 1]`.
    pub cu_seqlens: u64,
    /// `[N | pool, HO, V, K]` or 0.
    pub initial_state: u64,
    /// `[N]` int32 or 0.
    pub state_indices: u64,
    /// `[HO]` or 0.
    pub a_log: u64,
    /// `[HO]` or 0.
    pub dt_bias: u64,
    /// `[T, HO, V]`.
    pub o: u64,
    /// `[N | pool, HO, V, K]` or 0.
    pub final_state: u64,
    /// 1 when `cu_seqlens` is int64.
    pub cu_seqlens_i64: i32,
    /// `N`.
    pub n_seqs: i32,
    /// `H`.
    pub h: i32,
    /// `HK`.
    pub hk: i32,
    /// `HV`.
    pub hv: i32,
    /// `HO`.
    pub ho: i32,
    /// Dtype code of `g`.
    pub g_dtype: i32,
    /// Dtype code of `beta`.
    pub beta_dtype: i32,
    /// Dtype code of the states (fp32 or bf16).
    pub state_dtype: i32,
    /// Dtype code of `a_log`.
    pub a_log_dtype: i32,
    /// Dtype code of `dt_bias`.
    pub dt_bias_dtype: i32,
    /// q scale.
    pub scale: f32,
    /// [`flags`] bits.
    pub flags: i32,
    /// Upper bound of chunk slots: `T / 64 + N`.
    pub max_chunks: i32,
    /// Workspace: `[N + 1]` int32 chunk offsets (then `[N]` int32 `seq_order`,
    /// [`WorkspaceLayout::seq_order`]).
    pub chunk_offsets: u64,
    /// Workspace: `W` `[slots, 64, K]`.
    pub ws_w: u64,
    /// Workspace: `Q⁺` `[slots, 64, K]`.
    pub ws_q: u64,
    /// Workspace: `Kᴿ` `[slots, 64, K]`.
    pub ws_kr: u64,
    /// Workspace: `Ũᵀ` `[slots, V, 64]`.
    pub ws_ut: u64,
    /// Workspace: `A` `[slots, 64, 64]`.
    pub ws_a: u64,
    /// Workspace: `Γ_last` `[slots]` fp32.
    pub ws_gl: u64,
}

/// Byte offsets of the workspace regions and the total size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkspaceLayout {
    /// Chunk offsets `[N + 1]` int32.
    pub chunk_offsets: u64,
    /// The longest-first sequence order `[N]` int32 right after the chunk table, in its region
    /// (session 34, [`super::seq_order`]; `gdn::seq_order_table`: `chunk_offsets + N + 1`),
    /// written by the chunk-table kernel with [`flags::SEQ_ORDER`].
    pub seq_order: u64,
    /// `W`.
    pub w: u64,
    /// `Q⁺`.
    pub q: u64,
    /// `Kᴿ`.
    pub kr: u64,
    /// `Ũᵀ`.
    pub ut: u64,
    /// `A`.
    pub a: u64,
    /// `Γ_last`.
    pub gl: u64,
    /// The sanitized `cu_seqlens` `[N + 1]` int64 at the end of the chunk table's region
    /// (session 43, [`CuSource`]): what every kernel after the plan's first reads.
    pub cu_sane: u64,
    /// Token rows `T` of the THD tensors (the bound the sanitized offsets are clamped to).
    pub total_tokens: u64,
    /// The sanitized pool rows `[N]` int32 after [`WorkspaceLayout::cu_sane`] (session 44,
    /// [`StateSource`]): what the forward's kernels after its first read under a
    /// `state_indices` pool.
    pub state_rows: u64,
    /// Total bytes.
    pub total: u64,
}

/// `gdn::CuSource` of `kernels/include/gdn_fwd.cuh` (session 43): the caller's `cu_seqlens` as
/// the plan's first kernel (a chunk-table entry) reads it. That kernel writes
/// `min(T, max(0, cu[0..=i]))` for every `i` into the workspace ([`WorkspaceLayout::cu_sane`],
/// int64) and every kernel reads that copy, so offsets that are not well formed (decreasing,
/// negative, past `T`) cannot make a kernel address rows outside `[0, T)` or chunk slots past
/// `T / 64 + N`: the outputs of such a call are unspecified, the memory outside the caller's
/// buffers untouched. Well-formed offsets are copied unchanged. It sits in the parameter
/// blocks' padding before the tensor maps ([`FwdTmaParams::cu_src`], [`BwdTmaParams::cu_src`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CuSource {
    /// The caller's `[N + 1]` offsets (device address).
    pub cu_seqlens: u64,
    /// Token rows `T` of the THD tensors.
    pub total_t: i64,
    /// 1 when the caller's offsets are int64, 0 for int32.
    pub cu_seqlens_i64: i32,
    /// Zero.
    pub reserved: i32,
}

/// `gdn::StateSource` of `kernels/include/gdn_fwd.cuh` (session 44): the caller's
/// `state_indices` as the forward's first kernel (a chunk-table entry) reads it. Under a pool
/// that kernel writes each index that names a row of the pool (`0 <= i < pool_rows`) unchanged
/// and any other as −1 into the workspace ([`WorkspaceLayout::state_rows`]), and the kernels
/// read that copy: a sequence whose index is outside the pool starts from a zero state and
/// stores no final state, so a bad index cannot make a kernel read or write outside the
/// caller's pool. Zero (null indices) without a pool. It follows [`CuSource`] in the forward's
/// parameter block ([`FwdTmaParams::st_src`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StateSource {
    /// The caller's `[N]` int32 pool rows (device address), 0 without a pool.
    pub state_indices: u64,
    /// Rows of the pool the kernels read and write (the initial state's, and the final
    /// state's when fewer).
    pub pool_rows: i32,
    /// Zero.
    pub reserved: i32,
}

/// The entries that sanitize `cu_seqlens` ([`CuSource`]): the chunk-table kernels, one of which
/// is the first launch of every GDN plan (the forward's two also sanitize `state_indices`,
/// [`StateSource`]).
pub const CU_SANITIZING_ENTRIES: [&str; 4] = [
    "gdn_chunk_offsets",
    "gdn_fwd_chunk_order",
    "gdn_bwd_chunk_offsets",
    "gdn_bwd_chunk_order_rev",
];

/// Where the sanitized `[N + 1]` int64 `cu_seqlens` starts in the chunk table's region: after
/// the `[N + 1]` int32 offsets and the `[N]` int32 order, at a multiple of 8 bytes.
fn cu_sane_in_table(n_seqs: u64) -> u64 {
    (4 * (2 * n_seqs + 1)).div_ceil(8) * 8
}

/// Where the sanitized `[N]` int32 pool rows start in the chunk table's region: right after the
/// sanitized `cu_seqlens`.
fn state_rows_in_table(n_seqs: u64) -> u64 {
    cu_sane_in_table(n_seqs) + 8 * (n_seqs + 1)
}

/// The chunk table's region: `[N + 1]` int32 chunk offsets, the `[N]` int32 longest-first
/// sequence order (session 34, [`WorkspaceLayout::seq_order`]), the sanitized `[N + 1]` int64
/// `cu_seqlens` (session 43, [`WorkspaceLayout::cu_sane`]), then the sanitized `[N]` int32 pool
/// rows (session 44, [`WorkspaceLayout::state_rows`]; written by the forward under a pool only).
pub fn chunk_table_bytes(n_seqs: u64) -> u64 {
    state_rows_in_table(n_seqs) + 4 * n_seqs
}

/// Where the `[N]` int32 longest-first order starts in a chunk table at byte `chunk_offsets`:
/// right after its `[N + 1]` offsets (`gdn::seq_order_table`: `chunk_offsets + N + 1`).
pub fn seq_order_offset(chunk_offsets: u64, n_seqs: u64) -> u64 {
    chunk_offsets + 4 * (n_seqs + 1)
}

/// Lays out a chunk table of `table` bytes and then the regions of `sizes` bytes, in order, each
/// at a multiple of [`REGION_ALIGN`]: (the table's offset, the regions' offsets, the total bytes).
fn regions<const R: usize>(table: u64, sizes: [u64; R]) -> (u64, [u64; R], u64) {
    let mut off = 0u64;
    let mut take = |bytes: u64| {
        let at = off;
        off = (off + bytes).div_ceil(REGION_ALIGN) * REGION_ALIGN;
        at
    };
    let table_at = take(table);
    let at = sizes.map(&mut take);
    (table_at, at, off)
}

impl WorkspaceLayout {
    /// Layout for `n_seqs` sequences of `total_tokens` tokens, `ho` heads, head dims `k`, `v`,
    /// 16-bit io elements.
    pub fn new(n_seqs: u64, total_tokens: u64, ho: u64, k: u64, v: u64) -> WorkspaceLayout {
        let slots = max_chunks(n_seqs, total_tokens) * ho;
        Self::in_order(
            n_seqs,
            total_tokens,
            [
                slots * CHUNK * k * 2,
                slots * CHUNK * k * 2,
                slots * CHUNK * k * 2,
                slots * v * CHUNK * 2,
                slots * CHUNK * CHUNK * 2,
                slots * 4,
            ],
        )
    }

    /// The chunk table of `n_seqs` sequences of `total_tokens` tokens in all, then `W`, `Q⁺`,
    /// `Kᴿ`, `Ũᵀ`, `A`, `Γ_last` of `sizes` bytes, in that order ([`regions`]).
    fn in_order(n_seqs: u64, total_tokens: u64, sizes: [u64; 6]) -> WorkspaceLayout {
        let (chunk_offsets, at, total) = regions(chunk_table_bytes(n_seqs), sizes);
        Self::with_table(n_seqs, total_tokens, chunk_offsets, at, total)
    }

    /// A layout of `total` bytes whose chunk table of `n_seqs` sequences (`total_tokens` tokens in
    /// all) starts at `chunk_offsets` and whose `W`, `Q⁺`, `Kᴿ`, `Ũᵀ`, `A`, `Γ_last` start at
    /// `at`: the table's parts (order, sanitized offsets and pool rows) placed in it.
    fn with_table(
        n_seqs: u64,
        total_tokens: u64,
        chunk_offsets: u64,
        [w, q, kr, ut, a, gl]: [u64; 6],
        total: u64,
    ) -> WorkspaceLayout {
        WorkspaceLayout {
            chunk_offsets,
            seq_order: seq_order_offset(chunk_offsets, n_seqs),
            w,
            q,
            kr,
            ut,
            a,
            gl,
            cu_sane: chunk_offsets + cu_sane_in_table(n_seqs),
            total_tokens,
            state_rows: chunk_offsets + state_rows_in_table(n_seqs),
            total,
        }
    }

    /// The slim factors' layout (`DNNPLAN_GDN_FWD_FACTORS=slim`, kernels/include/gdn_fwd_slim.cuh)
    /// in the same fields: `w` holds `T` and `a` holds `A`, each `[slots, SLIM_TRI_ELEMS]` io
    /// (session 24, tri24: only the [`SLIM_TRI_BLOCKS`] 16 × 16 blocks at or below the diagonal,
    /// `gdn::slim_tri_elem`; until then `[slots, 64, 64]`), `kr` the per-token scalars
    /// `[slots, SLIM_SCALARS, 64]` fp32, `gl` as the full layout's; `q` and `ut` are empty (their
    /// offsets are `a`'s; the slim kernels never touch them).
    pub fn slim(n_seqs: u64, total_tokens: u64, ho: u64) -> WorkspaceLayout {
        let slots = max_chunks(n_seqs, total_tokens) * ho;
        let (chunk_offsets, [w, kr, a, gl], total) = regions(
            chunk_table_bytes(n_seqs),
            [
                slots * SLIM_TRI_ELEMS * 2,
                slots * SLIM_SCALARS * CHUNK * 4,
                slots * SLIM_TRI_ELEMS * 2,
                slots * 4,
            ],
        );
        Self::with_table(
            n_seqs,
            total_tokens,
            chunk_offsets,
            [w, a, kr, a, a, gl],
            total,
        )
    }

    /// The forward-side regions of the backward's slim form (session 37,
    /// [`BwdWorkspaceLayout::slim`]): what its slim prep writes and its kernels read — the
    /// scalars `[slots, SLIM_SCALARS, 64]` fp32 in `kr`, `A` as full `[slots, 64, 64]` io rows,
    /// `Γ_last` — or none of them when `prep_outputs` is false (the plan reads saved chunk
    /// factors instead); `W`, `Q⁺`, `Ũᵀ` empty (their offsets are the next region's).
    pub fn bwd_slim(
        n_seqs: u64,
        total_tokens: u64,
        ho: u64,
        prep_outputs: bool,
    ) -> WorkspaceLayout {
        let slots = max_chunks(n_seqs, total_tokens) * ho;
        let keep = u64::from(prep_outputs);
        Self::in_order(
            n_seqs,
            total_tokens,
            [
                0,
                0,
                keep * slots * SLIM_SCALARS * CHUNK * 4,
                0,
                keep * slots * CHUNK * CHUNK * 2,
                keep * slots * 4,
            ],
        )
    }

    /// Writes the region addresses for a workspace at `base` into `p`, and points its
    /// `cu_seqlens` (the caller's, as the pack bound it) at the sanitized copy: returns the
    /// caller's offsets as the plan's first kernel reads them ([`CuSource`]).
    pub fn bind(&self, base: u64, p: &mut FwdParams) -> CuSource {
        let src = CuSource {
            cu_seqlens: p.cu_seqlens,
            total_t: self.total_tokens as i64,
            cu_seqlens_i64: p.cu_seqlens_i64,
            reserved: 0,
        };
        p.cu_seqlens = base + self.cu_sane;
        p.cu_seqlens_i64 = 1;
        p.chunk_offsets = base + self.chunk_offsets;
        p.ws_w = base + self.w;
        p.ws_q = base + self.q;
        p.ws_kr = base + self.kr;
        p.ws_ut = base + self.ut;
        p.ws_a = base + self.a;
        p.ws_gl = base + self.gl;
        src
    }

    /// Under a pool (a bound `state_indices`, `p.state_indices` nonzero) points `p`'s
    /// `state_indices` at the sanitized copy in a workspace at `base` and returns the caller's
    /// indices and the pool's `pool_rows` as the forward's first kernel reads them
    /// ([`StateSource`]); without a pool changes nothing and returns zero.
    pub fn bind_pool(&self, base: u64, pool_rows: u64, p: &mut FwdParams) -> StateSource {
        if p.state_indices == 0 {
            return StateSource::default();
        }
        let src = StateSource {
            state_indices: p.state_indices,
            // The indices are int32: a pool past i32::MAX rows has no row they cannot name.
            pool_rows: i32::try_from(pool_rows).unwrap_or(i32::MAX),
            reserved: 0,
        };
        p.state_indices = base + self.state_rows;
        src
    }
}

/// `gdn::BwdParams` of `kernels/include/gdn_bwd.cuh`: the forward block (inputs and the
/// forward's workspace regions; `o` and `final_state` 0) followed by the backward's ports and
/// workspace regions. Pointers are device addresses (0 = absent).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BwdParams {
    /// Inputs and the forward's regions.
    pub f: FwdParams,
    /// `dO` `[T, HO, V]`.
    pub d_o: u64,
    /// `d_final_state` `[N, HO, V, K]` or 0.
    pub d_final_state: u64,
    /// `dQ` `[T, H, K]`.
    pub dq: u64,
    /// `dK` `[T, HK, K]`.
    pub dk: u64,
    /// `dV` `[T, HV, V]`.
    pub dv: u64,
    /// `dG` `[T, HO]`.
    pub dg: u64,
    /// `dBeta` `[T, HO]`.
    pub dbeta: u64,
    /// `d_initial_state` `[N, HO, V, K]` or 0.
    pub d_initial_state: u64,
    /// `d_a_log` `[HO]` or 0.
    pub d_a_log: u64,
    /// `d_dt_bias` `[HO]` or 0.
    pub d_dt_bias: u64,
    /// Total tokens `T`.
    pub total_t: i64,
    /// Workspace: `T` `[slots, 64, 64]` io.
    pub ws_t: u64,
    /// Workspace: `E` `[slots, 64, K]` io.
    pub ws_e: u64,
    /// Workspace: `Γ` `[slots, 64]` fp32.
    pub ws_gam: u64,
    /// Workspace: `β` `[slots, 64]` fp32.
    pub ws_bet: u64,
    /// Workspace: states entering each chunk `[slots, V, K]` fp32.
    pub ws_s: u64,
    /// Workspace: state gradients leaving each chunk `[slots, V, K]` fp32.
    pub ws_ds: u64,
    /// Workspace: `dR` `[slots, 64, V]` fp32.
    pub ws_dr: u64,
    /// Workspace: `dq` per output head `[T, HO, K]` fp32.
    pub ws_dq: u64,
    /// Workspace: `dk` per output head `[T, HO, K]` fp32.
    pub ws_dk: u64,
    /// Workspace: `dv` per output head `[T, HO, V]` fp32.
    pub ws_dv: u64,
    /// Workspace: `d log α · log α` `[T, HO]` fp32.
    pub ws_pa: u64,
    /// Workspace: `dG` terms `[T, HO]` fp32.
    pub ws_pb: u64,
    /// The `U` tiles `[slots, 64, V]` io (`gdn::bwd_u_tiles`): the second half of `ws_dr`
    /// ([`BwdWorkspaceLayout::bind`]), or the `U` region of saved chunk factors (session 38).
    pub ws_u: u64,
}

/// The optional regions of the backward's slim workspace ([`BwdWorkspaceLayout::slim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlimRegions {
    /// `S_c` (false: reused state checkpoints stand in).
    pub states: bool,
    /// The slim prep's outputs (false: saved chunk factors stand in).
    pub prep_outputs: bool,
    /// The `U` tiles in `ws_dr`'s second half (false: the saved replay's, in the chunk factors;
    /// `ws_dr` then holds only the io `dR` tiles).
    pub u_tiles: bool,
    /// The per-output-head `dq`, `dk`, `dv` (grouped heads, folded after the token stage).
    pub head_sums: bool,
}

/// Byte offsets of the backward's own workspace regions (after the forward's) and the total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BwdWorkspaceLayout {
    /// The forward's regions (first).
    pub fwd: WorkspaceLayout,
    /// Offsets of `ws_t, ws_e, ws_gam, ws_bet, ws_s, ws_ds, ws_dr, ws_dq, ws_dk, ws_dv, ws_pa,
    /// ws_pb`, in that order.
    pub regions: [u64; 12],
    /// Offset of the `U` tiles (`ws_u`): the second half of `ws_dr`, from `slots · 64 · V · 2`
    /// bytes; `None` when the layout has no room for them (the saved replay's, whose plan binds
    /// `ws_u` to the chunk factors).
    pub u_tiles: Option<u64>,
    /// Total bytes.
    pub total: u64,
}

impl BwdWorkspaceLayout {
    /// Layout for the backward (same arguments as [`WorkspaceLayout::new`]). The states entering
    /// the chunks, `ws_s`, are stored in the 2-byte io dtype ([`flags::BWD_S_IO`]: every bundled
    /// token stage reads them so). `ws_dr` keeps the fp32 size (`[slot][64][V]` floats) on every
    /// path: the `tc13` pair (session 21) stores its io-dtype `dR` tiles (`[slot][64][V]`, 2 bytes)
    /// in the region's first half, and a `tc13` plan without the overlap runs `tc12` on fp32 `dR`.
    /// The `tc16` pair (session 27) also stores the replay's io-dtype `U` tiles (`[slot][64][V]`,
    /// `gdn::bwd_u_tiles`) in the second half (from `slots · 64 · V · 2` bytes; `tc16` runs only
    /// beside those io-`dR` producers, so nothing else uses that half there).
    pub fn new(n_seqs: u64, total_tokens: u64, ho: u64, k: u64, v: u64) -> BwdWorkspaceLayout {
        Self::with_states(n_seqs, total_tokens, ho, k, v, true)
    }

    /// [`BwdWorkspaceLayout::new`], with the `ws_s` region empty when `states` is false (the
    /// plan then binds `ws_s` to the caller's io-dtype state checkpoints, session 16).
    pub fn with_states(
        n_seqs: u64,
        total_tokens: u64,
        ho: u64,
        k: u64,
        v: u64,
        states: bool,
    ) -> BwdWorkspaceLayout {
        let fwd = WorkspaceLayout::new(n_seqs, total_tokens, ho, k, v);
        let slots = max_chunks(n_seqs, total_tokens) * ho;
        let th = total_tokens * ho;
        let sizes = [
            slots * CHUNK * CHUNK * 2,
            slots * CHUNK * k * 2,
            slots * CHUNK * 4,
            slots * CHUNK * 4,
            if states { slots * v * k * 2 } else { 0 },
            slots * v * k * 4,
            slots * CHUNK * v * 4,
            th * k * 4,
            th * k * 4,
            th * v * 4,
            th * 4,
            th * 4,
        ];
        Self::after(fwd, sizes, slots * CHUNK * v * 2)
    }

    /// The backward's slim form (session 37: K = V = 128, every launch one of the kernels
    /// [`super::backward::BwdKernel::slim_workspace`] lists): only the regions those kernels
    /// touch — the forward side as [`WorkspaceLayout::bwd_slim`], then `T` (full io rows), `Γ`,
    /// `β` (none of the four when `prep_outputs` is false: saved chunk factors), `S_c` (io; none
    /// when `states` is false: reused checkpoints), `dS'` in the io dtype, `dR` (its fp32 size:
    /// the io `dR` tiles, then the `U` tiles), the per-output-head `dq`, `dk`, `dv` only when
    /// `head_sums` (grouped heads, folded after the token stage), the `dG` terms. `E` and the
    /// full form's tiles are empty: at (4,8192,16) 0.97 GB instead of 2.7. Without `u_tiles`
    /// (the saved replay) `dR` holds only the io tiles and the layout has no `U` tiles: the plan
    /// binds `ws_u` to the chunk factors instead.
    pub fn slim(
        n_seqs: u64,
        total_tokens: u64,
        ho: u64,
        k: u64,
        v: u64,
        with: SlimRegions,
    ) -> BwdWorkspaceLayout {
        let fwd = WorkspaceLayout::bwd_slim(n_seqs, total_tokens, ho, with.prep_outputs);
        let slots = max_chunks(n_seqs, total_tokens) * ho;
        let th = total_tokens * ho;
        let (keep, sums) = (u64::from(with.prep_outputs), u64::from(with.head_sums));
        let sizes = [
            keep * slots * CHUNK * CHUNK * 2,
            0,
            keep * slots * CHUNK * 4,
            keep * slots * CHUNK * 4,
            if with.states { slots * v * k * 2 } else { 0 },
            slots * v * k * 2,
            slots * CHUNK * v * if with.u_tiles { 4 } else { 2 },
            sums * th * k * 4,
            sums * th * k * 4,
            sums * th * v * 4,
            th * 4,
            th * 4,
        ];
        let mut l = Self::after(fwd, sizes, slots * CHUNK * v * 2);
        if !with.u_tiles {
            l.u_tiles = None;
        }
        l
    }

    /// The backward's twelve regions of `sizes` bytes after the forward side `fwd`, each at a
    /// multiple of [`REGION_ALIGN`]; the `U` tiles `u_in_dr` bytes into `ws_dr`.
    fn after(fwd: WorkspaceLayout, sizes: [u64; 12], u_in_dr: u64) -> BwdWorkspaceLayout {
        let mut off = fwd.total;
        let mut regions = [0u64; 12];
        for (r, bytes) in regions.iter_mut().zip(sizes) {
            *r = off;
            off = (off + bytes).div_ceil(REGION_ALIGN) * REGION_ALIGN;
        }
        BwdWorkspaceLayout {
            fwd,
            regions,
            u_tiles: Some(regions[6] + u_in_dr),
            total: off,
        }
    }

    /// Writes every region address for a workspace at `base` into `p` (`ws_u` 0 without `U`
    /// tiles); the caller's `cu_seqlens` as [`WorkspaceLayout::bind`] returns them.
    pub fn bind(&self, base: u64, p: &mut BwdParams) -> CuSource {
        let src = self.fwd.bind(base, &mut p.f);
        let r = self.regions.map(|o| base + o);
        [
            p.ws_t, p.ws_e, p.ws_gam, p.ws_bet, p.ws_s, p.ws_ds, p.ws_dr, p.ws_dq, p.ws_dk,
            p.ws_dv, p.ws_pa, p.ws_pb,
        ] = r;
        p.ws_u = self.u_tiles.map_or(0, |o| base + o);
        src
    }
}

/// Warps of the tensor-core reverse scan (`gdn::DSCAN_MMA_WARPS`); 16 value rows each.
pub const DSCAN_MMA_WARPS: u32 = 4;
/// cp.async stages of the tensor-core reverse scan (`gdn::DSCAN_MMA_STAGES`).
pub const DSCAN_MMA_STAGES: u64 = 2;

/// Dynamic shared memory of the tensor-core reverse scan (`gdn::DscanMmaSmem<K, 4, 2>::bytes`).
pub fn dscan_mma_smem_bytes(k: u64) -> u32 {
    dscan_mma_stages_smem_bytes(k, DSCAN_MMA_STAGES)
}

/// Dynamic shared memory of the 4-warp tensor-core reverse scan's loop on `stages` cp.async
/// stages (`gdn::DscanMmaSmem<K, 4, STAGES>::bytes`; one stage: the phased `gdn_bwd_dsum1_*`).
pub fn dscan_mma_stages_smem_bytes(k: u64, stages: u64) -> u32 {
    let (kp, cp, dp) = (k + 8, CHUNK + 8, 16 * u64::from(DSCAN_MMA_WARPS) + 8);
    let stage = 2 * (2 * CHUNK * cp + 3 * CHUNK * kp + CHUNK * dp);
    (stages * stage) as u32
}

/// Dynamic shared memory of the overlapped backward's reverse scan (`gdn_bwd_dscan_ov_*`,
/// `gdn::DscanMmaSmem<K, V / 16, 2>::bytes`: the 4-warp scan's loop on all `V` value rows).
pub fn dscan_ov_smem_bytes(k: u64, v: u64) -> u32 {
    let (kp, cp, dp) = (k + 8, CHUNK + 8, v + 8);
    let stage = 2 * (2 * CHUNK * cp + 3 * CHUNK * kp + CHUNK * dp);
    (DSCAN_MMA_STAGES * stage) as u32
}

/// Dynamic shared memory of the overlapped reverse scan's `R2` loop (`gdn_bwd_dscan_ov2_*`,
/// `gdn_bwd_dscanp_ov2_*`; `gdn::DscanMmaSmem<K, V / 16, 2>::bytes_r2`): [`dscan_ov_smem_bytes`]
/// plus, per warp, its 16 value rows of `dS'` in the io dtype (rows of `K + 8`), the staging of
/// the 16-byte `dS'` stores.
pub fn dscan_ov2_smem_bytes(k: u64, v: u64) -> u32 {
    let staging = (v / 16) * 16 * (k + 8) * 2;
    dscan_ov_smem_bytes(k, v) + staging as u32
}

/// Dynamic shared memory of the wgmma reverse scan `gdn_bwd_dscan_ov2gx_*` (session 25,
/// `gdn::DscanGxSmem<K, V / 16, 2>::bytes_r2`, K = V = 128): per stage A, T (64 × 64) and Kᴿ, Q⁺, E
/// (64 × K) in the io dtype, dO (64 tokens × (V + 8)), rounded up to 1,024 bytes (the 128-byte
/// swizzle's atoms); then R2's per-warp `dS'` staging rows ([16][K + 8]).
pub fn dscan_ov2gx_smem_bytes(k: u64, v: u64) -> u32 {
    let tiles = 2 * (2 * CHUNK * CHUNK + 3 * CHUNK * k + CHUNK * (v + 8));
    let stage = tiles.div_ceil(1024) * 1024;
    let staging = (v / 16) * 16 * (k + 8) * 2;
    (DSCAN_MMA_STAGES * stage + staging) as u32
}

/// Dynamic shared memory of the scalar form's wgmma reverse scan `gdn_bwd_dscan_ov2gxsc_*`
/// (session 27, `gdn::DscanGxSmem<K, V / 16, 2, true>::bytes_r2`): [`dscan_ov2gx_smem_bytes`]'s
/// stages with the raw `k`, `q` tiles in place of `Kᴿ`, `Q⁺` and the chunk's four fp32 scalar rows
/// (1 KB) in place of `E`.
pub fn dscan_ov2gxsc_smem_bytes(k: u64, v: u64) -> u32 {
    let staging = (v / 16) * 16 * (k + 8) * 2;
    dsum_sc_smem_bytes(k, v) + staging as u32
}

/// Dynamic shared memory of the scalar form's reverse summaries `gdn_bwd_dsum_sc_*` (session 29,
/// `gdn::DscanGxSmem<K, V / 16, 2, true>::bytes`): [`dscan_ov2gxsc_smem_bytes`]'s two stages
/// without the `dS'` staging rows (the summaries store no `dS'`, `dR`).
pub fn dsum_sc_smem_bytes(k: u64, v: u64) -> u32 {
    let tiles = 2 * (2 * CHUNK * CHUNK + 2 * CHUNK * k + CHUNK * (v + 8)) + 4 * CHUNK * 4;
    let stage = tiles.div_ceil(1024) * 1024;
    (DSCAN_MMA_STAGES * stage) as u32
}

/// Dynamic shared memory of the split reverse scan `gdn_bwd_dscan_ov2gxsh_*` (session 29,
/// `gdn::DscanGxSplitSmem<K, V / 32>::bytes_r2`): a warpgroup per half of the `V` value rows; the
/// chunk's `A`, `T`, raw `k` tiles and four fp32 scalar rows on two stages, the raw `q` tile and
/// the block's `V / 2` `dO` columns in one buffer, then the four warps' `dS'` staging rows. Two
/// blocks fit an SM.
pub fn dscan_ov2gxsh_smem_bytes(k: u64, v: u64) -> u32 {
    let stage = (2 * (2 * CHUNK * CHUNK + CHUNK * k) + 4 * CHUNK * 4).div_ceil(1024) * 1024;
    let single = (CHUNK * k * 2 + CHUNK * (v / 2 + 8) * 2).div_ceil(1024) * 1024;
    let staging = (v / 32) * 16 * (k + 8) * 2;
    (DSCAN_MMA_STAGES * stage + single + staging) as u32
}

/// Warps of the 8-warp reverse scan (`gdn::DSCAN_W8_WARPS`): a warp pair per 16 value rows of
/// the same 64-row block slice.
pub const DSCAN_W8_WARPS: u32 = 8;

/// Dynamic shared memory of the 8-warp reverse scan (`gdn::DscanW8Smem<K, 2>::bytes`): the
/// 4-warp scan's stages plus, per warp pair, the exchange slots of `X`'s, `dUᵀ`'s and `−dRᵀ`'s
/// A fragments (16 bytes per lane and 16-wide block).
pub fn dscan_w8_smem_bytes(k: u64) -> u32 {
    let pair = ((k / 16) + 2 + 4) * 32 * 16;
    dscan_mma_smem_bytes(k) + (4 * pair) as u32
}

/// Threads of the token-gradient kernel (`gdn::TOK_THREADS`).
pub const TOK_THREADS: u32 = 512;
/// Threads of the parameter-gradient kernel (`gdn::PARAM_THREADS`).
pub const PARAM_THREADS: u32 = 256;

/// Dynamic shared memory of the `tc11` token kernels (and of the unbundled levels `tc9` / `tc10`)
/// for head dims `k = v` (`gdn::TokSmem9::bytes`):
/// `tc5`'s value-product operands without the io `dR` tile, the fp32 `dR` tile [64][k + 8] in its
/// place and past it, then the per-token vectors, `Ũᵀ` and the raw q / k tiles.
pub fn tokens_tc11_smem_bytes(k: u64) -> u32 {
    let (kp, rows) = (k + 8, CHUNK);
    // W, S, dS', dO (2-byte), U (2-byte, in tc5's dR slot), then dR fp32.
    let dr_end = rows * kp * 2 + 2 * k * kp * 2 + 2 * rows * kp * 2 + rows * kp * 4;
    // Phase A's tiles, G in rows of 72 floats (tc11; tc9 / tc10: 65).
    let a_bytes = 2 * rows * kp * 2 + 3 * rows * (rows + 8) * 2 + rows * (rows + 8) * 4;
    let r_bytes = 3 * rows * kp * 4;
    let vec = dr_end.max(a_bytes).max(r_bytes).div_ceil(16) * 16;
    let ut = vec + (7 * rows + u64::from(TOK_THREADS)) * 4;
    (ut + k * (rows + 8) * 2 + 2 * rows * kp * 2) as u32
}

/// Dynamic shared memory of the `tc12` token kernels for head dims `k = v`
/// (`gdn::TokSmem12::bytes`): [`tokens_tc11_smem_bytes`] with the raw q / k tiles in rows of
/// `k + 16` elements instead of `k + 8` (the last region; 2 KB more).
pub fn tokens_tc12_smem_bytes(k: u64) -> u32 {
    tokens_tc11_smem_bytes(k) + (2 * CHUNK * 8 * 2) as u32
}

/// Dynamic shared memory of the `tw1` token kernel (session 30, helper m1t30;
/// `gdn::Tw1Smem::bytes`) for head dims `k = v`: the ring of the tile's `v / 32` value quarters
/// (`S`, `dS'` `[32][k]`, `U`, `dO`, `dR` `[64][32]`, io) at offset 0, under the fp32 hand-off
/// tiles (`dQ⁺`, `dE`, `dKᴿ` in rows of `k + 16`, `dA`, `P_L` in rows of 72) and `tc11`'s phase-A
/// tiles; then the per-token vectors, the raw q / k tiles (rows of `k + 16`) and `2 · v / 32`
/// mbarriers. 188,224 B at K = V = 128 (`tc12`: 215,808).
pub fn tokens_tw1_tile_smem_bytes(k: u64) -> u32 {
    let rows = CHUNK;
    let ring = (k / 32) * (2 * 32 * k * 2 + 3 * rows * 32 * 2);
    let r_end = 3 * rows * (k + 16) * 4 + 2 * rows * (rows + 8) * 4;
    let a_bytes = 2 * rows * (k + 8) * 2 + 3 * rows * (rows + 8) * 2 + rows * (rows + 8) * 4;
    let vec = ring.max(r_end).max(a_bytes).div_ceil(16) * 16;
    let qraw = vec + (7 * rows + u64::from(TOK_THREADS)) * 4;
    let bar = qraw + 2 * rows * (k + 16) * 2;
    (bar + 2 * (k / 32) * 8) as u32
}

/// Threads of the next token stage's tile `tw` (`gdn::TW_THREADS`; session 29's design, work in
/// progress): one producer and two consumer warpgroups.
pub const TW_THREADS: u32 = 384;
/// Values per ring quarter of the `tw` tile (`gdn::TW_QV`).
pub const TW_QV: u64 = 32;
/// Quarter slots of the `tw` tile's ring (`gdn::TW_RING`).
pub const TW_RING: u64 = 5;

/// Byte offsets of the `tw` token tile's dynamic shared memory (`gdn::TwSmem<K, V, RING>`, in
/// kernels/include/gdn_bwd_tw.cuh; no entry uses it yet). Every swizzled tile starts at a multiple
/// of 1 KB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TwSmemLayout {
    /// Bytes of one ring quarter: S and dS′ rows `[32][k]`, then U, dO and dR columns `[64][32]`.
    pub quarter: u32,
    /// Start of the ring's `ring` quarters (always 0).
    pub ring: u32,
    /// The raw q tile `[64][k]` (then k's, at `q_raw + 64·k·2`).
    pub q_raw: u32,
    /// The q̂ operand tile `[64][k]` (then k̂'s).
    pub q_hat: u32,
    /// The exchange tile dA′ `[64][64]` (then M's).
    pub x_da: u32,
    /// The fp32 vectors: Γ, β, raw g, raw β, rq, rk, the consumers' row partials `[2][4][64]`,
    /// G's column partials `[2][64]`, Σ_v dR·v per quarter `[v / 32][64]`, dD's 16 partials.
    pub vec: u32,
    /// The consumers' row partials within the vectors.
    pub v_rowp: u32,
    /// Σ_v dR·v per quarter within the vectors.
    pub v_dbv: u32,
    /// The `2·ring + 3` mbarriers (full, empty, q/k full, q/k empty, exchange), 8 bytes each.
    pub bar: u32,
    /// The whole tile's dynamic shared memory.
    pub bytes: u32,
}

/// The `tw` token tile's shared-memory layout for head dims `k`, `v` (64 or 128, 16-bit io) and
/// `ring` quarter slots: the host mirror of `gdn::TwSmem<K, V, RING>` (its static_asserts state
/// the same numbers as this function's unit test). This is session 29's 384-thread design for the
/// persistent tile (milestone M2), not the bundled `tw1` entry's memory, which is
/// [`tokens_tw1_tile_smem_bytes`].
pub fn tokens_tw_smem(k: u64, v: u64, ring: u64) -> TwSmemLayout {
    const E: u64 = 2;
    let up = |x: u64, a: u64| x.div_ceil(a) * a;
    let s_tile = TW_QV * k * E;
    let u_tile = CHUNK * TW_QV * E;
    let quarter = 2 * s_tile + 3 * u_tile;
    let qk_tile = CHUNK * k * E;
    let x_tile = CHUNK * CHUNK * E;
    let q_raw = ring * quarter;
    let q_hat = q_raw + 2 * qk_tile;
    let x_da = q_hat + 2 * qk_tile;
    let vec = x_da + 2 * x_tile;
    let row = CHUNK * 4;
    let v_rowp = vec + 6 * row;
    let v_dbv = v_rowp + 8 * row + 2 * row;
    let bar = up(v_dbv + (v / TW_QV) * row + 16 * 4, 16);
    let bytes = up(bar + 8 * (2 * ring + 3), 16);
    let u = |x: u64| x as u32;
    TwSmemLayout {
        quarter: u(quarter),
        ring: 0,
        q_raw: u(q_raw),
        q_hat: u(q_hat),
        x_da: u(x_da),
        vec: u(vec),
        v_rowp: u(v_rowp),
        v_dbv: u(v_dbv),
        bar: u(bar),
        bytes: u(bytes),
    }
}

/// Dynamic shared memory of the `tw` token tile with [`TW_RING`] quarter slots, head dims `k = v`
/// (`gdn::TwSmem<K, K>::bytes`): [`tokens_tw_smem`]'s total.
pub fn tokens_tw_smem_bytes(k: u64) -> u32 {
    tokens_tw_smem(k, k, TW_RING).bytes
}

/// Upper bound of the number of chunks: `Σ ceil(T_b / 64) ≤ T / 64 + N`.
pub fn max_chunks(n_seqs: u64, total_tokens: u64) -> u64 {
    total_tokens / CHUNK + n_seqs
}

/// Warps of the scan kernel (16 value rows each).
pub const SCAN_WARPS: u32 = 4;
/// cp.async stages of the scan kernel.
pub const SCAN_STAGES: u64 = 3;
/// Threads of the 8-warp prep kernels (`prep3` and its successors, the bundled `prep14` / `prep15`).
pub const PREP3_THREADS: u32 = 256;
/// Blocks per SM of the bundled full preps' launch bounds (`gdn::PREP6_MIN_BLOCKS`: `prep14` /
/// `prep15`, both directions).
pub const PREP6_MIN_BLOCKS: u64 = 4;

/// Dynamic shared memory of the bundled prep kernels (`gdn_{fwd,bwd}_prep14_*`, `_prep15_*`;
/// before session 12 also `prep7` .. `prep13`) for head dims `k = v`
/// (`gdn::Prep7Smem::bytes`: prep6's regions with the first one large enough for the
/// tensor-core inverse's fp32 L tile, 64 rows of 72 floats).
pub fn prep7_smem_bytes(k: u64, v: u64) -> u32 {
    let r1 = (CHUNK * (k + 8) * 2).max(CHUNK * 72 * 4);
    let r2 = CHUNK * (k + 8) * 2;
    let r3 = (CHUNK * (v + 8)).max(v * (CHUNK + 8)) * 2;
    (r1 + r2 + r3 + 2 * CHUNK * 4) as u32
}

/// Per-token fp32 rows of the slim factors (`gdn::SLIM_SCALARS`: ck, β, cq, cr).
pub const SLIM_SCALARS: u64 = 4;
/// The 16 × 16 blocks of a slim factor tile (T, A) at or below the diagonal, the ones the
/// workspace holds (`gdn::SLIM_TRI_BLOCKS`, session 24).
pub const SLIM_TRI_BLOCKS: u64 = 10;
/// io elements of one packed slim factor tile (`gdn::SLIM_TRI_ELEMS`).
pub const SLIM_TRI_ELEMS: u64 = SLIM_TRI_BLOCKS * 16 * 16;
/// cp.async stages of the slim output scan on 4 warps (`gdn::SLIM_W4_STAGES`).
pub const SLIM_W4_STAGES: u64 = 3;
/// cp.async stages of the slim output scan on 8 warps (`gdn::SLIM_W8_STAGES`).
pub const SLIM_W8_STAGES: u64 = 2;

/// Blocks per SM of the slim prep's launch bounds (`gdn::SLIM_PREP_MIN_BLOCKS`: at most 48
/// registers).
pub const SLIM_PREP_MIN_BLOCKS: u64 = 5;
/// Blocks per SM of the slim prep's wgmma form's launch bounds (`gdn::SLIM_PREP_WG_MIN_BLOCKS`,
/// `gdn_fwd_slimprep_*_k128_wg`, session 28: 64 registers, without spills or serialized wgmma).
pub const SLIM_PREP_WG_MIN_BLOCKS: u64 = 4;
/// Blocks per SM of the backward's slim prep's launch bounds (`gdn::PREP15SL_MIN_BLOCKS`,
/// `gdn_bwd_prep15sl_*`, session 28: at most 48 registers; its shared memory is the slim prep's,
/// [`slim_prep_smem_bytes`]).
pub const BWD_PREP_SLIM_MIN_BLOCKS: u64 = 5;
/// Blocks per SM of the persistent slim prep's launch bounds (`gdn::SLIM_PREP_OV_MIN_BLOCKS`: at
/// most 64 registers), the producer of the overlapped uncut forward.
pub const SLIM_PREP_OV_MIN_BLOCKS: u64 = 4;
/// cp.async stages of the overlapped forward's output scan `w4ov` (`gdn::SLIM_OV_STAGES`).
pub const SLIM_OV_STAGES: u64 = 2;
/// The most sequences the overlapped forward's chunk order ranks (`gdn::FWD_OVERLAP_MAX_SEQS`;
/// beyond it the identity order: correct, not the scan's).
pub const FWD_OVERLAP_MAX_SEQS: u64 = 64;

/// Dynamic shared memory of the slim prep (`gdn::SlimPrepSmem<K>::bytes`): the raw then
/// normalised k rows, the q rows / fp32 L tile (64 rows of 72 floats) / io T, Γ and β. Also the
/// backward's slim prep's (`gdn::Prep10Smem<K, K, true>::bytes`, the same regions; session 28).
pub fn slim_prep_smem_bytes(k: u64) -> u32 {
    let r1 = CHUNK * (k + 8) * 2;
    let r2 = (CHUNK * (k + 8) * 2).max(CHUNK * 72 * 4);
    (r1 + r2 + 2 * CHUNK * 4) as u32
}

/// Dynamic shared memory of the slim prep with its fp32 L tile in its own region
/// (`gdn::SlimPrepSmem<K>::bytes_l`, session 31: `gdn_fwd_slimprep_*_k128_wgc`): [`slim_prep_smem_bytes`]
/// and 64 rows of 72 floats.
pub fn slim_prep_l_smem_bytes(k: u64) -> u32 {
    slim_prep_smem_bytes(k) + (CHUNK * 72 * 4) as u32
}

/// Dynamic shared memory of the slim output scan on `warps` warps with `stages` cp.async stages
/// (`gdn::SlimScanSmem<K, NW, STAGES>::bytes`): per stage the raw q, k rows, the block's value
/// columns of v, T, A and the scalars; then the per-warp O staging tiles.
pub fn slim_scan_smem_bytes(k: u64, warps: u64, stages: u64) -> u32 {
    let vs = 16 * warps;
    let stage = 2 * CHUNK * (k + 8) * 2
        + CHUNK * (vs + 8) * 2
        + 2 * CHUNK * (CHUNK + 8) * 2
        + SLIM_SCALARS * CHUNK * 4;
    (stages * stage + warps * CHUNK * 24 * 2) as u32
}

/// Dynamic shared memory of the uncut slim output scan storing O by the o tensor map
/// (`gdn::SlimScanSmem<K, warps, stages>::bytes_t`, session 36: `w4gxt`): the stages of
/// [`slim_scan_smem_bytes`], then two dense `[CHUNK][16]` O staging tiles per warp.
pub fn slim_scan_tma_smem_bytes(k: u64, warps: u64, stages: u64) -> u32 {
    let stages_bytes = slim_scan_smem_bytes(k, warps, stages) as u64 - warps * CHUNK * 24 * 2;
    (stages_bytes + warps * 2 * CHUNK * 16 * 2) as u32
}

/// cp.async stages of the slim piece summary (`gdn::SLIM_SUM_STAGES`).
pub const SLIM_SUM_STAGES: u64 = 2;
/// Blocks per SM of the slim piece summary (`gdn::SLIM_SUM_MIN_BLOCKS`, its launch bounds).
pub const SLIM_SUM_MIN_BLOCKS: u64 = 3;
/// Blocks per SM of the seeded slim output scan `w4d` (`gdn::SLIM_W4D_MIN_BLOCKS`).
pub const SLIM_W4D_MIN_BLOCKS: u64 = 2;
/// cp.async stages of the summary beside the first piece on three stages, `slimsum_gxr3`
/// (`gdn::SLIM_SUM3_STAGES`; session 35).
pub const SLIM_SUM3_STAGES: u64 = 3;
/// Blocks per SM of `slimsum_gxr3` (`gdn::SLIM_SUM3_MIN_BLOCKS`, its launch bounds).
pub const SLIM_SUM3_MIN_BLOCKS: u64 = 2;

/// Dynamic shared memory of the slim piece summary (`gdn::SlimSumSmem<K>::bytes`): per stage the
/// raw k rows, 64 value columns of v, T and the scalars.
pub fn slim_sum_smem_bytes(k: u64) -> u32 {
    slim_sum_stages_smem_bytes(k, SLIM_SUM_STAGES)
}

/// [`slim_sum_smem_bytes`] on `stages` stages (`gdn::SlimSumSmem<K, ST>::bytes`).
pub fn slim_sum_stages_smem_bytes(k: u64, stages: u64) -> u32 {
    let stage =
        CHUNK * (k + 8) * 2 + CHUNK * 72 * 2 + CHUNK * (CHUNK + 8) * 2 + SLIM_SCALARS * CHUNK * 4;
    (stages * stage) as u32
}

/// Dynamic shared memory of the seeded slim output scan `w4d` (`gdn::SlimPieceSmem<K>::bytes`):
/// two slots of the raw q, k rows and the scalars, one of v (64 columns), T and A, the 4 warps' O
/// staging tiles.
pub fn slim_piece_smem_bytes(k: u64) -> u32 {
    let slot = 2 * CHUNK * (k + 8) * 2 + SLIM_SCALARS * CHUNK * 4;
    let single = CHUNK * 72 * 2 + 2 * CHUNK * (CHUNK + 8) * 2;
    (2 * slot + single + 4 * CHUNK * 24 * 2) as u32
}

/// Threads of the chunk-offset kernel.
pub const OFFSETS_THREADS: u32 = 1024;

/// Dynamic shared memory of the scan kernel (`gdn::ScanSmem<K, 4, 3>::bytes`).
pub fn scan_smem_bytes(k: u64) -> u32 {
    let kp = k + 8;
    let cp = CHUNK + 8;
    let vs = 16 * u64::from(SCAN_WARPS);
    let stage = 3 * CHUNK * kp * 2 + CHUNK * cp * 2 + vs * cp * 2;
    (SCAN_STAGES * stage + u64::from(SCAN_WARPS) * CHUNK * 24 * 2) as u32
}

/// `gdn::FwdFastParams` of `kernels/include/gdn_fwd_fast.cuh`: the forward block followed by the
/// piece count and the piece chain's fp32 workspace regions. Its first member is [`FwdParams`],
/// so one block serves every launch of the forward (the older kernels read only that prefix).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FwdFastParams {
    /// The forward parameters.
    pub f: FwdParams,
    /// Pieces per sequence `P ≥ 1`.
    pub pieces: i32,
    /// The first-early piece path's first piece, in 1/256 of the even piece (0: the even cut;
    /// `piece_range_first` of kernels/include/gdn_fwd_fast.cuh, session 32).
    pub first_scale: i32,
    /// Piece summaries `H` `[N·(P−1), HO, V, K]` fp32 (0 when `P = 1`).
    pub ws_h: u64,
    /// Piece transitions `M_buf` `[N·(P−1), HO, K, K]` fp32 (0 when `P = 1`).
    pub ws_m: u64,
    /// Piece seeds `[N·P, HO, V, K]` fp32 (0 when `P = 1`).
    pub ws_seed: u64,
    /// The overlapped uncut slim forward's hand-over flags `[chunk slots, HO]` u32
    /// ([`OverlapLayout::bind_fwd`]; 0 without overlap).
    pub ov_flags: u64,
    /// The overlapped forward's chunk order `[chunk slots]` i32 (0 without overlap).
    pub ov_order: u64,
    /// State checkpoints `[max(T/c + N, 1), HO, V, K]` (io dtype or fp32; 0: none; session 16,
    /// [`CkptLayout`]).
    pub ckpt: u64,
    /// `[N + 1]` i32: each sequence's first checkpoint row (the chunk table itself at a cadence
    /// of one chunk; 0 without checkpoints).
    pub ckpt_rows: u64,
    /// Chunks per checkpoint (`c / 64`; 0 without checkpoints).
    pub ckpt_every: i32,
    /// 1: fp32 checkpoint rows, 0: io-dtype rows.
    pub ckpt_f32: i32,
    /// Where the saving slim prep writes the backward's factors (session 37; all 0 unless the
    /// plan saves them: [`super::chunk_factors`]).
    pub save: PrepKeep,
    /// Where a U-saving output scan (`gdn_fwd_slimscan_*_k128_*_su`, session 38) writes each
    /// chunk's io `U` tile `[slots, 64, V]` (0 unless the plan saves them).
    pub save_u: u64,
}

/// `gdn::PrepKeep` of `kernels/include/gdn_fwd.cuh`: the regions the forward's saving slim prep
/// (`gdn_fwd_slimprep_*_k128_wgs`) writes beside its packed factors: full `T` rows, `E` (unused
/// by the slim prep: 0), `Γ`, `β` per token and full `A` rows.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepKeep {
    /// `T` `[slots, HO, 64, 64]` io.
    pub ws_t: u64,
    /// `E` (never written by the slim prep; 0).
    pub ws_e: u64,
    /// `Γ` `[slots, HO, 64]` fp32.
    pub ws_gam: u64,
    /// `β` `[slots, HO, 64]` fp32.
    pub ws_bet: u64,
    /// `A` `[slots, HO, 64, 64]` io (full rows).
    pub ws_a: u64,
}

/// `gdn::GdnIoMaps` of `kernels/include/gdn_fwd_fast.cuh`: the forward's tensor maps of q, k, v
/// and o ([`super::tma_maps`] describes and encodes them; zero unless the plan's kernels read them).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GdnIoMaps {
    /// `q` `[T, H, K]`.
    pub q: TensorMap,
    /// `k` `[T, HK, K]`.
    pub k: TensorMap,
    /// `v` `[T, HV, V]`.
    pub v: TensorMap,
    /// `o` `[T, HO, V]`.
    pub o: TensorMap,
}

/// `gdn::FwdTmaParams` of `kernels/include/gdn_fwd_fast.cuh`: the forward's parameter block,
/// [`FwdFastParams`] then the tensor maps (session 36). Every forward launch takes it; a kernel
/// reads the prefix it declares.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FwdTmaParams {
    /// Everything but the caller's `cu_seqlens`, `state_indices` and the maps.
    pub fp: FwdFastParams,
    /// The caller's `cu_seqlens` (offset 328; read by the chunk-table entries only).
    pub cu_src: CuSource,
    /// The caller's `state_indices` (offset 352; read by the chunk-table entries only).
    pub st_src: StateSource,
    /// The maps (128-byte aligned: offset 384).
    pub maps: GdnIoMaps,
}

/// The forward's state checkpoints (`checkpoint_every_n_tokens = c`, a positive multiple of
/// [`CHUNK`]; spec §3.4): the cadence in chunks, the rows' dtype and, at a cadence of more than
/// one chunk, the `[N + 1]` i32 row table (written by the chunk-table kernel, placed after
/// another layout's `total`); at one chunk the chunk table serves as the row table (row `j` of
/// sequence `b` is chunk slot `chunk_offsets[b] + j`). Empty without checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CkptLayout {
    /// Chunks per checkpoint (0: no checkpoints), at most `max(T / 64 + N, 2)`
    /// ([`CkptLayout::new`]).
    pub every: u64,
    /// fp32 rows (else the io dtype).
    pub f32: bool,
    /// Offset of the row table (meaningful with `every > 1`).
    pub rows: u64,
    /// End of the regions (`after` unless `every > 1`).
    pub total: u64,
}

impl CkptLayout {
    /// Checkpoints every `every_tokens` tokens (0: none) for `n_seqs` sequences of `total_tokens`
    /// tokens in all, fp32 rows or not, regions after byte `after`.
    ///
    /// A cadence of more chunks than any sequence holds writes the same checkpoints as any other
    /// such cadence (one row per non-empty sequence: the state entering its chunk 0, spec §3.4), so
    /// the chunks per row are capped at `max(T / 64 + N, 2)` (every sequence's chunk count is at
    /// most `T / 64 + 1`; 2 keeps a cadence above one chunk on the row table): the kernels' 32-bit
    /// chunks per row (`ckpt_every`) and the seeded replay's `cb + j · m + m` then stay exact.
    /// Uncapped, `checkpoint_every_n_tokens ≥ 64 · 2^31` truncated to a count ≤ 0 (the row
    /// table's spans and the rows divided by it; the replay stored a state at chunk `cb − 1`), and
    /// a count near 2^31 overflowed `cb + m`.
    pub fn new(
        after: u64,
        n_seqs: u64,
        total_tokens: u64,
        every_tokens: u64,
        f32: bool,
    ) -> CkptLayout {
        let every = (every_tokens / CHUNK).min(max_chunks(n_seqs, total_tokens).max(2));
        let rows = after.div_ceil(REGION_ALIGN) * REGION_ALIGN;
        let total = if every > 1 {
            (rows + 4 * (n_seqs + 1)).div_ceil(REGION_ALIGN) * REGION_ALIGN
        } else {
            after
        };
        CkptLayout {
            every,
            f32,
            rows,
            total,
        }
    }

    /// The kernels' checkpoint fields `(buffer, rows' table, chunks per row, fp32 flag)` for the
    /// checkpoint buffer `buf` and a workspace at `base` whose chunk table is at `chunk_offsets`
    /// (the rows' table at one chunk per row); `None` without checkpoints or without a buffer.
    fn fields(&self, base: u64, buf: u64, chunk_offsets: u64) -> Option<(u64, u64, i32, i32)> {
        if self.every == 0 || buf == 0 {
            return None;
        }
        let rows = if self.every > 1 {
            base + self.rows
        } else {
            chunk_offsets
        };
        let every = i32::try_from(self.every).unwrap_or(i32::MAX);
        Some((buf, rows, every, i32::from(self.f32)))
    }

    /// Binds the checkpoint buffer `dst` (0: none) and the row table for a workspace at `base`
    /// into `p` (whose chunk table is bound already).
    pub fn bind(&self, base: u64, dst: u64, p: &mut FwdFastParams) {
        if let Some(f) = self.fields(base, dst, p.f.chunk_offsets) {
            (p.ckpt, p.ckpt_rows, p.ckpt_every, p.ckpt_f32) = f;
        }
    }
}

/// `gdn::BwdChainParams` of `kernels/include/gdn_bwd_chain.cuh`: the backward block followed by
/// the piece count and the piece chain's fp32 workspace regions (the same tail as
/// [`FwdFastParams`]). Its first member is [`BwdParams`], so one block serves every launch of the
/// backward (the kernels without pieces read only that prefix).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BwdChainParams {
    /// The backward parameters.
    pub b: BwdParams,
    /// Pieces per sequence `P ≥ 1`.
    pub pieces: i32,
    /// The overlap's flag value of a complete (chunk, head) unit: 0 or 1 with one producer block
    /// per unit (the consumers wait for 1); 2 under the split reverse scan
    /// `gdn_bwd_dscan_ov2gxsh_*` (session 29), whose two blocks per unit each add 1.
    pub ov_need: i32,
    /// Forward summaries `H_j`, then the reverse summaries `G_j` `[N·(P−1), HO, V, K]` fp32.
    pub ws_h: u64,
    /// Forward transitions `M_j`, then the reverse ones `Mᵀ_j` `[N·(P−1), HO, K, K]` fp32.
    pub ws_m: u64,
    /// Forward seeds, then the `dX` seeds `[N·P, HO, V, K]` fp32.
    pub ws_seed: u64,
    /// The reverse transitions `Mᵀ_j` `[N·(P−1), HO, K, K]` fp32.
    pub ws_mt: u64,
    /// The overlapped backward's hand-over flags `[chunk slots, HO]` u32 ([`OverlapLayout`]; 0
    /// without overlap).
    pub ov_flags: u64,
    /// The overlapped token stage's chunk order `[chunk slots]` i32 (0 without overlap).
    pub ov_order: u64,
}

/// `gdn::BwdCkptParams` of `kernels/include/gdn_bwd_chain.cuh` (session 17): [`BwdChainParams`]
/// followed by the backward's bound state checkpoints, which seed its forward-state replay
/// (`gdn_bwd_fscanc*`, `gdn_bwd_ckrows`). The backward plan passes this block to every kernel
/// (the others read their prefix).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BwdCkptParams {
    /// The piece chain's block (the backward parameters first).
    pub cp: BwdChainParams,
    /// `state_checkpoints` `[rows, HO, V, K]` (io dtype or fp32), or 0 when not seeding.
    pub ckpt: u64,
    /// The rows' table `[N + 1]` i32 (the chunk table when `ckpt_every == 1`).
    pub ckpt_rows: u64,
    /// Chunks per checkpoint row (`c / 64`).
    pub ckpt_every: i32,
    /// 1: fp32 rows, 0: io-dtype rows.
    pub ckpt_f32: i32,
}

/// `gdn::TwRingMaps` of `kernels/include/gdn_bwd.cuh`: the backward token tile's ring by tensor
/// maps (session 39, the `tw7` stage; [`super::tma_maps::BwdRingMapShape`] describes and encodes
/// them; zero unless the plan runs `tw7`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TwRingMaps {
    /// The states `S` entering each chunk, rows of K.
    pub s: TensorMap,
    /// The reverse scan's `dS'`, rows of K.
    pub ds: TensorMap,
    /// The `U` tiles, rows of V.
    pub u: TensorMap,
    /// The `dR` tiles, rows of V.
    pub dr: TensorMap,
}

/// `gdn::BwdTmaParams` of `kernels/include/gdn_bwd_chain.cuh`: the backward's parameter block,
/// [`BwdCkptParams`] then the ring maps (session 39). Every backward launch takes it; a kernel
/// reads the prefix it declares.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BwdTmaParams {
    /// Everything but the caller's `cu_seqlens` and the maps.
    pub c: BwdCkptParams,
    /// The caller's `cu_seqlens` (offset 480; read by the chunk-table entries only).
    pub cu_src: CuSource,
    /// The maps (128-byte aligned: offset 512).
    pub maps: TwRingMaps,
}

impl CkptLayout {
    /// Binds the backward's checkpoint input `src` and its rows' table for a workspace at `base`
    /// into `p` (whose chunk table is bound already; nothing without checkpoints).
    pub fn bind_bwd(&self, base: u64, src: u64, p: &mut BwdCkptParams) {
        if let Some(f) = self.fields(base, src, p.cp.b.f.chunk_offsets) {
            (p.ckpt, p.ckpt_rows, p.ckpt_every, p.ckpt_f32) = f;
        }
    }
}

/// The piece chain's workspace regions, placed after another layout's `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceLayout {
    /// Offset of the summaries `H`.
    pub h: u64,
    /// Offset of the transitions `M_buf`.
    pub m: u64,
    /// Offset of the seeds.
    pub seed: u64,
    /// End of the regions (the whole workspace when this layout comes last).
    pub total: u64,
}

impl PieceLayout {
    /// Regions for `pieces` pieces per sequence starting at byte `after` (empty when
    /// `pieces ≤ 1`).
    pub fn new(after: u64, n_seqs: u64, ho: u64, k: u64, v: u64, pieces: u64) -> PieceLayout {
        let start = after.div_ceil(REGION_ALIGN) * REGION_ALIGN;
        if pieces <= 1 {
            return PieceLayout {
                h: start,
                m: start,
                seed: start,
                total: after,
            };
        }
        let mut off = start;
        let mut take = |bytes: u64| {
            let at = off;
            off = (off + bytes).div_ceil(REGION_ALIGN) * REGION_ALIGN;
            at
        };
        let h = take(n_seqs * (pieces - 1) * ho * v * k * 4);
        let m = take(n_seqs * (pieces - 1) * ho * k * k * 4);
        let seed = take(n_seqs * pieces * ho * v * k * 4);
        PieceLayout {
            h,
            m,
            seed,
            total: off,
        }
    }

    /// Writes the regions' addresses for a workspace at `base` into `p` (0 when no pieces).
    pub fn bind(&self, base: u64, pieces: i32, p: &mut FwdFastParams) {
        p.pieces = pieces;
        if pieces > 1 {
            p.ws_h = base + self.h;
            p.ws_m = base + self.m;
            p.ws_seed = base + self.seed;
        }
    }
}

/// The backward's piece-chain regions: the forward's ([`PieceLayout`]) and the reverse
/// transitions `Mᵀ_j`, placed after another layout's `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BwdPieceLayout {
    /// `H`/`G`, `M` and the seeds.
    pub fwd: PieceLayout,
    /// Offset of the reverse transitions.
    pub mt: u64,
    /// End of the regions (`after` when there are no pieces).
    pub total: u64,
}

impl BwdPieceLayout {
    /// Regions for `pieces` pieces per sequence starting at byte `after` (empty when
    /// `pieces ≤ 1`).
    pub fn new(after: u64, n_seqs: u64, ho: u64, k: u64, v: u64, pieces: u64) -> BwdPieceLayout {
        let fwd = PieceLayout::new(after, n_seqs, ho, k, v, pieces);
        if pieces <= 1 {
            return BwdPieceLayout {
                fwd,
                mt: fwd.total,
                total: after,
            };
        }
        let mt = fwd.total;
        let bytes = n_seqs * (pieces - 1) * ho * k * k * 4;
        BwdPieceLayout {
            fwd,
            mt,
            total: (mt + bytes).div_ceil(REGION_ALIGN) * REGION_ALIGN,
        }
    }

    /// Writes the regions' addresses for a workspace at `base` into `p` (0 when no pieces).
    pub fn bind(&self, base: u64, pieces: i32, p: &mut BwdChainParams) {
        p.pieces = pieces;
        if pieces > 1 {
            p.ws_h = base + self.fwd.h;
            p.ws_m = base + self.fwd.m;
            p.ws_seed = base + self.fwd.seed;
            p.ws_mt = base + self.mt;
        }
    }
}

impl BwdPieceLayout {
    /// [`BwdPieceLayout::new`] without the forward chain's transitions `M_j` (session 17: with
    /// state checkpoints the forward states need no chain; the summaries give only `Mᵀ_j`): the
    /// `H`/`G` region, the seeds (the reverse chain's `dX` seeds) and `Mᵀ_j`; `ws_m` aliases the
    /// seeds' offset and is never read or written.
    pub fn reverse_only(
        after: u64,
        n_seqs: u64,
        ho: u64,
        k: u64,
        v: u64,
        pieces: u64,
    ) -> BwdPieceLayout {
        if pieces <= 1 {
            return Self::new(after, n_seqs, ho, k, v, pieces);
        }
        let mut off = after.div_ceil(REGION_ALIGN) * REGION_ALIGN;
        let mut take = |bytes: u64| {
            let at = off;
            off = (off + bytes).div_ceil(REGION_ALIGN) * REGION_ALIGN;
            at
        };
        let h = take(n_seqs * (pieces - 1) * ho * v * k * 4);
        let seed = take(n_seqs * pieces * ho * v * k * 4);
        let mt = take(n_seqs * (pieces - 1) * ho * k * k * 4);
        BwdPieceLayout {
            fwd: PieceLayout {
                h,
                m: seed,
                seed,
                total: mt,
            },
            mt,
            total: off,
        }
    }
}

/// The regions of an overlapped producer / consumer pair, both directions: one hand-over flag per
/// (chunk slot, head) unit and the consumer's chunk order, placed after another layout's `total`
/// (empty without overlap). The backward (`kernels/include/gdn_bwd_overlap.cuh`): the flags zeroed
/// on every execute by `gdn_bwd_chunk_order` before the reverse scan (the producer) runs, the
/// token stage's chunk order ([`OverlapLayout::bind`]); the uncut slim forward
/// ([`OverlapLayout::bind_fwd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverlapLayout {
    /// Offset of the flags (u32 per unit).
    pub flags: u64,
    /// Offset of the chunk order (i32 per chunk slot).
    pub order: u64,
    /// End of the regions (`after` without overlap).
    pub total: u64,
}

impl OverlapLayout {
    /// Regions for `slots` chunk slots of `ho` heads starting at byte `after` (`on = false`: none).
    pub fn new(after: u64, slots: u64, ho: u64, on: bool) -> OverlapLayout {
        let flags = after.div_ceil(REGION_ALIGN) * REGION_ALIGN;
        if !on {
            return OverlapLayout {
                flags,
                order: flags,
                total: after,
            };
        }
        let order = (flags + slots * ho * 4).div_ceil(REGION_ALIGN) * REGION_ALIGN;
        OverlapLayout {
            flags,
            order,
            total: (order + slots * 4).div_ceil(REGION_ALIGN) * REGION_ALIGN,
        }
    }

    /// Writes the regions' addresses for a workspace at `base` into `p` (0 without overlap).
    pub fn bind(&self, base: u64, p: &mut BwdChainParams) {
        if self.total > self.flags {
            p.ov_flags = base + self.flags;
            p.ov_order = base + self.order;
        }
    }

    /// The same regions for the overlapped uncut slim forward (session 15,
    /// `kernels/include/gdn_fwd_slim.cuh`: flags zeroed by `gdn_fwd_chunk_order`, published by
    /// the persistent prep, awaited by the output scan): writes their addresses for a workspace
    /// at `base` into `p` (0 without overlap).
    pub fn bind_fwd(&self, base: u64, p: &mut FwdFastParams) {
        if self.total > self.flags {
            p.ov_flags = base + self.flags;
            p.ov_order = base + self.order;
        }
    }
}

/// Pipeline stages of the piece summary pass (`gdn_fwd_sum_*`).
pub const SUM_STAGES: u64 = 2;
/// Stages of the one-stage phased kernels (`gdn_fwd_scanx_*_w4p`, `gdn_fwd_sum1*_*`; session 13).
pub const SCANX_S1_STAGES: u64 = 1;
/// Blocks per SM the w4p output scan's launch bounds ask for (82,944 B of shared memory each).
pub const SCANX_S1_MIN_BLOCKS: u64 = 2;
/// Blocks per SM of the one-stage summary pass `gdn_fwd_sum1_*` (by its 168 registers).
pub const SUM1_MIN_BLOCKS: u64 = 3;
/// Blocks per SM of the backward's one-stage phased piece summary `gdn_bwd_psum1_*` (session 14;
/// `gdn::PSUM1_MIN_BLOCKS`: 44,032 B of shared memory, the forward sum1's loop).
pub const PSUM1_MIN_BLOCKS: u64 = 3;
/// Blocks per SM of the backward's one-stage phased piece replay `gdn_bwd_fscanp1_*`
/// (`gdn::FSCANP1_MIN_BLOCKS`: 44,032 B).
pub const FSCANP1_MIN_BLOCKS: u64 = 3;
/// Blocks per SM of the backward's one-stage phased reverse summary `gdn_bwd_dsum1_*`
/// (`gdn::DSUM1_MIN_BLOCKS`: 79,872 B).
pub const DSUM1_MIN_BLOCKS: u64 = 2;
/// Stages of the warpgroup forward-state replay `gdn_bwd_fscan_gx_*` (session 25;
/// `gdn::FSCAN_GX_STAGES`, kernels/include/gdn_bwd_fscan_gx.cuh).
pub const FSCAN_GX_STAGES: u64 = 2;
/// One stage of that replay at K = 128 (`gdn::FSCAN_GX_STAGE_BYTES`, `FscanGxSmem<128, 1>`): `W`
/// and `Kᴿ` in the 128-byte swizzle (16 KB each), `Ũᵀ` in rows of `CHUNK + 8` (9 KB).
pub const FSCAN_GX_STAGE_BYTES: u64 = 41_984;

/// Dynamic shared memory of `gdn_bwd_fscan_gx_*` (K = 128) at `stages` stages
/// (`FscanGxSmem<128, stages>::bytes`): two stages 83,968 B (two blocks per SM), three 125,952 B,
/// four 167,936 B.
pub fn fscan_gx_smem_bytes(stages: u64) -> u32 {
    (stages * FSCAN_GX_STAGE_BYTES) as u32
}
/// One stage of the scalar form's replay `gdn_bwd_fscan_gx{,4}sc_*` (session 27,
/// `gdn::FSCAN_GXSC_STAGE_BYTES`, `FscanGxSmem<128, 1, true>`): [`FSCAN_GX_STAGE_BYTES`] (the raw
/// `k` rows in `Kᴿ`'s place) plus the chunk's `cr` row (256 B), rounded up to 1,024 bytes.
pub const FSCAN_GXSC_STAGE_BYTES: u64 = 43_008;
/// Dynamic shared memory of `gdn_bwd_fscan_gx{,4}sc_*` at `stages` stages: two 86,016 B (two
/// blocks per SM), four 172,032 B.
pub fn fscan_gxsc_smem_bytes(stages: u64) -> u32 {
    (stages * FSCAN_GXSC_STAGE_BYTES) as u32
}
/// One stage of the slim form's replay `gdn_bwd_fscan_gx{,4}sl_*` (session 28, helper sb28;
/// `gdn::FSCAN_GXSL_STAGE_BYTES`, `FscanSlSmem<128, 1>`): the raw `k` rows in the 128-byte swizzle
/// (16 KB), the block's 64 value columns of `v` in rows of 72 (9 KB), `T` swizzled (8 KB), the four
/// scalar rows (1 KB).
pub const FSCAN_GXSL_STAGE_BYTES: u64 = 34_816;
/// Dynamic shared memory of `gdn_bwd_fscan_gx{,4}sl_*` at `stages` stages: two 69,632 B, four
/// 139,264 B.
pub fn fscan_gxsl_smem_bytes(stages: u64) -> u32 {
    (stages * FSCAN_GXSL_STAGE_BYTES) as u32
}
/// Stages of the slim piece summary `gdn_bwd_psum_sl_*` (session 29, helper ps29;
/// `gdn::PSUM_SL_STAGES`: the slim replay's loop without outputs, [`FSCAN_GXSL_STAGE_BYTES`] per
/// stage).
pub const PSUM_SL_STAGES: u64 = 2;
/// Blocks per SM of `gdn_bwd_psum_sl_*` (`gdn::PSUM_SL_MIN_BLOCKS`: 168 registers, 69,632 B).
pub const PSUM_SL_MIN_BLOCKS: u64 = 3;

/// Dynamic shared memory of `gdn_bwd_psum_sl_*`: [`PSUM_SL_STAGES`] slim replay stages (69,632 B).
pub fn psum_sl_smem_bytes() -> u32 {
    fscan_gxsl_smem_bytes(PSUM_SL_STAGES)
}
/// Threads of the piece chain kernel (`gdn_fwd_chain_k*`).
pub const CHAIN_THREADS: u32 = 256;
/// State rows per block of the piece chain kernel.
pub const CHAIN_ROWS: u64 = 32;
/// State rows per block of the `chain3` piece chain kernels (`gdn_fwd_chain3_k*`,
/// `gdn_bwd_pchain3_k*` / `gdn_bwd_dchain3_k*`: twice the blocks of the others).
pub const CHAIN3_ROWS: u64 = 16;

/// Dynamic shared memory of the session-4 scan kernels (`gdn::FastSmem<K, NW, STAGES, OUT>`):
/// `out` = the output pass (`gdn_fwd_scanx_*`), otherwise the summary pass (`gdn_fwd_sum_*`).
pub fn fast_smem_bytes(k: u64, warps: u64, stages: u64, out: bool) -> u32 {
    let (kp, cp, vs) = (k + 8, CHUNK + 8, 16 * warps);
    let mut stage = 2 * CHUNK * kp * 2 + vs * cp * 2;
    if out {
        stage += CHUNK * kp * 2 + CHUNK * cp * 2;
    }
    let o = if out { warps * CHUNK * 24 * 2 } else { 0 };
    (stages * stage + o) as u32
}

/// Dynamic shared memory of the kernels on the session-6 chunk loop (`gdn::ScanxSmem<K, NW,
/// STAGES, OUT, SPLIT>` of `kernels/include/gdn_fwd_fast.cuh`): `warps / split` value-row groups
/// of 16 share the staged tiles; `split = 2` adds the pairs' exchange areas (X and Uᵀ as A
/// fragments). `split = 1` is [`fast_smem_bytes`].
pub fn scanx_smem_bytes(k: u64, warps: u64, stages: u64, out: bool, split: u64) -> u32 {
    let groups = warps / split;
    let (kp, cp, vs) = (k + 8, CHUNK + 8, 16 * groups);
    let mut stage = 2 * CHUNK * kp * 2 + vs * cp * 2;
    if out {
        stage += CHUNK * kp * 2 + CHUNK * cp * 2;
    }
    let o = if out {
        warps * (CHUNK / split) * 24 * 2
    } else {
        0
    };
    let xchg = if split > 1 {
        groups * (k / 16) * 512 + groups * 4 * 512
    } else {
        0
    };
    (stages * stage + o + xchg) as u32
}

#[cfg(test)]
mod tests;
