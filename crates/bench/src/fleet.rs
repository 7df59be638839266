//! The declared fleet of a benchmark: cluster IDs spread over regions, the configuration that
//! declares them (one `for_each` block, as a team with thousands of clusters writes it), and
//! the same clusters as the service holds them, for seeding the emulator so that a plan of
//! the configuration finds no changes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The project of every benchmark cluster.
pub const PROJECT: &str = "bench-project";
/// The stack that owns every benchmark cluster.
pub const STACK: &str = "bench";
/// The ten regions of the multi-region layout, all of them regions the *Get started* page lists
/// (`clusterform_model::SERVICE_REGIONS`; another region draws a warning, which is not what the
/// benchmark measures); the one-region layout uses the first. A plan lists every service region
/// whatever the layout: the two the layout leaves out are listed too, and found empty.
pub const REGIONS: [&str; 10] = [
    "us-central1",
    "us-east1",
    "us-east4",
    "us-east5",
    "us-south1",
    "us-west1",
    "us-west4",
    "europe-west1",
    "europe-west4",
    "asia-southeast1",
];

/// One declared cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The cluster ID.
    pub id: String,
    /// Its region.
    pub region: &'static str,
}

impl Member {
    /// The full resource name, with the project ID.
    pub fn name(&self) -> String {
        format!(
            "projects/{PROJECT}/locations/{}/modelDevelopmentClusters/{}",
            self.region, self.id
        )
    }

    /// The cluster as a create request carries it and as the service keeps it (before its
    /// defaults and output-only fields), with `max_nodes` in its compute pool and the stack's
    /// ownership label.
    pub fn resource(&self, max_nodes: u32) -> Value {
        let region = self.region;
        let pool = |id: &str, min: u32, max: u32| {
            json!({
                "id": id,
                "machineSpec": {"machineType": "n2-standard-8"},
                "scalingSpec": {"minNodeCount": min, "maxNodeCount": max},
                "zone": format!("{region}-a"),
            })
        };
        json!({
            "displayName": format!("Bench {}", self.id),
            "labels": {"clusterform-stack": STACK},
            "network": {
                "network": format!("projects/{PROJECT}/global/networks/default"),
                "subnetwork": format!("projects/{PROJECT}/regions/{region}/subnetworks/default"),
            },
            "nodePools": [pool("login", 1, 1), pool("cpu", 0, max_nodes)],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": format!("projects/{PROJECT}/locations/{region}-a/instances/home"),
                "loginNodePoolId": "login",
                "partitions": [{"id": "cpu", "nodePoolIds": ["cpu"]}],
            }},
        })
    }
}

/// The declared clusters of one benchmark case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fleet {
    /// Every cluster, in ID order.
    pub members: Vec<Member>,
}

impl Fleet {
    /// `size` clusters `c00000`, `c00001`, … dealt round-robin over the first `regions`
    /// regions (at least one, at most ten).
    pub fn new(size: usize, regions: usize) -> Self {
        let regions = &REGIONS[..regions.clamp(1, REGIONS.len())];
        let members = (0..size)
            .map(|index| Member {
                id: format!("c{index:05}"),
                region: regions[index % regions.len()],
            })
            .collect();
        Self { members }
    }

    /// How many clusters each region holds.
    pub fn per_region(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for member in &self.members {
            *counts.entry(member.region).or_insert(0) += 1;
        }
        counts
    }

    /// The configuration declaring every member with `max_nodes` in its compute pool.
    pub fn hcl(&self, max_nodes: u32) -> String {
        let entries: String = self
            .members
            .iter()
            .map(|member| format!("    {} = \"{}\"\n", member.id, member.region))
            .collect();
        format!(
            r#"provider "google" {{
  project = "{PROJECT}"
  stack   = "{STACK}"
}}

cluster "fleet" {{
  for_each = {{
{entries}  }}
  region       = each.value
  display_name = "Bench ${{each.key}}"

  network {{
    network    = "projects/{PROJECT}/global/networks/default"
    subnetwork = "projects/{PROJECT}/regions/${{each.value}}/subnetworks/default"
  }}

  node_pool "login" {{
    machine_spec {{ machine_type = "n2-standard-8" }}
    scaling_spec {{
      min_node_count = 1
      max_node_count = 1
    }}
    zone = "${{each.value}}-a"
  }}

  node_pool "cpu" {{
    machine_spec {{ machine_type = "n2-standard-8" }}
    scaling_spec {{
      min_node_count = 0
      max_node_count = {max_nodes}
    }}
    zone = "${{each.value}}-a"
  }}

  orchestrator_spec {{
    slurm_spec {{
      home_directory_storage = "projects/{PROJECT}/locations/${{each.value}}-a/instances/home"
      login_node_pool_id     = "login"
      partition "cpu" {{
        node_pool_ids = ["cpu"]
      }}
    }}
  }}
}}
"#
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_s_regions_are_service_regions() {
        for region in REGIONS {
            assert!(clusterform_model::is_service_region(region), "{region}");
        }
    }

    #[test]
    fn members_are_dealt_round_robin_over_the_regions() {
        let fleet = Fleet::new(25, 10);
        assert_eq!(fleet.members[0].region, "us-central1");
        assert_eq!(fleet.members[11].region, "us-east1");
        assert_eq!(fleet.per_region().len(), 10);
        assert_eq!(fleet.per_region()["us-central1"], 3);
        assert_eq!(fleet.per_region()["asia-southeast1"], 2);
    }

    #[test]
    fn one_region_holds_every_member() {
        let fleet = Fleet::new(3, 1);
        assert_eq!(fleet.per_region(), BTreeMap::from([("us-central1", 3)]));
        assert_eq!(fleet.members[2].id, "c00002");
    }

    #[test]
    fn the_configuration_declares_every_member_in_its_region() {
        let hcl = Fleet::new(2, 2).hcl(8);
        assert!(hcl.contains("    c00000 = \"us-central1\"\n"), "{hcl}");
        assert!(hcl.contains("    c00001 = \"us-east1\"\n"), "{hcl}");
        assert!(hcl.contains("max_node_count = 8"), "{hcl}");
        assert!(hcl.contains("stack   = \"bench\""), "{hcl}");
    }

    #[test]
    fn the_resource_carries_the_stack_label_and_the_region() {
        let member = &Fleet::new(1, 1).members[0];
        let resource = member.resource(4);
        assert_eq!(resource["labels"]["clusterform-stack"], STACK);
        assert_eq!(resource["nodePools"][1]["scalingSpec"]["maxNodeCount"], 4);
        assert_eq!(resource["nodePools"][1]["zone"], "us-central1-a");
        assert_eq!(
            member.name(),
            "projects/bench-project/locations/us-central1/modelDevelopmentClusters/c00000"
        );
    }
}
