//! Live progress of an apply, on stderr (stdout carries only results): one line per cluster
//! with its action, elapsed time, state and the operation's progress message — an indicatif
//! spinner per cluster when stderr is a terminal, plain timestamped lines (only when something
//! changes) otherwise. An action stopped by Ctrl-C is not reported as failed: the interrupt is
//! announced once, by the printer, and the action's spinner is cleared.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use clusterform_executor::{ExecError, ProgressEvent, ProgressSink, Step};
use clusterform_model::ClusterName;
use clusterform_model::rest::RequestKind;
use clusterform_model::shortage_brief;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::printer::Printer;
use clusterform::format::actions::{done_verb, verb};
use clusterform::format::names::ClusterNames;
use clusterform::format::table::time_of_day;

/// `reading 13 locations… 4/13` on a terminal while a refresh lists them; nothing in a pipe,
/// with `--quiet`, where stdout carries JSON events, or with `--no-color` / `NO_COLOR` (whose
/// output holds no escape sequence at all). The line is gone once the Lists end.
#[derive(Debug)]
pub struct ListingProgress {
    printer: Printer,
    bar: Option<(MultiProgress, ProgressBar)>,
}

impl ListingProgress {
    /// Starts the line for `total` locations.
    pub fn new(printer: Printer, total: usize) -> Self {
        let drawn = printer.draws_progress_bars() && printer.stderr_color() && total > 0;
        let bar = drawn.then(|| {
            let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            printer.bars_drawn(&bars);
            let bar = bars.add(ProgressBar::new(u64::try_from(total).unwrap_or(u64::MAX)));
            bar.set_style(
                ProgressStyle::with_template("{spinner:.cyan} {msg} {pos}/{len}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(format!(
                "reading {total} {}…",
                if total == 1 { "location" } else { "locations" }
            ));
            bar.enable_steady_tick(Duration::from_millis(120));
            (bars, bar)
        });
        Self { printer, bar }
    }

    /// One more location's List ended.
    pub fn listed(&self) {
        if let Some((_, bar)) = &self.bar {
            bar.inc(1);
        }
    }
}

impl Drop for ListingProgress {
    fn drop(&mut self) {
        if let Some((_, bar)) = &self.bar {
            bar.finish_and_clear();
            self.printer.bars_gone();
        }
    }
}

/// Shows the executor's progress events.
#[derive(Debug)]
pub struct ApplyProgress {
    printer: Printer,
    names: ClusterNames,
    bars: Option<MultiProgress>,
    clusters: Mutex<Lines>,
    /// How many clusters the run works on: with more than one, each line that ends one says
    /// how many have ended (`(3/10 done)`).
    total: usize,
}

/// Each cluster's line, and how many have ended.
#[derive(Debug, Default)]
struct Lines {
    by_cluster: HashMap<ClusterName, ClusterLine>,
    ended: usize,
}

/// In plain lines, a cluster whose line has not changed for this long gets it printed again,
/// with its elapsed time: a create takes up to 45 minutes, and a log that says nothing for
/// that long looks like a hung run.
const STILL_RUNNING_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug)]
struct ClusterLine {
    bar: Option<ProgressBar>,
    /// What the line said last, so that a plain line is printed again only when it changes
    /// (or, unchanged, after [`STILL_RUNNING_EVERY`]).
    last_status: Option<Status>,
    /// The action's elapsed time when its plain line was last printed.
    printed_at: Duration,
    /// A resumed fallback chain stopped after an attempt without machines: the action's end
    /// is that, not a done create.
    paused: bool,
}

/// What a cluster's line says apart from how long the action has been going: the elapsed time
/// is kept as data and rendered last, so that a line whose only change is the time is not
/// printed again.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    /// `{head} [12s]{tail}`.
    Going { head: String, tail: String },
    /// `{id}: FAILED after 12s: {reason}`.
    Failed { id: String, reason: String },
}

impl Status {
    fn render(&self, elapsed: Duration) -> String {
        let seconds = elapsed.as_secs();
        match self {
            Self::Going { head, tail } => format!("{head} [{seconds}s]{tail}"),
            Self::Failed { id, reason } => format!("{id}: FAILED after {seconds}s: {reason}"),
        }
    }
}

impl ApplyProgress {
    /// Bars when stderr is a terminal (unless `--quiet`), plain lines otherwise; clusters named
    /// as `names` says (with their location when the run spans several).
    pub fn new(printer: Printer, names: ClusterNames, total: usize) -> Self {
        let bars = printer
            .draws_progress_bars()
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        if let Some(bars) = &bars {
            printer.bars_drawn(bars);
        }
        Self {
            printer,
            names,
            bars,
            clusters: Mutex::new(Lines::default()),
            total,
        }
    }

    fn new_bar(&self) -> Option<ProgressBar> {
        let bars = self.bars.as_ref()?;
        let bar = bars.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner:.cyan} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Some(bar)
    }
}

impl Drop for ApplyProgress {
    fn drop(&mut self) {
        if self.bars.is_some() {
            self.printer.bars_gone();
        }
    }
}

impl ProgressSink for ApplyProgress {
    fn event(&self, event: &ProgressEvent) {
        if is_interruption(&event.step) {
            self.stop_line(&event.address);
            return;
        }
        let finished = matches!(event.step, Step::Finished | Step::Failed(_));
        let mut lines = self.clusters.lock().unwrap_or_else(|e| e.into_inner());
        let lines = &mut *lines;
        let line = lines
            .by_cluster
            .entry(event.address.clone())
            .or_insert_with(|| ClusterLine {
                bar: self.new_bar(),
                last_status: None,
                printed_at: Duration::ZERO,
                paused: false,
            });
        line.paused |= matches!(event.step, Step::ChainPaused { .. });
        let status = match (&event.step, &line.last_status) {
            (Step::Finished, Some(paused)) if line.paused => paused.clone(),
            _ => describe(event, self.names),
        };
        let mut text = crate::printer::without_secrets(&status.render(event.elapsed)).into_owned();
        if finished {
            lines.ended += 1;
            if self.total > 1 {
                text.push_str(&format!(
                    " ({}/{} done)",
                    lines.ended.min(self.total),
                    self.total
                ));
            }
        }
        match &line.bar {
            Some(bar) if finished => bar.finish_with_message(text),
            Some(bar) => bar.set_message(text),
            None => {
                let changed = line.last_status.as_ref() != Some(&status);
                let quiet_for = event.elapsed.saturating_sub(line.printed_at);
                let Some(suffix) = plain_line(changed, finished && !line.paused, quiet_for) else {
                    return;
                };
                self.printer.info(&format!("[{}] {text}{suffix}", clock()));
                line.last_status = Some(status);
                line.printed_at = event.elapsed;
            }
        }
    }
}

impl ApplyProgress {
    /// Clears the spinner of a cluster whose action Ctrl-C stopped: its operation keeps
    /// running, so a line saying how far it got would be stale next to the interruption line,
    /// which says what happens to it.
    fn stop_line(&self, address: &ClusterName) {
        let lines = self.clusters.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bar) = lines
            .by_cluster
            .get(address)
            .and_then(|line| line.bar.as_ref())
        {
            bar.finish_and_clear();
        }
    }
}

/// Whether a plain line is printed for an event, and what follows its text: when the line
/// changed or ends its action, as it is; unchanged for [`STILL_RUNNING_EVERY`] (the service's
/// message and the state the same), again with `(still running)`; else not.
fn plain_line(changed: bool, ends: bool, quiet_for: Duration) -> Option<&'static str> {
    if changed || ends {
        Some("")
    } else if quiet_for >= STILL_RUNNING_EVERY {
        Some(" (still running)")
    } else {
        None
    }
}

/// Whether the step is an action that stopped because of Ctrl-C rather than failed.
fn is_interruption(step: &Step) -> bool {
    matches!(step, Step::Failed(reason) if *reason == ExecError::Cancelled.to_string())
}

/// `train01: creating… [12s] PROVISIONING — Creating node pool login`, without the time.
fn describe(event: &ProgressEvent, names: ClusterNames) -> Status {
    let id = &names.name(&event.address);
    let going = |head: String, tail: String| Status::Going { head, tail };
    match &event.step {
        Step::Started => going(format!("{id}: {}…", verb(event.action)), String::new()),
        Step::Resumed { operation } => going(
            format!("{id}: waiting for {operation}, started by an earlier run…"),
            String::new(),
        ),
        Step::Settling { state } => going(
            format!("{id}: waiting for the cluster to leave {state}…"),
            String::new(),
        ),
        Step::IdNotFree => going(
            format!("{id}: waiting for the service to free the cluster ID after the delete…"),
            String::new(),
        ),
        Step::Submitted { request, .. } => going(
            format!("{id}: {} request accepted", request_noun(*request)),
            String::new(),
        ),
        Step::Waiting { state, message, .. } => {
            let mut tail = String::new();
            if let Some(state) = state {
                tail.push_str(&format!(" {state}"));
            }
            if let Some(message) = message {
                tail.push_str(&format!(" — {message}"));
            }
            going(format!("{id}: {}…", verb(event.action)), tail)
        }
        Step::StepDone { request } => going(
            format!("{id}: {} done", request_noun(*request)),
            String::new(),
        ),
        Step::FellShort {
            attempt,
            attempts,
            shortage,
            message,
            next,
            deleting,
        } => {
            let which = match attempts {
                1 => "the create".to_owned(),
                _ => format!("{attempt} of {attempts}"),
            };
            let delete = if *deleting {
                "; deleting the cluster it left in ERROR"
            } else {
                ""
            };
            let then = match next {
                Some(next) => format!(", then trying {next}…"),
                None => String::new(),
            };
            let (outcome, brief) = (shortage.outcome(), shortage_brief(message));
            going(
                format!("{id}: {which} {outcome} ({brief}){delete}{then}"),
                String::new(),
            )
        }
        Step::FellBack { attempt, attempts } => going(
            format!("{id}: {attempt} of {attempts} has machines"),
            String::new(),
        ),
        Step::ChainPaused {
            attempt,
            shortage,
            message,
        } => going(
            format!(
                "{id}: {attempt} {} ({}); apply goes on with the next alternative",
                shortage.outcome(),
                shortage_brief(message)
            ),
            String::new(),
        ),
        Step::Finished => going(format!("{id}: {}", done_verb(event.action)), String::new()),
        Step::Failed(reason) => Status::Failed {
            id: id.clone(),
            reason: reason.clone(),
        },
    }
}

fn request_noun(request: RequestKind) -> &'static str {
    match request {
        RequestKind::Create => "create",
        RequestKind::Update => "update",
        RequestKind::Delete => "delete",
    }
}

/// The wall-clock time of day for plain progress lines.
fn clock() -> String {
    time_of_day(time::OffsetDateTime::now_utc())
}

#[cfg(test)]
mod tests {
    use clusterform_model::Action;

    use super::*;

    fn waiting(seconds: u64) -> ProgressEvent {
        ProgressEvent {
            address: clusterform_testkit::address("train01"),
            action: Action::Create,
            elapsed: Duration::from_secs(seconds),
            step: Step::Waiting {
                state: Some("PROVISIONING".into()),
                message: Some("Creating node pool login".into()),
                operation: "operations/1".into(),
            },
        }
    }

    #[test]
    fn the_elapsed_time_is_rendered_but_not_part_of_the_status() {
        let (early, late) = (waiting(12), waiting(13));
        assert_eq!(
            describe(&early, ClusterNames::default()),
            describe(&late, ClusterNames::default())
        );
        assert_eq!(
            describe(&early, ClusterNames::default()).render(early.elapsed),
            "train01: creating… [12s] PROVISIONING — Creating node pool login"
        );
    }

    #[test]
    fn an_unchanged_plain_line_is_printed_again_after_a_minute_only() {
        let second = Duration::from_secs(1);
        assert_eq!(plain_line(true, false, second), Some(""));
        assert_eq!(plain_line(false, true, second), Some(""));
        assert_eq!(plain_line(false, false, 59 * second), None);
        assert_eq!(
            plain_line(false, false, STILL_RUNNING_EVERY),
            Some(" (still running)")
        );
    }

    #[test]
    fn an_interrupted_action_is_not_a_failure() {
        let interrupted = Step::Failed(ExecError::Cancelled.to_string());
        assert!(is_interruption(&interrupted));
        assert!(!is_interruption(&Step::Failed("quota".into())));
    }

    #[test]
    fn a_failure_says_how_long_it_took() {
        let failed = Status::Failed {
            id: "train01".into(),
            reason: "quota".into(),
        };
        assert_eq!(
            failed.render(Duration::from_secs(7)),
            "train01: FAILED after 7s: quota"
        );
    }
}
