//! End-to-end tests: the built `clusterform` binary against the emulator, which each test
//! starts on a free loopback port in its own runtime. They check what the user sees (output,
//! exit codes) and what the API received (the emulator's request log).

mod support;
mod tampered_plans;
mod terraform_habits;

mod apply;
mod arguments;
mod bad_input;
mod commands;
mod crash;
mod destroy;
mod disruption;
mod drift;
mod emulator_command;
mod events;
mod everywhere;
mod fallbacks;
mod faults;
mod fleet_output;
#[cfg(unix)]
mod fmt_hardening;
#[cfg(unix)]
mod hardening;
mod help;
mod hostile_config;
mod idle_plans;
mod import;
mod in_place;
mod interrupt;
mod local;
mod locking;
mod nothing_sent;
mod offline_checks;
mod output_contract;
mod ownership;
mod paged_plans;
mod plans;
mod preflight;
mod prices;
mod prompt;
mod regions;
mod reliability;
mod remembered;
mod remote_lock;
mod reviews;
mod running_jobs;
mod saved_plans;
mod secrets;
mod sensitive_diagnostics;
mod slurm_api;
mod stacks;
#[cfg(unix)]
mod state_hardening;
mod status;
mod validate;
