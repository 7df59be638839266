//! The shared builders of `clusterform-testkit`.

pub use clusterform_testkit::*;
