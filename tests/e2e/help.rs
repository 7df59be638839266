//! Every command's `--help` has a summary and an example; the texts are pinned.

use assert_cmd::Command;

const COMMANDS: [&str; 12] = [
    "validate",
    "fmt",
    "plan",
    "apply",
    "destroy",
    "status",
    "show",
    "list",
    "import",
    "force-unlock",
    "emulator",
    "completions",
];

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_clusterform"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn top_level_help() {
    insta::assert_snapshot!(help(&["--help"]));
}

#[test]
fn every_command_has_a_summary_and_an_example() {
    for command in COMMANDS {
        let text = help(&[command, "--help"]);
        assert!(text.contains("Example:"), "{command} --help has no example");
        insta::assert_snapshot!(format!("help_{command}"), text);
    }
}
