//! `clusterform import ID`: takes over a cluster created elsewhere by adding this stack's
//! ownership label (a labels-only PATCH), then prints the HCL that describes it, so that a
//! `plan` right after shows no changes.

use std::path::Path;
use std::time::Duration;

use clusterform_executor::{ApiClient, OperationWaiter, Submitted, WaitOptions};
use clusterform_files::{Access, write_atomic};
use clusterform_model::{Cluster, ClusterName, STACK_LABEL};

use crate::arguments::Import;
use crate::commands::{ExitStatus, take_lock};
use crate::context;
use crate::error::CliError;
use crate::printer::Printer;

/// How long the labels-only update may take.
const LABEL_UPDATE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Labels the cluster as this stack's and writes its HCL.
pub async fn run(args: &Import, printer: &Printer) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let _lock = take_lock(dir, "import", args.lock_timeout, printer)?;
    let config = context::load_config(dir, &args.variables, printer)?;
    let project = args.project.clone().or(config.provider.project.clone());
    let region = args.region.clone().or(config.provider.region.clone());
    let (Some(project), Some(region)) = (project, region) else {
        return Err(CliError::Usage(
            "import needs --project and --region, or a provider block that sets them".into(),
        ));
    };
    let name = ClusterName::new(&project, &region, &args.id)
        .map_err(|err| CliError::Usage(err.to_string()))?;
    let connection = context::connect(
        args.endpoint.as_deref(),
        Some(&config.provider),
        dir,
        printer,
    )
    .await?;
    let client = &connection.client;
    let cluster = client
        .get_cluster(&name)
        .await?
        .ok_or_else(|| CliError::ClusterNotFound(name.to_string()))?;
    let stack = &config.provider.stack;
    let cluster = match cluster.label(STACK_LABEL) {
        Some(owner) if owner == stack => {
            printer.info(&format!(
                "Cluster {} already belongs to stack {stack}.",
                args.id
            ));
            cluster
        }
        Some(other) => {
            return Err(CliError::OwnedElsewhere {
                cluster: args.id.clone(),
                owner: other.to_owned(),
            });
        }
        None => add_stack_label(client, &name, &cluster, stack, printer).await?,
    };
    let hcl = clusterform_config::cluster_to_hcl(&args.id, &cluster);
    write_hcl(args.out.as_deref(), &hcl, printer)?;
    Ok(ExitStatus::Success)
}

async fn add_stack_label(
    client: &ApiClient,
    name: &ClusterName,
    cluster: &Cluster,
    stack: &str,
    printer: &Printer,
) -> Result<Cluster, CliError> {
    let request = clusterform_planner::adopt(name, cluster, stack);
    printer.info(&format!(
        "Adding label {STACK_LABEL}={stack} to {}…",
        name.cluster_id
    ));
    if let Submitted::Operation(operation) = client.send(&request).await? {
        let operation = OperationWaiter::new(client, WaitOptions::default())
            .wait(&operation.name, LABEL_UPDATE_TIMEOUT, async |_| {})
            .await?;
        if let Some(error) = operation.error {
            return Err(CliError::OperationFailed {
                what: format!("labelling cluster {}", name.cluster_id),
                status: error,
            });
        }
    }
    client
        .get_cluster(name)
        .await?
        .ok_or_else(|| CliError::ClusterNotFound(name.to_string()))
}

fn write_hcl(out: Option<&Path>, hcl: &str, printer: &Printer) -> Result<(), CliError> {
    match out {
        Some(path) => {
            write_atomic(path, hcl.as_bytes(), Access::LikeExisting).map_err(|source| {
                CliError::Io {
                    action: "could not write",
                    path: path.to_path_buf(),
                    source,
                }
            })?;
            printer.info(&format!(
                "Wrote {}. `clusterform plan` should now show no changes for this cluster.",
                path.display()
            ));
        }
        None => printer.result(hcl),
    }
    Ok(())
}
