//! `format_source`: canonical, comment-keeping, idempotent.

use std::path::Path;

use clusterform_config::format_source;

use crate::support::example;

const MESSY: &str = r#"
# Leading comment
variable "project" {
type = string
        description   =    "The project"   # trailing comment
}



cluster "c1" {
    # the pools
  node_pool "cpu" {
  zone = "us-central1-a"
    machine_spec { machine_type = "n2" }
        scaling_spec {
      min_node_count = 0
  max_node_count     = 4
  }
   startup_script = <<-EOT
      #!/bin/bash
        echo   "kept as is"
    EOT
  }
  labels = {
  team = "ml"
      cost_center = "r-and-d"
  }
  /* a block
       comment */
}
"#;

fn fmt(text: &str) -> String {
    format_source(text, Path::new("messy.hcl")).unwrap()
}

#[test]
fn messy_input_is_normalised() {
    insta::assert_snapshot!("messy", fmt(MESSY));
}

#[test]
fn formatting_is_idempotent_and_keeps_comments() {
    let once = fmt(MESSY);
    assert_eq!(fmt(&once), once);
    for comment in [
        "# Leading comment",
        "# trailing comment",
        "# the pools",
        "/* a block",
        "comment */",
    ] {
        assert!(once.contains(comment), "{comment} lost");
    }
}

#[test]
fn crlf_files_become_lf_but_heredoc_content_is_kept() {
    let source = "locals {\r\n    a = 1\r\n  text = <<EOT\r\nline one\r\nEOT\r\n}\r\n";
    let once = fmt(source);
    assert_eq!(
        once,
        "locals {\n  a    = 1\n  text = <<EOT\nline one\r\nEOT\n}\n"
    );
    assert_eq!(fmt(&once), once);
}

#[test]
fn carriage_returns_in_odd_places_stay_idempotent() {
    // Found by the fuzz target: a quoted string running over lines that end in `\r`.
    let source = "\r\r\n\nm-=\"\u{1}\u{1}\n\n\u{1}\u{1}\r\r\r\u{1}\u{1}\r\r\n{erE{\"";
    let once = fmt(source);
    assert_eq!(fmt(&once), once);
}

#[test]
fn examples_are_already_formatted() {
    for name in [
        "quickstart",
        "cpu-cluster",
        "gpu-a4",
        "gpu-fallback",
        "flex-start",
        "lustre",
        "fleet",
    ] {
        for entry in std::fs::read_dir(example(name)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "hcl") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert_eq!(fmt(&text), text, "{} is not formatted", path.display());
            }
        }
    }
}

#[test]
fn syntax_errors_are_diagnostics() {
    let diagnostics = format_source("a = = 1\n", Path::new("bad.hcl")).unwrap_err();
    let d = &diagnostics.items[0];
    assert_eq!((d.file.to_str(), d.line, d.column), (Some("bad.hcl"), 1, 5));
    assert!(diagnostics.render(false).contains("bad.hcl:1:5"));
}

#[test]
fn fallback_blocks_are_formatted_like_any_block() {
    let source = "node_pool \"gpu\" {\nfallback {\n      provisioning_model=\"SPOT\"\n  flex_start_max_duration = \"1h\"\n      machine_spec { machine_type = \"a3-megagpu-8g\" }\n}\n}\n";
    assert_eq!(
        fmt(source),
        "node_pool \"gpu\" {\n  fallback {\n    provisioning_model      = \"SPOT\"\n    flex_start_max_duration = \"1h\"\n    machine_spec { machine_type = \"a3-megagpu-8g\" }\n  }\n}\n"
    );
}

#[test]
fn removed_blocks_are_formatted_like_any_block() {
    let source = "removed {\ncluster=\"train02\"\n      region = \"us-east1\"\n}\n";
    assert_eq!(
        fmt(source),
        "removed {\n  cluster = \"train02\"\n  region  = \"us-east1\"\n}\n"
    );
}
