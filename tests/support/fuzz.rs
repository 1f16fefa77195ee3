//! What the robustness tests share (`tests/*_robustness.rs`, `tests/select_oracle.rs`): a seeded
//! generator, the last-error text of the C ABI, and the verdict on one call's status — passed,
//! refused with a message, or a bug (a contained panic, `DNNP_STATUS_INTERNAL_PANIC`, or a refusal
//! without a message) — tallied over a run.

use std::ffi::{CStr, c_char};
use std::fmt::Display;

use dnnplan::ffi::diagnostics::dnnp_get_last_error_string;
use dnnplan::ffi::{DNNP_STATUS_INTERNAL_PANIC, DNNP_STATUS_SUCCESS, dnnp_status_t};

/// xorshift64*: deterministic, no dependency; the same cases on every run.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// One of `items` (not empty).
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    /// True one time in `one_in`.
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// The calling thread's last-error message.
///
/// By the two-call protocol (size, then text): with cuDNN loaded a refusal can carry every engine
/// config's reasons (4.6 KB for the sdpa_backward example on the H100), and a fixed 4 KB buffer
/// read such a message as none.
pub fn last_error() -> String {
    let mut needed = 0usize;
    // SAFETY: a NULL buffer of capacity 0 asks for the size; `needed` is valid for one write.
    unsafe { dnnp_get_last_error_string(std::ptr::null_mut(), 0, &mut needed) };
    let mut buf = vec![0 as c_char; needed.max(1)];
    // SAFETY: `buf` is valid for its length, `needed` for one write.
    unsafe { dnnp_get_last_error_string(buf.as_mut_ptr(), buf.len(), &mut needed) };
    // SAFETY: written NUL-terminated (or left zeroed).
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The verdict on one call.
#[derive(Debug)]
pub enum Outcome {
    /// `DNNP_STATUS_SUCCESS`.
    Passed,
    /// Another status, with a last-error message.
    Refused,
    /// A contained panic, or a refusal without a message: what went wrong.
    Bug(String),
}

/// The verdict on `status`, returned by the call named `call` (reads the last error).
pub fn classify(call: &str, status: dnnp_status_t) -> Outcome {
    if status == DNNP_STATUS_SUCCESS {
        return Outcome::Passed;
    }
    let message = last_error();
    if status == DNNP_STATUS_INTERNAL_PANIC {
        Outcome::Bug(format!("{call}: panic contained: {message}"))
    } else if message.trim().is_empty() {
        Outcome::Bug(format!("{call}: status {status} without a message"))
    } else {
        Outcome::Refused
    }
}

/// Verdicts counted over a run; bugs kept with their context.
#[derive(Default)]
pub struct Tally {
    /// Calls (or walks) that passed.
    pub passed: usize,
    /// Calls (or walks) refused with a message.
    pub refused: usize,
    /// Every bug, with its context.
    pub bugs: Vec<String>,
}

impl Tally {
    /// Counts `outcome`, a bug under `context`.
    pub fn add(&mut self, context: impl Display, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Refused => self.refused += 1,
            Outcome::Bug(b) => self.bugs.push(format!("{context}: {b}")),
        }
    }

    /// Classifies and counts `status` of the call `call` under `context`; whether it passed.
    pub fn record(&mut self, context: impl Display, call: &str, status: dnnp_status_t) -> bool {
        let outcome = classify(call, status);
        let passed = matches!(outcome, Outcome::Passed);
        self.add(context, outcome);
        passed
    }

    /// Prints the counts of the run named `what`, then fails listing the first ten bugs.
    pub fn assert_clean(&self, what: &str) {
        eprintln!(
            "{what}: {} passed, {} refused with a message, {} bugs",
            self.passed,
            self.refused,
            self.bugs.len()
        );
        assert!(
            self.bugs.is_empty(),
            "{} bugs; the first ten:\n{}",
            self.bugs.len(),
            self.bugs
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The count the environment variable `name` gives (a run's cases), else `default`.
pub fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A test's generator: seeded by `default`, or by `default ^ DNNPLAN_ROBUSTNESS_SEED` when that is
/// set (to explore other cases; a failure prints the counts, rerun with the same value).
pub fn rng(default: u64) -> Rng {
    let extra = std::env::var("DNNPLAN_ROBUSTNESS_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    Rng((default ^ extra).max(1))
}
