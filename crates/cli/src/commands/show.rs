//! `clusterform show PLANFILE`: prints a saved plan as `plan` shows one, text or JSON (a saved
//! plan holds no running jobs).

use clusterform_model::JobsByCluster;

use crate::cli::ShowArgs;
use crate::command_views::plan_view;
use crate::commands::ExitStatus;
use crate::error::CliError;
use crate::printer::Printer;

/// Reads and renders a saved plan.
pub fn run(args: &ShowArgs, printer: &Printer) -> Result<ExitStatus, CliError> {
    let plan = clusterform_planner::load_plan(&args.planfile)?;
    plan_view(args.json, printer).plan(&plan, &JobsByCluster::new());
    Ok(ExitStatus::Success)
}
