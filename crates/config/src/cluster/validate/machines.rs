//! What the service refuses, or may refuse, about a pool's machines: the boot disk of the
//! newest GPU machine types, reservation affinities, and (a warning) A4X node counts.

use clusterform_model::NodePool;

use super::{ClusterChecks, resource_segments};

/// Machine types whose boot disk must be `hyperdisk-balanced` or unset: a real create answered
/// 400 for `pd-standard` on A4, and the *Create cluster* page's examples for A4, A4X and A3
/// Ultra all use `hyperdisk-balanced`.
const HYPERDISK_ONLY: [&str; 3] = ["a4-highgpu-8g", "a4x-highgpu-4g", "a3-ultragpu-8g"];
const HYPERDISK: &str = "hyperdisk-balanced";

/// "The only supported value" of `reservation_affinity_type` (*Create cluster*).
const SPECIFIC_RESERVATION: &str = "SPECIFIC_RESERVATION";

/// The shapes of a reservation name: a reservation, one of its blocks, one of a block's
/// sub-blocks (the Terraform provider's resource takes all three).
const RESERVATION_PATTERNS: [&str; 3] = [
    "projects/{P}/zones/{Z}/reservations/{R}",
    "projects/{P}/zones/{Z}/reservations/{R}/reservationBlocks/{B}",
    "projects/{P}/zones/{Z}/reservations/{R}/reservationBlocks/{B}/reservationSubBlocks/{S}",
];

/// A4X VMs come in NVLink domains of 18 (*Compute resources*, A4X).
const A4X: &str = "a4x-highgpu-4g";
const NVLINK_DOMAIN_VMS: i64 = 18;

impl ClusterChecks<'_> {
    pub(super) fn boot_disk(&mut self, path: &str, pool: &NodePool) {
        let Some(machine_type) = machine_type(pool).filter(|m| HYPERDISK_ONLY.contains(m)) else {
            return;
        };
        let Some(disk_type) = pool
            .boot_disk
            .as_ref()
            .and_then(|d| d.boot_disk_type.as_deref())
            .filter(|t| *t != HYPERDISK)
        else {
            return;
        };
        // The service's own words, so that the refusal a user may have met reads the same.
        self.error(
            &format!("{path}.boot_disk.boot_disk_type"),
            format!(
                "Machine type {machine_type} requires boot_disk_type to be unset (the default) or \"{HYPERDISK}\"; got \"{disk_type}\""
            ),
            Some(format!(
                "remove boot_disk_type, or set boot_disk_type = \"{HYPERDISK}\""
            )),
        );
    }

    pub(super) fn reservation(&mut self, path: &str, pool: &NodePool) {
        let Some(affinity) = pool
            .machine_spec
            .as_ref()
            .and_then(|m| m.reservation_affinity.as_ref())
        else {
            return;
        };
        let base = format!("{path}.machine_spec.reservation_affinity");
        match affinity.reservation_affinity_type.as_deref() {
            Some(SPECIFIC_RESERVATION) => {}
            other => self.error(
                &format!("{base}.reservation_affinity_type"),
                format!(
                    "reservation_affinity_type of pool `{}` is {}; the service takes only {SPECIFIC_RESERVATION}",
                    pool.id,
                    other.unwrap_or("not set")
                ),
                Some(format!(
                    "set reservation_affinity_type = \"{SPECIFIC_RESERVATION}\" (the only supported value) and name the reservations in `values`"
                )),
            ),
        }
        let values_path = format!("{base}.values");
        for (index, value) in affinity.values.iter().flatten().enumerate() {
            if !is_reservation_name(value) {
                let hint = self.reservation_hint(value, pool);
                self.element_error(
                    &values_path,
                    index,
                    format!("`{value}` is not a full reservation name"),
                    hint,
                );
            }
        }
    }

    /// The full name to write: built from a bare name with the cluster's project and the
    /// pool's zone, else the pattern.
    fn reservation_hint(&self, value: &str, pool: &NodePool) -> String {
        if value.is_empty() || value.contains('/') {
            return format!(
                "expected `{}`, optionally followed by `/reservationBlocks/{{B}}` and `/reservationSubBlocks/{{S}}`",
                RESERVATION_PATTERNS[0]
            );
        }
        let project = self.project.filter(|p| !p.is_empty()).unwrap_or("PROJECT");
        let zone = pool.zone.as_deref().unwrap_or("ZONE");
        format!(
            "use the full name: \"projects/{project}/zones/{zone}/reservations/{value}\" (a shared reservation names the project that owns it)"
        )
    }

    /// A4X node counts that are not whole NVLink domains.
    pub(super) fn nvlink_domains(&mut self, path: &str, pool: &NodePool) {
        if machine_type(pool) != Some(A4X) {
            return;
        }
        let Some(scaling) = &pool.scaling_spec else {
            return;
        };
        for (name, count) in [
            ("min_node_count", scaling.min_node_count),
            ("max_node_count", scaling.max_node_count),
        ] {
            let Some(count) = count.filter(|c| *c > 0 && c % NVLINK_DOMAIN_VMS != 0) else {
                continue;
            };
            let below = count / NVLINK_DOMAIN_VMS * NVLINK_DOMAIN_VMS;
            let above = below + NVLINK_DOMAIN_VMS;
            let choices = if below == 0 {
                above.to_string()
            } else {
                format!("{below} or {above}")
            };
            self.warning(
                &format!("{path}.scaling_spec.{name}"),
                format!(
                    "{name} of A4X pool `{}` is {count}, not a multiple of {NVLINK_DOMAIN_VMS}: A4X VMs come in NVLink domains of {NVLINK_DOMAIN_VMS}",
                    pool.id
                ),
                format!("use a multiple of {NVLINK_DOMAIN_VMS}, such as {choices}"),
            );
        }
    }
}

fn machine_type(pool: &NodePool) -> Option<&str> {
    pool.machine_spec.as_ref()?.machine_type.as_deref()
}

fn is_reservation_name(value: &str) -> bool {
    RESERVATION_PATTERNS
        .iter()
        .any(|pattern| resource_segments(value, pattern).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservation_names_may_name_blocks_and_sub_blocks() {
        for good in [
            "projects/p/zones/us-central1-a/reservations/r",
            "projects/p/zones/us-central1-a/reservations/r/reservationBlocks/b",
            "projects/p/zones/z/reservations/r/reservationBlocks/b/reservationSubBlocks/s",
        ] {
            assert!(is_reservation_name(good), "{good}");
        }
        for bad in [
            "r",
            "projects/p/reservations/r",
            "projects/p/zones/z/reservations/",
            "projects/p/zones/z/reservations/r/reservationSubBlocks/s",
        ] {
            assert!(!is_reservation_name(bad), "{bad}");
        }
    }
}
