//! `status`'s views: the table and what needs attention for people, or the one JSON document
//! (`--json`); in both, warnings go to stderr.

use clusterform::format::status::StatusEntry;
use clusterform::format::{costs, fleet, status_json, status_text};
use clusterform_executor::FleetTotals;
use clusterform_model::UnreadLocation;
use clusterform_model::pricing::FleetBurnRate;
use time::OffsetDateTime;

use crate::printer::Printer;

/// How `status` shows what it found.
pub trait StatusView {
    /// The report on `entries`, read at `now`, and on the locations that could not be listed,
    /// ending with the `totals` of the live clusters among them.
    fn report(&self, report: &StatusReport<'_>);

    /// `--watch`: a new report follows, headed by `header` (how often, when, what changed).
    fn watching(&self, header: &str);
}

/// Clears a terminal and puts the cursor at its top left (ANSI `ED` and `CUP`), as `watch`
/// does before each redraw.
const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";

/// What `status` found.
pub struct StatusReport<'a> {
    /// Each cluster reported on.
    pub entries: &'a [StatusEntry],
    /// The locations that could not be listed.
    pub unread: &'a [UnreadLocation],
    /// The totals of the live clusters among `entries`.
    pub totals: &'a FleetTotals,
    /// With prices, what each of them and the fleet burn per hour.
    pub burn_rate: Option<&'a FleetBurnRate>,
    /// When it was read.
    pub now: OffsetDateTime,
}

/// The view `--json` chooses; `targeted` (`--target`): the text also says how to log in to
/// each cluster (the JSON always does).
pub fn status_view(json: bool, targeted: bool, printer: &Printer) -> Box<dyn StatusView> {
    if json {
        Box::new(JsonStatus { printer: *printer })
    } else {
        Box::new(HumanStatus {
            printer: *printer,
            targeted,
        })
    }
}

/// The table, the recent events and what needs attention; with `--target`, how to log in.
struct HumanStatus {
    printer: Printer,
    targeted: bool,
}

impl StatusView for HumanStatus {
    fn report(&self, report: &StatusReport<'_>) {
        let entries = report.entries;
        let mut text =
            status_text::render_text(entries, report.unread, report.now, self.printer.color());
        if self.targeted && !entries.is_empty() {
            text.push_str(&status_text::render_login(entries));
        }
        if report.totals.clusters > 0 {
            if let Some(burn_rate) = report.burn_rate {
                text.push('\n');
                text.push_str(&costs::burn_rate_table(burn_rate));
            }
            text.push('\n');
            text.push_str(&fleet::totals_line(report.totals, report.burn_rate));
            text.push('\n');
        }
        self.printer.result(&text);
    }

    /// On a terminal the screen is cleared and the report redrawn; in a pipe the reports
    /// follow one another, each after a blank line and its header. Only a reading that
    /// succeeds comes here: a failed one's error stays below the last report until then.
    fn watching(&self, header: &str) {
        if self.printer.stdout_is_terminal() {
            self.printer.result(&format!("{CLEAR_SCREEN}{header}\n"));
        } else {
            self.printer.result(&format!("\n{header}\n"));
        }
    }
}

/// The document of `docs/commands.md`, "`status --json`".
struct JsonStatus {
    printer: Printer,
}

impl StatusView for JsonStatus {
    fn report(&self, report: &StatusReport<'_>) {
        let mut document = status_json::render_json(report.entries, report.unread);
        document["totals"] = fleet::totals_json(report.totals, report.burn_rate);
        self.printer
            .result(&serde_json::to_string_pretty(&document).unwrap_or_default());
    }

    /// Each document stays one document on stdout: the header goes to stderr.
    fn watching(&self, header: &str) {
        self.printer.info(header);
    }
}
