//! `clusterform list`: the live clusters wherever the stack's clusters may be — every region
//! the service runs in and every region the configuration names, in every project it names, as
//! a plan reads them — or of the projects and regions `--project` / `--region` narrow it to:
//! project, region, id, state, health (from the API and, for a `RUNNING` cluster, its Slurm, as
//! `status` reads it), pools with node counts, accelerators, stack label, last update; in the
//! order of every table of clusters (project, region, ID).
//! The project and region columns are always there: a script reading the table must not find
//! its columns moving with the configuration.

use std::collections::BTreeSet;

use clusterform::format::table::{
    cluster_headers, cluster_row, service_time, state_cell, table, unread_row,
};
use clusterform::format::{costs, fleet, status, status_json};
use clusterform_executor::{ClusterHealth, ExecError, FleetTotals};
use clusterform_model::{
    Cluster, LiveCluster, Location, NodePool, RefreshLocations, UnreadLocation,
};
use serde_json::json;
use time::OffsetDateTime;

use crate::arguments::List;
use crate::context;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;
use crate::workflow::{self, EarlierRuns, KnownClusters};

/// Lists live clusters as a table or JSON.
pub async fn run(args: &List, printer: &Printer) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    // A configuration, when there is one, says where to look and which endpoint to ask;
    // without one, `--project` (and `--region`) say where.
    let config = if context::has_configuration(dir)? {
        let inputs = context::variable_inputs(&args.variables)?;
        Some(context::load_config(dir, inputs, printer).await?)
    } else {
        None
    };
    if config.is_none() && args.project.is_none() {
        return Err(CliError::Usage(NEEDS_A_PROJECT.to_owned()));
    }
    let provider = config.as_ref().map(|config| &config.provider);
    let prices = context::prices(args.prices.as_deref(), provider, printer)?;
    let connection = context::connect(args.endpoint.as_ref(), provider, dir, printer).await?;
    // With a configuration, the stack's clusters are looked for where a plan looks, the places
    // its earlier runs put clusters included.
    let earlier = match &config {
        Some(_) => Some(EarlierRuns::read(dir, &connection, printer).await),
        None => None,
    };
    let scanned = config
        .as_ref()
        .zip(earlier.as_ref())
        .map(|(config, earlier)| earlier.scanned(config));
    let locations = listed_locations(scanned, args.project.as_deref(), args.region.as_deref())?;
    let refreshed = clusterform_executor::refresh(&connection.client, &locations, &[]).await?;
    let known = config
        .as_ref()
        .zip(earlier.as_ref())
        .map_or_else(KnownClusters::default, |(config, earlier)| {
            earlier.known(config)
        });
    let unread = known.unread(&refreshed.refused);
    workflow::report_unread(printer, &unread);
    let mut clusters = refreshed.live;
    clusters.sort_by(|a, b| a.address.cmp(&b.address));
    let now = OffsetDateTime::now_utc();
    let health = clusterform_executor::inspect_health(&connection.client, &clusters, 0, now).await;
    let listed: Vec<Listed> = clusters.iter().zip(&health).collect();
    let totals = FleetTotals::of(&clusters, &health);
    let burn_rate = prices.map(|prices| prices.fleet_burn_rate(&clusters));
    if args.json {
        let mut document = json_document(&listed, &unread);
        document["totals"] = fleet::totals_json(&totals, burn_rate.as_ref());
        printer.result(&serde_json::to_string_pretty(&document).unwrap_or_default());
    } else if listed.is_empty() && status::unread_rows(&unread).next().is_none() {
        printer.result("No clusters.");
    } else {
        let mut text = clusters_table(&listed, &unread, printer.color());
        if totals.clusters > 0 {
            if let Some(burn_rate) = &burn_rate {
                text.push('\n');
                text.push_str(&costs::burn_rate_table(burn_rate));
            }
            text.push('\n');
            text.push_str(&fleet::totals_line(&totals, burn_rate.as_ref()));
            text.push('\n');
        }
        printer.result(&text);
    }
    workflow::complete_view(&unread)?;
    Ok(ExitStatus::Success)
}

/// What `list` says without a configuration or `--project`.
const NEEDS_A_PROJECT: &str =
    "list needs a configuration, or --project P (with --region R for one region only)";

/// Where `list` looks: where a plan of the configuration looks (`scanned`; or, without a
/// configuration, every service region of `--project`), narrowed to `--project` and `--region`
/// when given — a project or region the configuration does not name is looked in all the same.
/// A location the configuration names, or the one location both flags name, must answer; a List
/// refused elsewhere is a note.
fn listed_locations(
    scanned: Option<RefreshLocations>,
    project: Option<&str>,
    region: Option<&str>,
) -> Result<RefreshLocations, CliError> {
    let everywhere = match (scanned, project) {
        (Some(scanned), _) => scanned,
        (None, Some(project)) => RefreshLocations::everywhere([], [project], region),
        (None, None) => return Err(CliError::Usage(NEEDS_A_PROJECT.to_owned())),
    };
    let all = || everywhere.iter().map(|(location, _)| location);
    let projects: BTreeSet<&str> = match project {
        Some(project) => BTreeSet::from([project]),
        None => all().map(Location::project).collect(),
    };
    let regions: BTreeSet<&str> = match region {
        Some(region) => BTreeSet::from([region]),
        None => all().map(Location::region).collect(),
    };
    let asked_for_one = project.is_some() && region.is_some();
    let mut narrowed = RefreshLocations::default();
    for listed_project in &projects {
        for listed_region in &regions {
            let location = Location::new(listed_project, listed_region).map_err(ExecError::from)?;
            if asked_for_one || everywhere.is_named(&location) {
                narrowed.add_named(location);
            } else {
                narrowed.add_other(location);
            }
        }
    }
    if narrowed.is_empty() {
        return Err(CliError::Usage(
            "the configuration names no project to list: pass --project P".to_owned(),
        ));
    }
    Ok(narrowed)
}

/// A listed cluster and its health.
type Listed<'a> = (&'a LiveCluster, &'a ClusterHealth);

/// The version of `list --json`'s shape: raised when a field changes meaning or goes away.
const LIST_FORMAT_VERSION: u32 = 1;

/// `{format_version, clusters: [...], unreadable_locations: [...]}`.
fn json_document(listed: &[Listed], unread: &[UnreadLocation]) -> serde_json::Value {
    let clusters: Vec<_> = listed
        .iter()
        .map(|&(live, health)| json_row(live, health))
        .collect();
    json!({
        "format_version": LIST_FORMAT_VERSION,
        "clusters": clusters,
        "unreadable_locations": status_json::unreadable_locations(unread),
    })
}

/// The clusters, then a row per location that could not be listed; `color`: `ERROR` in red.
fn clusters_table(listed: &[Listed], unread: &[UnreadLocation], color: bool) -> String {
    let mut rows = vec![cluster_headers(&[
        "STATE",
        "HEALTH",
        "POOLS (min-max(nodes))",
        "ACCELERATORS",
        "STACK",
        "UPDATED",
    ])];
    for &(LiveCluster { address, cluster }, health) in listed {
        rows.push(cluster_row(
            address,
            [
                state_cell(cluster.state().unwrap_or("-"), color),
                status::health_cell(health),
                pools(cluster),
                accelerators(cluster),
                cluster.owner().unwrap_or("-").to_owned(),
                cluster
                    .update_time
                    .as_deref()
                    .map_or_else(|| "-".into(), service_time),
            ],
        ));
    }
    rows.extend(status::unread_rows(unread).map(|location| unread_row(location, 6)));
    table(&rows)
}

fn json_row(
    LiveCluster { address, cluster }: &LiveCluster,
    health: &ClusterHealth,
) -> serde_json::Value {
    json!({
        "id": address.id().as_str(),
        "project": address.project(),
        "region": address.region(),
        "name": cluster.name,
        "state": cluster.state(),
        "node_pools": cluster.node_pools.iter().flatten().map(|p| {
            let scaling = p.scaling_spec.as_ref();
            let (accelerator_type, accelerator_count) = accelerator(p).unzip();
            json!({
                "id": p.id,
                "min_node_count": scaling.and_then(|s| s.min_node_count).unwrap_or(0),
                "max_node_count": scaling.and_then(|s| s.max_node_count).unwrap_or(0),
                "nodes": cluster.nodes_reported(&p.id),
                "accelerator_type": accelerator_type,
                "accelerator_count": accelerator_count,
            })
        }).collect::<Vec<_>>(),
        "stack": cluster.owner(),
        "update_time": cluster.update_time,
        "health": status_json::health_summary(health),
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

/// A pool's accelerator type and count per node, when it has accelerators (a count without a
/// type, or the type `ACCELERATOR_TYPE_UNSPECIFIED`, is none; a machine type with built-in
/// accelerators has them whether or not the pool names them).
fn accelerator(pool: &NodePool) -> Option<(&str, u64)> {
    pool.machine_spec.as_ref()?.accelerators()
}

/// `gpu:NVIDIA_H200_141GB×8`: each pool with accelerators, its type and count per node; `-`
/// when no pool has any.
fn accelerators(cluster: &Cluster) -> String {
    let shown: Vec<String> = cluster
        .node_pools
        .iter()
        .flatten()
        .filter_map(|p| accelerator(p).map(|(kind, count)| format!("{}:{kind}×{count}", p.id)))
        .collect();
    if shown.is_empty() {
        "-".to_owned()
    } else {
        shown.join(" ")
    }
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

    fn not_asked(live: &LiveCluster) -> ClusterHealth {
        ClusterHealth {
            address: live.address.clone(),
            state: clusterform_executor::StateReading::Known(
                clusterform_model::ClusterState::Running,
            ),
            detail: None,
            error: None,
            pools: Vec::new(),
            events: Vec::new(),
            slurm: clusterform_executor::SlurmHealth::NotAsked,
            problems: Vec::new(),
            login: None,
        }
    }

    /// A day-two shortage in the pool `gpu`.
    fn shortage(live: &LiveCluster) -> ClusterHealth {
        let shortage = clusterform_executor::NodesNotStarting {
            pool: Some("gpu".to_owned()),
            started: 0,
            wanted: 2,
            pending_jobs: 1,
            last_failure: clusterform_executor::StartFailure {
                node: "gpu-0".to_owned(),
                reason: "STOCKOUT in europe-west4-a".to_owned(),
                at: None,
            },
        };
        ClusterHealth {
            problems: vec![clusterform_executor::Problem::NodesNotStarting(shortage)],
            ..not_asked(live)
        }
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
        // The service writes as many fractional digits as it likes; the column has one
        // precision.
        elsewhere["updateTime"] = json!("2026-11-02T10:30:00.123456Z");
        elsewhere["nodePools"].as_array_mut().unwrap().push(json!({
            "id": "gpu",
            "machineSpec": {
                "machineType": "a3-ultragpu-8g",
                "acceleratorType": "NVIDIA_H200_141GB",
                "acceleratorCount": 8
            },
            "scalingSpec": {"minNodeCount": "0", "maxNodeCount": "2"}
        }));
        let clusters = [
            clusterform_testkit::cluster(served),
            LiveCluster::read_at(
                &Location::new("my-proj", "europe-west4").unwrap(),
                serde_json::from_value(elsewhere).unwrap(),
            )
            .unwrap(),
        ];
        let health = [not_asked(&clusters[0]), shortage(&clusters[1])];
        let listed: Vec<Listed> = clusters.iter().zip(&health).collect();
        insta::assert_snapshot!(clusters_table(&listed, &[], false), @"
        PROJECT  REGION        ID       STATE    HEALTH                                                   POOLS (min-max(nodes))     ACCELERATORS             STACK     UPDATED
        my-proj  us-central1   train01  RUNNING  -                                                        cpu:0-4 login:1-1          -                        research  2026-11-02T10:30:00Z
        my-proj  europe-west4  train01  RUNNING  gpu: 0/2 started, 1 pending, STOCKOUT in europe-west4-a  cpu:0-4 login:1-1 gpu:0-2  gpu:NVIDIA_H200_141GB×8  research  2026-11-02T10:30:00Z
        ");
        let row = json_row(&clusters[1], &health[1]);
        assert_eq!(row["health"]["needs_attention"], true);
        assert_eq!(row["health"]["problems"][0]["kind"], "nodes_not_starting");
        assert_eq!(
            row["node_pools"][2]["accelerator_type"],
            "NVIDIA_H200_141GB"
        );
        assert_eq!(row["node_pools"][2]["accelerator_count"], 8);
        assert_eq!(
            row["node_pools"][0]["accelerator_type"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn accelerators_show_per_pool_and_unspecified_is_none() {
        let cluster: Cluster = serde_json::from_value(json!({
            "nodePools": [
                {"id": "a", "machineSpec": {"acceleratorType": "NVIDIA_B200", "acceleratorCount": 8}},
                {"id": "b", "machineSpec": {"acceleratorType": "ACCELERATOR_TYPE_UNSPECIFIED"}},
                {"id": "c", "machineSpec": {"acceleratorCount": 2}},
                {"id": "d", "machineSpec": {"acceleratorType": "NVIDIA_L4", "acceleratorCount": "1"}},
                {"id": "e", "machineSpec": {"machineType": "a3-ultragpu-8g"}}
            ]
        }))
        .unwrap();
        assert_eq!(
            accelerators(&cluster),
            "a:NVIDIA_B200×8 d:NVIDIA_L4×1 e:NVIDIA_H200_141GB×8",
            "a machine type's built-in accelerators count unnamed"
        );
        assert_eq!(accelerators(&Cluster::default()), "-");
    }

    fn location(project: &str, region: &str) -> Location {
        Location::new(project, region).unwrap()
    }

    #[test]
    fn without_a_configuration_the_project_is_needed_and_the_region_narrows() {
        assert!(matches!(
            listed_locations(None, None, Some("us-central1")),
            Err(CliError::Usage(_))
        ));
        let every_region = listed_locations(None, Some("acme-ml"), None).unwrap();
        assert_eq!(every_region.len(), clusterform_model::SERVICE_REGIONS.len());
        assert!(every_region.named_locations().is_empty());
        let one = listed_locations(None, Some("acme-ml"), Some("me-west9")).unwrap();
        let named: Vec<_> = one.named_locations().iter().cloned().collect();
        assert_eq!(named, [location("acme-ml", "me-west9")]);
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn with_a_configuration_the_flags_narrow_its_locations() {
        let hcl = format!(
            "{}\ncluster \"train01\" {{{}}}\n",
            clusterform_testkit::hcl::PROVIDER_HCL,
            clusterform_testkit::hcl::SEED_BODY_HCL,
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.hcl"), hcl).unwrap();
        let config =
            clusterform_config::load(dir.path(), &clusterform_config::VariableInputs::default())
                .unwrap()
                .config;
        let scanned = || Some(config.refresh_locations());
        let all = listed_locations(scanned(), None, None).unwrap();
        assert_eq!(all, config.refresh_locations());
        let region = listed_locations(scanned(), None, Some("europe-west4")).unwrap();
        assert_eq!(region.len(), 1);
        assert!(
            region.named_locations().is_empty(),
            "only the configured location is named"
        );
        let home = listed_locations(scanned(), None, Some("us-central1")).unwrap();
        assert!(home.is_named(&location("my-proj", "us-central1")));
        let other = listed_locations(scanned(), Some("proj-two"), None).unwrap();
        assert_eq!(other.len(), clusterform_model::SERVICE_REGIONS.len());
        assert!(
            other
                .iter()
                .all(|(l, named)| l.project() == "proj-two" && !named)
        );
    }
}
