//! The GDN benchmark's shapes, their one-node graphs and each launched kernel's compulsory
//! traffic and tensor-core FLOPs, without a device (tests/gpu_gdn_bench.rs prints achieved GB/s
//! and TFLOP/s from them; tests/gdn_counts.rs checks them on the CPU; included with `#[path]`,
//! also by tests/support/gdn_gpu.rs).
//!
//! Contract: [`bench_launches`] is the plan's own launch list (the engine's read-only
//! `planned_launches`, the switches read as at build), so the models follow the kernels that
//! run. [`kernel_counts`] maps an entry name to its family ([`MODELS`], rules as data) and gives
//! what the kernel must read and write once (inputs, workspace regions in the layouts of
//! src/engines/gdn/params.rs, outputs) and the products its header lists, at bf16 / fp16 io,
//! fp32 gates and states, K = V = `d`, chunk 64, ungrouped heads (`HO` everywhere), no
//! `a_log` / `dt_bias` (the benchmark's graphs). Not counted: re-reads through L2 (the value
//! slices of a scan each read the chunk's q / k / factor tiles; the counts take them once),
//! the overlap's flags, padding rows of a partial chunk (zero-filled, not read), the forward's
//! state checkpoints. `None` for an entry no family claims.

#![allow(dead_code)] // each test binary uses a different subset

use dnnplan::dispatch::target::Target;
use dnnplan::engines::gdn::analyzer::{GdnFacts, analyze};
use dnnplan::engines::gdn::backward::BwdSchedule;
use dnnplan::engines::gdn::engine::{FwdChoice, planned_launches};
use dnnplan::engines::gdn::pdl::PlannedLaunch;
use dnnplan::ir::{DataType, Graph, GraphContext, NodeBuilder, Tensor};

/// Issue 8's benchmark shapes: (name, sequence lengths, heads); bf16, K = V = 128. The names
/// are the ones `bench/gdn_bench_table.py` joins on.
pub const BENCH_SHAPES: [(&str, &[i64], i64); 4] = [
    ("(4,8192,16)", &[8192; 4], 16),
    ("(1,32768,16)", &[32768], 16),
    ("(16,2048,32)", &[2048; 16], 32),
    (
        "ragged-mix-H16",
        &[8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000],
        16,
    ),
];

/// Head dimension K = V of the benchmark.
pub const BENCH_D: i64 = 128;

/// SMs of the H200 (the benchmark's GPU; the plans' rules read the device's count at build).
pub const H200_SMS: u64 = 132;

/// One port of a benchmark graph: (name, dims, dtype).
pub type BenchPort = (&'static str, Vec<i64>, DataType);

/// The ports of the benchmark's one-node graph of `op` ("gdn" or "gdn_bwd") for `t` tokens in
/// `n` sequences, `hh` heads, K = V = `kd` (bf16 io, fp32 gates, beta and states); a "gdn_bwd"
/// with `ckpt` = (dtype, rows) also binds `state_checkpoints`.
pub fn bench_ports(
    op: &str,
    t: i64,
    n: i64,
    hh: i64,
    kd: i64,
    ckpt: Option<(DataType, i64)>,
) -> Vec<BenchPort> {
    let (bf, f32t) = (DataType::Bfloat16, DataType::Float);
    let mut ports: Vec<BenchPort> = vec![
        ("q", vec![t, hh, kd], bf),
        ("k", vec![t, hh, kd], bf),
        ("v", vec![t, hh, kd], bf),
        ("g", vec![t, hh], f32t),
        ("beta", vec![t, hh], f32t),
        ("cu_seqlens", vec![n + 1], DataType::Int32),
        ("initial_state", vec![n, hh, kd, kd], f32t),
    ];
    if op == "gdn_bwd" {
        ports.push(("dO", vec![t, hh, kd], bf));
        ports.push(("d_final_state", vec![n, hh, kd, kd], f32t));
        if let Some((dt, rows)) = ckpt {
            ports.push(("state_checkpoints", vec![rows, hh, kd, kd], dt));
        }
    }
    ports
}

/// The one-node graph of `op` over `ports` ([`bench_ports`]; "gdn" with a final state,
/// `checkpoint_every_n_tokens = every` when positive): (graph, node, the ports' uids in order).
pub fn bench_graph(op: &str, ports: &[BenchPort], every: i64) -> (Graph, usize, Vec<i64>) {
    let (bf, f32t) = (DataType::Bfloat16, DataType::Float);
    let mut graph = Graph::new(GraphContext::new(bf, f32t, f32t));
    let mut b = NodeBuilder::by_name(op).expect("gdn op").name("gdn0");
    if op != "gdn_bwd" {
        b = b.bool("output_final_state", true);
    }
    if every > 0 {
        b = b.int("checkpoint_every_n_tokens", every);
    }
    let mut uids = Vec::new();
    for (p, dims, dt) in ports {
        let u = graph
            .add_tensor(Tensor::new(*p, dims, *dt))
            .expect("tensor");
        b = b.input(p, u);
        uids.push(u);
    }
    let node = graph.add_node(b).expect("node");
    (graph, node, uids)
}

/// The facts the engine builds the benchmark's plan of `op` from (lengths `lens`, `hh` heads,
/// K = V = [`BENCH_D`], no checkpoints).
pub fn bench_facts(op: &str, lens: &[i64], hh: i64) -> GdnFacts {
    let t = lens.iter().sum();
    let ports = bench_ports(op, t, lens.len() as i64, hh, BENCH_D, None);
    let (graph, _, _) = bench_graph(op, &ports, 0);
    let facts = analyze(&graph, &Target::no_device("benchmark counts"))
        .expect("analyze")
        .expect("a gdn graph");
    facts.downcast_ref::<GdnFacts>().expect("gdn facts").clone()
}

/// How a plan cuts each sequence: pieces per sequence and the first piece's length in 1/256 of
/// an even piece (0: the even cut; the forward's first-early piece path, `piece_range_first` of
/// gdn_fwd_fast.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Pieces per sequence (1 = uncut).
    pub pieces: i64,
    /// The first piece's scale (0: even).
    pub first_scale: i64,
}

impl Cut {
    /// `pieces` even pieces.
    pub const fn even(pieces: i64) -> Cut {
        Cut {
            pieces,
            first_scale: 0,
        }
    }
}

/// The launches of the benchmark's plan of `op` on `sms` SMs, by entry name, as execute makes
/// them (the current switches, read as at build), and the plan's cut of each sequence.
pub fn bench_launches(op: &str, lens: &[i64], hh: i64, sms: u64) -> (Vec<PlannedLaunch>, Cut) {
    let f = bench_facts(op, lens, hh);
    let launches = planned_launches(&f, sms, "bf16").expect("planned launches");
    let cut = if op == "gdn_bwd" {
        Cut::even(BwdSchedule::pick(&f, sms).pieces as i64)
    } else {
        let c = FwdChoice::pick(&f, sms);
        Cut {
            pieces: c.pieces as i64,
            first_scale: if c.first_early() {
                i64::from(c.first_scale)
            } else {
                0
            },
        }
    };
    (launches, cut)
}

/// Bytes a kernel must read and write once and the FLOPs of its listed products.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Bytes read.
    pub read: f64,
    /// Bytes written.
    pub write: f64,
    /// Tensor-core (and chain) FLOPs, 2 per multiply-add.
    pub flops: f64,
}

impl Counts {
    /// Counts of `read` bytes read, `write` bytes written and `flops` FLOPs.
    pub const fn new(read: f64, write: f64, flops: f64) -> Counts {
        Counts { read, write, flops }
    }

    /// Read plus written bytes.
    pub fn bytes(&self) -> f64 {
        self.read + self.write
    }

    /// The sum of two kernels' counts (an overlapped pair).
    pub fn plus(self, o: Counts) -> Counts {
        Counts::new(
            self.read + o.read,
            self.write + o.write,
            self.flops + o.flops,
        )
    }
}

/// The shape a model sees: sequence lengths, output heads, K = V, pieces per sequence and the
/// backward's state-checkpoint rows (chunks per row, bytes per element; (1, 2) = io rows at 64).
#[derive(Clone, Debug)]
pub struct Shape {
    /// Tokens per sequence.
    pub lens: Vec<i64>,
    /// Heads (HO; ungrouped).
    pub h: f64,
    /// K = V.
    pub d: f64,
    /// Pieces per sequence (1 = uncut).
    pub pieces: i64,
    /// The first piece's length in 1/256 of an even piece (0: the even cut; [`Cut`]).
    pub first_scale: i64,
    /// Checkpoint rows: (chunks per row, bytes per element).
    pub ckpt: (i64, f64),
}

/// Chunk length.
const C: f64 = 64.0;
/// io element bytes (bf16 / fp16).
const IO: f64 = 2.0;
/// Gate / beta element bytes (fp32 in the benchmark).
const GATE: f64 = 4.0;

/// Which chunks of each sequence a pass covers (pieces of `ceil(chunks / P)` chunks, as
/// `piece_range` of gdn_fwd_fast.cuh, or the first-early cut of `piece_range_first`:
/// [`Shape::piece`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// Every chunk.
    All,
    /// Pieces 0 ..= P − 2 (the forward summaries `H_j`, `M_j`).
    Head,
    /// Pieces 1 ..= P − 1 (the reverse summaries `G_j`, the transitions `Mᵀ_j`).
    Tail,
    /// Piece 0 alone (the forward's first piece run early, session 32).
    First,
    /// Pieces 1 ..= P − 2 (its summaries).
    Mid,
}

impl Shape {
    /// The model's view of `lens` at `h` heads, K = V = `d`, `pieces` even pieces, io rows at 64.
    pub fn new(lens: &[i64], h: i64, d: i64, pieces: i64) -> Shape {
        Shape::cut(lens, h, d, Cut::even(pieces))
    }

    /// [`Shape::new`] with a plan's cut (the first piece's scale included).
    pub fn cut(lens: &[i64], h: i64, d: i64, cut: Cut) -> Shape {
        Shape {
            lens: lens.to_vec(),
            h: h as f64,
            d: d as f64,
            pieces: cut.pieces.max(1),
            first_scale: cut.first_scale,
            ckpt: (1, IO),
        }
    }

    /// Sequences.
    pub fn n(&self) -> f64 {
        self.lens.len() as f64
    }

    /// Chunks [a, b) of piece `j` of a sequence of `nc` chunks, as the kernels cut it
    /// (`piece_range`; with a first scale s > 0 and P ≥ 2, `piece_range_first`: piece 0 spans
    /// min(nc, ceil(per · s / 256)) chunks, the others split the rest evenly).
    pub fn piece(&self, nc: i64, j: i64) -> (i64, i64) {
        let p = self.pieces;
        let per = (nc + p - 1) / p;
        if self.first_scale <= 0 || p < 2 {
            let a = nc.min(j * per);
            return (a, nc.min(a + per));
        }
        let n0 = nc.min((per * self.first_scale + 255) / 256);
        if j == 0 {
            return (0, n0);
        }
        let per1 = (nc - n0 + p - 2) / (p - 1);
        let a = nc.min(n0 + (j - 1) * per1);
        (a, nc.min(a + per1))
    }

    /// (chunks, tokens) per head in the pieces `span` covers, over every sequence.
    pub fn span(&self, span: Span) -> (f64, f64) {
        let p = self.pieces;
        let (mut chunks, mut tokens) = (0i64, 0i64);
        for &l in &self.lens {
            let nc = (l + 63) / 64;
            // The first chunk of piece 1 and the end of piece P − 2 (0 for P = 1: no head).
            let start1 = self.piece(nc, 1).0;
            let end_head = if p < 2 { 0 } else { self.piece(nc, p - 2).1 };
            let (a, b) = match span {
                Span::All => (0, nc),
                Span::Head => (0, end_head),
                Span::Tail => (start1, nc),
                Span::First => (0, self.piece(nc, 0).1),
                Span::Mid => (start1, end_head.max(start1)),
            };
            chunks += b - a;
            tokens += l.min(64 * b) - l.min(64 * a);
        }
        (chunks as f64, tokens as f64)
    }

    /// One fp32 state per (sequence, head).
    fn states(&self) -> f64 {
        self.n() * self.h * self.d * self.d * 4.0
    }

    /// The piece chain's fp32 region of `per_seq` states per (sequence, head).
    fn piece_states(&self, per_seq: i64) -> f64 {
        per_seq as f64 * self.states()
    }
}

/// Per-(chunk, head) tile bytes and per-(token, head) row bytes a model adds up.
#[derive(Clone, Copy)]
enum Part {
    /// A `[64, d]` io tile (W, Q⁺, Kᴿ, Ũᵀ, E).
    TileKd,
    /// A `[64, 64]` io tile (A, T).
    TileCc,
    /// A packed slim factor tile (T, A): its 10 lower 16 × 16 blocks, io (session 24).
    TileTri,
    /// A `[d, d]` io state per chunk (S_c, dS').
    StateIo,
    /// The fp32 `dR` tile `[64, d]`.
    Dr,
    /// The io `dR` tile `[64, d]` (session 21: `dscan{,p}_ov5dr` → `tokens_tc13_ov`).
    DrIo,
    /// The slim per-token scalars `[4, 64]` fp32.
    Scalars,
    /// A `[64]` fp32 row (Γ, β of the backward's prep).
    Row,
    /// `Γ_last` (one fp32).
    Glast,
    /// A `[d]` io row per token (q, k, v, dO, O, dq, dk, dv).
    Tok,
    /// A gate-dtype scalar per token (g, beta, dG, dBeta).
    Gate,
}

impl Part {
    fn bytes(self, s: &Shape) -> f64 {
        let d = s.d;
        match self {
            Part::TileKd => C * d * IO,
            Part::TileCc => C * C * IO,
            Part::TileTri => 10.0 * 16.0 * 16.0 * IO,
            Part::StateIo => d * d * IO,
            Part::Dr => C * d * 4.0,
            Part::DrIo => C * d * IO,
            Part::Scalars => 4.0 * C * 4.0,
            Part::Row => C * 4.0,
            Part::Glast => 4.0,
            Part::Tok => d * IO,
            Part::Gate => GATE,
        }
    }

    fn per_token(self) -> bool {
        matches!(self, Part::Tok | Part::Gate)
    }
}

/// Σ of `parts` (with multiplicity) over the chunks / tokens of `span`, all heads.
fn over(s: &Shape, span: Span, parts: &[(f64, Part)]) -> f64 {
    let (chunks, tokens) = s.span(span);
    parts
        .iter()
        .map(|&(m, p)| m * p.bytes(s) * if p.per_token() { tokens } else { chunks } * s.h)
        .sum()
}

/// FLOPs per (chunk, head) over `span`: `dd` products of 64 × d × d and `cd` of 64 × 64 × d
/// (2 per multiply-add), plus `inv` triangular 64 × 64 inverses (64³ / 3 each).
fn products(s: &Shape, span: Span, dd: f64, cd: f64, inv: f64) -> f64 {
    let d = s.d;
    s.span(span).0 * s.h * (dd * 2.0 * C * d * d + cd * 2.0 * C * C * d + inv * C * C * C / 3.0)
}

/// The fp32 chain over pieces: (P − 1) steps of a d × d × d product per (sequence, head).
fn chain_flops(s: &Shape) -> f64 {
    (s.pieces - 1) as f64 * s.n() * s.h * 2.0 * s.d * s.d * s.d
}

/// The seed a scan starts from: the initial state uncut, the chain's seeds per piece.
fn seeds(s: &Shape) -> f64 {
    if s.pieces > 1 {
        s.piece_states(s.pieces)
    } else {
        s.states()
    }
}

use Part::*;
use Span::*;

/// The chunk table (cu_seqlens read, `[N + 1]` i32 written) and, with `FLAG_SEQ_ORDER` (session
/// 34, src/engines/gdn/seq_order.rs), the `[N]` i32 longest-first order after it: modelled from
/// two sequences on (the rule's range; one sequence has nothing to order).
fn offsets(s: &Shape) -> Counts {
    let table = (s.n() + 1.0) * 4.0;
    let order = if s.n() >= 2.0 { s.n() * 4.0 } else { 0.0 };
    // The caller's int32 offsets in, their sanitized int64 copy out and read back (session 43).
    let copy = (s.n() + 1.0) * 8.0;
    Counts::new(table + copy, table + order + copy, 0.0)
}

/// The overlapped plans' chunk table (`chunk_order`, `chunk_order_rev`): also the chunk order
/// (one i32 per chunk) and the zeroed hand-over flags (one u32 per (chunk, head)).
fn offsets_ov(s: &Shape) -> Counts {
    let chunks = s.span(All).0;
    let o = offsets(s);
    Counts {
        write: o.write + chunks * 4.0 + chunks * s.h * 4.0,
        ..o
    }
}

/// The forward's full-factor prep (and the backward's KEEP prep without its extras).
fn full_prep(s: &Shape) -> Counts {
    Counts::new(
        over(s, All, &[(3.0, Tok), (2.0, Gate)]),
        over(s, All, &[(4.0, TileKd), (1.0, TileCc), (1.0, Glast)]),
        products(s, All, 0.0, 4.0, 1.0),
    )
}

/// The backward's KEEP prep: the full factors plus T, E, Γ, β.
fn keep_prep(s: &Shape) -> Counts {
    let f = full_prep(s);
    Counts {
        write: f.write + over(s, All, &[(1.0, TileKd), (1.0, TileCc), (2.0, Row)]),
        ..f
    }
}

/// The backward's scalar-form prep (prep15sc, session 27): the KEEP prep without Q⁺, Kᴿ, E,
/// with the four per-token scalars instead.
fn keep_prep_sc(s: &Shape) -> Counts {
    let k = keep_prep(s);
    Counts {
        write: k.write - over(s, All, &[(3.0, TileKd)]) + over(s, All, &[(1.0, Scalars)]),
        ..k
    }
}

/// The backward's slim-form prep (prep15sl, session 28, helper pp28): the scalar-form prep without
/// the v reads and the W, Ũᵀ tiles (nor their two 64 × 64 × d products).
/// Also prep16sl (session 29, helper bp29: the same outputs on the forward slim prep's tile) and
/// prep16slc (session 32, helper pp32: that tile with two block barriers fewer) and prep16sll
/// (session 35, helper pr35: prep16slc with the chunk located in one round of loads).
fn keep_prep_sl(s: &Shape) -> Counts {
    let k = keep_prep_sc(s);
    Counts {
        read: k.read - over(s, All, &[(1.0, Tok)]),
        write: k.write - over(s, All, &[(2.0, TileKd)]),
        flops: k.flops - products(s, All, 0.0, 2.0, 0.0),
    }
}

fn slim_prep(s: &Shape) -> Counts {
    Counts::new(
        over(s, All, &[(2.0, Tok), (2.0, Gate)]),
        over(s, All, &[(2.0, TileTri), (1.0, Scalars), (1.0, Glast)]),
        products(s, All, 0.0, 2.0, 1.0),
    )
}

/// The saving slim preps (`slimprep_wgs`, `_wgts`, `_wgtls`, session 37): the slim prep's reads and products, its
/// packed `T`, `A`, scalars and `Γ_last`, plus the backward's full `T`, `A` tiles and `Γ`, `β`
/// rows into the saved chunk factors.
fn slim_prep_saving(s: &Shape) -> Counts {
    let p = slim_prep(s);
    Counts {
        write: p.write + over(s, All, &[(2.0, TileCc), (2.0, Row)]),
        ..p
    }
}

/// The slim output scan, uncut or seeded per piece (w4, w8, w4ov, w4d, w4gs, w4gx, w4gxs, w4gxt,
/// w4gxu, w4gxv, w8gx, w8gxs, w4dgs, w4dgx; w4gxt / w4gxv / w4gxu move O / q, k by tensor maps:
/// the same bytes).
fn slim_scan(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            All,
            &[(3.0, Tok), (2.0, TileTri), (1.0, Scalars), (1.0, Glast)],
        ) + seeds(s),
        over(s, All, &[(1.0, Tok)]) + s.states(),
        products(s, All, 3.0, 2.0, 0.0),
    )
}

/// The one-pass forward at chunk 16 (sessions 48-58, `fused16_w8` / `_b2` / `_w4c` / `_b2c` / `_w8c`): q, k,
/// v, g, β in, O out and the states; per 64 tokens the state products of the slim scan (P, Q and
/// the update: three 64 × d × d) and, in 16 × 16 tiles, the two Gram products, U and the readout
/// (one 64 × 64 × d in all); the 16 × 16 inverses are negligible.
fn fused16(s: &Shape) -> Counts {
    Counts::new(
        over(s, All, &[(3.0, Tok), (2.0, Gate)]) + s.states(),
        over(s, All, &[(1.0, Tok)]) + s.states(),
        products(s, All, 3.0, 1.0, 0.0),
    )
}

/// A U-saving twin of a slim output scan (session 38, `*_su`): `base`'s counts plus, per chunk
/// of `span`, the io state checkpoint entering it and its io `U` tile `[64, d]`.
fn saving_replay(s: &Shape, span: Span, base: fn(&Shape) -> Counts) -> Counts {
    let c = base(s);
    Counts {
        write: c.write + over(s, span, &[(1.0, StateIo), (1.0, DrIo)]),
        ..c
    }
}

/// The uncut U-saving scans (w4gx_su, w4gxs_su, w8gx_su).
fn slim_scan_saving(s: &Shape) -> Counts {
    saving_replay(s, All, slim_scan)
}

/// The first piece's U-saving scan (w4gx0_su).
fn slim_scan_first_saving(s: &Shape) -> Counts {
    saving_replay(s, First, slim_scan_first)
}

/// The other pieces' U-saving scan (w4gxr_su).
fn slim_scan_rest_saving(s: &Shape) -> Counts {
    saving_replay(s, Tail, slim_scan_rest)
}

/// The slim piece summary: `H_j` (with v) and `M_j` (without) of pieces 0 ..= P − 2.
fn slim_sum(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            Head,
            &[(2.0, Tok), (1.0, TileTri), (1.0, Scalars), (1.0, Glast)],
        ),
        s.piece_states(2 * (s.pieces - 1)),
        2.0 * products(s, Head, 2.0, 1.0, 0.0),
    )
}

/// The first piece's slim output scan alone (w4dgx0, session 32; w4gx0, session 34): from the
/// initial state, its end state out as piece 1's fp32 seed.
fn slim_scan_first(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            First,
            &[(3.0, Tok), (2.0, TileTri), (1.0, Scalars), (1.0, Glast)],
        ) + s.states(),
        over(s, First, &[(1.0, Tok)]) + s.states(),
        products(s, First, 3.0, 2.0, 0.0),
    )
}

/// The slim output scan of pieces 1 ..= P − 1 (w4dgxr, session 32): their seeds in, the final
/// state out.
fn slim_scan_rest(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            Tail,
            &[(3.0, Tok), (2.0, TileTri), (1.0, Scalars), (1.0, Glast)],
        ) + s.piece_states(s.pieces - 1),
        over(s, Tail, &[(1.0, Tok)]) + s.states(),
        products(s, Tail, 3.0, 2.0, 0.0),
    )
}

/// The slim piece summary of pieces 1 ..= P − 2 (slimsum_gxr, session 32; slimsum_gxr3, session
/// 35: the same on three stages).
fn slim_sum_mid(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            Mid,
            &[(2.0, Tok), (1.0, TileTri), (1.0, Scalars), (1.0, Glast)],
        ),
        s.piece_states(2 * (s.pieces - 2).max(0)),
        2.0 * products(s, Mid, 2.0, 1.0, 0.0),
    )
}

/// The fp32 chain from seed 1 (chain3r, session 32): reads the P − 2 transitions and summaries
/// of pieces 1 ..= P − 2 and seed 1, writes seeds 2 ..= P − 1.
fn chain_from1(s: &Shape) -> Counts {
    let steps = (s.pieces - 2).max(0);
    Counts::new(
        s.piece_states(2 * steps) + s.states(),
        s.piece_states(steps),
        steps as f64 * s.n() * s.h * 2.0 * s.d * s.d * s.d,
    )
}

/// The full factors' output scan (scanx w4 / w8, uncut or seeded).
fn full_scan(s: &Shape) -> Counts {
    Counts::new(
        over(s, All, &[(4.0, TileKd), (1.0, TileCc), (1.0, Glast)]) + seeds(s),
        over(s, All, &[(1.0, Tok)]) + s.states(),
        products(s, All, 3.0, 1.0, 0.0),
    )
}

/// The full factors' piece summary (sum, sum1): `H_j` (W, Kᴿ, Ũᵀ) and `M_j` (W, Kᴿ).
fn full_sum(s: &Shape) -> Counts {
    Counts::new(
        over(s, Head, &[(3.0, TileKd), (1.0, Glast)]),
        s.piece_states(2 * (s.pieces - 1)),
        2.0 * products(s, Head, 2.0, 0.0, 0.0),
    )
}

/// The fp32 chain (either direction): reads the P − 1 transitions and summaries and the first
/// seed (initial state / d_final_state), writes the P seeds.
fn chain(s: &Shape) -> Counts {
    Counts::new(
        s.piece_states(2 * (s.pieces - 1)) + s.states(),
        s.piece_states(s.pieces),
        chain_flops(s),
    )
}

/// The backward's forward-state replay (r4, fscanp1: W, Kᴿ, Ũᵀ; S_c out in the io dtype).
fn replay(s: &Shape) -> Counts {
    Counts::new(
        over(s, All, &[(3.0, TileKd), (1.0, Glast)]) + seeds(s),
        over(s, All, &[(1.0, StateIo)]),
        products(s, All, 2.0, 0.0, 0.0),
    )
}

/// The replay storing each chunk's `U` tile (fscan_gxu, fscan_gx4u; session 27): [`replay`]
/// plus one `[64, d]` io tile out per chunk.
fn replay_u(s: &Shape) -> Counts {
    let r = replay(s);
    Counts {
        write: r.write + over(s, All, &[(1.0, TileKd)]),
        ..r
    }
}

/// The scalar form's replay (fscan_gxsc, fscan_gx4sc; session 27): raw k rows and the `cr` row
/// instead of the Kᴿ tile.
fn replay_sc(s: &Shape) -> Counts {
    let r = replay(s);
    Counts {
        read: r.read - over(s, All, &[(1.0, TileKd)]) + over(s, All, &[(1.0, Tok), (1.0, Row)]),
        ..r
    }
}

/// The scalar form's replay storing the `U` tiles (fscan_gxscu, fscan_gx4scu).
fn replay_sc_u(s: &Shape) -> Counts {
    let r = replay_sc(s);
    Counts {
        write: r.write + over(s, All, &[(1.0, TileKd)]),
        ..r
    }
}

/// The slim form's replay (fscan_gxsl, fscan_gx4sl; session 28): raw k, v rows, T and the scalars
/// instead of W, Ũᵀ and Kᴿ; the replay's two products plus Uᵀ = Z Tᵀ; S_c and the `U` tiles out.
fn replay_sl(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            All,
            &[(2.0, Tok), (1.0, TileCc), (1.0, Scalars), (1.0, Glast)],
        ) + seeds(s),
        over(s, All, &[(1.0, StateIo), (1.0, TileKd)]),
        products(s, All, 2.0, 1.0, 0.0),
    )
}

/// The session-5 replay (v1: also stages Q⁺ and A and runs the O products it never stores).
fn replay_v1(s: &Shape) -> Counts {
    let r = replay(s);
    Counts {
        read: r.read + over(s, All, &[(1.0, TileKd), (1.0, TileCc)]),
        flops: products(s, All, 3.0, 1.0, 0.0),
        ..r
    }
}

/// The replay seeded from state checkpoint rows (fscanc, fscanc1): no chain seeds.
fn replay_ckpt(s: &Shape) -> Counts {
    let (m, eb) = s.ckpt;
    let rows: i64 = s.lens.iter().map(|l| ((l + 63) / 64 + m - 1) / m).sum();
    Counts::new(
        over(s, All, &[(3.0, TileKd), (1.0, Glast)]) + rows as f64 * s.h * s.d * s.d * eb,
        over(s, All, &[(1.0, StateIo)]),
        products(s, All, 2.0, 0.0, 0.0),
    )
}

/// The reverse scan's per-chunk reads: dO, A, T, Kᴿ, Q⁺, E, Γ_last.
const DSCAN_READS: [(f64, Part); 4] = [(1.0, Tok), (2.0, TileCc), (3.0, TileKd), (1.0, Glast)];

/// The reverse scan, uncut or seeded per piece (dscan_io, w8, ov, ov2, dscanp*): dS' (io) and
/// dR (fp32) per chunk, d_initial_state.
fn dscan(s: &Shape) -> Counts {
    dscan_with(s, Dr)
}

/// The reverse scan storing `dR` in the io dtype (dscan_ov5dr, dscanp_ov5dr; session 21; its
/// wgmma twins dscan_ov2gx, dscanp_ov2gx, session 25: the same bytes).
fn dscan_dr_io(s: &Shape) -> Counts {
    dscan_with(s, DrIo)
}

/// The reverse scan with its `dR` tile `dr` (fp32 or io).
fn dscan_with(s: &Shape, dr: Part) -> Counts {
    Counts::new(
        over(s, All, &DSCAN_READS) + seeds(s),
        over(s, All, &[(1.0, StateIo), (1.0, dr)]) + s.states(),
        products(s, All, 3.0, 2.0, 0.0),
    )
}

/// The scalar form's producers (dscan_ov2gxsc, session 27; the seeded piece pass dscanp_ov2gxsc,
/// session 29): raw q, k rows and the scalars instead of the Kᴿ, Q⁺, E tiles. The split twin
/// dscan_ov2gxsh (session 29) counts the same unit bytes (its two halves each read the chunk's A, T,
/// q, k tiles and scalars: twice, from L2).
fn dscan_sc(s: &Shape) -> Counts {
    let r = dscan_dr_io(s);
    Counts {
        read: r.read - over(s, All, &[(3.0, TileKd)]) + over(s, All, &[(2.0, Tok), (1.0, Scalars)]),
        ..r
    }
}

/// The scalar form's reverse summaries (dsum_sc, session 29, helper pr29): dsum's with raw q, k
/// rows and the scalars instead of the Kᴿ, Q⁺, E tiles.
fn dsum_sc(s: &Shape) -> Counts {
    let r = dsum(s);
    Counts {
        read: r.read - over(s, Tail, &[(3.0, TileKd)])
            + over(s, Tail, &[(2.0, Tok), (1.0, Scalars)]),
        ..r
    }
}

/// The reverse summaries `G_j` of pieces 1 ..= P − 1 (dsum, dsum_w8, dsum1).
fn dsum(s: &Shape) -> Counts {
    Counts::new(
        over(s, Tail, &DSCAN_READS),
        s.piece_states(s.pieces - 1),
        products(s, Tail, 3.0, 2.0, 0.0),
    )
}

/// The backward's piece summaries (psum, psum1): `H_j` of pieces 0 ..= P − 2 and every piece's
/// transition (`M_j`, `Mᵀ_j`).
fn psum(s: &Shape) -> Counts {
    Counts::new(
        over(s, All, &[(2.0, TileKd), (1.0, Glast)]) + over(s, Head, &[(1.0, TileKd)]),
        s.piece_states(3 * (s.pieces - 1)),
        products(s, All, 2.0, 0.0, 0.0) + products(s, Head, 2.0, 0.0, 0.0),
    )
}

/// The slim piece summaries (psum_sl, session 29): psum's blocks on the slim chunk step, reading
/// raw k rows, T and the scalars over every piece (the transitions) and v over the `H_j` pieces
/// instead of W, Kᴿ and Ũᵀ; one more 64 × 64 × d product per chunk (Uᵀ = Z Tᵀ).
fn psum_sl(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            All,
            &[(1.0, Tok), (1.0, TileCc), (1.0, Scalars), (1.0, Glast)],
        ) + over(s, Head, &[(1.0, Tok)]),
        s.piece_states(3 * (s.pieces - 1)),
        products(s, All, 2.0, 1.0, 0.0) + products(s, Head, 2.0, 1.0, 0.0),
    )
}

/// The slim transitions `Mᵀ_j` of pieces 1 ..= P − 1 only (psumt_sl, session 38: the saved
/// replay): psum_sl's transition blocks on those pieces.
fn psum_mt_sl(s: &Shape) -> Counts {
    Counts::new(
        over(
            s,
            Tail,
            &[(1.0, Tok), (1.0, TileCc), (1.0, Scalars), (1.0, Glast)],
        ),
        s.piece_states(s.pieces - 1),
        products(s, Tail, 2.0, 1.0, 0.0),
    )
}

/// The transitions `Mᵀ_j` of pieces 1 ..= P − 1 only (psumt, psumt1; with checkpoints).
fn psum_mt(s: &Shape) -> Counts {
    Counts::new(
        over(s, Tail, &[(2.0, TileKd), (1.0, Glast)]),
        s.piece_states(s.pieces - 1),
        products(s, Tail, 2.0, 0.0, 0.0),
    )
}

/// The token stage (tc11, tc12, their overlapped consumers): q, k, v, dO, W, Ũᵀ, S_c, dS', dR,
/// Γ, β in; dq, dk, dv (straight to the ports, ungrouped), dG, dBeta out. Products: U, dQ⁺, dE,
/// dKᴿ (64 × d × d), dA, dL, phase A's Q̂ K̂ᵀ, K̂ K̂ᵀ, phase B's dA' K̂, dA'ᵀ Q̂, (dL' + dL'ᵀ) K̂
/// (64 × 64 × d).
fn tokens(s: &Shape) -> Counts {
    tokens_with(s, Dr, false)
}

/// The token stage reading the io `dR` tile (tokens_tc13_ov; session 21).
fn tokens_dr_io(s: &Shape) -> Counts {
    tokens_with(s, DrIo, false)
}

/// The token stage reading the io `dR` tile and the replay's `U` tile instead of `W`, `Ũᵀ` and
/// the `U` product (tokens_tc16_ov; session 27).
fn tokens_u(s: &Shape) -> Counts {
    tokens_with(s, DrIo, true)
}

/// The token stage with its `dR` tile `dr` (fp32 or io); `u_in`: `U` read (one `[64, d]` tile)
/// instead of `W`, `Ũᵀ` (two) and its product.
fn tokens_with(s: &Shape, dr: Part, u_in: bool) -> Counts {
    let (tiles, dd) = if u_in { (1.0, 3.0) } else { (2.0, 4.0) };
    Counts::new(
        over(
            s,
            All,
            &[
                (4.0, Tok),
                (tiles, TileKd),
                (2.0, StateIo),
                (1.0, dr),
                (2.0, Row),
            ],
        ),
        over(s, All, &[(3.0, Tok), (2.0, Gate)]),
        products(s, All, dd, 7.0, 0.0),
    )
}

/// The head-group folds (all three ports grouped): fp32 per output head in, io out.
fn fold(s: &Shape) -> Counts {
    let (_, tokens) = s.span(All);
    let rows = tokens * s.h * s.d;
    Counts::new(3.0 * rows * 4.0, 3.0 * rows * IO, 0.0)
}

/// `d_a_log`, `d_dt_bias`: two fp32 rows per token in, two values per head out.
fn params(s: &Shape) -> Counts {
    let (_, tokens) = s.span(All);
    Counts::new(2.0 * tokens * s.h * 4.0, 2.0 * s.h * 4.0, 0.0)
}

/// One kernel family: its entry stems (the name without `gdn_fwd_` / `gdn_bwd_`, the dtype tag
/// and `_k<K>`) and its model.
pub struct Model {
    /// Short label printed by the benchmark.
    pub label: &'static str,
    /// Entry stems ([`stem`]) of the family.
    pub stems: &'static [&'static str],
    /// (bytes read, bytes written, FLOPs) at a shape.
    pub counts: fn(&Shape) -> Counts,
}

/// A [`Model`] row: `label`, `stems`, `counts`.
const fn family(
    label: &'static str,
    stems: &'static [&'static str],
    counts: fn(&Shape) -> Counts,
) -> Model {
    Model {
        label,
        stems,
        counts,
    }
}

/// Every kernel family of the bundled `gdn_fwd` / `gdn_bwd` modules the plans launch.
pub const MODELS: [Model; 42] = [
    family("offsets", &["chunk_offsets", "ckrows"], offsets),
    family("offsets", &["chunk_order", "chunk_order_rev"], offsets_ov),
    family("prep", &["fwd:prep14", "fwd:prep15"], full_prep),
    family("prep", &["bwd:prep14", "bwd:prep15"], keep_prep),
    family("prep", &["bwd:prep15sc"], keep_prep_sc),
    family(
        "prep",
        &[
            "bwd:prep15sl",
            "bwd:prep16sl",
            "bwd:prep16slc",
            "bwd:prep16sll",
        ],
        keep_prep_sl,
    ),
    family("slimprep", &["slimprep", "slimprep_ov"], slim_prep),
    family(
        "slimprep_wgs",
        &["slimprep_wgs", "slimprep_wgts", "slimprep_wgtls"],
        slim_prep_saving,
    ),
    family(
        "slimscan",
        &[
            "slimscan_w4",
            "slimscan_w8",
            "slimscan_w4ov",
            "slimscan_w4d",
            "slimscan_w4gs",
            "slimscan_w4dgs",
            "slimscan_w4gx",
            "slimscan_w4gxs",
            "slimscan_w4gxt",
            "slimscan_w4gxu",
            "slimscan_w4gxv",
            "slimscan_w8gx",
            "slimscan_w8gxs",
            "slimscan_w4dgx",
        ],
        slim_scan,
    ),
    family(
        "slimsum",
        &["slimsum", "slimsum_gs", "slimsum_gx"],
        slim_sum,
    ),
    // Session 32 (pc32): the piece path with its first piece early.
    // Session 34 (fp34): the same first piece on w4gx's three stages.
    family(
        "slimscan",
        &["slimscan_w4dgx0", "slimscan_w4gx0"],
        slim_scan_first,
    ),
    family(
        "slimscan",
        &["slimscan_w4dgxr", "slimscan_w4gxr"],
        slim_scan_rest,
    ),
    // Session 38: the U-saving twins (the saved replay).
    family(
        "slimscan",
        &["slimscan_w4gx_su", "slimscan_w4gxs_su", "slimscan_w8gx_su"],
        slim_scan_saving,
    ),
    family(
        "fused16",
        &[
            "fused16_w8",
            "fused16_b2",
            "fused16_w4c",
            "fused16_b2c",
            "fused16_w8c",
        ],
        fused16,
    ),
    family("slimscan", &["slimscan_w4gx0_su"], slim_scan_first_saving),
    family("slimscan", &["slimscan_w4gxr_su"], slim_scan_rest_saving),
    // Session 35 (sm35): the same summary on three stages (gxr3).
    family("slimsum", &["slimsum_gxr", "slimsum_gxr3"], slim_sum_mid),
    family("chain", &["chain3r"], chain_from1),
    family("scan", &["scanx_w4", "scanx_w8", "scanx_w4p"], full_scan),
    family("sum", &["sum", "sum1"], full_sum),
    family(
        "chain",
        &[
            "chain", "chain2", "chain3", "pchain", "pchain2", "pchain3", "dchain", "dchain2",
            "dchain3",
        ],
        chain,
    ),
    family(
        "fscan",
        &["fscan_r4", "fscanp1", "fscan_gx", "fscan_gx3", "fscan_gx4"],
        replay,
    ),
    family("fscan", &["fscan_gxu", "fscan_gx4u"], replay_u),
    family("fscan", &["fscan_gxsc", "fscan_gx4sc"], replay_sc),
    family("fscan", &["fscan_gxscu", "fscan_gx4scu"], replay_sc_u),
    family("fscan", &["fscan_gxsl", "fscan_gx4sl"], replay_sl),
    family("fscan", &["fscan", "fscanp"], replay_v1),
    family("fscanc", &["fscanc", "fscanc1"], replay_ckpt),
    family(
        "dscan",
        &[
            "dscan_io",
            "dscan_w8",
            "dscan_ov",
            "dscan_ov2",
            "dscan_ov5",
            "dscanp",
            "dscanp_w8",
            "dscanp_ov",
            "dscanp_ov2",
            "dscanp_ov5",
        ],
        dscan,
    ),
    family(
        "dscan",
        &["dscan_ov5dr", "dscanp_ov5dr", "dscan_ov2gx", "dscanp_ov2gx"],
        dscan_dr_io,
    ),
    family(
        "dscan",
        &["dscan_ov2gxsc", "dscan_ov2gxsh", "dscanp_ov2gxsc"],
        dscan_sc,
    ),
    family("dsum", &["dsum", "dsum_w8", "dsum1"], dsum),
    family("dsum", &["dsum_sc"], dsum_sc),
    family("psum", &["psum", "psum1"], psum),
    family("psum", &["psum_sl"], psum_sl),
    family("psumt", &["psumt_sl"], psum_mt_sl),
    family("psumt", &["psumt", "psumt1"], psum_mt),
    family(
        "tokens",
        &[
            "tokens_tc11",
            "tokens_tc12",
            "tokens_tc11_ov",
            "tokens_tc12_ov",
        ],
        tokens,
    ),
    family("tokens", &["tokens_tc13_ov"], tokens_dr_io),
    // tw1 (session 30), tw3 (session 32): tc16's tile, inputs and products (value products on
    // wgmma).
    family(
        "tokens",
        &["tokens_tc16_ov", "tokens_tw1", "tokens_tw3", "tokens_tw7"],
        tokens_u,
    ),
    family("fold", &["fold"], fold),
    family("params", &["params"], params),
];

/// Whether a word of an entry name is its dtype tag (`bf16`, `f16`) or head dim (`k128`).
fn dtype_or_k(w: &str) -> bool {
    let k = w.strip_prefix('k').unwrap_or("");
    matches!(w, "bf16" | "f16") || (!k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// The family stem of an entry: `gdn_fwd_slimscan_bf16_k128_w4` -> `slimscan_w4`,
/// `gdn_bwd_prep15_bf16_k128` -> `prep15`, `gdn_chunk_offsets` -> `chunk_offsets`; the preps
/// keep their direction (`fwd:prep15`, `bwd:prep15`), whose models differ.
pub fn stem(entry: &str) -> String {
    let (dir, rest) = if let Some(r) = entry.strip_prefix("gdn_fwd_") {
        ("fwd", r)
    } else if let Some(r) = entry.strip_prefix("gdn_bwd_") {
        ("bwd", r)
    } else {
        ("", entry.strip_prefix("gdn_").unwrap_or(entry))
    };
    let kept: Vec<&str> = rest.split('_').filter(|w| !dtype_or_k(w)).collect();
    let s = kept.join("_");
    if s.starts_with("prep") && !dir.is_empty() {
        format!("{dir}:{s}")
    } else {
        s
    }
}

/// The label the benchmark prints for an entry: its [`stem`] without the direction.
pub fn label(entry: &str) -> String {
    let s = stem(entry);
    match s.split_once(':') {
        Some((_, rest)) => rest.to_owned(),
        None => s,
    }
}

/// The family of an entry (`None`: no model).
pub fn model(entry: &str) -> Option<&'static Model> {
    let s = stem(entry);
    // Session 28 (pp28): the slim prep's wgmma forms (`_wg`, `_wg5`; `_wgc` session 32, `_wgl`
    // session 35, `_wgt` / `_wgtl` session 36: q, k by tensor-map boxes) move the same bytes and
    // run the same products as the slim prep (their own label, its model).
    let s = match s.as_str() {
        "slimprep_wg" | "slimprep_wg5" | "slimprep_wgc" | "slimprep_wgl" | "slimprep_wgt"
        | "slimprep_wgtl" => "slimprep",
        other => other,
    };
    MODELS.iter().find(|m| m.stems.contains(&s))
}

/// `entry`'s counts at `shape` (`None`: no model).
pub fn kernel_counts(entry: &str, shape: &Shape) -> Option<Counts> {
    model(entry).map(|m| (m.counts)(shape))
}

/// Whether `entry` is one side of an overlapped pair that runs at the same time as its
/// partner (its cut time is then not its own): the producers `slimprep_ov`, `dscan_ov*`,
/// `dscanp_ov*` and the consumers `slimscan_w4ov`, `tokens_*_ov`.
pub fn overlapped(entry: &str) -> bool {
    let s = stem(entry);
    s.ends_with("_ov") || s.ends_with("w4ov") || s.contains("_ov2") || s.contains("_ov5")
}

/// One printed part of the benchmark: `<label> <ms> ms <GB/s> GB/s <TFLOP/s> TFLOP/s` (`?`
/// without a model).
pub fn part(label: &str, ms: f64, counts: Option<Counts>) -> String {
    match counts {
        Some(c) => format!(
            "{label} {ms:.4} ms {:.0} GB/s {:.1} TFLOP/s",
            c.bytes() / (ms * 1e-3) / 1e9,
            c.flops / (ms * 1e-3) / 1e12
        ),
        None => format!("{label} {ms:.4} ms ? GB/s ? TFLOP/s"),
    }
}

/// The benchmark's parts of one execute: one per launch (`times[i]`: launch `i`'s time in ms)
/// and, after an overlapped pair's consumer, the pair as one part over both launches' time.
pub fn launch_parts(launches: &[PlannedLaunch], shape: &Shape, times: &[f64]) -> Vec<String> {
    let mut parts = Vec::new();
    for (i, ((entry, ..), &ms)) in launches.iter().zip(times).enumerate() {
        let counts = kernel_counts(entry, shape);
        parts.push(part(&label(entry), ms, counts));
        let prev = i.checked_sub(1).map(|j| &launches[j].0);
        if let Some(prev) = prev.filter(|p| overlapped(p) && overlapped(entry)) {
            let pair = kernel_counts(prev, shape)
                .zip(counts)
                .map(|(a, b)| a.plus(b));
            let both = format!("{}+{}", label(prev), label(entry));
            parts.push(part(&both, times[i - 1] + ms, pair));
        }
    }
    parts
}
