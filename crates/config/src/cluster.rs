//! The `cluster` block: its shape derived from the model's field table, its decoding into a
//! desired cluster, the positions of its fields, the offline checks (with the machine
//! catalogue) and the generated configuration reference.

pub(crate) mod catalogue;
pub(crate) mod decode;
pub(crate) mod decoded;
pub(crate) mod fallback;
pub(crate) mod reference;
pub(crate) mod schema;
pub(crate) mod spans;
pub(crate) mod validate;
