//! HCL configuration: turns a directory of `*.hcl` files into a validated [`Config`].
//!
//! Raw HCL is parsed with positions (hcl-edit), evaluated attribute by attribute (hcl-rs's
//! evaluator plus our function library), decoded into desired `clusterform-model` values in
//! which every unset field stays unset, and validated offline. Every problem becomes a
//! [`Diagnostic`] with file, line, column and a hint; all problems of a run are reported
//! together.

mod config;

pub use config::{
    Config, DesiredCluster, Lifecycle, Provider, SourceLocation, Timeouts, VariableInputs,
};
