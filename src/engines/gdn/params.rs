//! The kernel parameter block of the bundled `gdn_fwd` module and its workspace layout.
//!
//! [`FwdParams`] is `gdn::FwdParams` of `kernels/include/gdn_fwd.cuh`, field for field
//! (`#[repr(C)]`, device addresses as `u64`): every launch of the module takes it by value.
//! [`WorkspaceLayout`] carves the caller's workspace the same way the device harness
//! (`bench/gdn_fwd_harness.cu`) does: regions in order, each start rounded up to 256 bytes.

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

/// Flag bits of `FwdParams::flags` (`gdn::Flags`).
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
    /// Workspace: `[N + 1]` int32 chunk offsets.
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
    /// Total bytes.
    pub total: u64,
}

impl WorkspaceLayout {
    /// Layout for `n_seqs` sequences of `total_tokens` tokens, `ho` heads, head dims `k`, `v`,
    /// 16-bit io elements.
    pub fn new(n_seqs: u64, total_tokens: u64, ho: u64, k: u64, v: u64) -> WorkspaceLayout {
        let slots = max_chunks(n_seqs, total_tokens) * ho;
        let mut off = 0u64;
        let mut take = |bytes: u64| {
            let at = off;
            off = (off + bytes).div_ceil(REGION_ALIGN) * REGION_ALIGN;
            at
        };
        let chunk_offsets = take(4 * (n_seqs + 1));
        let w = take(slots * CHUNK * k * 2);
        let q = take(slots * CHUNK * k * 2);
        let kr = take(slots * CHUNK * k * 2);
        let ut = take(slots * v * CHUNK * 2);
        let a = take(slots * CHUNK * CHUNK * 2);
        let gl = take(slots * 4);
        WorkspaceLayout {
            chunk_offsets,
            w,
            q,
            kr,
            ut,
            a,
            gl,
            total: off,
        }
    }

    /// Writes the region addresses for a workspace at `base` into `p`.
    pub fn bind(&self, base: u64, p: &mut FwdParams) {
        p.chunk_offsets = base + self.chunk_offsets;
        p.ws_w = base + self.w;
        p.ws_q = base + self.q;
        p.ws_kr = base + self.kr;
        p.ws_ut = base + self.ut;
        p.ws_a = base + self.a;
        p.ws_gl = base + self.gl;
    }
}

/// Upper bound of the number of chunks: `Σ ceil(T_b / 64) ≤ T / 64 + N`.
pub fn max_chunks(n_seqs: u64, total_tokens: u64) -> u64 {
    total_tokens / CHUNK + n_seqs
}

/// Dynamic shared memory of the prep kernel for head dims `k = v` (`gdn::PrepSmem::bytes`).
pub fn prep_smem_bytes(k: u64, v: u64) -> u32 {
    let kp = k + 8;
    let vp = v + 8;
    let fp = CHUNK + 1;
    let r1 = (CHUNK * kp * 2).max(CHUNK * fp * 4);
    let r2 = r1.div_ceil(16) * 16;
    let r3 = r2 + CHUNK * kp * 2;
    let gam = r3 + CHUNK * vp * 2;
    (gam + 2 * CHUNK * 4) as u32
}

/// Warps of the scan kernel (16 value rows each).
pub const SCAN_WARPS: u32 = 4;
/// cp.async stages of the scan kernel.
pub const SCAN_STAGES: u64 = 3;
/// Threads of the prep kernel.
pub const PREP_THREADS: u32 = 128;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_layout_matches_the_cuda_struct() {
        // 12 pointers, 14 four-byte fields, 7 pointers: 96 + 56 + 56 bytes, no padding.
        assert_eq!(std::mem::size_of::<FwdParams>(), 208);
        assert_eq!(std::mem::offset_of!(FwdParams, cu_seqlens_i64), 96);
        assert_eq!(std::mem::offset_of!(FwdParams, scale), 96 + 11 * 4);
        assert_eq!(std::mem::offset_of!(FwdParams, chunk_offsets), 152);
        assert_eq!(std::mem::offset_of!(FwdParams, ws_gl), 200);
    }

    #[test]
    fn workspace_regions_are_aligned_and_sized() {
        // N = 3, T = 130 -> 5 chunk slots per head, HO = 2, K = V = 64.
        let l = WorkspaceLayout::new(3, 130, 2, 64, 64);
        assert_eq!(max_chunks(3, 130), 5);
        let slots = 10u64;
        assert_eq!(l.chunk_offsets, 0);
        assert_eq!(l.w, 256);
        assert_eq!(l.q, l.w + slots * 64 * 64 * 2);
        assert_eq!(l.kr, l.q + slots * 64 * 64 * 2);
        assert_eq!(l.ut, l.kr + slots * 64 * 64 * 2);
        assert_eq!(l.a, l.ut + slots * 64 * 64 * 2);
        assert_eq!(l.gl, l.a + slots * 64 * 64 * 2);
        assert_eq!(l.total, (l.gl + slots * 4).div_ceil(256) * 256);
        for r in [l.w, l.q, l.kr, l.ut, l.a, l.gl, l.total] {
            assert_eq!(r % 256, 0);
        }
    }

    #[test]
    fn shared_memory_fits_hopper() {
        // Values printed by ptxas / the harness for K = V = 128: prep 53 KB, scan 219 KB.
        assert_eq!(prep_smem_bytes(128, 128), 17408 * 3 + 512);
        assert_eq!(
            scan_smem_bytes(128),
            3 * (3 * 17408 + 9216 + 9216) + 4 * 64 * 48
        );
        assert!(scan_smem_bytes(128) <= 227 * 1024);
    }
}
