//! Keeping sensitive values out of diagnostics: every text of a `sensitive = true` variable's
//! value (as given on the command line, in the environment or a variables file, and as
//! converted) is replaced by `(sensitive value)` in messages and hints, as Terraform shows
//! it, and masked with `*` in the source texts that snippets quote (the same byte length, so
//! every span still points where it did).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::diagnostic::{CommandLineReason, Diagnostic, capped_quote, capped_quotes};

/// What a message shows instead of a sensitive value.
pub const SENSITIVE_VALUE: &str = "(sensitive value)";

/// Texts shorter than this are not searched for: a one- or two-character value (`1`, `on`)
/// would blank out ordinary words and numbers of every message, and reveals next to nothing.
const SHORTEST_SECRET: usize = 3;

/// The secret texts of one load, longest first (so a secret that contains another is replaced
/// whole).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redaction {
    secrets: Vec<String>,
}

/// Says how many texts it hides, never which.
impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redaction({} texts)", self.secrets.len())
    }
}

impl Redaction {
    /// `text` with every secret replaced by [`SENSITIVE_VALUE`]; borrowed when none is in it.
    pub fn hide<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self
            .secrets
            .iter()
            .any(|secret| text.contains(secret.as_str()))
        {
            std::borrow::Cow::Owned(self.text(text))
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|s| s.chars().count() >= SHORTEST_SECRET)
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Self { secrets }
    }

    /// The diagnostic as shown: every secret replaced in its message, hint and reason, and
    /// long quoted values cut ([`capped_quotes`]).
    pub(crate) fn diagnostic(&self, mut diagnostic: Diagnostic) -> Diagnostic {
        diagnostic.message = capped_quotes(&self.text(&diagnostic.message));
        diagnostic.hint = diagnostic.hint.map(|hint| capped_quotes(&self.text(&hint)));
        diagnostic.reason = diagnostic.reason.map(|reason| self.reason(reason));
        diagnostic
    }

    /// The texts of a reason with every secret replaced, and cut as the binary's wording shows
    /// them: the path it quotes, and the problem it ends with as a message. Variable names are
    /// identifiers, shown whole.
    fn reason(&self, reason: CommandLineReason) -> CommandLineReason {
        match reason {
            CommandLineReason::FileForDirectory { parent } => CommandLineReason::FileForDirectory {
                parent: capped_quote(&self.text(&parent)),
            },
            CommandLineReason::MissingValue { variable } => CommandLineReason::MissingValue {
                variable: self.text(&variable),
            },
            CommandLineReason::UndeclaredVariable { variable } => {
                CommandLineReason::UndeclaredVariable {
                    variable: self.text(&variable),
                }
            }
            CommandLineReason::InvalidValue { variable, problem } => {
                CommandLineReason::InvalidValue {
                    variable: self.text(&variable),
                    problem: capped_quotes(&self.text(&problem)),
                }
            }
            other => other,
        }
    }

    /// Every source text with each secret masked in place.
    pub(crate) fn sources(
        &self,
        sources: BTreeMap<PathBuf, Arc<str>>,
    ) -> BTreeMap<PathBuf, Arc<str>> {
        if self.secrets.is_empty() {
            return sources;
        }
        sources
            .into_iter()
            .map(|(path, text)| {
                let masked = self.secrets.iter().fold(text.to_string(), |text, secret| {
                    text.replace(secret.as_str(), &"*".repeat(secret.len()))
                });
                (path, Arc::from(masked))
            })
            .collect()
    }

    fn text(&self, text: &str) -> String {
        self.secrets.iter().fold(text.to_owned(), |text, secret| {
            text.replace(secret.as_str(), SENSITIVE_VALUE)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_replaced_longest_first_and_short_texts_are_left() {
        let redaction =
            Redaction::new(["hunter2".to_owned(), "hunter22".to_owned(), "7".to_owned()]);
        assert_eq!(
            redaction.text("cannot convert \"hunter22\" (7 tries)"),
            "cannot convert \"(sensitive value)\" (7 tries)"
        );
        let sources =
            BTreeMap::from([(PathBuf::from("v.cfvars"), Arc::from("p = \"hunter22\"\n"))]);
        let masked = redaction.sources(sources);
        assert_eq!(&*masked[&PathBuf::from("v.cfvars")], "p = \"********\"\n");
    }
}
