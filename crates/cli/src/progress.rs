//! Live progress of an apply: one line per cluster with its action, elapsed time, state and the
//! operation's progress message — an indicatif spinner per cluster on a terminal, plain
//! timestamped lines (only when something changes) otherwise.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use clusterform_executor::{ProgressEvent, ProgressSink, Step};
use clusterform_model::ClusterName;
use clusterform_model::rest::RequestKind;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::printer::Printer;
use clusterform::views::actions::{done_verb, verb};

/// Shows the executor's progress events.
#[derive(Debug)]
pub struct ApplyProgress {
    printer: Printer,
    bars: Option<MultiProgress>,
    clusters: Mutex<HashMap<ClusterName, ClusterLine>>,
}

#[derive(Debug)]
struct ClusterLine {
    bar: Option<ProgressBar>,
    last_text: String,
}

impl ApplyProgress {
    /// Bars on a terminal (unless `--quiet`), plain lines otherwise.
    pub fn new(printer: Printer) -> Self {
        let bars = (printer.is_terminal() && !printer.quiet())
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stdout()));
        Self {
            printer,
            bars,
            clusters: Mutex::new(HashMap::new()),
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

impl ProgressSink for ApplyProgress {
    fn event(&self, event: &ProgressEvent) {
        let text = describe(event);
        let finished = matches!(event.step, Step::Finished | Step::Failed(_));
        let mut clusters = self.clusters.lock().unwrap_or_else(|e| e.into_inner());
        let line = clusters
            .entry(event.address.clone())
            .or_insert_with(|| ClusterLine {
                bar: self.new_bar(),
                last_text: String::new(),
            });
        match &line.bar {
            Some(bar) if finished => bar.finish_with_message(text),
            Some(bar) => bar.set_message(text),
            None => {
                let without_time = strip_elapsed(&text);
                if without_time != line.last_text || finished {
                    self.printer.info(&format!("[{}] {text}", clock()));
                    line.last_text = without_time;
                }
            }
        }
    }
}

/// `train01: creating… [12s] PROVISIONING — Creating node pool login`.
fn describe(event: &ProgressEvent) -> String {
    let id = &event.address.cluster_id;
    let elapsed = format!("[{}s]", event.elapsed.as_secs());
    match &event.step {
        Step::Started => format!("{id}: {}… {elapsed}", verb(event.action)),
        Step::Resumed { operation } => {
            format!("{id}: waiting for {operation}, started by an earlier run… {elapsed}")
        }
        Step::Settling { state } => {
            format!("{id}: waiting for the cluster to leave {state}… {elapsed}")
        }
        Step::Submitted { request, .. } => {
            format!(
                "{id}: {} request accepted {elapsed}",
                request_noun(*request)
            )
        }
        Step::Waiting { state, message, .. } => {
            let mut text = format!("{id}: {}… {elapsed}", verb(event.action));
            if let Some(state) = state {
                text.push_str(&format!(" {state}"));
            }
            if let Some(message) = message {
                text.push_str(&format!(" — {message}"));
            }
            text
        }
        Step::StepDone { request } => {
            format!("{id}: {} done {elapsed}", request_noun(*request))
        }
        Step::Finished => format!("{id}: {} {elapsed}", done_verb(event.action)),
        Step::Failed(reason) => {
            format!("{id}: FAILED after {}s: {reason}", event.elapsed.as_secs())
        }
    }
}

fn strip_elapsed(text: &str) -> String {
    match (text.find('['), text.find("s]")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &text[..start], &text[end + 2..])
        }
        _ => text.to_owned(),
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
    let now = time::OffsetDateTime::now_utc();
    format!("{:02}:{:02}:{:02}", now.hour(), now.minute(), now.second())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_time_is_ignored_when_deciding_to_print() {
        assert_eq!(
            strip_elapsed("train01: creating… [12s] PROVISIONING"),
            "train01: creating…  PROVISIONING"
        );
        assert_eq!(
            strip_elapsed("train01: creating… [13s] PROVISIONING"),
            strip_elapsed("train01: creating… [12s] PROVISIONING")
        );
    }
}
