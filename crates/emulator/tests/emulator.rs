//! HTTP tests of clusterform-emulator (the cluster API and the Cloud Storage
//! subset): every behaviour is exercised with reqwest against a server started
//! with `Emulator::serve` on 127.0.0.1:0.

mod admin;
mod auth;
mod broken;
mod capacity;
mod clusters;
mod faults;
mod list;
mod operations;
mod persistence;
mod project_numbers;
mod slurm;
mod storage;
mod strict;
mod support;
mod update;
