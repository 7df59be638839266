//! `clusterform show PLANFILE`: prints a saved plan as `plan` shows one, text, JSON or its
//! summary, the text headed by the flags it was made with (the JSON document holds them), or
//! as a pull-request comment in Markdown (`--format markdown`). A saved plan holds no
//! running jobs; stderr says that `apply FILE` reads them when it runs.

use clusterform::format::plan_flags::made_with;
use clusterform_model::JobsByCluster;

use crate::cli::{ShowArgs, ShowFormat};
use crate::context;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;
use crate::views::{PlanFormat, plan_view};

/// Reads and renders a saved plan.
pub fn run(args: &ShowArgs, printer: &Printer) -> Result<ExitStatus, CliError> {
    let plan = clusterform_planner::load_plan(&args.planfile)?;
    let format = match (args.json, args.format, args.summary) {
        (true, _, _) => PlanFormat::Json,
        (false, ShowFormat::Markdown, summary) => PlanFormat::Markdown {
            full_plan: !summary,
        },
        (false, ShowFormat::Text, true) => PlanFormat::Summary,
        (false, ShowFormat::Text, false) => PlanFormat::Text,
    };
    if matches!(format, PlanFormat::Text | PlanFormat::Summary) {
        // A blank line between the flags and the plan, as between the plan's parts.
        printer.result(&format!("{}\n\n", made_with(&plan.flags)));
    }
    let prices = context::prices(args.prices.prices.as_deref(), None, printer)?;
    plan_view(format, printer).plan(&plan, &JobsByCluster::new(), prices.as_ref());
    let disruptive = plan.changes.iter().filter(|c| c.is_disruptive()).count();
    if disruptive > 0 {
        printer.info(&format!(
            "The plan file holds no Slurm jobs: `clusterform apply {}` reads them again when it \
             runs, on the {disruptive} {} it takes nodes from, and refuses to stop running jobs \
             unless --allow-disruption is given.",
            args.planfile.display(),
            if disruptive == 1 {
                "cluster"
            } else {
                "clusters"
            },
        ));
    }
    Ok(ExitStatus::Success)
}
