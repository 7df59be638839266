//! The words of what a change does to the GPUs ([`GpuChange`]): per accelerator type, what is
//! added (`+`) and removed (`-`) on the static nodes now and at most, as the pools may scale
//! (a replacement of like for like both removes and adds); the pools whose GPUs cannot be told
//! named after.

use clusterform_planner::{GpuChange, GpuShift, Shift, UnknownPool};

/// `GPUs: +16 NVIDIA_B200 now (+32 at most)`; `None` when the change touches no GPU.
pub fn cluster_line(change: &GpuChange) -> Option<String> {
    counts(change).map(|counts| format!("GPUs: {counts}"))
}

/// `GPUs in total: …`, after the plan's counts; `None` when the plan touches no GPU.
pub fn total_line(change: &GpuChange) -> Option<String> {
    counts(change).map(|counts| format!("GPUs in total: {counts}"))
}

/// The counts of each type, then the unknown pools; `None` when there is neither.
pub fn counts(change: &GpuChange) -> Option<String> {
    if change.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = change
        .by_type
        .iter()
        .map(|(kind, shift)| type_counts(kind, *shift))
        .collect();
    if !change.unknown_pools.is_empty() {
        let pools: Vec<String> = change.unknown_pools.iter().map(unknown_pool).collect();
        parts.push(format!("unknown for {}", pools.join(", ")));
    }
    Some(parts.join("; "))
}

/// `+16 NVIDIA_B200 now (+32 at most)`.
fn type_counts(kind: &str, shift: GpuShift) -> String {
    format!(
        "{} {kind} now ({} at most)",
        signed(shift.now),
        signed(shift.at_most)
    )
}

/// `+16`, `-16`, `-16 +16` (removed and added), `0`.
fn signed(shift: Shift) -> String {
    match (shift.removed, shift.added) {
        (0, 0) => "0".to_owned(),
        (0, added) => format!("+{added}"),
        (removed, 0) => format!("-{removed}"),
        (removed, added) => format!("-{removed} +{added}"),
    }
}

/// `pool gpu (machine type x9-custom-8g is not in the catalogue)`.
fn unknown_pool(pool: &UnknownPool) -> String {
    match &pool.machine_type {
        Some(machine) => format!(
            "pool {} (machine type {machine} is not in the catalogue)",
            pool.pool
        ),
        None => format!("pool {} (no machine type)", pool.pool),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn shift(added: u64, removed: u64) -> Shift {
        Shift { added, removed }
    }

    #[test]
    fn a_cluster_line_signs_what_is_added_and_removed_now_and_at_most() {
        let change = GpuChange {
            by_type: BTreeMap::from([
                (
                    "NVIDIA_B200".to_owned(),
                    GpuShift {
                        now: shift(16, 0),
                        at_most: shift(32, 0),
                    },
                ),
                (
                    "NVIDIA_H200_141GB".to_owned(),
                    GpuShift {
                        now: shift(8, 8),
                        at_most: shift(0, 16),
                    },
                ),
            ]),
            unknown_pools: vec![UnknownPool {
                pool: "big".to_owned(),
                machine_type: Some("x9-custom-8g".to_owned()),
            }],
        };
        assert_eq!(
            cluster_line(&change).unwrap(),
            "GPUs: +16 NVIDIA_B200 now (+32 at most); -8 +8 NVIDIA_H200_141GB now (-16 at most); \
             unknown for pool big (machine type x9-custom-8g is not in the catalogue)"
        );
    }

    #[test]
    fn a_scale_up_of_the_maximum_alone_adds_nothing_now() {
        let change = GpuChange {
            by_type: BTreeMap::from([(
                "NVIDIA_B200".to_owned(),
                GpuShift {
                    now: shift(0, 0),
                    at_most: shift(16, 0),
                },
            )]),
            unknown_pools: Vec::new(),
        };
        assert_eq!(
            total_line(&change).unwrap(),
            "GPUs in total: 0 NVIDIA_B200 now (+16 at most)"
        );
    }

    #[test]
    fn a_change_without_gpus_has_no_line() {
        assert_eq!(cluster_line(&GpuChange::default()), None);
    }
}
