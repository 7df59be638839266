//! `clusterform fmt`: rewrites configuration files in the canonical format, or with `--check`
//! reports the ones that are not (exit 1), with `--diff` showing what would change.

use std::path::{Path, PathBuf};

use clusterform_files::{Access, write_atomic};
use similar::TextDiff;

use crate::arguments::Fmt;
use crate::commands::ExitStatus;
use crate::error::CliError;
use crate::printer::Printer;

/// Formats every `*.hcl` file named or found in the directories named.
pub fn run(args: &Fmt, printer: &Printer) -> Result<ExitStatus, CliError> {
    let mut unformatted = Vec::new();
    for file in hcl_files(&args.roots)? {
        let source = read(&file)?;
        let formatted =
            clusterform_config::format_source(&source, &file).map_err(CliError::Diagnostics)?;
        if formatted == source {
            continue;
        }
        if args.diff {
            printer.result(&unified_diff(&file, &source, &formatted));
        }
        if args.check {
            unformatted.push(file);
        } else {
            write_atomic(&file, formatted.as_bytes(), Access::LikeExisting).map_err(|source| {
                CliError::Io {
                    action: "could not write",
                    path: file.clone(),
                    source,
                }
            })?;
            printer.info(&file.display().to_string());
        }
    }
    if unformatted.is_empty() {
        Ok(ExitStatus::Success)
    } else {
        Err(CliError::Unformatted(unformatted))
    }
}

/// The files themselves, and the `*.hcl` files directly inside directories, in name order.
fn hcl_files(roots: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for root in roots {
        if !root.is_dir() {
            files.push(root.clone());
            continue;
        }
        let entries = std::fs::read_dir(root).map_err(|source| CliError::Io {
            action: "could not read directory",
            path: root.clone(),
            source,
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "hcl") && path.is_file())
            .collect();
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

fn read(file: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(file).map_err(|source| CliError::Io {
        action: "could not read",
        path: file.to_path_buf(),
        source,
    })
}

fn unified_diff(file: &Path, old: &str, new: &str) -> String {
    let name = file.display().to_string();
    TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}
