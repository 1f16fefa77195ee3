//! `named_enum!`: closed vocabularies (dtypes, layouts, masks, ...) with one canonical lower-case
//! name each, aliases, case-insensitive parsing (an `NVTE_` prefix is ignored), serde as the
//! canonical name, and numeric input as the declaration index (which equals the NVTE enum value
//! for layouts, masks, bias and softmax types, declared in NVTE order).

/// Declares a closed vocabulary enum; see the module docs.
macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $canon:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vm])* $var),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The canonical (serialized) name.
            pub fn name(self) -> &'static str {
                match self { $($name::$var => $canon),+ }
            }

            /// Parses a canonical name or an alias (case-insensitive, `NVTE_` prefix ignored,
            /// `_mask` / `_softmax` suffixes ignored when that does not match otherwise).
            pub fn parse(text: &str) -> Option<Self> {
                let lower = text.trim().to_ascii_lowercase();
                let base = lower.strip_prefix("nvte_").unwrap_or(&lower);
                let stripped = base
                    .strip_suffix("_mask")
                    .or_else(|| base.strip_suffix("_softmax"))
                    .unwrap_or(base);
                for candidate in [base, stripped] {
                    $( if candidate == $canon $(|| candidate == $alias)* { return Some($name::$var); } )+
                }
                None
            }

            /// The comma-separated list of canonical names (for error messages).
            pub fn choices() -> String {
                Self::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "one of: {}", $name::choices())
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).ok_or_else(|| {
                            E::custom(format!(
                                "unknown {} `{}` (expected one of: {})",
                                stringify!($name), v, $name::choices()
                            ))
                        })
                    }
                    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<$name, E> {
                        usize::try_from(v)
                            .ok()
                            .and_then(|i| $name::ALL.get(i).copied())
                            .ok_or_else(|| E::custom(format!("unknown {} value {}", stringify!($name), v)))
                    }
                    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<$name, E> {
                        u64::try_from(v)
                            .map_err(|_| E::custom(format!("unknown {} value {}", stringify!($name), v)))
                            .and_then(|u| self.visit_u64(u))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

pub(crate) use named_enum;
