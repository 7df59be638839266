//! Canonical formatting of HCL source, in the manner of `terraform fmt`: the file must parse;
//! then every line is re-indented by two spaces per open bracket, `=` of consecutive
//! single-line attributes at the same depth is aligned, runs of blank lines collapse to one,
//! trailing whitespace goes, and the file ends with one newline. Comments stay where they
//! are (re-indented); heredoc bodies and `/* */` comment bodies are kept byte for byte.
//! Formatting is line based, so it is idempotent by construction: a formatted file has
//! nothing left to move.

use std::path::Path;

use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile};

/// Reads a file to format it, by the rules the loader reads configuration files by: a regular
/// file (after following links) of at most [`crate::MAX_SOURCE_BYTES`] bytes of UTF-8. A
/// device, FIFO, socket or directory is refused before it is opened, so this never blocks.
///
/// # Errors
///
/// Why the file cannot be read, as a diagnostic naming it.
pub fn read_source_to_format(file: &Path) -> Result<String, Diagnostics> {
    crate::language::source::read_source(file, file.to_path_buf())
        .map(|source| source.text.to_string())
        .map_err(|diagnostic| only(*diagnostic, None))
}

/// Formats HCL source; errors when it does not parse.
///
/// # Errors
///
/// The syntax error, as diagnostics pointing into `file`.
pub fn format_source(source: &str, file: &Path) -> Result<String, Diagnostics> {
    let parsed = SourceFile::new(file.to_path_buf(), source.into());
    if let Err(diagnostic) = crate::language::source::parse(&parsed) {
        return Err(only(*diagnostic, Some(&parsed)));
    }
    Ok(render(&classify(source)))
}

/// `diagnostic` alone, with the text of the file it points into when there is one.
fn only(diagnostic: Diagnostic, source: Option<&SourceFile>) -> Diagnostics {
    let mut diagnostics = Diagnostics {
        items: vec![diagnostic],
        ..Diagnostics::default()
    };
    if let Some(source) = source {
        diagnostics
            .sources
            .insert(source.path.clone(), source.text.clone());
    }
    diagnostics
}

/// One input line, classified.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Blank,
    /// Kept byte for byte (inside a heredoc or a block comment).
    Verbatim(String),
    /// `key = rest` at an indentation depth.
    Attribute {
        depth: usize,
        key: String,
        rest: String,
    },
    /// Any other code or comment line.
    Code {
        depth: usize,
        text: String,
    },
}

/// What an unfinished construct at the end of a line is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Frame {
    Bracket,
    Interpolation,
    Quoted,
}

#[derive(Debug, Default)]
struct Scanner {
    frames: Vec<Frame>,
    heredoc: Option<String>,
    block_comment: bool,
}

impl Scanner {
    fn bracket_depth(&self) -> usize {
        self.frames.iter().filter(|f| **f == Frame::Bracket).count()
    }

    fn in_quoted(&self) -> bool {
        self.frames.last() == Some(&Frame::Quoted)
    }

    /// Updates the state with one code line.
    fn scan(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Only ASCII bytes matter; positions inside a multi-byte character are skipped.
            let Some(rest) = line.get(i..) else {
                i += 1;
                continue;
            };
            if self.in_quoted() {
                match bytes[i] {
                    b'\\' => i += 1,
                    b'"' => {
                        self.frames.pop();
                    }
                    b'$' | b'%' if rest[1..].starts_with('{') && !rest[1..].starts_with("{{") => {
                        if i > 0 && bytes[i - 1] == bytes[i] {
                            // `$${` and `%%{` are escapes, not interpolations.
                        } else {
                            self.frames.push(Frame::Interpolation);
                            i += 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
                continue;
            }
            if rest.starts_with('#') || rest.starts_with("//") {
                return;
            }
            if let Some(comment) = rest.strip_prefix("/*") {
                match comment.find("*/") {
                    Some(end) => i += end + 4,
                    None => {
                        self.block_comment = true;
                        return;
                    }
                }
                continue;
            }
            if let Some(terminator) = heredoc_start(rest) {
                self.heredoc = Some(terminator);
                return;
            }
            match bytes[i] {
                b'"' => self.frames.push(Frame::Quoted),
                b'{' | b'[' | b'(' => self.frames.push(Frame::Bracket),
                b'}' | b']' | b')' => {
                    self.frames.pop();
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The terminator of a heredoc that starts here (`<<EOF` or `<<-EOF` ending the line).
fn heredoc_start(rest: &str) -> Option<String> {
    let marker = rest.strip_prefix("<<")?;
    let name = marker.strip_prefix('-').unwrap_or(marker).trim_end();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    valid.then(|| name.to_owned())
}

/// Splits `key = rest` when the line is an attribute.
fn attribute(text: &str) -> Option<(String, String)> {
    let key_len = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        .map_or(text.len(), |(i, _)| i);
    if key_len == 0 || !text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return None;
    }
    let after = text[key_len..].trim_start();
    let value = after.strip_prefix('=')?;
    if value.starts_with(['=', '>']) {
        return None;
    }
    Some((text[..key_len].to_owned(), value.trim().to_owned()))
}

fn leading_closers(text: &str) -> usize {
    text.chars()
        .take_while(|c| matches!(c, '}' | ']' | ')'))
        .count()
}

fn classify(source: &str) -> Vec<Line> {
    let mut scanner = Scanner::default();
    let mut lines = Vec::new();
    // Split on `\n` only: a `\r` inside a heredoc or a quoted string is part of its value and
    // is kept; everywhere else a CRLF line ending becomes `\n`.
    for exact in source.split_terminator('\n') {
        let raw = exact.strip_suffix('\r').unwrap_or(exact);
        if let Some(terminator) = &scanner.heredoc {
            if raw.trim() == terminator {
                scanner.heredoc = None;
                lines.push(Line::Verbatim(raw.to_owned()));
            } else {
                lines.push(Line::Verbatim(exact.to_owned()));
            }
            continue;
        }
        if scanner.block_comment {
            if raw.contains("*/") {
                scanner.block_comment = false;
            }
            lines.push(Line::Verbatim(raw.trim_end().to_owned()));
            continue;
        }
        if scanner.in_quoted() {
            scanner.scan(raw);
            lines.push(Line::Verbatim(exact.to_owned()));
            continue;
        }
        let text = raw.trim();
        if text.is_empty() {
            lines.push(Line::Blank);
            continue;
        }
        let depth = scanner
            .bracket_depth()
            .saturating_sub(leading_closers(text));
        let starts_in_interpolation = scanner.frames.last() == Some(&Frame::Interpolation);
        scanner.scan(text);
        lines.push(match attribute(text) {
            Some((key, rest)) if !starts_in_interpolation => Line::Attribute { depth, key, rest },
            _ => Line::Code {
                depth,
                text: text.to_owned(),
            },
        });
    }
    lines
}

fn render(lines: &[Line]) -> String {
    let mut out = String::new();
    let mut index = 0;
    let mut pending_blank = false;
    while index < lines.len() {
        if let Line::Blank = lines[index] {
            pending_blank = !out.is_empty();
            index += 1;
            continue;
        }
        if pending_blank {
            out.push('\n');
            pending_blank = false;
        }
        match &lines[index] {
            Line::Attribute { depth, .. } => {
                let group_end = attribute_group_end(lines, index, *depth);
                render_group(&lines[index..group_end], &mut out);
                index = group_end;
                continue;
            }
            Line::Code { depth, text } => {
                out.push_str(&"  ".repeat(*depth));
                out.push_str(text);
            }
            Line::Verbatim(text) => out.push_str(text),
            Line::Blank => {}
        }
        out.push('\n');
        index += 1;
    }
    out
}

/// The end of the run of attribute lines at `depth` that starts at `start`.
fn attribute_group_end(lines: &[Line], start: usize, depth: usize) -> usize {
    lines[start..]
        .iter()
        .position(|line| !matches!(line, Line::Attribute { depth: d, .. } if *d == depth))
        .map_or(lines.len(), |offset| start + offset)
}

fn render_group(group: &[Line], out: &mut String) {
    let width = group
        .iter()
        .map(|line| match line {
            Line::Attribute { key, .. } => key.chars().count(),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    for line in group {
        if let Line::Attribute { depth, key, rest } = line {
            out.push_str(&"  ".repeat(*depth));
            out.push_str(&format!("{key:<width$} = {rest}"));
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(text: &str) -> String {
        format_source(text, Path::new("t.hcl")).unwrap()
    }

    #[test]
    fn aligns_and_indents() {
        assert_eq!(
            fmt("a {\nx = 1\n    longer_name   =   \"v\" # note\n\n\n\nb {\n}\n}"),
            "a {\n  x           = 1\n  longer_name = \"v\" # note\n\n  b {\n  }\n}\n"
        );
    }

    #[test]
    fn heredocs_and_strings_are_untouched() {
        let text =
            "a {\n  s = <<-EOT\n      keep   this\n    EOT\n  t = \"{ [ ( \"\n  u = \"${x}\"\n}\n";
        assert_eq!(fmt(text), text);
    }

    #[test]
    fn multibyte_text_is_safe() {
        let text = "a {\n  s = \"é ü ${\"ß\"}\" # ça\n}\n";
        assert_eq!(fmt(text), text);
    }

    #[test]
    fn escaped_interpolations_do_not_open_brackets() {
        let text = "a {\n  s = \"$${x}\"\n  t = 1\n}\n";
        assert_eq!(fmt(text), text);
    }
}
