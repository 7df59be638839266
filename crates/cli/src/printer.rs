//! The one printer: every byte the binary writes to stdout or stderr goes through here, so
//! colour, `--quiet` and the error format are decided in one place.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::IsTerminal;

use console::style;

use crate::cli::GlobalArgs;
use crate::error::CliError;

/// Writes results to stdout and messages to stderr.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    color: bool,
    quiet: bool,
    stdout_terminal: bool,
}

impl Printer {
    /// Colour only on a terminal, never with `--no-color` or `NO_COLOR`.
    pub fn new(global: &GlobalArgs) -> Self {
        let stdout_terminal = std::io::stdout().is_terminal();
        let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = stdout_terminal && !global.no_color && !no_color_env;
        console::set_colors_enabled(color);
        console::set_colors_enabled_stderr(color && std::io::stderr().is_terminal());
        Self {
            color,
            quiet: global.quiet,
            stdout_terminal,
        }
    }

    /// Whether output may be coloured.
    pub fn color(&self) -> bool {
        self.color
    }

    /// Whether `--quiet` was given.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// Whether stdout is a terminal (live progress bars) or a pipe (plain lines).
    pub fn is_terminal(&self) -> bool {
        self.stdout_terminal
    }

    /// A result the user asked for (a plan, JSON, HCL): printed even with `--quiet`.
    pub fn result(&self, text: &str) {
        if text.ends_with('\n') {
            print!("{text}");
        } else {
            println!("{text}");
        }
    }

    /// Progress and commentary: suppressed by `--quiet`.
    pub fn info(&self, text: &str) {
        if !self.quiet {
            println!("{text}");
        }
    }

    /// A success line in bold green.
    pub fn success(&self, text: &str) {
        if !self.quiet {
            println!("{}", style(text).green().bold());
        }
    }

    /// A warning on stderr.
    pub fn warn(&self, text: &str) {
        eprintln!("{} {text}", style("Warning:").yellow().bold());
    }

    /// Pre-rendered diagnostics or other text for stderr.
    pub fn stderr(&self, text: &str) {
        if text.ends_with('\n') {
            eprint!("{text}");
        } else {
            eprintln!("{text}");
        }
    }

    /// An error, once, with its hint: never a backtrace or a `Debug` dump.
    pub fn error(&self, error: &CliError) {
        match error {
            CliError::Diagnostics(diagnostics) => {
                self.stderr(&diagnostics.render(self.color));
                return;
            }
            CliError::AlreadyReported => return,
            _ => {}
        }
        eprintln!("{} {error}", style("Error:").red().bold());
        if let Some(hint) = error.hint() {
            eprintln!("  {} {hint}", style("hint:").cyan());
        }
    }
}
