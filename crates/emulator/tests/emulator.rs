//! HTTP tests of clusterform-emulator: every behaviour is exercised with
//! reqwest against a server started with `Emulator::serve` on 127.0.0.1:0.

mod auth;
mod clusters;
mod faults;
mod list;
mod operations;
mod persistence;
mod slurm;
mod support;
mod update;
