//! The HCL language as clusterform speaks it, apart from any block's meaning: reading and
//! parsing files, evaluating expressions (references, the function library, the bounds on
//! evaluation work), decoding a small block against its schema, input variables and their
//! values, keeping sensitive values out of diagnostics, and running evaluation on all cores.

pub(crate) mod block_schema;
pub(crate) mod evaluator;
pub(crate) mod expr;
pub(crate) mod functions;
pub(crate) mod guard;
pub(crate) mod parallel;
pub(crate) mod redact;
pub(crate) mod source;
pub(crate) mod variables;
