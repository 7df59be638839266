//! Integration tests of `clusterform-model`: JSON round trips on realistic payloads and the
//! generated field reference.

mod fields_doc;
mod json;
