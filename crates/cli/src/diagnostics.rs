//! Configuration diagnostics as the binary prints them: in the one error style (`Error: …` or
//! `Warning: …`, then the source snippet, then `hint: …`), with file names a user's editor
//! or a CI annotation can open from the working directory. The config crate names a file
//! relative to the configuration directory; only the binary knows where it was run from, and
//! its flags and commands, which [`worded_diagnostic`] words where the crate gives a reason.

use std::path::{Component, Path, PathBuf};

use clusterform_config::{Diagnostic, Diagnostics, Severity};
use console::Style;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource, Report,
};

use crate::hints::worded_diagnostic;

/// Words every diagnostic for this binary ([`worded_diagnostic`]) and renames its file to its
/// path from the working directory (see [`from_working_dir`]), keeping each file's text for its
/// snippets.
pub fn located(diagnostics: Diagnostics, dir: &Path, var_files: &[PathBuf]) -> Diagnostics {
    let diagnostics = Diagnostics {
        items: diagnostics
            .items
            .into_iter()
            .map(worded_diagnostic)
            .collect(),
        ..diagnostics
    };
    let Ok(cwd) = std::env::current_dir() else {
        return diagnostics;
    };
    let rename = |file: &Path| from_working_dir(file, dir, var_files, &cwd);
    Diagnostics {
        items: diagnostics
            .items
            .into_iter()
            .map(|item| located_item(item, &rename))
            .collect(),
        missing_variables: diagnostics.missing_variables,
        sources: diagnostics
            .sources
            .into_iter()
            .map(|(file, text)| (rename(&file), text))
            .collect(),
    }
}

/// One diagnostic (a warning of a successful load) worded and with its file renamed as
/// [`located`] does.
pub fn located_warning(warning: Diagnostic, dir: &Path, var_files: &[PathBuf]) -> Diagnostic {
    let warning = worded_diagnostic(warning);
    let Ok(cwd) = std::env::current_dir() else {
        return warning;
    };
    located_item(warning, &|file| {
        from_working_dir(file, dir, var_files, &cwd)
    })
}

fn located_item(mut item: Diagnostic, rename: &impl Fn(&Path) -> PathBuf) -> Diagnostic {
    item.file = rename(&item.file);
    item
}

/// Where `file` is, as seen from `cwd`: a `--var-file` and the directory itself are named as
/// given; a configuration file is named relative to `dir`; pseudo-names such as
/// `<command line>` have no file and stay as they are. Inside `cwd` the path is relative
/// (`examples/fleet/main.hcl`), outside it is absolute.
fn from_working_dir(file: &Path, dir: &Path, var_files: &[PathBuf], cwd: &Path) -> PathBuf {
    let is_pseudo_name = file.to_string_lossy().starts_with('<');
    if is_pseudo_name {
        return file.to_path_buf();
    }
    let as_given = file == dir || var_files.iter().any(|given| given == file);
    let path = if as_given || file.is_absolute() {
        file.to_path_buf()
    } else {
        dir.join(file)
    };
    relative_to(&path, cwd)
}

/// `path` (relative to `cwd`, or absolute) without `.` and `..` steps: relative when it lies
/// inside `cwd`, absolute otherwise. Lexical: a symbolic link is not followed.
fn relative_to(path: &Path, cwd: &Path) -> PathBuf {
    let mut absolute = PathBuf::new();
    for component in cwd.join(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                absolute.pop();
            }
            other => absolute.push(other),
        }
    }
    match absolute.strip_prefix(cwd) {
        Ok(inside) if inside.as_os_str().is_empty() => PathBuf::from("."),
        Ok(inside) => inside.to_path_buf(),
        Err(_) => absolute,
    }
}

/// Every diagnostic, separated by blank lines.
pub fn render_all(diagnostics: &Diagnostics, color: bool) -> String {
    diagnostics
        .items
        .iter()
        .map(|item| {
            render(
                item,
                diagnostics.sources.get(&item.file).map(|s| &**s),
                color,
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `Error: message` (or `Warning:`), then miette's snippet of `source` with the range
/// underlined (or `  at file:line:col` when there is no snippet), then `  hint: …`.
pub fn render(item: &Diagnostic, source: Option<&str>, color: bool) -> String {
    let mut out = header(item.severity, &item.message, color);
    match source.and_then(|text| snippet(item, text, color)) {
        Some(snippet) => out.push_str(&snippet),
        None if item.location() != "." => out.push_str(&format!("  at {}\n", item.location())),
        None => {}
    }
    if let Some(hint) = &item.hint {
        out.push_str(&hint_line(hint, color));
    }
    out
}

/// `Error: message` or `Warning: message`, with a newline.
pub fn header(severity: Severity, message: &str, color: bool) -> String {
    let (label, style) = match severity {
        Severity::Error => ("Error:", Style::new().red().bold()),
        Severity::Warning => ("Warning:", Style::new().yellow().bold()),
    };
    format!(
        "{} {}\n",
        paint(style, label, color),
        indented_tail(message)
    )
}

/// `  hint: …`, with a newline; the lines of a long hint are indented under its first.
pub fn hint_line(hint: &str, color: bool) -> String {
    format!(
        "  {} {}\n",
        paint(Style::new().cyan(), "hint:", color),
        indented_tail(hint)
    )
}

/// The text with every line after the first indented by two spaces (unless it already is),
/// so that detail lines sit under their header.
fn indented_tail(text: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    for line in lines {
        out.push('\n');
        if !line.starts_with("  ") {
            out.push_str("  ");
        }
        out.push_str(line);
    }
    out
}

fn paint(style: Style, text: &str, color: bool) -> String {
    if color {
        style.force_styling(true).apply_to(text).to_string()
    } else {
        text.to_owned()
    }
}

/// Miette's source snippet (`╭─[file:line:col]`, the lines, the underline, `╰────`) without
/// its `×` header, which [`header`] replaces; `None` when the range does not fit the text.
fn snippet(item: &Diagnostic, text: &str, color: bool) -> Option<String> {
    let range = item.range.clone()?;
    let fits = range.start <= range.end
        && range.end <= text.len()
        && text.is_char_boundary(range.start)
        && text.is_char_boundary(range.end)
        && near_line_start(text, range.start)
        && near_line_start(text, range.end);
    if !fits {
        return None;
    }
    let label = LabeledSpan::new_primary_with_span(None, range);
    let report =
        Report::new(MietteDiagnostic::new(String::new()).with_label(label)).with_source_code(
            NamedSource::new(item.file.display().to_string(), text.to_owned()),
        );
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut rendered = String::new();
    GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .render_report(&mut rendered, report.as_ref())
        .ok()?;
    let start = rendered.find("╭─[")?;
    let line_start = rendered[..start].rfind('\n').map_or(0, |at| at + 1);
    Some(format!("{}\n", rendered[line_start..].trim_end()))
}

/// Diagnostics further into their line than this many bytes get no snippet: miette pads its
/// underline with a format width, which panics past 65,535 columns, and a snippet of a line
/// that long would not help anyway.
const MAX_SNIPPET_COLUMN_BYTES: usize = 4096;

fn near_line_start(text: &str, offset: usize) -> bool {
    let line_start = text[..offset].rfind('\n').map_or(0, |at| at + 1);
    offset - line_start <= MAX_SNIPPET_COLUMN_BYTES
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn diagnostic(file: &str, range: Option<std::ops::Range<usize>>, line: usize) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: "unknown argument `bogus` in a variable block".into(),
            file: file.into(),
            line,
            column: 3,
            range,
            hint: Some("a variable accepts type, default, description, sensitive".into()),
            reason: None,
        }
    }

    #[test]
    fn configuration_files_are_named_from_the_working_directory() {
        let cwd = Path::new("/home/me/repo");
        let dir = Path::new("examples/fleet");
        let vars = [PathBuf::from("ci/prod.cfvars")];
        let named = |file: &str, dir: &Path| from_working_dir(Path::new(file), dir, &vars, cwd);
        assert_eq!(named("main.hcl", dir), Path::new("examples/fleet/main.hcl"));
        assert_eq!(named("main.hcl", Path::new(".")), Path::new("main.hcl"));
        assert_eq!(named("ci/prod.cfvars", dir), Path::new("ci/prod.cfvars"));
        assert_eq!(named("examples/fleet", dir), Path::new("examples/fleet"));
        assert_eq!(named("<command line>", dir), Path::new("<command line>"));
        assert_eq!(named(".", Path::new(".")), Path::new("."));
    }

    #[test]
    fn files_outside_the_working_directory_are_absolute() {
        let cwd = Path::new("/home/me/repo");
        let named =
            |file: &str, dir: &str| from_working_dir(Path::new(file), Path::new(dir), &[], cwd);
        assert_eq!(
            named("main.hcl", "../other"),
            Path::new("/home/me/other/main.hcl")
        );
        assert_eq!(
            named("main.hcl", "/srv/infra"),
            Path::new("/srv/infra/main.hcl")
        );
        assert_eq!(
            named("main.hcl", "/home/me/repo/infra"),
            Path::new("infra/main.hcl")
        );
    }

    #[test]
    fn located_renames_the_sources_with_the_items() {
        let diagnostics = Diagnostics {
            items: vec![diagnostic("main.hcl", Some(0..1), 1)],
            missing_variables: vec![],
            sources: BTreeMap::from([(PathBuf::from("main.hcl"), "x = 1\n".into())]),
        };
        let cwd = std::env::current_dir().unwrap();
        let located = located(diagnostics, &cwd.join("infra"), &[]);
        assert_eq!(located.items[0].file, Path::new("infra/main.hcl"));
        assert!(located.sources.contains_key(Path::new("infra/main.hcl")));
    }

    #[test]
    fn a_diagnostic_reads_like_an_error_with_the_snippet_under_it() {
        let text = "variable \"region\" {\n  default = \"us-central1\"\n  bogus = 1\n}\n";
        let start = text.find("bogus").unwrap();
        let item = diagnostic("examples/fleet/main.hcl", Some(start..start + 5), 3);
        insta::assert_snapshot!(render(&item, Some(text), false), @r#"
        Error: unknown argument `bogus` in a variable block
           ╭─[examples/fleet/main.hcl:3:3]
         2 │   default = "us-central1"
         3 │   bogus = 1
           ·   ─────
         4 │ }
           ╰────
          hint: a variable accepts type, default, description, sensitive
        "#);
    }

    #[test]
    fn without_a_snippet_the_location_is_a_line_of_its_own() {
        let item = diagnostic("examples/fleet/main.hcl", None, 3);
        insta::assert_snapshot!(render(&item, None, false), @r"
        Error: unknown argument `bogus` in a variable block
          at examples/fleet/main.hcl:3:3
          hint: a variable accepts type, default, description, sensitive
        ");
    }

    #[test]
    fn a_range_far_into_its_line_has_no_snippet() {
        let text = format!("{}bogus = 1\n", " ".repeat(70_000));
        let item = diagnostic("main.hcl", Some(70_000..70_005), 1);
        let rendered = render(&item, Some(&text), true);
        assert!(rendered.contains("  at main.hcl:1:3\n"), "{rendered}");
        assert!(!rendered.contains("╭─["), "{rendered}");
    }

    #[test]
    fn the_working_directory_itself_is_not_a_location() {
        let mut item = diagnostic(".", None, 0);
        item.message = "no *.hcl files in the configuration directory".into();
        item.hint = None;
        assert_eq!(
            render(&item, None, false),
            "Error: no *.hcl files in the configuration directory\n"
        );
    }

    #[test]
    fn warnings_have_their_own_header() {
        let mut item = diagnostic("main.hcl", None, 0);
        item.severity = Severity::Warning;
        item.message = "variable `zone` is declared but never used".into();
        item.hint = None;
        assert_eq!(
            render(&item, None, false),
            "Warning: variable `zone` is declared but never used\n  at main.hcl\n"
        );
    }
}
