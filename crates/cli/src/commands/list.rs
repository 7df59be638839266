//! `clusterform list`: the live clusters of a project and region (or of every location the
//! configuration uses): id, project, region, state, pools with node counts, stack label, last
//! update. The project and region columns are always there: a script reading the table must
//! not find its columns moving with the configuration.

use std::collections::BTreeSet;

use clusterform::views::table::table;
use clusterform_executor::ExecError;
use clusterform_model::{Cluster, LiveCluster, Location, STACK_LABEL};
use serde_json::json;

use crate::arguments::List;
use crate::commands::ExitStatus;
use crate::context;
use crate::error::CliError;
use crate::printer::Printer;

/// Lists live clusters as a table or JSON.
pub async fn run(args: &List, printer: &Printer) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let (locations, provider) = match (&args.project, &args.region) {
        (Some(project), Some(region)) => {
            let location = Location::new(project, region).map_err(ExecError::from)?;
            (BTreeSet::from([location]), None)
        }
        _ => {
            let config =
                context::load_config(dir, context::variable_inputs(&args.variables)?, printer)
                    .await?;
            let mut locations = config.locations();
            if locations.is_empty() {
                let project = args.project.as_ref().or(config.provider.project.as_ref());
                let region = args.region.as_ref().or(config.provider.region.as_ref());
                let location = Location::new(
                    project.map_or("", String::as_str),
                    region.map_or("", String::as_str),
                );
                locations.insert(location.map_err(ExecError::from)?);
            }
            (locations, Some(config.provider))
        }
    };
    let connection =
        context::connect(args.endpoint.as_deref(), provider.as_ref(), dir, printer).await?;
    let clusters = clusterform_executor::refresh(&connection.client, &locations, &[]).await?;
    if args.json {
        let rows: Vec<_> = clusters.iter().map(json_row).collect();
        printer.result(&serde_json::to_string_pretty(&rows).unwrap_or_default());
    } else if clusters.is_empty() {
        printer.result("No clusters.");
    } else {
        printer.result(&clusters_table(&clusters));
    }
    Ok(ExitStatus::Success)
}

fn clusters_table(clusters: &[LiveCluster]) -> String {
    let mut rows = vec![[
        "ID".to_owned(),
        "PROJECT".to_owned(),
        "REGION".to_owned(),
        "STATE".to_owned(),
        "POOLS (min-max(nodes))".to_owned(),
        "STACK".to_owned(),
        "UPDATED".to_owned(),
    ]];
    for LiveCluster { address, cluster } in clusters {
        rows.push([
            address.id().to_string(),
            address.project().to_owned(),
            address.region().to_owned(),
            cluster.state().unwrap_or("-").to_owned(),
            pools(cluster),
            cluster.label(STACK_LABEL).unwrap_or("-").to_owned(),
            cluster.update_time.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    table(&rows)
}

fn json_row(LiveCluster { address, cluster }: &LiveCluster) -> serde_json::Value {
    json!({
        "id": address.id().as_str(),
        "project": address.project(),
        "region": address.region(),
        "name": cluster.name,
        "state": cluster.state(),
        "node_pools": cluster.node_pools.iter().flatten().map(|p| {
            let scaling = p.scaling_spec.as_ref();
            json!({
                "id": p.id,
                "min_node_count": scaling.and_then(|s| s.min_node_count).unwrap_or(0),
                "max_node_count": scaling.and_then(|s| s.max_node_count).unwrap_or(0),
                "nodes": cluster.nodes_reported(&p.id),
            })
        }).collect::<Vec<_>>(),
        "stack": cluster.label(STACK_LABEL),
        "update_time": cluster.update_time,
    })
}

/// `login:1-1 cpu:0-4(2)`: each pool's scaling bounds, and its nodes when the service
/// reports them.
fn pools(cluster: &Cluster) -> String {
    cluster
        .node_pools
        .iter()
        .flatten()
        .map(|p| {
            let scaling = p.scaling_spec.as_ref();
            let nodes = cluster
                .nodes_reported(&p.id)
                .map_or_else(String::new, |n| format!("({n})"));
            format!(
                "{}:{}-{}{nodes}",
                p.id,
                scaling.and_then(|s| s.min_node_count).unwrap_or(0),
                scaling.and_then(|s| s.max_node_count).unwrap_or(0)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_show_bounds_and_reported_nodes() {
        let cluster: Cluster = serde_json::from_value(serde_json::json!({
            "nodePools": [
                {"id": "login", "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "1"}},
                {"id": "cpu", "scalingSpec": {"maxNodeCount": "4"}}
            ],
            "clusterStatus": {"nodesStatus": [
                {"nodePoolId": "login"}, {"nodePoolId": "cpu"}, {"nodePoolId": "cpu"}
            ]}
        }))
        .unwrap();
        assert_eq!(pools(&cluster), "login:1-1(1) cpu:0-4(2)");
    }

    #[test]
    fn the_table_names_each_cluster_s_project_and_region() {
        let served = clusterform_testkit::served(
            "train01",
            &clusterform_testkit::seed(),
            Some("research"),
            "RUNNING",
        );
        let mut elsewhere = served.clone();
        elsewhere["name"] = json!(
            served["name"]
                .as_str()
                .unwrap()
                .replace("us-central1", "europe-west4")
        );
        let clusters = [
            clusterform_testkit::cluster(served),
            LiveCluster::read_at(
                &Location::new("my-proj", "europe-west4").unwrap(),
                serde_json::from_value(elsewhere).unwrap(),
            )
            .unwrap(),
        ];
        insta::assert_snapshot!(clusters_table(&clusters), @r"
        ID       PROJECT  REGION        STATE    POOLS (min-max(nodes))  STACK     UPDATED
        train01  my-proj  us-central1   RUNNING  cpu:0-4 login:1-1       research  2026-11-02T10:30:00Z
        train01  my-proj  europe-west4  RUNNING  cpu:0-4 login:1-1       research  2026-11-02T10:30:00Z
        ");
    }
}
