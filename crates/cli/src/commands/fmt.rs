//! `clusterform fmt`: rewrites configuration files in the canonical format, or with `--check`
//! reports the ones that are not (exit 1), with `--diff` showing what would change. `fmt -`
//! formats standard input onto standard output, as `terraform fmt -` does; `--recursive`
//! walks the directories inside those named.
//!
//! Files are read by the loader's rules (regular files, the size limit, no blocking on a FIFO
//! or device), and every file is read and formatted before any is written, so an entry that
//! cannot be read or parsed fails the run without leaving it half done. A symbolic link is formatted through: the file
//! it points to is replaced atomically and the link stays a link.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use clusterform_files::{Access, write_atomic};
use similar::TextDiff;

use crate::arguments::{Fmt, FmtInput};
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;

/// Formats every `*.hcl` file named or found in the directories named, or standard input.
pub fn run(args: &Fmt, printer: &Printer) -> Result<ExitStatus, CliError> {
    match &args.input {
        FmtInput::Stdin => format_stdin(args, printer),
        FmtInput::Paths { roots, recursive } => format_files(args, roots, *recursive, printer),
    }
}

fn format_files(
    args: &Fmt,
    roots: &[PathBuf],
    recursive: bool,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    let files = hcl_files(roots, recursive)?;
    if args.check {
        // A CI step that checks the wrong directory must not pass for checking nothing.
        if let Some(empty) = roots
            .iter()
            .find(|root| root.is_dir() && !files.iter().any(|file| file.starts_with(root)))
        {
            return Err(CliError::NothingToCheck(empty.clone()));
        }
    }
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

/// `fmt -`: the formatted text on stdout (with `--diff`, the diff instead; with `--check`,
/// nothing but the exit status).
fn format_stdin(args: &Fmt, printer: &Printer) -> Result<ExitStatus, CliError> {
    let name = PathBuf::from(STDIN_NAME);
    let source = read_stdin()?;
    let formatted =
        clusterform_config::format_source(&source, &name).map_err(CliError::Diagnostics)?;
    if args.diff {
        if formatted != source {
            printer.result(&unified_diff(&name, &source, &formatted));
        }
    } else if !args.check {
        printer.result(formatted.trim_end_matches('\n'));
    }
    if args.check && formatted != source {
        return Err(CliError::Unformatted(vec![name]));
    }
    Ok(ExitStatus::Success)
}

/// How standard input is named in diagnostics and diffs.
const STDIN_NAME: &str = "<stdin>";

/// Standard input, held to the loader's limit on one file.
fn read_stdin() -> Result<String, CliError> {
    let unreadable = |source| CliError::Io {
        action: "could not read",
        path: PathBuf::from(STDIN_NAME),
        source,
    };
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(clusterform_config::MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > clusterform_config::MAX_SOURCE_BYTES {
        return Err(unreadable(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "more than {} MiB, the limit on one configuration file",
                clusterform_config::MAX_SOURCE_BYTES / (1024 * 1024)
            ),
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        unreadable(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not UTF-8 text",
        ))
    })
}

/// Every file with its text and its formatted text; the first file that cannot be read or
/// parsed is the error, before anything is written.
fn format_all(files: Vec<PathBuf>) -> Result<Vec<(PathBuf, String, String)>, CliError> {
    files
        .into_iter()
        .map(|file| {
            let source =
                clusterform_config::read_source_to_format(&file).map_err(CliError::Diagnostics)?;
            let formatted =
                clusterform_config::format_source(&source, &file).map_err(CliError::Diagnostics)?;
            Ok((file, source, formatted))
        })
        .collect()
}

/// The files themselves, and every `*.hcl` entry directly inside directories (at any depth
/// when `recursive`, hidden directories skipped), in name order. Entries are not filtered by
/// type: reading one that is not a regular file (a broken link, a FIFO, a directory named
/// `*.hcl`) reports it, where skipping it would pass `--check` unseen.
fn hcl_files(roots: &[PathBuf], recursive: bool) -> Result<Vec<PathBuf>, CliError> {
    let mut files = Vec::new();
    for root in roots {
        if root.is_dir() {
            collect_dir(root, recursive, &mut files)?;
        } else {
            files.push(root.clone());
        }
    }
    Ok(files)
}

fn collect_dir(dir: &Path, recursive: bool, files: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let unreadable = |source| CliError::Io {
        action: "could not read directory",
        path: dir.to_path_buf(),
        source,
    };
    let mut found = Vec::new();
    let mut inner = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let path = entry.path();
        if path.extension().is_some_and(|ext| ext == "hcl") {
            found.push(path);
        } else if recursive
            && entry.file_type().is_ok_and(|kind| kind.is_dir())
            && !entry.file_name().to_string_lossy().starts_with('.')
        {
            // `file_type` does not follow links: a link to a directory is not walked, so a
            // link back up the tree cannot loop.
            inner.push(path);
        }
    }
    found.sort();
    files.extend(found);
    inner.sort();
    for dir in inner {
        collect_dir(&dir, recursive, files)?;
    }
    Ok(())
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
