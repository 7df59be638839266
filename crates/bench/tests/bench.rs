//! Integration tests of the benchmark command: quick runs of the built binary against the
//! built `clusterform` (or a stand-in), checked for structure only — timings are never
//! asserted.

mod quick;
mod tool;
