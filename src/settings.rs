//! Every `DNNPLAN_*` environment variable the library reads (and those its PyTorch op package
//! reads in the same process), as data, and the check that says which of this process's
//! `DNNPLAN_*` variables it understands.
//!
//! Contract: [`all`] lists each variable once (its name, what it changes, the values it accepts);
//! the code that reads a variable keeps reading it where it always did, and the accepted values
//! come from the same tables that code consults (a unit test per parser holds the two together;
//! `tests/settings_registry.rs` checks that every `DNNPLAN_*` name in the sources is listed here
//! and every listed one is read and documented). [`check`] classifies variables: understood,
//! set to a value the library ignores (with what it accepts), or not a variable the library
//! reads at all (with the nearest name, for a typo). `dnnplan env` reports it; planning never
//! fails on it (most variables are diagnostics whose unknown values fall back to the rule).

use crate::cuda::cache::config::{COMPILED_PLANS, CUDNN_HEURISTICS};

/// What values a variable accepts. An empty value counts as unset everywhere.
#[derive(Clone, Copy, Debug)]
pub enum Accepts {
    /// A path (any value).
    Path,
    /// A cache root: a path, or one of `off` (ASCII case and surrounding space ignored) to turn
    /// the cache off.
    PathOrOff {
        /// The values that turn it off.
        off: &'static [&'static str],
    },
    /// A boolean switch: one of `on` or `off` (ASCII case and surrounding space ignored).
    Switch {
        /// Values that turn it on.
        on: &'static [&'static str],
        /// Values that turn it off.
        off: &'static [&'static str],
    },
    /// One of the words `list` returns (exactly, or with ASCII case and surrounding space
    /// ignored when `fold`).
    Words {
        /// The accepted words, from the tables the reading code consults.
        list: fn() -> Vec<&'static str>,
        /// Whether case and surrounding space are ignored.
        fold: bool,
    },
    /// A non-negative integer (`u64`, no sign, no space).
    Unsigned,
    /// An integer (`i32`, no space).
    Integer,
    /// A byte count (surrounding space ignored; zero or less: unlimited).
    Bytes,
    /// Free text whose form the reader explains itself (e.g. a list of library names).
    Text(&'static str),
}

impl Accepts {
    /// Whether the library understands `value` (an empty value: yes, it means unset).
    pub fn admits(&self, value: &str) -> bool {
        let folded = value.trim().to_ascii_lowercase();
        match self {
            _ if value.trim().is_empty() => true,
            Accepts::Path | Accepts::PathOrOff { .. } | Accepts::Text(_) => true,
            Accepts::Switch { on, off } => {
                on.contains(&folded.as_str()) || off.contains(&folded.as_str())
            }
            Accepts::Words { list, fold } => {
                let probe = if *fold { folded.as_str() } else { value };
                list().iter().any(|w| {
                    if *fold {
                        w.eq_ignore_ascii_case(probe)
                    } else {
                        *w == probe
                    }
                })
            }
            Accepts::Unsigned => value.parse::<u64>().is_ok(),
            Accepts::Integer => value.parse::<i32>().is_ok(),
            Accepts::Bytes => value.trim().parse::<i128>().is_ok(),
        }
    }

    /// The accepted values in words, for a report.
    pub fn describe(&self) -> String {
        match self {
            Accepts::Path => "a path".into(),
            Accepts::PathOrOff { off } => format!("a path, or {} to turn it off", off.join("|")),
            Accepts::Switch { on, off } => {
                format!("{} (on) or {} (off)", on.join("|"), off.join("|"))
            }
            Accepts::Words { list, .. } => {
                let mut words = list();
                let mut seen = std::collections::HashSet::new();
                words.retain(|w| seen.insert(*w));
                format!("one of {}", words.join("|"))
            }
            Accepts::Unsigned => "a non-negative integer".into(),
            Accepts::Integer => "an integer".into(),
            Accepts::Bytes => "a byte count (0 or less: no cap)".into(),
            Accepts::Text(what) => (*what).into(),
        }
    }
}

/// One environment variable the library reads.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// The variable's name (`DNNPLAN_...`).
    pub name: &'static str,
    /// The values it accepts.
    pub accepts: Accepts,
    /// What it changes, in one line.
    pub effect: &'static str,
}

/// The words every boolean setting reads as on (trimmed, ASCII case ignored): [`is_on`].
pub const ON: [&str; 4] = ["1", "true", "yes", "on"];

/// The words the switches whose readers use [`is_on`] document as off (anything else not in
/// [`ON`] is off too, but reported as not understood).
pub const OFF: [&str; 4] = ["0", "false", "no", "off"];

/// Whether `value` turns a boolean setting on: trimmed, lower-cased, one of [`ON`]. The one truth
/// rule of `DNNPLAN_ENABLE_OPT_IN_ENGINES`, `DNNPLAN_CUDNN_CONCURRENT_MODES`,
/// `DNNPLAN_DISABLE_COMPILED_CACHE` and `DNNPLAN_LOG_INFO`.
pub fn is_on(value: &str) -> bool {
    ON.contains(&value.trim().to_ascii_lowercase().as_str())
}

/// The library-wide variables (loading, caches, the cuDNN provider, the manifest); the engines'
/// own diagnostics follow in [`all`].
pub static CORE: [Setting; 14] = [
    Setting {
        name: crate::log::LOG_INFO_ENV,
        accepts: Accepts::Switch { on: &ON, off: &OFF },
        effect: "logs planning and plan builds (with DNNPLAN_LOG_FILE)",
    },
    Setting {
        name: crate::log::LOG_FILE_ENV,
        accepts: Accepts::Text("stdout, stderr, or a file path (appended to)"),
        effect: "where DNNPLAN_LOG_INFO's lines go (both must be set)",
    },
    Setting {
        name: crate::cudnn::loader::ENV_CUDNN_LIB_DIR,
        accepts: Accepts::Path,
        effect: "the directory libcudnn.so.9 is loaded from (else the loader's search path)",
    },
    Setting {
        name: crate::cudnn::exec_path::EXEC_PATH_ENV,
        accepts: Accepts::Words {
            list: crate::cudnn::exec_path::ExecPath::names,
            fold: true,
        },
        effect: "how a cuDNN plan submits its work (an unknown value fails the build of the plan)",
    },
    Setting {
        name: crate::cuda::nvrtc::ENV_NVRTC_LIB_DIR,
        accepts: Accepts::Path,
        effect: "the directory NVRTC is loaded from",
    },
    Setting {
        name: crate::dispatch::manifest::ENV_ENABLE_OPT_IN_ENGINES,
        accepts: Accepts::Switch { on: &ON, off: &OFF },
        effect: "lets opt-in bundled engines rank",
    },
    Setting {
        name: crate::cudnn::heur_cache::HEUR_CACHE_ENV,
        accepts: Accepts::Switch {
            on: &ON,
            off: &["0", "off", "false"],
        },
        effect: "the in-process cuDNN heuristics cache (off: every plan list asks cuDNN)",
    },
    Setting {
        name: crate::cudnn::heur_modes::CONCURRENT_MODES_ENV,
        accepts: Accepts::Switch { on: &ON, off: &OFF },
        effect: "asks cuDNN's heuristic modes on several threads at once",
    },
    Setting {
        name: crate::cudnn::pin::PIN_LIBS_ENV,
        accepts: Accepts::Text(
            "0|off|false (nothing), 1|on|true|default (NVRTC), all, or a comma-separated list of libraries",
        ),
        effect: "libraries opened once and kept, so cuDNN's own loads find them",
    },
    Setting {
        name: COMPILED_PLANS.root_var,
        accepts: Accepts::Path,
        effect: "the compiled-plan cache's root directory",
    },
    Setting {
        name: "DNNPLAN_DISABLE_COMPILED_CACHE",
        accepts: Accepts::Switch { on: &ON, off: &OFF },
        effect: "turns the compiled-plan cache off",
    },
    Setting {
        name: COMPILED_PLANS.max_bytes_var,
        accepts: Accepts::Bytes,
        effect: "the compiled-plan cache's prune cap",
    },
    Setting {
        name: CUDNN_HEURISTICS.root_var,
        accepts: Accepts::PathOrOff {
            off: &["0", "off", "false", "none"],
        },
        effect: "the cuDNN heuristics cache's disk tier: its root, or off",
    },
    Setting {
        name: CUDNN_HEURISTICS.max_bytes_var,
        accepts: Accepts::Bytes,
        effect: "the cuDNN heuristics disk tier's prune cap",
    },
];

/// The variables the PyTorch op package (`python/`, `dnnplan_torch`) reads: in the same process
/// at run time, and when its C++ extension is built (`python/setup.py`).
pub static TORCH_PACKAGE: [Setting; 6] = [
    Setting {
        name: "DNNPLAN_TORCH_BUILD_EXT",
        accepts: Accepts::Words {
            list: || vec!["0", "1"],
            fold: false,
        },
        effect: "building dnnplan_torch: 0 builds it without its C++ extension",
    },
    Setting {
        name: "DNNPLAN_CUDA_INCLUDE",
        accepts: Accepts::Path,
        effect: "building dnnplan_torch: the CUDA runtime headers' directory",
    },
    Setting {
        name: "DNNPLAN_INCLUDE",
        accepts: Accepts::Path,
        effect: "building dnnplan_torch: the directory holding dnnplan.h",
    },
    Setting {
        name: "DNNPLAN_LIBRARY",
        accepts: Accepts::Path,
        effect: "dnnplan_torch: the libdnnplan.so file it loads (else its own folder, then the loader's path)",
    },
    Setting {
        name: "DNNPLAN_TORCH_CPP",
        accepts: Accepts::Switch {
            on: &ON,
            off: &["0", "false", "off", "no"],
        },
        effect: "dnnplan_torch: its C++ launchers (off: the pure-Python ones), read at import",
    },
    Setting {
        name: "DNNPLAN_TORCH_GDN_SAVE_FACTORS",
        accepts: Accepts::Words {
            list: || vec!["0", "1", "2"],
            fold: false,
        },
        effect: "dnnplan_torch: what autograd's GDN forward saves for its backward (0 nothing, 1 the chunk factors, 2 the saved replay), read at import",
    },
];

/// Every variable the library reads ([`CORE`], then the GDN engine's diagnostics), then those
/// the PyTorch op package reads ([`TORCH_PACKAGE`]).
pub fn all() -> impl Iterator<Item = &'static Setting> {
    CORE.iter()
        .chain(crate::engines::gdn::switches::SWITCHES.iter())
        .chain(TORCH_PACKAGE.iter())
}

/// The setting named `name`, if the library reads it.
pub fn find(name: &str) -> Option<&'static Setting> {
    all().find(|s| s.name == name)
}

/// What the library makes of one `DNNPLAN_*` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A variable it reads, set to a value it understands.
    Understood,
    /// A variable it reads, set to a value it ignores (the default applies), or, for
    /// `DNNPLAN_CUDNN_EXEC_PATH`, refuses.
    NotUnderstood {
        /// What it accepts.
        accepts: String,
    },
    /// Not a variable the library reads.
    Unknown {
        /// The nearest name it does read, when one is close (a typo).
        nearest: Option<&'static str>,
    },
}

/// One `DNNPLAN_*` variable of an environment and its verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The variable's name.
    pub name: String,
    /// Its value (lossy UTF-8).
    pub value: String,
    /// What the library makes of it.
    pub verdict: Verdict,
}

impl Reading {
    /// The reading as JSON: `value`, `status` (`ok`, `not understood ...`, `unknown ...`), and
    /// `accepts` / `effect` for a value not understood, `did_you_mean` for an unknown name with
    /// a near one (the form `dnnplan env` and the explanations report).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match &self.verdict {
            Verdict::Understood => json!({ "value": self.value, "status": "ok" }),
            Verdict::NotUnderstood { accepts } => json!({
                "value": self.value,
                "status": "not understood: not a value it accepts (see effect)",
                "accepts": accepts,
                "effect": find(&self.name).map(|s| s.effect),
            }),
            Verdict::Unknown { nearest } => {
                let mut v = json!({
                    "value": self.value,
                    "status": "unknown: dnnplan reads no such variable",
                });
                if let Some(name) = nearest {
                    v["did_you_mean"] = json!(name);
                }
                v
            }
        }
    }

    /// [`Reading::to_json`] with the variable's `name` first (the form of a list).
    pub fn to_named_json(&self) -> serde_json::Value {
        let mut v = serde_json::Map::new();
        v.insert("name".into(), self.name.clone().into());
        if let serde_json::Value::Object(rest) = self.to_json() {
            v.extend(rest);
        }
        v.into()
    }
}

/// Variables cargo sets for the crate's own programs (`cargo run`, `cargo test`: build.rs hands
/// them to rustc as `env!` values); never read at run time, so [`check`] passes over them.
pub const BUILD_TIME: [&str; 2] = ["DNNPLAN_ABI_VERSION", "DNNPLAN_GENERATED_HEADER"];

/// Classifies every `DNNPLAN_*` variable among `vars` (others, and [`BUILD_TIME`]'s, are
/// skipped), sorted by name.
pub fn check<I, K, V>(vars: I) -> Vec<Reading>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut out: Vec<Reading> = vars
        .into_iter()
        .filter(|(k, _)| k.as_ref().starts_with("DNNPLAN_") && !BUILD_TIME.contains(&k.as_ref()))
        .map(|(k, v)| {
            let (name, value) = (k.as_ref(), v.as_ref());
            let verdict = match find(name) {
                Some(s) if s.accepts.admits(value) => Verdict::Understood,
                Some(s) => Verdict::NotUnderstood {
                    accepts: s.accepts.describe(),
                },
                None => Verdict::Unknown {
                    nearest: nearest(name),
                },
            };
            Reading {
                name: name.to_owned(),
                value: value.to_owned(),
                verdict,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The settings document (schema `dnnplan.settings/1`): `set`, every `DNNPLAN_*` variable of
/// this process with its verdict ([`Reading::to_json`] plus `name`); `known`, every variable
/// [`all`] lists with what it accepts and what it changes. `dnnp_settings_json` returns it.
pub fn document() -> serde_json::Value {
    use serde_json::json;
    let set: Vec<_> = check_process().iter().map(Reading::to_named_json).collect();
    let known: Vec<_> = all()
        .map(|s| json!({ "name": s.name, "accepts": s.accepts.describe(), "effect": s.effect }))
        .collect();
    json!({ "schema": "dnnplan.settings/1", "set": set, "known": known })
}

/// [`check`] over this process's environment.
pub fn check_process() -> Vec<Reading> {
    check(std::env::vars_os().map(|(k, v)| {
        (
            k.to_string_lossy().into_owned(),
            v.to_string_lossy().into_owned(),
        )
    }))
}

/// The setting whose name is nearest `name` by edit distance, if within a quarter of its length
/// (at least 2): the name a typo meant.
pub fn nearest(name: &str) -> Option<&'static str> {
    let limit = (name.len() / 4).max(2);
    all()
        .map(|s| (edit_distance(name, s.name), s.name))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, n)| (d, n))
        .map(|(_, n)| n)
}

/// Levenshtein distance over bytes (the names are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_prefixed() {
        let mut names: Vec<_> = all().map(|s| s.name).collect();
        assert!(names.iter().all(|n| n.starts_with("DNNPLAN_")));
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a variable listed twice");
    }

    #[test]
    fn every_word_list_is_non_empty_and_admits_its_words() {
        for s in all() {
            if let Accepts::Words { list, .. } = s.accepts {
                let words = list();
                assert!(!words.is_empty(), "{}: no words", s.name);
                for w in words {
                    assert!(s.accepts.admits(w), "{}: its own word {w}", s.name);
                }
                assert!(!s.accepts.admits("no-such-word"), "{}", s.name);
            }
        }
    }

    #[test]
    fn check_classifies_values_and_names() {
        let got = check([
            ("DNNPLAN_GDN_FWD_PIECES", "7"),
            ("DNNPLAN_GDN_FWD_PIECES_", "7"),
            ("DNNPLAN_GDN_BWD_TOKENS", "tw9"),
            ("DNNPLAN_CUDNN_EXEC_PATH", " Graph "),
            ("DNNPLAN_COMPILED_CACHE_MAX_BYTES", "lots"),
            ("DNNPLAN_SOMETHING_ELSE_ENTIRELY", "1"),
            ("PATH", "/bin"),
            ("DNNPLAN_GDN_FWD_STEPS", ""),
            ("DNNPLAN_ABI_VERSION", "0.1"),
        ]);
        let verdict = |name: &str| {
            got.iter()
                .find(|r| r.name == name)
                .map(|r| r.verdict.clone())
        };
        assert_eq!(got.len(), 7, "only DNNPLAN_ variables: {got:?}");
        assert_eq!(verdict("DNNPLAN_GDN_FWD_PIECES"), Some(Verdict::Understood));
        assert_eq!(verdict("DNNPLAN_GDN_FWD_STEPS"), Some(Verdict::Understood));
        assert_eq!(
            verdict("DNNPLAN_CUDNN_EXEC_PATH"),
            Some(Verdict::Understood)
        );
        assert_eq!(
            verdict("DNNPLAN_GDN_FWD_PIECES_"),
            Some(Verdict::Unknown {
                nearest: Some("DNNPLAN_GDN_FWD_PIECES")
            })
        );
        assert_eq!(
            verdict("DNNPLAN_SOMETHING_ELSE_ENTIRELY"),
            Some(Verdict::Unknown { nearest: None })
        );
        match verdict("DNNPLAN_GDN_BWD_TOKENS") {
            Some(Verdict::NotUnderstood { accepts }) => {
                assert!(
                    accepts.contains("tw7") && accepts.contains("tc16"),
                    "{accepts}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            verdict("DNNPLAN_COMPILED_CACHE_MAX_BYTES"),
            Some(Verdict::NotUnderstood { .. })
        ));
        let names: Vec<_> = got.iter().map(|r| r.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }

    #[test]
    fn a_typo_finds_its_variable() {
        assert_eq!(
            nearest("DNNPLAN_GDN_FWD_SACN"),
            Some("DNNPLAN_GDN_FWD_SCAN")
        );
        assert_eq!(
            nearest("DNNPLAN_CUDNN_LIBDIR"),
            Some("DNNPLAN_CUDNN_LIB_DIR")
        );
        assert_eq!(nearest("DNNPLAN_X"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn truth_rule() {
        for v in ["1", "true", " TRUE ", "yes", "On"] {
            assert!(is_on(v), "{v}");
        }
        for v in ["", "0", "false", "no", "off", "2", "enable"] {
            assert!(!is_on(v), "{v}");
        }
    }

    #[test]
    fn switches_and_numbers() {
        let s = Accepts::Switch {
            on: &ON,
            off: &["0"],
        };
        assert!(s.admits(" TRUE ") && s.admits("0") && !s.admits("2"));
        assert!(Accepts::Unsigned.admits("12") && !Accepts::Unsigned.admits("-1"));
        assert!(!Accepts::Unsigned.admits(" 12"), "the readers do not trim");
        assert!(Accepts::Integer.admits("-3") && !Accepts::Integer.admits("3.5"));
        assert!(Accepts::Bytes.admits(" -1 ") && !Accepts::Bytes.admits("1G"));
    }
}
