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
        "14:22 pool `login`: machine type `n2-standrad-8` is not in clusterform's catalogue of training machine types | did you mean `n2-standard-8`? The service may offer types newer than clusterform's catalogue (the Compute resources page lists the documented ones): if this one exists, ignore this warning.",
    ]
    "#);
}

#[test]
fn a_gpu_machine_with_the_wrong_accelerator_count_is_a_warning() {
    let text = valid_with(
        "machine_type = \"n2-standard-8\"",
        "machine_type = \"a3-megagpu-8g\"\n      accelerator_type = \"NVIDIA_H100_MEGA_80GB\"\n      accelerator_count = 4",
    )
    .replacen(
        "    zone = \"us-central1-a\"",
        "    zone = \"us-central1-a\"\n    provisioning_model = \"SPOT\"",
        1,
    );
    insta::assert_debug_snapshot!(warnings(&text), @r#"
    [
        "16:27 pool `login`: `a3-megagpu-8g` has 8 × NVIDIA_H100_MEGA_80GB; accelerator_count is 4 | use accelerator_count = 8",
    ]
    "#);
}

/// The valid file whose `cpu` pool is of machine type `machine` with `accelerators` (the
/// `accelerator_type = ...` lines) and node counts `min` and `max`.
fn cpu_pool_as(machine: &str, accelerators: &str, (min, max): (u32, u32)) -> String {
    valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0\n      max_node_count = 4",
        &format!(
            "      machine_type = \"{machine}\"\n{accelerators}\n    }}\n    provisioning_model = \"SPOT\"\n    scaling_spec {{\n      min_node_count = {min}\n      max_node_count = {max}"
        ),
    )
}

#[test]
fn a3_highgpu_is_documented_but_a_warning_says_it_was_refused() {
    let text = cpu_pool_as(
        "a3-highgpu-8g",
        "      accelerator_type = \"NVIDIA_H100_80GB\"\n      accelerator_count = 8",
        (0, 4),
    );
    insta::assert_debug_snapshot!(warnings(&text), @r#"
    [
        "24:22 pool `cpu`: machine type `a3-highgpu-8g` may be refused: the Create cluster page lists it, but a real create failed with \"machine type a3-highgpu-8g is not allowed for VM\" about 20 s after it was accepted, leaving a cluster in ERROR to delete (the Compute resources page does not list it) | use a3-megagpu-8g (8 × NVIDIA_H100_MEGA_80GB) for H100 nodes",
    ]
    "#);
}

#[test]
fn a4x_node_counts_are_whole_nvlink_domains() {
    let gb200 = "      accelerator_type = \"NVIDIA_GB200\"\n      accelerator_count = 4";
    insta::assert_debug_snapshot!(warnings(&cpu_pool_as("a4x-highgpu-4g", gb200, (9, 40))), @r#"
    [
        "30:24 min_node_count of A4X pool `cpu` is 9, not a multiple of 18: A4X VMs come in NVLink domains of 18 | use a multiple of 18, such as 18",
        "31:24 max_node_count of A4X pool `cpu` is 40, not a multiple of 18: A4X VMs come in NVLink domains of 18 | use a multiple of 18, such as 36 or 54",
    ]
    "#);
    assert_eq!(
        warnings(&cpu_pool_as("a4x-highgpu-4g", gb200, (18, 36))),
        Vec::<String>::new()
    );
    let b200 = "      accelerator_type = \"NVIDIA_B200\"\n      accelerator_count = 8";
    assert_eq!(
        warnings(&cpu_pool_as("a4-highgpu-8g", b200, (9, 40))),
        Vec::<String>::new(),
        "only A4X comes in NVLink domains of 18"
    );
}
