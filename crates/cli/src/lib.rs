//! The presentation layer of the `clusterform` binary as a library: the views that word plans
//! and actions for people. It is a library of its own so that benchmarks can measure it; the
//! binary (`main.rs`) holds everything else.

pub mod format;
