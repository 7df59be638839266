//! Hints: what a user can do about a library's error, worded in terms of this binary's commands
//! and flags (`clusterform import`, `--target`). The libraries say what went wrong; only the
//! binary knows how its user can fix it.

use clusterform_planner::PlanError;

/// The hint for a planning error.
pub fn plan_hint(error: &PlanError) -> Option<String> {
    match error {
        PlanError::Unowned { id, .. } => Some(format!(
            "run `clusterform import {id}` to adopt it into this stack, or pick another cluster ID"
        )),
        PlanError::OwnedByOtherStack { stack, .. } => Some(format!(
            "manage it from the configuration of stack `{stack}`, or pick another cluster ID"
        )),
        PlanError::PreventDestroy { .. } => Some(
            "remove `prevent_destroy = true` from the cluster's lifecycle block first, if this is intended"
                .to_owned(),
        ),
        PlanError::BrokenButProtected { .. } => Some(
            "repair the cluster in the console, or remove `prevent_destroy = true` to let clusterform replace it"
                .to_owned(),
        ),
        PlanError::RemovedPoolStillReferenced { .. } => Some(
            "set `partition` blocks and `login_node_pool_id` in the configuration so that nothing refers to the removed pool"
                .to_owned(),
        ),
        PlanError::UnknownTarget { .. } | PlanError::UnknownReplace { .. } => {
            Some("use a cluster ID from the configuration (see `clusterform list`)".to_owned())
        }
        PlanError::Several(errors) => {
            let mut hints: Vec<String> = errors.iter().filter_map(plan_hint).collect();
            hints.dedup();
            (!hints.is_empty()).then(|| hints.join("\n  "))
        }
        PlanError::Encode { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unowned(id: &str) -> PlanError {
        PlanError::Unowned {
            id: id.into(),
            project: "p".into(),
            region: "r".into(),
            stack: "s".into(),
        }
    }

    #[test]
    fn planning_errors_point_at_the_command_that_fixes_them() {
        let hint = plan_hint(&unowned("train01")).unwrap();
        assert!(hint.contains("clusterform import train01"), "{hint}");
        let several = PlanError::Several(vec![
            unowned("train01"),
            PlanError::OwnedByOtherStack {
                id: "train02".into(),
                stack: "prod".into(),
            },
        ]);
        let hint = plan_hint(&several).unwrap();
        assert!(hint.contains("clusterform import train01"), "{hint}");
        assert!(hint.contains("stack `prod`"), "{hint}");
        let dangling = PlanError::RemovedPoolStillReferenced {
            id: "train01".into(),
            problems: vec![],
        };
        assert!(plan_hint(&dangling).unwrap().contains("login_node_pool_id"));
    }
}
