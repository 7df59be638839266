//! Diagnostics: one problem with its file, line, column, byte range and hint, the collection a
//! failed load returns, and their rendering (rustc/Terraform style through miette's graphical
//! handler, or one line per problem).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};

/// Diagnostics whose range lies further into its line than this many bytes are rendered
/// without a snippet (even with every byte a tab, miette's columns stay far below 65,535).
const MAX_SNIPPET_COLUMN_BYTES: usize = 4096;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The configuration cannot be used.
    Error,
    /// Worth fixing, but the configuration is usable.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Error => "error",
            Self::Warning => "warning",
        })
    }
}

/// One problem found in a configuration.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
    /// The file, relative to the configuration directory (or as given for `--var-file`, or a
    /// pseudo-name such as `<command line>` for values that come from outside any file).
    pub file: PathBuf,
    /// 1-based line; 0 when the problem has no position.
    pub line: usize,
    /// 1-based column in characters; 0 when the problem has no position.
    pub column: usize,
    /// Byte range in the file.
    pub range: Option<Range<usize>>,
    /// How to fix it.
    pub hint: Option<String>,
    /// Set when the problem's wording names the command line, which only the binary words:
    /// `message` and `hint` then say it without the binary's flags and commands.
    #[serde(skip)]
    pub reason: Option<CommandLineReason>,
}

/// A problem whose remedy names the command line (a flag, a command, the directory argument):
/// the binary that knows them words its message or hint from this.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandLineReason {
    /// The configuration directory holds no `*.hcl` file.
    NoConfigurationFiles,
    /// A file was given where the configuration directory goes.
    FileForDirectory {
        /// The directory that holds the file.
        parent: String,
    },
    /// A variables file is named `*.hcl`, so it is read as configuration.
    MisnamedVarFile,
    /// A declared variable has no value.
    MissingValue {
        /// The variable's name.
        variable: String,
    },
    /// A command-line value is given for a variable that no block declares.
    UndeclaredVariable {
        /// The name the value is given for.
        variable: String,
    },
    /// A command-line value does not fit its variable.
    InvalidValue {
        /// The variable's name.
        variable: String,
        /// Why it does not fit.
        problem: String,
    },
    /// A value a saved plan recorded does not fit its variable.
    InvalidSavedValue,
}

impl Diagnostic {
    /// This diagnostic, worded by the binary from `reason`.
    pub(crate) fn because(self, reason: CommandLineReason) -> Self {
        Self {
            reason: Some(reason),
            ..self
        }
    }

    /// Renders the diagnostic with the source line and the span underlined when `source` is
    /// the text of its file; `color` adds ANSI colours.
    pub fn render(&self, source: Option<&str>, color: bool) -> String {
        let mut report =
            MietteDiagnostic::new(self.message.clone()).with_severity(match self.severity {
                Severity::Error => miette::Severity::Error,
                Severity::Warning => miette::Severity::Warning,
            });
        if let Some(hint) = &self.hint {
            report = report.with_help(hint.clone());
        }
        let source =
            source.filter(|text| self.range_fits(text) && self.range_is_near_line_starts(text));
        let report = match (source, &self.range) {
            (Some(text), Some(range)) => {
                let label = LabeledSpan::new_primary_with_span(None, range.clone());
                Report::new(report.with_label(label)).with_source_code(
                    NamedSource::new(self.file.display().to_string(), text.to_owned())
                        .with_language("hcl"),
                )
            }
            _ => Report::new(report.with_code(self.location())),
        };
        let theme = if color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        let mut out = String::new();
        let rendered = GraphicalReportHandler::new_themed(theme)
            .with_width(100)
            .render_report(&mut out, report.as_ref());
        if rendered.is_err() {
            return self.to_string();
        }
        out
    }

    /// `file:line:col`, or just the file when there is no position.
    pub fn location(&self) -> String {
        if self.line == 0 {
            self.file.display().to_string()
        } else {
            format!("{}:{}:{}", self.file.display(), self.line, self.column)
        }
    }

    /// Whether the range starts and ends close enough to the start of their lines for a
    /// snippet: miette pads its underline with a format width, which panics past 65,535
    /// columns, and a snippet of a line that long would not help anyway.
    fn range_is_near_line_starts(&self, text: &str) -> bool {
        let near = |offset: usize| {
            let line_start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
            offset - line_start <= MAX_SNIPPET_COLUMN_BYTES
        };
        self.range
            .as_ref()
            .is_some_and(|range| near(range.start) && near(range.end))
    }

    fn range_fits(&self, text: &str) -> bool {
        self.range.as_ref().is_some_and(|range| {
            range.start <= range.end
                && range.end <= text.len()
                && text.is_char_boundary(range.start)
                && text.is_char_boundary(range.end)
        })
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.location(),
            self.severity,
            self.message
        )
    }
}

/// A variable that has no default and received no value: the CLI may prompt for it on a
/// terminal and load again with the answer in `VariableInputs::cli`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MissingVariable {
    /// The variable's name.
    pub name: String,
    /// Its `description`, to show in the prompt.
    pub description: Option<String>,
    /// Whether the answer must not be echoed.
    pub sensitive: bool,
}

/// Everything wrong with a configuration: what a failed [`load`](crate::load) returns.
#[derive(Debug, Clone, Default, serde::Serialize, thiserror::Error)]
#[error("{}", self.summary())]
pub struct Diagnostics {
    /// Every problem, errors and warnings, in file and position order.
    pub items: Vec<Diagnostic>,
    /// Variables without a value (each also has an error in `items`).
    pub missing_variables: Vec<MissingVariable>,
    /// The text of every file a diagnostic may point into, for rendering.
    #[serde(skip)]
    pub sources: BTreeMap<PathBuf, Arc<str>>,
}

/// The longest quoted value a message shows whole: a diagnostic quotes what it refuses, and a
/// refused value may be megabytes (a generated string, a file's content).
const MAX_QUOTED_CHARS: usize = 200;

/// `text` with every `` `…` `` quote longer than [`MAX_QUOTED_CHARS`] cut to its start, with
/// how much was left out.
pub(crate) fn capped_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * MAX_QUOTED_CHARS));
    let mut parts = text.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (index, part) in parts.enumerate() {
        out.push('`');
        let quoted = index % 2 == 0;
        if quoted {
            out.push_str(&capped_quote(part));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// A value a message quotes, cut to its start when longer than [`MAX_QUOTED_CHARS`].
pub(crate) fn capped_quote(quoted: &str) -> String {
    let length = quoted.chars().count();
    if length <= MAX_QUOTED_CHARS {
        return quoted.to_owned();
    }
    let mut out: String = quoted.chars().take(MAX_QUOTED_CHARS).collect();
    out.push_str(&format!(
        "… ({} more characters)",
        length - MAX_QUOTED_CHARS
    ));
    out
}

impl Diagnostics {
    /// Every diagnostic rendered with its source snippet, separated by blank lines.
    pub fn render(&self, color: bool) -> String {
        self.items
            .iter()
            .map(|d| d.render(self.sources.get(&d.file).map(|s| &**s), color))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn summary(&self) -> String {
        self.items
            .iter()
            .map(Diagnostic::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A file's text with the offsets of its line starts, to turn byte offsets into positions.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    /// Relative to the configuration directory.
    pub path: PathBuf,
    pub text: Arc<str>,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(path: PathBuf, text: Arc<str>) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and character column of a byte offset (clamped to the text).
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line, column + 1)
    }

    /// A diagnostic pointing at `range` in this file.
    pub fn diagnostic(
        &self,
        severity: Severity,
        range: Option<Range<usize>>,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Diagnostic {
        let (line, column) = range
            .as_ref()
            .map_or((0, 0), |range| self.position(range.start));
        Diagnostic {
            severity,
            message: message.into(),
            file: self.path.clone(),
            line,
            column,
            range,
            hint,
            reason: None,
        }
    }

    /// An error pointing at `range`.
    pub fn error(
        &self,
        range: Option<Range<usize>>,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Diagnostic {
        self.diagnostic(Severity::Error, range, message, hint)
    }
}

/// An error that has no place in any file (a `--var` flag, an environment variable).
pub(crate) fn detached_error(
    origin: &Path,
    message: impl Into<String>,
    hint: Option<String>,
) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        message: message.into(),
        file: origin.to_path_buf(),
        line: 0,
        column: 0,
        range: None,
        hint,
        reason: None,
    }
}

/// A "did you mean" hint: the candidate closest to `name`, when it is close enough.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(name, candidates).map(|candidate| format!("did you mean `{candidate}`?"))
}

/// The candidate closest to `name` (a typo of it), when one is close enough to be meant.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// The hint for `name`, which is none of `allowed`: the closest of them, else all of them.
pub(crate) fn closest_or_all(name: &str, allowed: &[&str]) -> String {
    did_you_mean(name, allowed.iter().copied())
        .unwrap_or_else(|| format!("expected one of: {}", allowed.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let file = SourceFile::new("a.hcl".into(), "ab\nçd = 1\n".into());
        assert_eq!(file.position(0), (1, 1));
        assert_eq!(file.position(3), (2, 1));
        assert_eq!(file.position(6), (2, 3));
        assert_eq!(file.position(1_000), (3, 1));
    }

    #[test]
    fn suggestions_need_a_close_name() {
        assert_eq!(
            did_you_mean("max_node_cont", ["min_node_count", "max_node_count"]),
            Some("did you mean `max_node_count`?".to_owned())
        );
        assert_eq!(did_you_mean("zzz", ["max_node_count"]), None);
    }

    #[test]
    fn display_is_one_line_per_diagnostic() {
        let file = SourceFile::new("main.hcl".into(), "x = 1\n".into());
        let diagnostics = Diagnostics {
            items: vec![
                file.error(Some(0..1), "first", None),
                file.error(Some(4..5), "second", None),
            ],
            ..Diagnostics::default()
        };
        assert_eq!(
            diagnostics.to_string(),
            "main.hcl:1:1: error: first\nmain.hcl:1:5: error: second"
        );
    }
}
