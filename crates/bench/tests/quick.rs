//! `--quick`: the command runs end to end, writes every table into its place between the
//! markers of an existing file, and prints only the section on stdout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BEGIN: &str = "<!-- clusterform-bench: begin (generated; rerun instead of editing) -->";
const END: &str = "<!-- clusterform-bench: end -->";

fn bench() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_clusterform-bench"))
}

/// The `clusterform` binary beside this one (`cargo test --workspace` builds it, for the
/// end-to-end tests).
fn clusterform() -> PathBuf {
    bench().with_file_name(format!("clusterform{}", std::env::consts::EXE_SUFFIX))
}

fn quick(extra: &[&str]) -> Output {
    let output = Command::new(bench())
        .args([
            "--quick",
            "--latency-ms",
            "5",
            "--samples",
            "1",
            "--clusterform",
        ])
        .arg(clusterform())
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn a_quick_run_replaces_its_section_and_keeps_the_rest_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("benchmarks.md");
    std::fs::write(
        &out,
        format!("# Benchmarks\n\ncriterion table\n\n{BEGIN}\nold figures\n{END}\n\n## Findings\n"),
    )
    .unwrap();
    let output = quick(&["--out", out.to_str().unwrap()]);
    assert!(output.stdout.is_empty(), "the table goes to --out only");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.starts_with("# Benchmarks\n\ncriterion table\n\n"),
        "{written}"
    );
    assert!(
        written.ends_with(&format!("{END}\n\n## Findings\n")),
        "{written}"
    );
    assert!(!written.contains("old figures"), "{written}");
    assert_eq!(written.matches(BEGIN).count(), 1, "{written}");
    for expected in [
        "### Plan at scale",
        "| 10 | 1 |",
        "| 100 | 10 |",
        "### The List page cap",
        "| 100 | 1 |",
        "### Noticing that an operation finished",
        "| 1 s |",
        "### Apply",
        "| 12 updates |",
        "| 12 creates |",
        "### Capacity fallback",
        "| 0.5 s |",
        "### Cost of the tool",
        "| `clusterform --version`",
        "| `plan`, 100 clusters, 1 region(s) |",
        "### What each baseline stands for",
        "### Targets missed in this run",
        "cargo run --release -p clusterform-bench -- --quick --latency-ms 5 --samples 1 --out",
    ] {
        assert!(
            written.contains(expected),
            "missing {expected:?} in:\n{written}"
        );
    }
}

#[test]
fn without_out_the_section_is_printed_on_stdout_and_progress_on_stderr() {
    let output = quick(&[]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with(BEGIN), "{stdout}");
    assert!(stdout.ends_with(&format!("{END}\n")), "{stdout}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("clusterform-bench: plan: 10 clusters"),
        "{stderr}"
    );
}
