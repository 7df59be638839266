//! Reading and parsing configuration files: the `*.hcl` files of a directory in name order,
//! size and UTF-8 checks before parsing, and hcl-edit parse errors turned into diagnostics.
//! hcl-edit's parser limits nesting to 64 levels, so deeply nested input is a parse error,
//! not a stack overflow.

use std::ops::Range;
use std::path::{Path, PathBuf};

use hcl::edit::Span;
use hcl::edit::structure::{Block, Body};

pub(crate) use clusterform_files::{ReadError, read_capped};

use crate::diagnostic::{CommandLineReason, Diagnostic, SourceFile, detached_error};

/// The largest configuration file accepted; larger ones are refused before parsing so that a
/// mistaken path (a log, a data file) fails at once instead of taking seconds.
pub const MAX_SOURCE_BYTES: u64 = 10 * 1024 * 1024;

/// The most bytes all `*.hcl` files of a configuration may hold together: parsed and evaluated,
/// configuration takes many times its size in memory, and the largest real configurations
/// (a 1,000-cluster fleet written out) are a few MiB.
pub const MAX_CONFIGURATION_BYTES: u64 = 32 * 1024 * 1024;

/// The `*.hcl` files directly in `dir`, sorted by name.
pub(crate) fn list_hcl_files(dir: &Path) -> Result<Vec<PathBuf>, Box<Diagnostic>> {
    let unreadable = |e: std::io::Error| {
        Box::new(detached_error(
            dir,
            format!("cannot read the configuration directory: {e}"),
            None,
        ))
    };
    if dir.is_file() {
        return Err(Box::new(a_file_for_a_directory(dir)));
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        // Whatever the entry is (a broken or looping symlink, a directory, an unreadable
        // file), reading it reports the problem: skipping it would make its clusters look
        // removed from the configuration.
        if path.extension().is_some_and(|ext| ext == "hcl") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(Box::new(
            detached_error(dir, "no *.hcl files in the configuration directory", None)
                .because(CommandLineReason::NoConfigurationFiles),
        ));
    }
    Ok(files)
}

/// A file given where the configuration directory goes (`plan main.hcl`): every `*.hcl` file
/// of a directory is one configuration, so the reason names the directory that holds it.
fn a_file_for_a_directory(file: &Path) -> Diagnostic {
    let parent = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.display().to_string(),
        _ => ".".to_owned(),
    };
    detached_error(
        file,
        "this is a file; the configuration is a directory",
        None,
    )
    .because(CommandLineReason::FileForDirectory { parent })
}

/// The variables file the configuration directory may hold, loaded automatically.
pub(crate) const DEFAULT_VAR_FILE: &str = "clusterform.cfvars";

/// The extension of variables files: `*.cfvars` (files named `*.hcl` are configuration).
pub(crate) const VAR_FILE_EXTENSION: &str = "cfvars";

/// The suffix of the other variables files loaded automatically, in name order, after
/// [`DEFAULT_VAR_FILE`].
const AUTO_VAR_FILE_SUFFIX: &str = ".auto.cfvars";

/// The variables files of `dir` that are loaded without `--var-file`: `clusterform.cfvars`,
/// then every `*.auto.cfvars` in name order (Terraform's `terraform.tfvars` and
/// `*.auto.tfvars`). A directory that cannot be read has none (reading its `*.hcl` files
/// reports that).
pub(crate) fn auto_var_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut default = Vec::new();
    let mut auto = Vec::new();
    for path in entries.filter_map(|entry| entry.ok().map(|entry| entry.path())) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        if name == DEFAULT_VAR_FILE {
            default.push(path);
        } else if name.ends_with(AUTO_VAR_FILE_SUFFIX) {
            auto.push(path);
        }
    }
    auto.sort();
    default.extend(auto);
    default
}

/// Reads a file as UTF-8 text; `shown` is the name diagnostics use.
pub(crate) fn read_source(path: &Path, shown: PathBuf) -> Result<SourceFile, Box<Diagnostic>> {
    let bytes = read_capped(path, MAX_SOURCE_BYTES).map_err(|error| {
        let hint = match error {
            ReadError::TooLarge { .. } => Some("split the configuration into several files"),
            ReadError::NotRegular(_) => Some("configuration files must be regular files"),
            ReadError::BrokenLink(_) => Some("remove the link or restore the file it points to"),
            ReadError::Io(_) => None,
        };
        Box::new(detached_error(
            &shown,
            format!("cannot read file: {error}"),
            hint.map(str::to_owned),
        ))
    })?;
    match String::from_utf8(bytes) {
        // Editors on Windows may start a UTF-8 file with a byte-order mark; it is not HCL.
        Ok(text) => Ok(SourceFile::new(
            shown,
            text.strip_prefix('\u{feff}').unwrap_or(&text).into(),
        )),
        Err(error) => {
            let valid = error.utf8_error().valid_up_to();
            let bytes = error.into_bytes();
            let prefix = String::from_utf8_lossy(&bytes[..valid]).into_owned();
            let source = SourceFile::new(shown, prefix.into());
            let (line, column) = source.position(valid);
            Err(Box::new(Diagnostic {
                line,
                column,
                ..source.error(
                    None,
                    format!("file is not valid UTF-8: invalid byte at offset {valid}"),
                    Some("save the file as UTF-8".to_owned()),
                )
            }))
        }
    }
}

/// Parses a file's body, keeping spans.
pub(crate) fn parse(source: &SourceFile) -> Result<Body, Box<Diagnostic>> {
    hcl::edit::parser::parse_body(&source.text).map_err(|error| {
        let location = error.location();
        // The parser may point inside a multi-byte character; start at its first byte.
        let mut start = location.offset().min(source.text.len());
        while !source.text.is_char_boundary(start) {
            start -= 1;
        }
        let end = source.text[start..]
            .chars()
            .next()
            .map_or(start, |c| start + c.len_utf8());
        Box::new(source.error(
            Some(start..end),
            format!("syntax error: {}", error.message()),
            Some(format!("near `{}`", near(&source.text, start))),
        ))
    })
}

/// Characters of the line shown on each side of a syntax error: a minified or generated file
/// can hold megabytes on one line, which must not all land in a hint.
const NEAR_CHARS: usize = 60;

/// The source line around byte `at`, at most [`NEAR_CHARS`] characters on each side, with `…`
/// where it was cut.
fn near(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let mut before: Vec<char> = text[line_start..at]
        .chars()
        .rev()
        .take(NEAR_CHARS + 1)
        .collect();
    let cut_before = before.len() > NEAR_CHARS;
    before.truncate(NEAR_CHARS);
    before.reverse();
    let mut after: Vec<char> = text[at..line_end].chars().take(NEAR_CHARS + 1).collect();
    let cut_after = after.len() > NEAR_CHARS;
    after.truncate(NEAR_CHARS);
    let mut shown = String::new();
    if cut_before {
        shown.push('…');
    }
    shown.extend(before);
    shown.extend(after);
    if cut_after {
        shown.push('…');
    }
    shown.trim().to_owned()
}

/// The range of a block's head: from its identifier to the end of its last label.
pub(crate) fn block_head(block: &Block) -> Option<Range<usize>> {
    let start = block.ident.span()?.start;
    let end = block
        .labels
        .last()
        .and_then(|label| match label {
            hcl::edit::structure::BlockLabel::Ident(ident) => ident.span(),
            hcl::edit::structure::BlockLabel::String(string) => string.span(),
        })
        .or_else(|| block.ident.span())?
        .end;
    Some(start..end)
}

/// The range of a block's first label, or its head when it has none.
pub(crate) fn label_range(block: &Block) -> Option<Range<usize>> {
    match block.labels.first() {
        Some(hcl::edit::structure::BlockLabel::Ident(ident)) => ident.span(),
        Some(hcl::edit::structure::BlockLabel::String(string)) => string.span(),
        None => block_head(block),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_of_a_syntax_error_on_a_huge_line_shows_only_its_surroundings() {
        let text = format!("a = [{}, ?]\n", "1, ".repeat(30_000));
        let file = SourceFile::new("big.hcl".into(), text.into());
        let error = parse(&file).unwrap_err();
        let hint = error.hint.unwrap();
        assert!(
            hint.chars().count() < 2 * NEAR_CHARS + 20,
            "{} chars",
            hint.len()
        );
        assert!(hint.starts_with("near `…"), "{hint}");
        assert!(hint.contains('?'), "{hint}");
    }

    #[test]
    fn the_hint_of_a_syntax_error_on_a_short_line_is_the_line() {
        assert_eq!(near("x = 1\ny = = 2\n", 10), "y = = 2");
    }

    #[test]
    fn parse_errors_point_at_the_problem() {
        let source = SourceFile::new("a.hcl".into(), "x = 1\ny = = 2\n".into());
        let diagnostic = parse(&source).unwrap_err();
        assert_eq!((diagnostic.line, diagnostic.column), (2, 5));
        assert!(
            diagnostic.message.starts_with("syntax error"),
            "{}",
            diagnostic.message
        );
    }

    #[test]
    fn heads_span_identifier_and_labels() {
        let source = "cluster \"a\" {\n}\n";
        let body = hcl::edit::parser::parse_body(source).unwrap();
        let block = body.blocks().next().unwrap();
        assert_eq!(block_head(block), Some(0..11));
        assert_eq!(label_range(block), Some(8..11));
    }
}
