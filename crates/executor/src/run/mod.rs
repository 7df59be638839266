//! What a command does with the API: reading the live clusters for the planner ([`refresh`]),
//! following long-running operations ([`operations`]), running a plan ([`engine`], the only
//! part that knows the planner), reading clusters' Slurm ([`slurm`]), deciding which
//! clusters are idle ([`idle`]) and reading how healthy they are ([`health`]) and where their
//! login node is ([`login`]). It sends through [`crate::transport`] and journals and locks
//! through [`crate::state`].

pub(crate) mod attempts;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod health;
pub(crate) mod idle;
pub(crate) mod login;
pub(crate) mod operations;
pub(crate) mod preflight;
pub(crate) mod refresh;
pub(crate) mod slurm;
