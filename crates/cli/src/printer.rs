//! The one printer: every byte the binary writes to stdout or stderr goes through here, so
//! colour, `--quiet`, which stream carries what, and the error style are decided in one place.
//!
//! stdout carries only what the user asked for ([`Printer::result`]: a plan, a JSON document,
//! HCL, a table, a diff), so that it can be piped or redirected into a file. Everything else —
//! progress, status, warnings, hints, errors — goes to stderr; `--quiet` silences all of it
//! but errors. Every error and warning has one shape, Terraform's: `Error: message` (or
//! `Warning: message`), then its detail lines and `hint:` indented under it.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::{Mutex, PoisonError, RwLock};

use clap::error::ErrorKind;
use clusterform_config::{Diagnostic, Redaction, Severity};
use console::style;
use indicatif::MultiProgress;

use crate::cli::GlobalArgs;
use crate::diagnostics;
use crate::error::CliError;
use crate::hints;
use clusterform::format::notes::{Level, Note};

/// The progress bars being drawn on stderr, if any. Their every redraw first erases the lines
/// they drew last, counted up from the cursor: a line printed under them would be erased in
/// their place, so stderr lines are printed above them instead ([`MultiProgress::suspend`]).
static LIVE_BARS: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// The sensitive values of the configuration this run loaded. A server's or an operation's
/// message may quote one (a `400` echoing a startup script), so every line on stderr, every
/// progress line and every JSON event hides them as diagnostics do; results the user asked for
/// (a plan's JSON, which holds the exact requests by design) do not.
static SECRETS: RwLock<Option<Redaction>> = RwLock::new(None);

/// From now on, nothing but results shows the texts `secrets` holds.
pub fn hide_from_now_on(secrets: Redaction) {
    *SECRETS.write().unwrap_or_else(PoisonError::into_inner) = Some(secrets);
}

/// `text` with the loaded configuration's sensitive values replaced by `(sensitive value)`.
pub fn without_secrets(text: &str) -> Cow<'_, str> {
    match &*SECRETS.read().unwrap_or_else(PoisonError::into_inner) {
        Some(secrets) => secrets.hide(text),
        None => Cow::Borrowed(text),
    }
}

/// Prints `text` on stderr, above the live progress bars if there are some.
fn to_stderr(text: &str) {
    let text = &*without_secrets(text);
    let bars = LIVE_BARS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let print = || {
        if text.ends_with('\n') {
            eprint!("{text}");
        } else {
            eprintln!("{text}");
        }
    };
    match bars {
        Some(bars) => bars.suspend(print),
        None => print(),
    }
}

/// Where `-v` logs go: stderr, each event above the live progress bars like every other stderr
/// line (written straight to stderr, a log line under the bars was erased by their next
/// redraw, or left a stale bar above it).
#[derive(Debug, Clone, Copy)]
pub struct LogWriter;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogEvent;

    fn make_writer(&'a self) -> LogEvent {
        LogEvent(Vec::new())
    }
}

/// One log event, gathered as the formatter writes it and printed whole when dropped.
#[derive(Debug)]
pub struct LogEvent(Vec<u8>);

impl std::io::Write for LogEvent {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogEvent {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            to_stderr(&String::from_utf8_lossy(&self.0));
        }
    }
}

/// Writes results to stdout and everything else to stderr.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    /// Colour for stdout: a terminal, no `--no-color`, no `NO_COLOR`.
    stdout_color: bool,
    /// Colour for stderr, decided the same way for its own stream.
    stderr_color: bool,
    /// Progress, status and success lines are not printed: `--quiet`, or stdout taken by
    /// `--json` events.
    quiet: bool,
    /// Warnings are not printed either: `--quiet` only. (`--json` never silences a warning.)
    quiet_warnings: bool,
    stderr_terminal: bool,
    /// Whether stdout is a terminal, which a live view redraws.
    stdout_terminal: bool,
}

impl Printer {
    /// Colour only on a terminal, never with `--no-color` or `NO_COLOR`; each stream is asked
    /// on its own, since one may be piped while the other is not.
    pub fn new(global: &GlobalArgs) -> Self {
        let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let may_color = !global.no_color && !no_color_env;
        let stdout_terminal = std::io::stdout().is_terminal();
        let stdout_color = may_color && stdout_terminal;
        let stderr_terminal = std::io::stderr().is_terminal();
        let stderr_color = may_color && stderr_terminal;
        console::set_colors_enabled(stdout_color);
        console::set_colors_enabled_stderr(stderr_color);
        Self {
            stdout_color,
            stderr_color,
            quiet: global.quiet,
            quiet_warnings: global.quiet,
            stderr_terminal,
            stdout_terminal,
        }
    }

    /// The printer of a run whose stdout carries JSON events: results uncoloured, no progress,
    /// status or success lines — but warnings and errors on stderr as ever (silenced only by
    /// `--quiet`), so that no run loses a warning because it speaks JSON.
    pub fn for_events(&self) -> Self {
        Self {
            stdout_color: false,
            quiet: true,
            ..*self
        }
    }

    /// Whether stdout is a terminal, where a live view redraws its report in place.
    pub fn stdout_is_terminal(&self) -> bool {
        self.stdout_terminal
    }

    /// Whether results on stdout may be coloured.
    pub fn color(&self) -> bool {
        self.stdout_color
    }

    /// Whether stderr may be coloured (also for `-v` logs).
    pub fn stderr_color(&self) -> bool {
        self.stderr_color
    }

    /// Whether progress is drawn as live bars on stderr (a terminal, no `--quiet`) rather than
    /// printed as plain lines.
    pub fn draws_progress_bars(&self) -> bool {
        self.stderr_terminal && !self.quiet
    }

    /// Progress bars are being drawn on stderr until [`Printer::bars_gone`]: lines printed
    /// meanwhile go above them.
    pub fn bars_drawn(&self, bars: &MultiProgress) {
        *LIVE_BARS.lock().unwrap_or_else(PoisonError::into_inner) = Some(bars.clone());
    }

    /// The progress bars of [`Printer::bars_drawn`] are no longer drawn.
    pub fn bars_gone(&self) {
        *LIVE_BARS.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// A result the user asked for (a plan, JSON, HCL, a table, a diff): stdout, even with
    /// `--quiet`.
    pub fn result(&self, text: &str) {
        if text.ends_with('\n') {
            print!("{text}");
        } else {
            println!("{text}");
        }
    }

    /// Whether `--quiet` was given.
    pub fn is_quiet(&self) -> bool {
        self.quiet_warnings
    }

    /// Progress and status: stderr, silenced by `--quiet`.
    pub fn info(&self, text: &str) {
        if !self.quiet {
            to_stderr(text);
        }
    }

    /// Why something is about to be deleted, when stdout is taken by `--json` events: stderr,
    /// even with `--quiet` (a deletion always says why).
    pub fn evidence(&self, text: &str) {
        to_stderr(text);
    }

    /// A success line in bold green: stderr, silenced by `--quiet`.
    pub fn success(&self, text: &str) {
        if !self.quiet {
            to_stderr(&style(text).green().bold().for_stderr().to_string());
        }
    }

    /// A note the user should see once per run (`Note: …`, written by the caller): stderr,
    /// silenced by `--quiet`, never by `--json`.
    pub fn note(&self, text: &str) {
        if !self.quiet_warnings {
            to_stderr(text);
        }
    }

    /// `Warning: text`: stderr, silenced by `--quiet` (never by `--json`).
    pub fn warn(&self, text: &str) {
        if !self.quiet_warnings {
            to_stderr(&diagnostics::header(
                Severity::Warning,
                text,
                self.stderr_color,
            ));
        }
    }

    /// `Warning: text` about running work a run kept or stops: stderr, even with `--quiet`
    /// and `--json`, since nobody may miss it.
    pub fn warn_about_work(&self, text: &str) {
        to_stderr(&diagnostics::header(
            Severity::Warning,
            text,
            self.stderr_color,
        ));
    }

    /// A configuration warning, with its file: stderr, silenced by `--quiet` (never by
    /// `--json`).
    pub fn warn_diagnostic(&self, warning: &Diagnostic) {
        if !self.quiet_warnings {
            to_stderr(&diagnostics::render(warning, None, self.stderr_color));
        }
    }

    /// A finding of the run that is an error but does not end it alone (a preflight error):
    /// stderr, never silenced. The run's error comes after.
    pub fn error_diagnostic(&self, error: &Diagnostic) {
        to_stderr(&diagnostics::render(error, None, self.stderr_color));
    }

    /// An error, once, with its hint: never a backtrace or a `Debug` dump.
    pub fn error(&self, error: &CliError) {
        self.error_in(error, None);
    }

    /// [`Printer::error`] of a command run on the configuration directory `dir`: the commands
    /// its hint names are given that directory ([`hints::in_directory`]).
    pub fn error_in(&self, error: &CliError, dir: Option<&Path>) {
        match error {
            CliError::Diagnostics(found) => {
                to_stderr(&diagnostics::render_all(found, self.stderr_color));
            }
            CliError::AlreadyReported | CliError::Interrupted => {}
            _ => to_stderr(&error_text(error, dir, self.stderr_color)),
        }
    }

    /// A command line clap refused, in the same style as every other error (clap's own
    /// suggestion kept as the hint). Help and version are no errors: clap prints them itself
    /// (`--help` and `--version` on stdout, the help for a missing command on stderr).
    pub fn usage_error(&self, error: &clap::Error) {
        match error.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                // Printing can only fail when the stream is closed, and then nobody is reading.
                let _ = error.print();
            }
            _ => to_stderr(&usage_error_text(
                &error.render().to_string(),
                self.stderr_color,
            )),
        }
    }
}

/// How the steps below the views (loading the configuration, the stack lock, the connection)
/// tell what they found: the command's view decides how it reaches the user (the JSON views
/// keep stdout for their document or events, `docs/events.md`); a command without a view
/// tells it through its printer.
pub trait Tell: Send + Sync {
    /// A run's note, worded by `format::notes`, as its level says.
    fn tell(&self, note: &Note);

    /// A warning of the configuration, located in its file.
    fn configuration_warning(&self, warning: &Diagnostic);
}

impl Tell for Printer {
    fn tell(&self, note: &Note) {
        let text = note.text();
        match note.level() {
            Level::Progress => self.info(&text),
            Level::Note => self.note(&format!("Note: {text}")),
            Level::Warning => self.warn(&text),
            Level::AboutWork => self.warn_about_work(&text),
        }
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.warn_diagnostic(warning);
    }
}

/// The first Ctrl-C of a run, in one line that says everything: the run's exit with
/// [`CliError::Interrupted`] prints nothing more. Printed by the Ctrl-C listeners, which
/// outlive every view, whatever the run speaks.
pub fn interrupted(command: &str) {
    to_stderr(&format!(
        "{} no longer waiting for operations; they keep running, and the next `clusterform \
         {command}` waits for them. Press Ctrl-C again to exit at once.",
        style("Interrupted:").yellow().bold().for_stderr()
    ));
}

/// A stack lock that Ctrl-C could not release, right before the process exits: never
/// silenced, since every later run of the stack waits for that lock until it is removed.
pub fn lock_left_behind(note: &Note) {
    to_stderr(&diagnostics::header(
        Severity::Warning,
        &note.text(),
        console::colors_enabled_stderr(),
    ));
}

/// `Error: message` and the `hint:` line.
fn error_text(error: &CliError, dir: Option<&Path>, color: bool) -> String {
    let mut text = diagnostics::header(Severity::Error, &error.to_string(), color);
    if let Some(hint) = error.hint() {
        text.push_str(&diagnostics::hint_line(
            &hints::in_directory(&hint, dir),
            color,
        ));
    }
    text
}

/// Clap's `error: message`, `tip: …`, `Usage: …` and `For more information…` lines as
/// `Error: message` with the rest indented under it, blank lines dropped and `tip:` called
/// `hint:` as in every other error.
fn usage_error_text(rendered: &str, color: bool) -> String {
    let mut lines = rendered.lines().filter(|line| !line.trim().is_empty());
    let first = lines.next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first);
    let mut text = diagnostics::header(Severity::Error, message, color);
    for line in lines {
        let line = line.trim();
        match line.strip_prefix("tip: ") {
            Some(tip) => text.push_str(&diagnostics::hint_line(tip, color)),
            None => text.push_str(&format!("  {line}\n")),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn usage_error(args: &[&str]) -> String {
        let argv = std::iter::once("clusterform").chain(args.iter().copied());
        let error = Cli::try_parse_from(argv).unwrap_err();
        usage_error_text(&error.render().to_string(), false)
    }

    #[test]
    fn an_unknown_flag_is_an_error_like_any_other() {
        insta::assert_snapshot!(usage_error(&["plan", "--bogus"]), @r"
        Error: unexpected argument '--bogus' found
          hint: to pass '--bogus' as a value, use '-- --bogus'
          Usage: clusterform plan [OPTIONS] [DIR]
          For more information, try '--help'.
        ");
    }

    #[test]
    fn a_misspelt_command_keeps_clap_s_suggestion() {
        insta::assert_snapshot!(usage_error(&["plna"]), @r"
        Error: unrecognized subcommand 'plna'
          hint: a similar subcommand exists: 'plan'
          Usage: clusterform [OPTIONS] <COMMAND>
          For more information, try '--help'.
        ");
    }

    #[test]
    fn an_api_error_has_its_hint_under_it() {
        let error = CliError::Exec(clusterform_executor::ExecError::Transport(
            clusterform_executor::TransportError::Api {
                status: Box::new(clusterform_model::Status {
                    code: 403,
                    message: "Permission denied on resource project acme-ml.".into(),
                    status: Some("PERMISSION_DENIED".into()),
                    details: vec![],
                }),
                method: "GET".into(),
                url: "https://aiplatform.googleapis.com/v1/projects/acme-ml".into(),
            },
        ));
        insta::assert_snapshot!(error_text(&error, None, false), @r"
        Error: GET https://aiplatform.googleapis.com/v1/projects/acme-ml failed: PERMISSION_DENIED (403): Permission denied on resource project acme-ml.
          hint: the caller needs aiplatform.modelDevelopmentClusters.* permissions on the project
        ");
    }

    #[test]
    fn detail_lines_sit_under_the_error() {
        let error = CliError::StalePlan(vec!["train01 changed".into(), "train02 is gone".into()]);
        insta::assert_snapshot!(error_text(&error, None, false), @r"
        Error: the saved plan is stale:
          train01 changed
          train02 is gone
          hint: run `clusterform plan --out FILE` again, review it, then apply the new plan
        ");
    }
}
