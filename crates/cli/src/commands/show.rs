//! `clusterform show PLANFILE`: prints a saved plan as text or JSON.

use crate::cli::ShowArgs;
use crate::commands::ExitStatus;
use crate::error::CliError;
use crate::printer::Printer;

/// Reads and renders a saved plan.
pub fn run(args: &ShowArgs, printer: &Printer) -> Result<ExitStatus, CliError> {
    let plan = clusterform_planner::load_plan(&args.planfile)?;
    if args.json {
        let json = clusterform_planner::plan_document(&plan);
        printer.result(&serde_json::to_string_pretty(&json).unwrap_or_default());
    } else {
        printer.result(&clusterform::views::plan_text::render_text(
            &plan,
            printer.color(),
        ));
    }
    Ok(ExitStatus::Success)
}
