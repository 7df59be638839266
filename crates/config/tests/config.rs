//! Integration tests of clusterform-config: one binary, one module per topic.

mod bad_input;
mod canonical;
mod catalogue;
mod examples;
mod export;
mod fallbacks;
mod format;
mod hostile;
mod language;
mod object_keys;
mod preflight_endpoints;
mod pricing;
mod reference;
mod remote_state;
mod robustness;
mod saved_values;
mod support;
mod together;
mod unknown_values;
mod validation;
mod var_files;
