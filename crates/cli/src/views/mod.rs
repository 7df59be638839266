//! Views: how plans and actions are shown to people and programs. The libraries hold the data
//! (a [`clusterform_planner::Plan`] knows nothing of colours, symbols or verbs); everything a
//! user reads about a plan is worded here, and printed by the one [`crate::printer::Printer`].

pub mod actions;
mod heredoc;
pub mod names;
pub mod plan_text;
pub mod table;

#[cfg(test)]
mod location_tests;
#[cfg(test)]
mod plan_text_tests;
#[cfg(test)]
mod running_jobs_tests;
#[cfg(test)]
mod script_diff_tests;
