//! `clusterform import ID`: takes over a cluster created elsewhere by adding this stack's
//! ownership label (a labels-only PATCH), then prints the HCL that describes it, so that a
//! `plan` right after shows no changes. In a directory without configuration it writes a whole
//! one instead (`main.hcl`, or `--out`): a provider block with the project, region and stack,
//! then the cluster, so that `validate` accepts it and `plan` shows no changes.

use std::path::Path;
use std::time::Duration;

use clusterform_config::{Config, Placement, Provider};
use clusterform_executor::{ApiClient, OperationWaiter, Submitted, WaitOptions};
use clusterform_files::{Access, write_atomic};
use clusterform_model::{Cluster, ClusterName, Endpoint, Location, SERVICE_REGIONS, STACK_LABEL};
use futures::StreamExt;

use crate::arguments::Import;
use crate::context;
use crate::error::{self, CliError};
use crate::exit_status::ExitStatus;
use crate::printer::Printer;
use crate::prompt;
use crate::stack_lock::{self, LockRequest, take_lock};
use crate::workflow::EarlierRuns;

/// How many locations `import ID` without `--region` asks at once.
const SEARCH_PARALLELISM: usize = 16;

/// How long the labels-only update may take.
const LABEL_UPDATE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The file `import` writes a new configuration into when `--out` does not name one.
const NEW_CONFIGURATION_FILE: &str = "main.hcl";

/// Labels the cluster as this stack's and writes its HCL: the cluster block into a
/// configuration, a whole configuration into a directory without one.
pub async fn run(args: &Import, printer: &Printer) -> Result<ExitStatus, CliError> {
    if context::has_configuration(&args.dir)? {
        import_into_configuration(args, printer).await
    } else {
        import_into_new_configuration(args, printer).await
    }
}

async fn import_into_configuration(
    args: &Import,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    if args.stack.is_some() {
        // The directory as the user can find it: `.` says nothing in an error message.
        let dir = std::fs::canonicalize(&args.dir).unwrap_or_else(|_| args.dir.clone());
        return Err(CliError::Usage(format!(
            "--stack is only for importing into a directory without configuration; the provider block of {} sets the stack",
            dir.display()
        )));
    }
    let dir = &args.dir;
    let config =
        context::load_config(dir, context::variable_inputs(&args.variables)?, printer).await?;
    let request = LockRequest {
        dir,
        command: "import",
        timeout: args.lock_timeout,
        endpoint: args.endpoint.as_ref(),
    };
    stack_lock::with_lock(request, Some(&config.provider), printer, async {
        import_with_config(args, &config, printer).await
    })
    .await
}

/// [`import_into_configuration`] once it holds the lock.
async fn import_with_config(
    args: &Import,
    config: &Config,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    // A name given in full is checked before anything is sent.
    let given = match &args.region {
        Some(region) => Some(given_name(args, config, region)?),
        None => None,
    };
    let connection =
        context::connect(args.endpoint.as_ref(), Some(&config.provider), dir, printer).await?;
    let name = match given {
        Some(name) => name,
        None => {
            let earlier = EarlierRuns::read(dir, &connection, printer).await;
            let locations = search_locations(config, &earlier, args.project.as_deref());
            let found = find_cluster(&connection.client, &args.id, locations).await?;
            found.into_one(&args.id, printer)?
        }
    };
    let cluster = take_over(&connection.client, &name, &config.provider.stack, printer).await?;
    let cluster = unpinned(cluster, args.keep_node_image, printer);
    let hcl = clusterform_config::cluster_to_hcl_placed(
        &args.id,
        &cluster,
        &placement(&name, &config.provider),
    );
    write_hcl(args.out.as_deref(), &hcl, printer)?;
    Ok(ExitStatus::Success)
}

/// The cluster `--region` (and `--project`, else the provider's) names.
fn given_name(args: &Import, config: &Config, region: &str) -> Result<ClusterName, CliError> {
    let Some(project) = args.project.clone().or(config.provider.project.clone()) else {
        return Err(CliError::Usage(
            "import needs --project with --region, or a provider block that sets the project"
                .into(),
        ));
    };
    ClusterName::new(&project, region, &args.id).map_err(|err| CliError::Usage(err.to_string()))
}

/// Where `import ID` without `--region` looks: every location `plan` scans (the places the
/// applied record and the journal name included), only those of `project` when one is given —
/// and every region the service runs in there when the configuration scans none of that
/// project.
fn search_locations(
    config: &Config,
    earlier: &EarlierRuns,
    project: Option<&str>,
) -> Vec<Location> {
    let mut locations = earlier.scanned(config);
    if let Some(project) = project {
        locations.retain(|location| location.project() == project);
        if locations.iter().next().is_none() {
            // A project that is not a valid name gives no location: the search finds nothing.
            let service = SERVICE_REGIONS
                .iter()
                .filter_map(|region| Location::new(project, region).ok());
            for location in service {
                locations.add_other(location);
            }
        }
    }
    locations
        .iter()
        .map(|(location, _)| location.clone())
        .collect()
}

/// The block's own `project` and `region`, for each that differs from the provider's.
fn placement<'n>(name: &'n ClusterName, provider: &Provider) -> Placement<'n> {
    let differs = |own: &'n str, default: Option<&String>| {
        (default.map(String::as_str) != Some(own)).then_some(own)
    };
    Placement {
        project: differs(name.project(), provider.project.as_ref()),
        region: differs(name.region(), provider.region.as_ref()),
    }
}

/// What one Get per location found of a cluster ID.
struct Found {
    /// Where the ID exists, in the locations' order.
    at: Vec<ClusterName>,
    /// How many locations were looked in.
    searched: usize,
    /// The locations whose Get failed, each with why.
    unread: Vec<(Location, String)>,
}

/// Looks for `id` in every one of `locations`, with one Get each, several at once.
async fn find_cluster(
    client: &ApiClient,
    id: &str,
    locations: Vec<Location>,
) -> Result<Found, CliError> {
    let names = locations
        .iter()
        .map(|location| ClusterName::new(location.project(), location.region(), id))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| CliError::Usage(err.to_string()))?;
    let answers: Vec<_> = futures::stream::iter(&names)
        .map(|name| client.get_cluster(name))
        .buffered(SEARCH_PARALLELISM)
        .collect()
        .await;
    let mut found = Found {
        at: Vec::new(),
        searched: names.len(),
        unread: Vec::new(),
    };
    for (name, answer) in names.into_iter().zip(answers) {
        match answer {
            Ok(Some(_)) => found.at.push(name),
            Ok(None) => {}
            Err(error) => found
                .unread
                .push((name.location().clone(), error.to_string())),
        }
    }
    Ok(found)
}

impl Found {
    /// The one place the ID was found, said on stderr with the locations that could not be
    /// read; several places or none is an error naming them.
    fn into_one(self, id: &str, printer: &Printer) -> Result<ClusterName, CliError> {
        let Found {
            mut at,
            searched,
            unread,
        } = self;
        if at.len() > 1 {
            return Err(CliError::FoundInSeveral {
                id: id.to_owned(),
                at,
            });
        }
        let Some(name) = at.pop() else {
            return Err(CliError::NotFoundAnywhere {
                id: id.to_owned(),
                searched,
                unread,
            });
        };
        printer.info(&format!(
            "Found cluster {id} in {}/{} (looked in {searched} locations).",
            name.project(),
            name.region()
        ));
        if !unread.is_empty() {
            let locations = if unread.len() == 1 {
                "location"
            } else {
                "locations"
            };
            printer.warn(&format!(
                "{} {locations} could not be read, so a cluster {id} there was not seen: {}",
                unread.len(),
                error::unread_places(&unread)
            ));
        }
        Ok(name)
    }
}

/// Writes a whole configuration for the cluster: the project and region come from the flags,
/// the stack from `--stack` or, on a terminal, from the user.
async fn import_into_new_configuration(
    args: &Import,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    if !args.variables.pairs.is_empty() || !args.variables.files.is_empty() {
        return Err(CliError::Usage(format!(
            "--var and --var-file do nothing here: {} has no configuration that declares variables",
            dir.display()
        )));
    }
    let (Some(project), Some(region)) = (&args.project, &args.region) else {
        return Err(CliError::Usage(format!(
            "{} has no configuration: pass --project and --region (they go into the provider block import writes)",
            dir.display()
        )));
    };
    let name = ClusterName::new(project, region, &args.id)
        .map_err(|err| CliError::Usage(err.to_string()))?;
    let stack = new_stack(args.stack.clone())?;
    std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
        action: "could not create",
        path: dir.clone(),
        source,
    })?;
    let request = LockRequest {
        dir,
        command: "import",
        timeout: args.lock_timeout,
        endpoint: None,
    };
    let _lock = take_lock(request, None, printer).await?;
    let connection = context::connect(args.endpoint.as_ref(), None, dir, printer).await?;
    let cluster = take_over(&connection.client, &name, &stack, printer).await?;
    let cluster = unpinned(cluster, args.keep_node_image, printer);
    let hcl = new_configuration(&name, &stack, args.endpoint.as_ref(), &cluster);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| dir.join(NEW_CONFIGURATION_FILE));
    write_hcl(Some(&out), &hcl, printer)?;
    Ok(ExitStatus::Success)
}

/// The cluster as the HCL writes it: without the node images the service filled in, unless
/// `keep` (`--keep-node-image`). A pool without `node_image` follows the default image, which
/// advances; one with it stays on that image (*Create cluster*), so writing the live image
/// back would pin pools that followed the default. What is left out is said on stderr.
fn unpinned(mut cluster: Cluster, keep: bool, printer: &Printer) -> Cluster {
    if keep {
        return cluster;
    }
    let mut left_out = Vec::new();
    for pool in cluster.node_pools.iter_mut().flatten() {
        if let Some(image) = pool.node_image.take() {
            left_out.push(format!("{} ({image})", pool.id));
        }
    }
    if !left_out.is_empty() {
        printer.info(&format!(
            "Left out the node_image of {}: the service fills it in, and a pool without it follows the default image; pass --keep-node-image to keep the pools on these images.",
            left_out.join(", ")
        ));
    }
    cluster
}

/// The stack of a new configuration: `--stack`, else asked for on a terminal; it must be a
/// valid label value, since it becomes the `clusterform-stack` label.
fn new_stack(given: Option<String>) -> Result<String, CliError> {
    let stack = match given {
        Some(stack) => stack,
        None => prompt::stack()?.ok_or_else(|| {
            CliError::Usage(
                "the directory has no configuration and there is no terminal to ask for its stack: pass --stack NAME (the owner of the clusters this configuration will manage)"
                    .into(),
            )
        })?,
    };
    let problem = if stack.is_empty() {
        Some("it must not be empty")
    } else {
        clusterform_config::label_value_problem(&stack)
    };
    match problem {
        Some(problem) => Err(CliError::Usage(format!(
            "stack `{stack}` is not a valid label value: {problem}"
        ))),
        None => Ok(stack),
    }
}

/// A provider block with the cluster's location, the stack and the endpoint it was imported
/// from (so that the next `plan` there reads the same service, not Google's), then the
/// cluster. The location and stack were validated (resource name, label value), so they need
/// no escaping; the endpoint is quoted.
fn new_configuration(
    name: &ClusterName,
    stack: &str,
    endpoint: Option<&Endpoint>,
    cluster: &Cluster,
) -> String {
    let endpoint = endpoint.map_or_else(String::new, |endpoint| {
        format!(
            "  endpoint = {}\n",
            clusterform_config::quote(endpoint.as_str())
        )
    });
    let provider = format!(
        "provider \"google\" {{\n  project = \"{}\"\n  region = \"{}\"\n  stack = \"{stack}\"\n{endpoint}}}\n",
        name.project(),
        name.region()
    );
    let text = format!(
        "{provider}\n{}",
        clusterform_config::cluster_to_hcl(name.id().as_str(), cluster)
    );
    clusterform_config::format_source(&text, Path::new(NEW_CONFIGURATION_FILE)).unwrap_or(text)
}

/// Reads the cluster and makes it this stack's: labels it unless it is already.
async fn take_over(
    client: &ApiClient,
    name: &ClusterName,
    stack: &str,
    printer: &Printer,
) -> Result<Cluster, CliError> {
    let cluster = client
        .get_cluster(name)
        .await?
        .ok_or_else(|| CliError::ClusterNotFound(name.to_string()))?;
    if cluster.is_owned_by(stack) {
        printer.info(&format!(
            "Cluster {} already belongs to stack {stack}.",
            name.id()
        ));
        return Ok(cluster);
    }
    match cluster.owner() {
        Some(other) => Err(CliError::OwnedElsewhere {
            cluster: name.id().to_string(),
            owner: other.to_owned(),
        }),
        None => add_stack_label(client, name, &cluster, stack, printer).await,
    }
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
        name.id()
    ));
    if let Submitted::Operation(operation) = client.send(&request).await? {
        let operation = OperationWaiter::new(client, WaitOptions::default())
            .wait(&operation.name, LABEL_UPDATE_TIMEOUT, async |_| {})
            .await?;
        if let Some(error) = operation.error {
            return Err(CliError::OperationFailed {
                what: format!("labelling cluster {}", name.id()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_stack_must_be_a_label_value() {
        assert_eq!(new_stack(Some("ml-prod".into())).unwrap(), "ml-prod");
        for bad in ["", "ML Prod"] {
            let error = new_stack(Some(bad.into())).unwrap_err();
            assert!(matches!(error, CliError::Usage(_)), "{error}");
            assert!(
                error.to_string().contains("not a valid label value"),
                "{error}"
            );
        }
    }
}
