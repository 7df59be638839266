//! `clusterform fmt`: rewrites configuration files in the canonical format, or with `--check`
//! reports the ones that are not (exit 1), with `--diff` showing what would change.
//!
//! Files are read by the loader's rules (regular files, the size limit, no blocking on a FIFO
//! or device), and every file is read and formatted before any is written, so an entry that
//! cannot be read or parsed fails the run without leaving it half done. A symbolic link is formatted through: the file
//! it points to is replaced atomically and the link stays a link.

use std::path::{Path, PathBuf};

use clusterform_files::{Access, write_atomic};
use similar::TextDiff;

use crate::arguments::Fmt;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;

/// Formats every `*.hcl` file named or found in the directories named.
pub fn run(args: &Fmt, printer: &Printer) -> Result<ExitStatus, CliError> {
    let listed = args
        .roots
        .iter()
        .map(|root| Ok((root, hcl_files(root)?)))
        .collect::<Result<Vec<_>, CliError>>()?;
    if args.check {
        // A CI step that checks the wrong directory must not pass for checking nothing.
        if let Some((empty, _)) = listed.iter().find(|(_, files)| files.is_empty()) {
            return Err(CliError::NothingToCheck((*empty).clone()));
        }
    }
    let files = listed.into_iter().flat_map(|(_, files)| files);
    let mut unformatted = Vec::new();
    for (file, source, formatted) in format_all(files)? {
        if formatted == source {
            continue;
        }
        if args.diff {
            printer.result(&unified_diff(&file, &source, &formatted));
        }
        if args.check {
            unformatted.push(file);
        } else {
            write_through(&file, &formatted)?;
            printer.info(&file.display().to_string());
        }
    }
    if unformatted.is_empty() {
        Ok(ExitStatus::Success)
    } else {
        Err(CliError::Unformatted(unformatted))
    }
}

/// Every file with its text and its formatted text; the first file that cannot be read or
/// parsed is the error, before anything is written.
fn format_all(
    files: impl Iterator<Item = PathBuf>,
) -> Result<Vec<(PathBuf, String, String)>, CliError> {
    files
        .map(|file| {
            let source =
                clusterform_config::read_source_to_format(&file).map_err(CliError::Diagnostics)?;
            let formatted =
                clusterform_config::format_source(&source, &file).map_err(CliError::Diagnostics)?;
            Ok((file, source, formatted))
        })
        .collect()
}

/// A file root itself, or every `*.hcl` entry directly inside a directory, in name order
/// (none: the directory holds no configuration). Entries are not filtered by type: reading one
/// that is not a regular file (a broken link, a FIFO, a directory) reports it, where skipping
/// it would pass `--check` unseen.
fn hcl_files(root: &Path) -> Result<Vec<PathBuf>, CliError> {
    if !root.is_dir() {
        return Ok(vec![root.to_path_buf()]);
    }
    let unreadable = |source| CliError::Io {
        action: "could not read directory",
        path: root.to_path_buf(),
        source,
    };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).map_err(unreadable)? {
        let path = entry.map_err(unreadable)?.path();
        if path.extension().is_some_and(|ext| ext == "hcl") {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// Replaces `file` with `formatted`; a symbolic link is resolved first so that the file it
/// points to is replaced and the link is kept (renaming over the link itself would turn it
/// into a copy and leave the shared file unformatted).
fn write_through(file: &Path, formatted: &str) -> Result<(), CliError> {
    let target = std::fs::canonicalize(file).map_err(|source| CliError::Io {
        action: "could not resolve",
        path: file.to_path_buf(),
        source,
    })?;
    write_atomic(&target, formatted.as_bytes(), Access::LikeExisting).map_err(|source| {
        CliError::Io {
            action: "could not write",
            path: target,
            source,
        }
    })
}

fn unified_diff(file: &Path, old: &str, new: &str) -> String {
    let name = file.display().to_string();
    TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}
