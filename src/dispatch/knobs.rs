//! The one public knob vocabulary (`KnobType`) and knob records.
//!
//! Every plan, bundled or backend, is described publicly as `(engine_id, [(knob_type, value)])`.
//! The integer values are a persisted, append-only contract shared with the reference
//! (`knobs.h`): the backend mirror band 0..=32 and the frontend-only band from
//! [`FRONTEND_KNOB_TYPE_BASE`]. Frontend-only knobs never reach the backend
//! ([`KnobType::to_backend`] refuses them); the frontend and backend numbers differ and are
//! converted through one table. Knobs change speed, never numerics.
//!
//! [`Knobs`] is the canonical record: pairs sorted by knob type, no duplicates. It is the dedup
//! identity of a plan, so two equal records are the same configuration.

use serde::Serialize;

use crate::error::{Error, Result};

/// First value of the frontend-only knob band.
pub const FRONTEND_KNOB_TYPE_BASE: u32 = 1000;

/// A knob type in the public vocabulary (the integer is the persisted value).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct KnobType(pub u32);

/// `(public value, name, backend raw value)` for every knob type; `None` = never sent to the
/// backend. Backend values are `cudnnBackendKnobType_t` from cuDNN 9.x headers.
const KNOB_TABLE: &[(u32, &str, Option<u32>)] = &[
    (0, "NOT_SET", None),
    (1, "SWIZZLE", Some(1)),
    (2, "TILE_SIZE", Some(2)),
    (3, "EDGE", Some(4)),
    (4, "MULTIPLY", Some(11)),
    (5, "SPLIT_K_BUF", Some(12)),
    (6, "TILEK", Some(13)),
    (7, "STAGES", Some(14)),
    (8, "REDUCTION_MODE", Some(15)),
    (9, "SPLIT_K_SLC", Some(17)),
    (10, "IDX_MODE", Some(18)),
    (11, "SPECFILT", Some(23)),
    (12, "KERNEL_CFG", Some(24)),
    (13, "WORKSPACE", Some(25)),
    (14, "TILE_CGA_M", Some(27)),
    (15, "TILE_CGA_N", Some(28)),
    (16, "BLOCK_SIZE", Some(29)),
    (17, "OCCUPANCY", Some(30)),
    (18, "ARRAY_SIZE_PER_THREAD", Some(31)),
    (19, "SPLIT_COLS", Some(33)),
    (20, "TILE_ROWS", Some(34)),
    (21, "TILE_COLS", Some(35)),
    (22, "LOAD_SIZE", Some(36)),
    (23, "CTA_COUNT", Some(37)),
    (24, "STREAM_K", Some(38)),
    (25, "SPLIT_P_SLC", Some(39)),
    (26, "TILE_M", Some(40)),
    (27, "TILE_N", Some(41)),
    (28, "WARP_SPEC_CFG", Some(42)),
    (29, "SWAP_AB", Some(43)),
    (30, "INPUT_TMA_ENABLE", Some(44)),
    (31, "OUTPUT_TMA_ENABLE", Some(45)),
    (32, "TILE_CGA", Some(26)),
    (1000, "SCHED_POLICY", None),
    (1001, "PACK_GQA", None),
    (1002, "SPLIT_KV", None),
    (1003, "PIPELINE_ARCH", None),
    (1004, "MMA_TILE_M", None),
    (1005, "MMA_TILE_N", None),
    (1006, "MMA_TILE_K", None),
    (1007, "CTA_GROUP", None),
    (1008, "WARPS_M", None),
    (1009, "WARPS_N", None),
];

impl KnobType {
    /// `NOT_SET` (0): also what an unmapped backend knob becomes in the public form.
    pub const NOT_SET: KnobType = KnobType(0);
    /// `TILE_M` (26).
    pub const TILE_M: KnobType = KnobType(26);
    /// `TILE_N` (27).
    pub const TILE_N: KnobType = KnobType(27);
    /// `TILE_CGA_M` (14).
    pub const TILE_CGA_M: KnobType = KnobType(14);
    /// `SPLIT_K_SLC` (9).
    pub const SPLIT_K_SLC: KnobType = KnobType(9);
    /// `STAGES` (7).
    pub const STAGES: KnobType = KnobType(7);
    /// `SCHED_POLICY` (1000).
    pub const SCHED_POLICY: KnobType = KnobType(1000);
    /// `PACK_GQA` (1001).
    pub const PACK_GQA: KnobType = KnobType(1001);
    /// `SPLIT_KV` (1002).
    pub const SPLIT_KV: KnobType = KnobType(1002);

    fn row(self) -> Option<&'static (u32, &'static str, Option<u32>)> {
        KNOB_TABLE.iter().find(|r| r.0 == self.0)
    }

    /// True when the value is a defined knob type.
    pub fn is_known(self) -> bool {
        self.row().is_some()
    }

    /// The persisted name (`TILE_M`), or `None` for an undefined value.
    pub fn name(self) -> Option<&'static str> {
        self.row().map(|r| r.1)
    }

    /// The name, or the bare number for an undefined value (how plan names render it).
    pub fn display_name(self) -> String {
        self.name()
            .map(str::to_owned)
            .unwrap_or_else(|| self.0.to_string())
    }

    /// Looks a knob type up by its persisted name.
    pub fn from_name(name: &str) -> Option<KnobType> {
        KNOB_TABLE
            .iter()
            .find(|r| r.1 == name)
            .map(|r| KnobType(r.0))
    }

    /// True for the frontend-only band (never sent to the backend).
    pub fn is_frontend_only(self) -> bool {
        self.0 >= FRONTEND_KNOB_TYPE_BASE
    }

    /// The backend's raw knob type, or `NotSupported` (frontend-only band, `NOT_SET`, unknown).
    pub fn to_backend(self) -> Result<u32> {
        match self.row() {
            Some((_, _, Some(raw))) => Ok(*raw),
            Some((_, name, None)) => Err(Error::NotSupported(format!(
                "knob {name} has no cuDNN backend counterpart"
            ))),
            None => Err(Error::NotSupported(format!(
                "knob type {} is not defined",
                self.0
            ))),
        }
    }

    /// The public knob type for a backend raw knob type; `NOT_SET` when the backend knob has no
    /// public counterpart (several may collapse into it, so it cannot be replayed).
    pub fn from_backend(raw: u32) -> KnobType {
        KNOB_TABLE
            .iter()
            .find(|r| r.2 == Some(raw))
            .map(|r| KnobType(r.0))
            .unwrap_or(KnobType::NOT_SET)
    }

    /// Every defined knob type, in value order.
    pub fn all() -> impl Iterator<Item = KnobType> {
        KNOB_TABLE.iter().map(|r| KnobType(r.0))
    }
}

/// A canonical knob record: `(type, value)` pairs sorted by type, no duplicate type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Knobs(Vec<(KnobType, i64)>);

impl Knobs {
    /// The empty record (an engine with no tuning axes, or no preference).
    pub fn none() -> Knobs {
        Knobs(Vec::new())
    }

    /// Builds a record from pairs in any order; a repeated knob type is an error naming it.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (KnobType, i64)>) -> Result<Knobs> {
        let mut v: Vec<(KnobType, i64)> = pairs.into_iter().collect();
        v.sort_by_key(|p| p.0);
        if let Some(w) = v.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::bad_param(
                "knobs",
                format!("knob {} is given twice", w[0].0.display_name()),
            ));
        }
        Ok(Knobs(v))
    }

    /// Builds a record from C-style `(knob_type, value)` arrays.
    pub fn from_arrays(types: &[u32], values: &[i64]) -> Result<Knobs> {
        if types.len() != values.len() {
            return Err(Error::bad_param(
                "knobs",
                format!("{} knob types but {} values", types.len(), values.len()),
            ));
        }
        Knobs::from_pairs(
            types
                .iter()
                .map(|t| KnobType(*t))
                .zip(values.iter().copied()),
        )
    }

    /// The pairs, sorted by knob type.
    pub fn pairs(&self) -> &[(KnobType, i64)] {
        &self.0
    }

    /// Number of knobs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no knob is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of one knob type.
    pub fn get(&self, t: KnobType) -> Option<i64> {
        self.0.iter().find(|p| p.0 == t).map(|p| p.1)
    }

    /// `NAME=value` pairs sorted by knob NAME, joined by `", "` (undefined types as numbers).
    pub fn public_repr(&self) -> String {
        let mut named: Vec<(String, i64)> =
            self.0.iter().map(|(t, v)| (t.display_name(), *v)).collect();
        named.sort();
        named
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Fails with `BadParam` naming the first knob type that is not defined.
    pub fn check_defined(&self) -> Result<()> {
        match self.0.iter().find(|(t, _)| !t.is_known()) {
            Some((t, _)) => Err(Error::bad_param(
                "knobs",
                format!("knob type {} is not defined", t.0),
            )),
            None => Ok(()),
        }
    }

    /// JSON form: an array of `{"knob": NAME, "type": N, "value": V}` objects.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Array(
            self.0
                .iter()
                .map(
                    |(t, v)| serde_json::json!({"knob": t.display_name(), "type": t.0, "value": v}),
                )
                .collect(),
        )
    }
}

/// Backend knobs in the backend's own numbering (`cudnnBackendKnobType_t`), sorted by raw type.
/// Backend plan identity and names use these, so backend knobs without a public name stay distinct.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RawBackendKnobs(Vec<(u32, i64)>);

impl RawBackendKnobs {
    /// Builds a record from pairs in any order (sorted; a repeated raw type keeps the first).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (u32, i64)>) -> RawBackendKnobs {
        let mut v: Vec<(u32, i64)> = pairs.into_iter().collect();
        v.sort_by_key(|p| p.0);
        v.dedup_by_key(|p| p.0);
        RawBackendKnobs(v)
    }

    /// Converts a public record for the backend; a frontend-only or undefined knob is `BadParam`.
    pub fn from_public(knobs: &Knobs) -> Result<RawBackendKnobs> {
        let mut v = Vec::with_capacity(knobs.len());
        for (t, value) in knobs.pairs() {
            let raw = t
                .to_backend()
                .map_err(|e| Error::bad_param("knobs", e.to_string()))?;
            v.push((raw, *value));
        }
        Ok(RawBackendKnobs::from_pairs(v))
    }

    /// The pairs, sorted by raw type.
    pub fn pairs(&self) -> &[(u32, i64)] {
        &self.0
    }

    /// The public form (unmapped raw types become `NOT_SET`; when several collapse the first wins).
    pub fn to_public(&self) -> Knobs {
        let mut v: Vec<(KnobType, i64)> = self
            .0
            .iter()
            .map(|(raw, value)| (KnobType::from_backend(*raw), *value))
            .collect();
        v.sort_by_key(|p| p.0);
        v.dedup_by_key(|p| p.0);
        Knobs(v)
    }

    /// The backend's plan name for an engine: `eng<id>` then `_k<raw>=<value>` per knob.
    pub fn plan_name(&self, engine_id: i64) -> String {
        let mut s = format!("eng{engine_id}");
        for (raw, value) in &self.0 {
            s.push_str(&format!("_k{raw}={value}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values_are_the_persisted_contract() {
        let backend_band: Vec<u32> = KnobType::all().map(|t| t.0).filter(|v| *v < 1000).collect();
        assert_eq!(backend_band, (0..=32).collect::<Vec<_>>());
        let fe_band: Vec<u32> = KnobType::all()
            .map(|t| t.0)
            .filter(|v| *v >= 1000)
            .collect();
        assert_eq!(fe_band, (1000..=1009).collect::<Vec<_>>());
        assert_eq!(KnobType::from_name("TILE_CGA"), Some(KnobType(32)));
        assert_eq!(KnobType(32).to_backend().unwrap(), 26);
        assert_eq!(KnobType::from_name("WARPS_N"), Some(KnobType(1009)));
        let mut names: Vec<&str> = KnobType::all().filter_map(KnobType::name).collect();
        names.sort();
        names.dedup();
        assert_eq!(
            names.len(),
            KnobType::all().count(),
            "knob names are unique"
        );
    }

    #[test]
    fn frontend_band_never_reaches_the_backend() {
        for t in KnobType::all().filter(|t| t.is_frontend_only()) {
            assert!(t.to_backend().is_err(), "{t:?}");
        }
        assert!(KnobType::NOT_SET.to_backend().is_err());
        assert!(KnobType(77).to_backend().is_err());
        let k = Knobs::from_pairs([(KnobType::SPLIT_KV, 2)]).unwrap();
        assert!(RawBackendKnobs::from_public(&k).is_err());
    }

    #[test]
    fn backend_mapping_round_trips_and_unmapped_become_not_set() {
        for t in KnobType::all().filter(|t| t.0 != 0 && !t.is_frontend_only()) {
            let raw = t.to_backend().unwrap();
            assert_eq!(KnobType::from_backend(raw), t);
        }
        // backend SPLIT_K (0) and USE_TEX (3) have no public counterpart
        let raw = RawBackendKnobs::from_pairs([(3, 1), (0, 4), (40, 128)]);
        assert_eq!(raw.pairs(), &[(0, 4), (3, 1), (40, 128)]);
        let public = raw.to_public();
        assert_eq!(public.get(KnobType::NOT_SET), Some(4));
        assert_eq!(public.get(KnobType::TILE_M), Some(128));
        assert_eq!(raw.plan_name(7), "eng7_k0=4_k3=1_k40=128");
    }

    #[test]
    fn records_are_canonical_and_reject_duplicates() {
        let a = Knobs::from_pairs([(KnobType::TILE_N, 64), (KnobType::TILE_M, 128)]).unwrap();
        let b = Knobs::from_arrays(&[26, 27], &[128, 64]).unwrap();
        assert_eq!(a, b);
        assert!(Knobs::from_pairs([(KnobType::TILE_M, 1), (KnobType::TILE_M, 2)]).is_err());
        assert!(Knobs::from_arrays(&[26], &[]).is_err());
        assert!(
            Knobs::from_arrays(&[5000], &[1])
                .unwrap()
                .check_defined()
                .is_err()
        );
    }

    #[test]
    fn public_repr_sorts_by_name_not_value() {
        // SPLIT_KV (1002) sorts before TILE_M (26) by name
        let k = Knobs::from_pairs([
            (KnobType::TILE_M, 128),
            (KnobType::SPLIT_KV, 2),
            (KnobType(4242), 3),
        ])
        .unwrap();
        assert_eq!(k.public_repr(), "4242=3, SPLIT_KV=2, TILE_M=128");
        assert_eq!(Knobs::none().public_repr(), "");
    }
}
