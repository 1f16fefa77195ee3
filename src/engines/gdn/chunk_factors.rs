//! The chunk factors a training forward saves for its backward (session 37): the layout of GDN's
//! `chunk_factors` buffer and where each plan points its kernels into it.
//!
//! Contract: a forward that binds `chunk_factors` (`output_chunk_factors = true`) runs the saving
//! slim prep (`gdn_fwd_slimprep_*_k128_wgs`, [`super::engine::SLIM_PREP_WGS`]), which writes — beside
//! the packed `T`, `A` its own scans read from the workspace — exactly what the backward's slim
//! prep (`gdn_bwd_prep16sl*`, `prep15sl`) writes: `T` and `A` as full 64 × 64 rows, `Γ` and `β` per
//! token, the four per-token scalars and `Γ_last`, computed by the same tile, so the same bits. A
//! backward that binds `chunk_factors` skips its prep and reads them there. The buffer is
//! `[rows, HO, GDN_CHUNK_FACTOR_BYTES]` bytes (more with the `U` tiles, below) with
//! `rows = max(T / 64 + N, 1)` (one row per
//! possible chunk slot, [`crate::ir::infer::gdn_chunk_factor_rows`]); inside, six regions one after
//! the other, each indexed by the kernels' `(chunk slot, head)` unit `c · HO + h` exactly as the
//! workspace regions they replace: `T` and `A` (`[rows, HO, 64, 64]` io), the scalars
//! (`[rows, HO, 4, 64]` fp32), `Γ`, `β` (`[rows, HO, 64]` fp32), `Γ_last` (`[rows, HO]` fp32). Every
//! region starts at a multiple of 256 bytes from the base (the base itself 16-byte aligned: the
//! plan's port guard, [`super::port_guards`]). Only a forward of the same inputs and
//! attributes, planned by this build, fills a buffer a backward may read.
//!
//! The saved replay (session 38): a node that also checkpoints the state entering every chunk
//! (`checkpoint_every_n_tokens = 64`) has a seventh region before `Γ_last`, each chunk's `U` tile
//! (`[rows, HO, 64, V]` io, [`crate::ir::infer::gdn_chunk_u_bytes`] per unit): the forward's U-saving scan
//! (`gdn_fwd_slimscan_*_k128_*_su`) writes it from the A fragments of its O batch, exactly the
//! tile the backward's storing replay would write, and a backward given both the checkpoints
//! (the replay's states) and these factors leaves out its replay too.

use super::params::{BwdParams, CHUNK, FwdFastParams, PrepKeep, SLIM_SCALARS};
use crate::ir::infer::GDN_CHUNK_FACTOR_BYTES;

/// Bytes of one 2-byte io element (the slim path serves BFLOAT16 and HALF).
const IO_BYTES: u64 = 2;

/// Bytes per `(chunk slot, head)` of each region, in the buffer's order: `T`, `A`, the scalars,
/// `Γ`, `β`, `Γ_last`.
const REGION_BYTES: [u64; 6] = [
    CHUNK * CHUNK * IO_BYTES,
    CHUNK * CHUNK * IO_BYTES,
    SLIM_SCALARS * CHUNK * 4,
    CHUNK * 4,
    CHUNK * 4,
    4,
];

// The graph's size of a (chunk slot, head) row is this layout's.
const _: () = {
    let mut sum = 0;
    let mut i = 0;
    while i < REGION_BYTES.len() {
        sum += REGION_BYTES[i];
        i += 1;
    }
    assert!(sum == GDN_CHUNK_FACTOR_BYTES as u64);
};

/// Offsets of the regions of a `chunk_factors` buffer of `rows` chunk slots and `ho` heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkFactorsLayout {
    /// Region offsets: `T`, `A`, the scalars, `Γ`, `β`, `Γ_last`.
    pub regions: [u64; 6],
    /// The `U` tiles' offset (the saved replay), `None` without them.
    pub u_tiles: Option<u64>,
    /// Total bytes (`rows · HO ·` the bytes per unit).
    pub total: u64,
}

impl ChunkFactorsLayout {
    /// The layout of a buffer of `rows` chunk slots (its dim 0) and `ho` heads (its dim 1),
    /// with `u_bytes` of `U` tile per unit after the factors (0: none).
    pub fn new(rows: u64, ho: u64, u_bytes: u64) -> ChunkFactorsLayout {
        let units = rows * ho;
        let mut regions = [0u64; 6];
        let mut off = 0;
        let mut u_tiles = None;
        for (i, (r, bytes)) in regions.iter_mut().zip(REGION_BYTES).enumerate() {
            // The U tiles before Γ_last, the only region whose size is not a multiple of 256.
            if i == 5 && u_bytes > 0 {
                u_tiles = Some(off);
                off += units * u_bytes;
            }
            *r = off;
            off += units * bytes;
        }
        ChunkFactorsLayout {
            regions,
            u_tiles,
            total: off,
        }
    }

    /// Whether the buffer holds the `U` tiles (the saved replay).
    pub fn holds_u_tiles(&self) -> bool {
        self.u_tiles.is_some()
    }

    /// The region addresses of a buffer at `base` (its 16-byte alignment is the plan's port
    /// guard, [`super::port_guards`]).
    fn at(&self, base: u64) -> [u64; 6] {
        self.regions.map(|o| base + o)
    }

    /// Points the saving forward at a buffer at `base`: the prep's kept rows
    /// ([`FwdFastParams::save`]), the scalars and `Γ_last` every forward kernel reads and the
    /// `U` tiles' region ([`FwdFastParams::save_u`], 0 without it).
    pub fn bind_fwd(&self, base: u64, p: &mut FwdFastParams) {
        let [t, a, scalars, gam, bet, gl] = self.at(base);
        p.save = PrepKeep {
            ws_t: t,
            ws_e: 0,
            ws_gam: gam,
            ws_bet: bet,
            ws_a: a,
        };
        p.f.ws_kr = scalars;
        p.f.ws_gl = gl;
        p.save_u = self.u_tiles.map_or(0, |o| base + o);
    }

    /// Points a backward without its prep at a buffer at `base`: every region its prep would
    /// have written, and with the `U` tiles the token stage's `U` (`ws_u`).
    pub fn bind_bwd(&self, base: u64, p: &mut BwdParams) {
        let [t, a, scalars, gam, bet, gl] = self.at(base);
        (p.ws_t, p.f.ws_a, p.f.ws_kr, p.ws_gam, p.ws_bet, p.f.ws_gl) =
            (t, a, scalars, gam, bet, gl);
        if let Some(o) = self.u_tiles {
            p.ws_u = base + o;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::infer::{gdn_chunk_factor_bytes, gdn_chunk_factor_rows, gdn_chunk_u_bytes};

    #[test]
    fn regions_follow_each_other_aligned_and_fill_the_declared_size() {
        let rows = gdn_chunk_factor_rows(1000, 3) as u64;
        let l = ChunkFactorsLayout::new(rows, 5, 0);
        assert_eq!(l.total, rows * 5 * GDN_CHUNK_FACTOR_BYTES as u64);
        assert_eq!(l.regions[0], 0);
        assert!(!l.holds_u_tiles());
        for (i, w) in l.regions.windows(2).enumerate() {
            assert_eq!(w[1] - w[0], rows * 5 * REGION_BYTES[i]);
            assert_eq!(w[1] % 256, 0, "region {} at {}", i + 1, w[1]);
        }
        // The U tiles sit before Γ_last (aligned) and fill the size the graph declares at a
        // cadence of 64.
        let ub = gdn_chunk_u_bytes(128) as u64;
        let u = ChunkFactorsLayout::new(rows, 5, ub);
        assert_eq!(u.regions[..5], l.regions[..5]);
        assert_eq!(u.u_tiles, Some(l.regions[5]));
        assert_eq!(u.regions[5], l.regions[5] + rows * 5 * ub);
        assert_eq!(u.regions[5] % 256, 0);
        assert_eq!(u.total, rows * 5 * gdn_chunk_factor_bytes(128, 64) as u64);
    }

    #[test]
    fn both_directions_point_at_the_same_regions() {
        let l = ChunkFactorsLayout::new(20, 3, gdn_chunk_u_bytes(128) as u64);
        let base = 1 << 20;
        let mut f = FwdFastParams::default();
        let mut b = BwdParams::default();
        l.bind_fwd(base, &mut f);
        l.bind_bwd(base, &mut b);
        assert_eq!(f.save.ws_t, b.ws_t);
        assert_eq!(f.save.ws_a, b.f.ws_a);
        assert_eq!(f.save.ws_gam, b.ws_gam);
        assert_eq!(f.save.ws_bet, b.ws_bet);
        assert_eq!(f.f.ws_kr, b.f.ws_kr);
        assert_eq!(f.f.ws_gl, b.f.ws_gl);
        assert_eq!(f.save.ws_e, 0);
        assert_eq!(f.save_u, b.ws_u);
        assert_eq!(f.save_u, base + l.u_tiles.unwrap());
    }
}
