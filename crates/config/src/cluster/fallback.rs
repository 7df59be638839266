//! The `fallback` blocks of a node pool: what each one sets, and the whole pool it makes (an
//! alternative) by putting what it sets in place of the pool's own members.

use clusterform_model::{BootDisk, Cluster, MachineSpec, NodePool, ProvisioningModel, ScalingSpec};
use serde::Deserialize;

use crate::config::PoolFallbacks;

/// The block a node pool's alternatives are written in.
pub(crate) const FALLBACK_BLOCK: &str = "fallback";

/// Whether blocks of the message at generic path `generic` take `fallback` blocks: only a
/// node pool's do.
pub(crate) fn takes_fallbacks(generic: &str) -> bool {
    generic == "node_pools[]"
}

/// What one `fallback` block sets, decoded like the same members of a node pool: `None` where
/// the block leaves the member to the pool. The names are [`crate::FALLBACK_FIELDS`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FallbackFields {
    pub machine_spec: Option<MachineSpec>,
    pub provisioning_model: Option<ProvisioningModel>,
    pub flex_start_max_duration: Option<String>,
    pub boot_disk: Option<BootDisk>,
    pub scaling_spec: Option<ScalingSpec>,
}

/// One `fallback` block of a pool, decoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FallbackBlock {
    /// Its place among the pool's `fallback` blocks, from 1: the attempt it is tried in, and
    /// the `fallback[N]` segment of the paths that find it in the source.
    pub ordinal: usize,
    pub fields: FallbackFields,
    /// Whether a value inside it depends on unknown variables (only in a run of `validate`):
    /// what it makes is then not what it will be, and cannot be compared with anything.
    pub unknown: bool,
}

/// The `fallback` blocks of one pool, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PoolFallbackBlocks {
    pub pool: String,
    pub blocks: Vec<FallbackBlock>,
}

impl FallbackFields {
    /// The whole pool this block makes of `pool`: each member it sets replaces the pool's
    /// whole. What the pool sets only for its own provisioning model is left behind when the
    /// alternative's model is another one and the block does not set it again: the service
    /// refuses a `flex_start_max_duration` without `FLEX_START`, and a `reservation_affinity`
    /// with `ON_DEMAND`, `SPOT` or `FLEX_START` (the model's rules), so "the same machines on
    /// Spot" takes one line.
    pub fn alternative(&self, pool: &NodePool) -> NodePool {
        let mut alternative = pool.clone();
        replace(&mut alternative.machine_spec, &self.machine_spec);
        replace(
            &mut alternative.provisioning_model,
            &self.provisioning_model,
        );
        replace(
            &mut alternative.flex_start_max_duration,
            &self.flex_start_max_duration,
        );
        replace(&mut alternative.boot_disk, &self.boot_disk);
        replace(&mut alternative.scaling_spec, &self.scaling_spec);
        if self.flex_start_max_duration.is_none() && !alternative.takes_flex_start_max_duration() {
            alternative.flex_start_max_duration = None;
        }
        if self.machine_spec.is_none()
            && alternative.refuses_reservation_affinity()
            && let Some(machine) = alternative.machine_spec.as_mut()
        {
            machine.reservation_affinity = None;
        }
        alternative
    }
}

/// `target` replaced whole by `value` when that is set.
fn replace<T: Clone>(target: &mut Option<T>, value: &Option<T>) {
    if value.is_some() {
        target.clone_from(value);
    }
}

/// The alternatives of every pool of `cluster` that has `fallback` blocks, pools in
/// declaration order.
pub(crate) fn pool_fallbacks(
    cluster: &Cluster,
    blocks: &[PoolFallbackBlocks],
) -> Vec<PoolFallbacks> {
    cluster
        .node_pools
        .iter()
        .flatten()
        .filter_map(|pool| {
            let of_pool = blocks.iter().find(|of_pool| of_pool.pool == pool.id)?;
            Some(PoolFallbacks {
                pool: pool.id.clone(),
                alternatives: of_pool
                    .blocks
                    .iter()
                    .map(|block| block.fields.alternative(pool))
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clusterform_model::ReservationAffinity;

    fn reserved_flex_pool() -> NodePool {
        NodePool {
            id: "gpu".to_owned(),
            machine_spec: Some(MachineSpec {
                machine_type: Some("a4-highgpu-8g".to_owned()),
                reservation_affinity: Some(ReservationAffinity::default()),
                ..MachineSpec::default()
            }),
            provisioning_model: Some(ProvisioningModel::Reservation),
            flex_start_max_duration: Some("3600s".to_owned()),
            zone: Some("us-central1-b".to_owned()),
            ..NodePool::default()
        }
    }

    #[test]
    fn it_decodes_exactly_the_fallback_fields() {
        for name in crate::FALLBACK_FIELDS {
            let unset = serde_json::json!({ *name: null });
            assert!(
                serde_json::from_value::<FallbackFields>(unset).is_ok(),
                "{name}"
            );
        }
        let zone = serde_json::json!({ "zone": "us-central1-a" });
        assert!(serde_json::from_value::<FallbackFields>(zone).is_err());
    }

    #[test]
    fn the_members_it_sets_replace_the_pools_and_the_rest_is_the_pools() {
        let pool = reserved_flex_pool();
        let fields = FallbackFields {
            boot_disk: Some(BootDisk {
                boot_disk_size_gb: Some(200),
                ..BootDisk::default()
            }),
            ..FallbackFields::default()
        };
        let alternative = fields.alternative(&pool);
        assert_eq!(alternative.boot_disk, fields.boot_disk);
        assert_eq!(alternative.machine_spec, pool.machine_spec);
        assert_eq!(alternative.zone, pool.zone);
    }

    #[test]
    fn another_provisioning_model_leaves_the_pools_model_specific_members_behind() {
        let pool = reserved_flex_pool();
        let spot = FallbackFields {
            provisioning_model: Some(ProvisioningModel::Spot),
            ..FallbackFields::default()
        };
        let alternative = spot.alternative(&pool);
        assert_eq!(alternative.flex_start_max_duration, None);
        let machine = alternative.machine_spec.unwrap();
        assert_eq!(machine.reservation_affinity, None);
        assert_eq!(machine.machine_type.as_deref(), Some("a4-highgpu-8g"));
    }

    #[test]
    fn what_the_block_sets_itself_is_kept_whatever_the_model() {
        let pool = reserved_flex_pool();
        let fields = FallbackFields {
            provisioning_model: Some(ProvisioningModel::Spot),
            flex_start_max_duration: Some("60s".to_owned()),
            machine_spec: pool.machine_spec.clone(),
            ..FallbackFields::default()
        };
        let alternative = fields.alternative(&pool);
        assert_eq!(alternative.flex_start_max_duration.as_deref(), Some("60s"));
        assert_eq!(alternative.machine_spec, pool.machine_spec);
    }
}
