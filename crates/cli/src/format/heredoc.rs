//! Multi-line strings (startup, prolog and epilog scripts) as Terraform shows them: a `<<-EOT`
//! heredoc whose lines are diffed one by one, with a few unchanged lines of context around each
//! change and the rest counted. This module decides the lines; the plan text indents and
//! colours them.

use similar::{ChangeTag, TextDiff};

/// Unchanged lines shown on each side of a changed line.
const CONTEXT_LINES: usize = 3;

/// One line of a heredoc's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A line shown as it is: unchanged, or part of a value created or deleted whole.
    Plain(String),
    /// A line removed (`-`) or added (`+`).
    Changed(&'static str, String),
    /// A run of unchanged lines far from any change.
    Hidden(usize),
}

/// Whether a value is a string that spans several lines.
pub fn is_multiline(value: &serde_json::Value) -> bool {
    value.as_str().is_some_and(|text| text.contains('\n'))
}

/// The body of the heredoc showing `before -> after`: the whole text when one side is absent,
/// a line diff otherwise.
pub fn body(before: Option<&str>, after: Option<&str>) -> Vec<Line> {
    match (before, after) {
        (Some(before), Some(after)) => diff(before, after),
        (Some(text), None) | (None, Some(text)) => {
            text.lines().map(|line| Line::Plain(escape(line))).collect()
        }
        (None, None) => Vec::new(),
    }
}

/// HCL's template sequences escaped (`$${`, `%%{`): all a heredoc line needs to read back as
/// written, and what a quoted string needs beyond JSON's escapes.
pub fn escape(line: &str) -> String {
    line.replace("${", "$${").replace("%{", "%%{")
}

fn diff(before: &str, after: &str) -> Vec<Line> {
    let text = TextDiff::from_lines(before, after);
    let changes: Vec<(ChangeTag, String)> = text
        .iter_all_changes()
        .map(|change| {
            let line = change.value();
            let line = line.strip_suffix('\n').unwrap_or(line);
            (
                change.tag(),
                escape(line.strip_suffix('\r').unwrap_or(line)),
            )
        })
        .collect();
    let near_a_change = near_a_change(&changes);
    let mut lines = Vec::new();
    for ((tag, line), shown) in changes.into_iter().zip(near_a_change) {
        match tag {
            ChangeTag::Delete => lines.push(Line::Changed("-", line)),
            ChangeTag::Insert => lines.push(Line::Changed("+", line)),
            ChangeTag::Equal if shown => lines.push(Line::Plain(line)),
            ChangeTag::Equal => match lines.last_mut() {
                Some(Line::Hidden(count)) => *count += 1,
                _ => lines.push(Line::Hidden(1)),
            },
        }
    }
    lines
}

/// For each line, whether it lies within [`CONTEXT_LINES`] of a changed line.
fn near_a_change(changes: &[(ChangeTag, String)]) -> Vec<bool> {
    let mut near = vec![false; changes.len()];
    for (index, _) in changes
        .iter()
        .enumerate()
        .filter(|(_, (tag, _))| *tag != ChangeTag::Equal)
    {
        let first = index.saturating_sub(CONTEXT_LINES);
        let last = (index + CONTEXT_LINES).min(changes.len() - 1);
        near[first..=last].fill(true);
    }
    near
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Line {
        Line::Plain(text.to_owned())
    }

    #[test]
    fn a_changed_line_is_shown_with_its_context_and_the_rest_is_counted() {
        let before = "#!/bin/bash\na\nb\nc\nd\ne\napt-get install -y foo\nf\necho done\n";
        let after = before.replace("foo", "bar");
        assert_eq!(
            body(Some(before), Some(&after)),
            [
                Line::Hidden(3),
                plain("c"),
                plain("d"),
                plain("e"),
                Line::Changed("-", "apt-get install -y foo".into()),
                Line::Changed("+", "apt-get install -y bar".into()),
                plain("f"),
                plain("echo done"),
            ]
        );
    }

    #[test]
    fn a_value_created_or_deleted_whole_is_shown_whole() {
        let lines = vec![plain("#!/bin/bash"), plain("echo hi")];
        assert_eq!(body(None, Some("#!/bin/bash\necho hi\n")), lines);
        assert_eq!(body(Some("#!/bin/bash\necho hi"), None), lines);
    }

    #[test]
    fn only_template_sequences_are_escaped() {
        assert_eq!(
            escape(r#"echo "${HOME}" %{x} \n $HOME 100%"#),
            r#"echo "$${HOME}" %%{x} \n $HOME 100%"#
        );
    }

    #[test]
    fn only_strings_with_a_line_break_are_multiline() {
        assert!(is_multiline(&serde_json::json!("a\nb")));
        assert!(!is_multiline(&serde_json::json!("a b")));
        assert!(!is_multiline(&serde_json::json!(["a\nb"])));
    }
}
