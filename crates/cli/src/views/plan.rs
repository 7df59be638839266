//! `plan`'s views: the plan as text, or as its JSON document (`--json`), and with
//! `--refresh-only` only what changed outside clusterform; in both, commentary and warnings go
//! to stderr.

use std::path::Path;

use std::sync::{Mutex, PoisonError};

use clusterform::format::notes::Note;
use clusterform::format::plan_flags::made_with;
use clusterform::format::preflight::{self, PreflightReport};
use clusterform::format::{plan_json, plan_text, refresh_only, summary};
use clusterform_config::{Diagnostic, Severity};
use clusterform_model::JobsByCluster;
use clusterform_model::pricing::PriceList;
use clusterform_planner::Plan;

use crate::error::CliError;
use crate::printer::{Printer, Tell};
use crate::views::run::progress::ListingProgress;
use serde_json::Value;

/// How a command that plans shows what it found. Its notes and the configuration's warnings
/// ([`Tell`]) go to stderr as their level says, whether the command speaks text or JSON
/// (`docs/events.md`): no run loses a warning because it speaks JSON.
pub trait PlanView: Tell {
    /// Where commentary, warnings and errors go.
    fn printer(&self) -> &Printer;

    /// The plan, with the jobs seen on the clusters of its disruptive changes and, with
    /// `prices`, what each change and the plan do to the cost.
    fn plan(&self, plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>);

    /// What preflight found, before the plan is shown: the JSON document carries it (stderr
    /// tells it in both views).
    fn preflight(&self, report: &PreflightReport) {
        let _ = report;
    }

    /// Tells one of preflight's findings, located, on stderr as its severity says, whether the
    /// command speaks text or JSON (`docs/events.md`), as [`PlanView::note`] does.
    fn preflight_finding(&self, finding: &Diagnostic) {
        match finding.severity {
            Severity::Error => self.printer().error_diagnostic(finding),
            Severity::Warning => self.printer().warn_diagnostic(finding),
        }
    }

    /// The evidence `--idle-for` decided on, as a table: with the plan for people, on stderr
    /// beside a JSON document.
    fn evidence(&self, table: &str);

    /// How far a refresh of `locations` locations is, on a terminal.
    fn reading(&self, locations: usize) -> ListingProgress {
        ListingProgress::new(*self.printer(), locations)
    }

    /// An error the run goes on after (one cluster's action failed), with its hint.
    fn error(&self, error: &CliError) {
        self.printer().error(error);
    }

    /// The plan was saved to `path`: how to apply exactly it.
    fn saved(&self, path: &Path) {
        self.printer().info(&format!(
            "\nSaved the plan to {}. To perform exactly these actions, run:\n  clusterform apply {}",
            path.display(),
            path.display()
        ));
    }
}

/// How a command that shows a plan writes it, chosen once from its flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    /// The whole plan as text.
    Text,
    /// The plan's JSON document (`--json`).
    Json,
    /// One line per changing cluster, then the totals (`--summary`).
    Summary,
    /// A pull-request comment (`show --format markdown`): the summary table, then, with
    /// `full_plan`, the whole plan folded.
    Markdown {
        /// Whether the whole plan follows the table (not with `--summary`).
        full_plan: bool,
    },
}

/// The view `format` chooses.
pub fn plan_view(format: PlanFormat, printer: &Printer) -> Box<dyn PlanView> {
    match format {
        PlanFormat::Text => Box::new(HumanPlan { printer: *printer }),
        PlanFormat::Json => Box::new(JsonPlan {
            printer: *printer,
            preflight: Mutex::new(Value::Array(Vec::new())),
        }),
        PlanFormat::Summary => Box::new(SummaryPlan { printer: *printer }),
        PlanFormat::Markdown { full_plan } => Box::new(MarkdownPlan {
            printer: *printer,
            full_plan,
        }),
    }
}

/// What `plan --refresh-only` shows of `plan`: only what changed outside clusterform, as text
/// or (`json`) as the refresh-only document.
pub fn show_drift(plan: &Plan, json: bool, printer: &Printer) {
    let shown = if json {
        let document = refresh_only::render_json(plan);
        serde_json::to_string_pretty(&document).unwrap_or_default()
    } else {
        refresh_only::render_text(plan, printer.color())
    };
    printer.result(&shown);
}

/// The plan as text, coloured on a terminal.
struct HumanPlan {
    printer: Printer,
}

impl Tell for HumanPlan {
    fn tell(&self, note: &Note) {
        self.printer.tell(note);
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.printer.configuration_warning(warning);
    }
}

impl PlanView for HumanPlan {
    fn printer(&self) -> &Printer {
        &self.printer
    }

    fn plan(&self, plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) {
        let text = plan_text::render_priced_text(plan, jobs, prices, self.printer.color());
        self.printer.result(&text);
    }

    fn evidence(&self, table: &str) {
        self.printer.result(table);
    }
}

/// One line per changing cluster, then the totals.
struct SummaryPlan {
    printer: Printer,
}

impl Tell for SummaryPlan {
    fn tell(&self, note: &Note) {
        self.printer.tell(note);
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.printer.configuration_warning(warning);
    }
}

impl PlanView for SummaryPlan {
    fn printer(&self) -> &Printer {
        &self.printer
    }

    fn plan(&self, plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) {
        self.printer
            .result(&summary::render_text(plan, jobs, prices));
    }

    fn evidence(&self, table: &str) {
        self.printer.result(table);
    }
}

/// A pull-request comment: safe to paste, so never coloured; the whole plan in it hides
/// sensitive values as the text plan does.
struct MarkdownPlan {
    printer: Printer,
    full_plan: bool,
}

impl Tell for MarkdownPlan {
    fn tell(&self, note: &Note) {
        self.printer.tell(note);
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.printer.configuration_warning(warning);
    }
}

impl PlanView for MarkdownPlan {
    fn printer(&self) -> &Printer {
        &self.printer
    }

    fn plan(&self, plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) {
        let full = self.full_plan.then(|| {
            format!(
                "{}\n\n{}",
                made_with(&plan.flags),
                plan_text::render_priced_text(plan, jobs, prices, false)
            )
        });
        self.printer.result(&summary::render_markdown(
            plan,
            jobs,
            prices,
            full.as_deref(),
        ));
    }

    fn evidence(&self, table: &str) {
        self.printer.evidence(table);
    }
}

/// The plan's JSON document (`docs/plan-json.md`), with preflight's findings beside it.
struct JsonPlan {
    printer: Printer,
    /// The `preflight` array: always there, empty when nothing was found.
    preflight: Mutex<Value>,
}

/// Stdout holds the document alone: notes and warnings go to stderr.
impl Tell for JsonPlan {
    fn tell(&self, note: &Note) {
        self.printer.tell(note);
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.printer.configuration_warning(warning);
    }
}

impl PlanView for JsonPlan {
    fn printer(&self) -> &Printer {
        &self.printer
    }

    fn plan(&self, plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) {
        let mut document = plan_json::render_json(plan, jobs);
        if let Some(prices) = prices {
            plan_json::add_costs(&mut document, plan, prices);
        }
        document["preflight"] = self
            .preflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        self.printer
            .result(&serde_json::to_string_pretty(&document).unwrap_or_default());
    }

    fn evidence(&self, table: &str) {
        self.printer.evidence(table);
    }

    fn preflight(&self, report: &PreflightReport) {
        let found = preflight::render_json(&report.findings, report.skipped);
        *self
            .preflight
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = found;
    }
}
