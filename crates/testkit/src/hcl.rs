//! The canonical cluster as HCL: the same cluster as [`crate::seed`], in the same project,
//! region and stack, as a user writes it. The config crate's tests check that loading
//! [`seed_file`] declares exactly [`crate::seed`].

/// The provider block: [`crate::PROJECT`], [`crate::REGION`] and [`crate::STACK`]. It starts
/// with a newline, so that it can follow any text.
pub const PROVIDER_HCL: &str = r#"
provider "google" {
  project = "my-proj"
  region  = "us-central1"
  stack   = "research"
}
"#;

/// The canonical cluster's body, without its `cluster "ID" {` line and closing brace.
pub const SEED_BODY_HCL: &str = r##"
  display_name = "Research training"
  labels       = { team = "ml" }

  network {
    network    = "projects/my-proj/global/networks/default"
    subnetwork = "projects/my-proj/regions/us-central1/subnetworks/default"
  }

  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 1
    }
    zone              = "us-central1-a"
    enable_public_ips = true
    boot_disk {
      boot_disk_type    = "pd-standard"
      boot_disk_size_gb = 120
    }
  }

  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 0
      max_node_count = 4
    }
    zone = "us-central1-a"
  }

  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home"
      login_node_pool_id     = "login"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
      prolog_bash_scripts = ["#!/bin/bash\necho prolog"]
    }
  }
"##;

/// The canonical cluster's body with only what a cluster requires (no display name, labels,
/// subnetwork, public IPs, boot disk or prolog script), for tests whose own edit must be the
/// only thing a diagnostic can point at. The config crate's tests check that it declares
/// [`crate::seed`] without those fields.
pub const REQUIRED_BODY_HCL: &str = r#"
  network {
    network = "projects/my-proj/global/networks/default"
  }
  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 1
    }
    zone = "us-central1-a"
  }
  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 0
      max_node_count = 4
    }
    zone = "us-central1-a"
  }
  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home"
      login_node_pool_id     = "login"
      partition "cpu" {
        node_pool_ids = ["cpu"]
      }
    }
  }
"#;

/// A whole configuration file: the provider and the canonical cluster named `id`.
pub fn seed_file(id: &str) -> String {
    format!("{PROVIDER_HCL}\ncluster \"{id}\" {{{SEED_BODY_HCL}}}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PROJECT, REGION, STACK};

    #[test]
    fn the_provider_names_the_shared_constants() {
        for (name, value) in [("project", PROJECT), ("region", REGION), ("stack", STACK)] {
            assert!(
                PROVIDER_HCL
                    .lines()
                    .any(|line| line.trim_start().starts_with(name)
                        && line.ends_with(&format!("\"{value}\""))),
                "{name} is not {value:?}"
            );
        }
    }
}
