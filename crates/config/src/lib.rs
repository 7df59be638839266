//! HCL configuration: turns a directory of `*.hcl` files into a validated [`Config`].
//!
//! Raw HCL is parsed with positions (hcl-edit), evaluated attribute by attribute (hcl-rs's
//! evaluator plus our function library), decoded into desired `clusterform-model` values in
//! which every unset field stays unset, and validated offline. Every problem becomes a
//! [`Diagnostic`] with file, line, column and a hint; all problems of a run are reported
//! together. The crate also formats HCL ([`format_source`]), writes a live cluster back as HCL
//! ([`cluster_to_hcl`]) and renders the configuration reference ([`reference_markdown`]).

mod cluster;
mod config;
mod diagnostic;
mod language;
mod load;
mod tools;

pub use cluster::catalogue::machine_caution_hint;
pub use cluster::decode::MAX_TIMEOUT_SECONDS;
pub use cluster::reference::{REFERENCE_BEGIN, REFERENCE_END, reference_markdown};
pub use cluster::validate::label_value_problem;
pub use config::{
    Config, DesiredCluster, FALLBACK_FIELDS, Lifecycle, PoolFallbacks, Provider, RemoteState,
    RemovedCluster, SourceLocation, StackOrigin, Timeouts, VariableInputs,
};
pub use diagnostic::{
    CommandLineReason, Diagnostic, Diagnostics, MissingVariable, Severity, closest,
};
pub use language::guard::{
    BYTES_PER_UNIT, MAX_COLLECTION_LEN, MAX_EVALUATION_WORK, MAX_STRING_BYTES, UNITS_PER_ITERATION,
};
pub use language::redact::{Redaction, SENSITIVE_VALUE};
pub use language::source::{MAX_CONFIGURATION_BYTES, MAX_SOURCE_BYTES};
pub use load::{Loaded, LoadedPrices, Validated, load, load_prices, validate};
pub use tools::export::{Placement, cluster_to_hcl, cluster_to_hcl_placed, quote};
pub use tools::format::{format_source, read_source_to_format};
pub use tools::locate::field_location;
