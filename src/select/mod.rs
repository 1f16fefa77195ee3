//! Attention eligibility: which backends and engines can run an attention request, and EVERY
//! reason the others cannot, each with the version, architecture or setting that would unblock
//! it (spec `attention-eligibility.md`).
//!
//! Contract: [`evaluate()`]`(&Request, &Environment) -> Result<Verdicts>`. An ill-formed request
//! (GQA heads not divisible, Q/KV dtype mismatch, dropout 1.0, an invalid window) is an error
//! (`Error::BadParam` naming the field and the rule); anything well-formed gets a verdict per
//! candidate (the two cuDNN sub-backends of Transformer Engine's rule, every engine capability
//! row, the unfused reference), eligible or with every failing rule. Rules are data
//! ([`rules`]), evaluated by one evaluator ([`evaluate()`]); versions are tuples ([`CudnnVer`]).
//!
//! Modules: [`version`] cuDNN version encodings; [`request`] request types and JSON form;
//! [`env`](mod@env) environment (detected or given); [`facts`] validation and canonicalization;
//! [`predicate`] rule predicates; [`rules`] the rule tables; [`engines`] capability rows;
//! [`target`] candidates; [`evaluate`](mod@evaluate) evaluation, hints, ordering; [`report`] text and JSON;
//! [`cli`] the `dnnplan eligibility` arguments and table; [`from_ir`] a request from an SDPA node.

mod names;

pub mod cli;
pub mod engines;
pub mod env;
pub mod evaluate;
pub mod facts;
pub mod from_ir;
pub mod predicate;
pub mod report;
pub mod request;
pub mod rules;
pub mod target;
pub mod version;

pub use env::{Environment, EnvironmentSpec, Policy};
pub use evaluate::{
    AtomFail, Options, Rejection, TeBackend, Unblock, Verdict, Verdicts, evaluate, evaluate_with,
};
pub use facts::Facts;
pub use from_ir::evaluate_graph;
pub use request::{
    AlibiSlopes, BiasShape, BiasType, Dtype, Fp8Recipe, Layout, Mask, Request, RequestSpec,
    SdpaAttrs, SoftmaxType,
};
pub use target::Target;
pub use version::CudnnVer;
