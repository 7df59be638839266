//! Machine specs outside the catalogue of training machine types: warnings that point at the
//! attribute, never errors that would stop a plan.

use crate::support::{load_text, valid_file, valid_with};

fn warnings(text: &str) -> Vec<String> {
    let loaded = load_text(text).expect("catalogue problems must not stop a load");
    loaded
        .warnings
        .iter()
        .map(|w| {
            format!(
                "{}:{} {} | {}",
                w.line,
                w.column,
                w.message,
                w.hint.as_deref().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn a_known_machine_type_gets_no_warning() {
    assert_eq!(warnings(&valid_file()), Vec::<String>::new());
}

#[test]
fn a_misspelt_machine_type_is_a_warning_at_its_attribute() {
    let text = valid_with(
        "machine_type = \"n2-standard-8\"",
        "machine_type = \"n2-standrad-8\"",
    );
    insta::assert_debug_snapshot!(warnings(&text), @r#"
    [
        "14:22 pool `login`: machine type `n2-standrad-8` is not in clusterform's catalogue of training machine types | did you mean `n2-standard-8`? The service may offer types newer than clusterform's catalogue: if this one exists, ignore this warning.",
    ]
    "#);
}

#[test]
fn a_gpu_machine_with_the_wrong_accelerator_count_is_a_warning() {
    let text = valid_with(
        "machine_type = \"n2-standard-8\"",
        "machine_type = \"a3-highgpu-8g\"\n      accelerator_type = \"NVIDIA_H100_80GB\"\n      accelerator_count = 4",
    )
    .replacen(
        "    zone = \"us-central1-a\"",
        "    zone = \"us-central1-a\"\n    provisioning_model = \"SPOT\"",
        1,
    );
    insta::assert_debug_snapshot!(warnings(&text), @r#"
    [
        "16:27 pool `login`: `a3-highgpu-8g` has 8 × NVIDIA_H100_80GB; accelerator_count is 4 | use accelerator_count = 8",
    ]
    "#);
}
