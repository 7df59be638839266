//! Renderings: how plans, actions, clusters' health and tables are shown to people and
//! programs. The libraries hold the data (a [`clusterform_planner::Plan`] knows nothing of
//! colours, symbols or verbs);
//! these functions turn it into text or JSON, and the binary's command views print what they
//! return through its one printer.

pub mod actions;
pub mod costs;
pub mod fleet;
pub mod gpus;
mod heredoc;
pub mod idle_table;
pub mod login_node;
pub mod names;
pub mod notes;
pub mod plan_flags;
pub mod plan_json;
pub mod plan_text;
pub mod preflight;
pub mod refresh_only;
pub mod status;
pub mod status_json;
pub mod status_text;
pub mod status_watch;
pub mod stopped_work;
pub mod summary;
pub mod table;

#[cfg(test)]
mod drift_tests;
#[cfg(test)]
mod location_tests;
#[cfg(test)]
mod plan_text_tests;
#[cfg(test)]
mod running_jobs_tests;
#[cfg(test)]
mod script_diff_tests;
