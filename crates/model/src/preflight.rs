//! The reads of preflight: the documented Google APIs a plan consults before it creates a
//! cluster ([`PreflightApi`]), the resources it reads there ([`PreflightRead`], each a typed
//! name whose parts are spliced into a request path) and what a read found ([`Reading`]),
//! parsed from the documented fields of the answer. Which reads a plan needs, and what a
//! reading means for it, is the planner's (`clusterform_planner::preflight`).

use std::fmt;

use serde_json::Value;

/// A Google API a preflight check reads, each with its own endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreflightApi {
    /// Service Usage: whether a service is enabled in a project.
    ServiceUsage,
    /// Compute Engine: networks and subnetworks.
    Compute,
    /// Filestore: instances.
    Filestore,
    /// Managed Lustre: instances.
    Lustre,
    /// Resource Manager: the caller's permissions on a project.
    ResourceManager,
    /// IAM: service accounts, and the caller's permission to act as one.
    Iam,
    /// Cloud Storage: buckets.
    Storage,
}

impl PreflightApi {
    /// Every API, in the order the configuration's `preflight_endpoints` lists them.
    pub const ALL: [Self; 7] = [
        Self::Compute,
        Self::ServiceUsage,
        Self::Filestore,
        Self::Lustre,
        Self::ResourceManager,
        Self::Iam,
        Self::Storage,
    ];

    /// Its key in `preflight_endpoints { … }`.
    pub fn key(self) -> &'static str {
        match self {
            Self::ServiceUsage => "service_usage",
            Self::Compute => "compute",
            Self::Filestore => "filestore",
            Self::Lustre => "lustre",
            Self::ResourceManager => "resource_manager",
            Self::Iam => "iam",
            Self::Storage => "storage",
        }
    }

    /// The API whose key this is.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|api| api.key() == key)
    }

    /// Google's endpoint (the base URL request paths are joined to).
    pub fn google_endpoint(self) -> &'static str {
        match self {
            Self::ServiceUsage => "https://serviceusage.googleapis.com",
            Self::Compute => "https://compute.googleapis.com",
            Self::Filestore => "https://file.googleapis.com",
            Self::Lustre => "https://lustre.googleapis.com",
            Self::ResourceManager => "https://cloudresourcemanager.googleapis.com",
            Self::Iam => "https://iam.googleapis.com",
            Self::Storage => "https://storage.googleapis.com",
        }
    }

    /// The environment variable that overrides its endpoint: `CLUSTERFORM_<KEY>_ENDPOINT`.
    pub fn environment_variable(self) -> String {
        format!("CLUSTERFORM_{}_ENDPOINT", self.key().to_ascii_uppercase())
    }
}

impl fmt::Display for PreflightApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ServiceUsage => "Service Usage",
            Self::Compute => "Compute Engine",
            Self::Filestore => "Filestore",
            Self::Lustre => "Managed Lustre",
            Self::ResourceManager => "Resource Manager",
            Self::Iam => "IAM",
            Self::Storage => "Cloud Storage",
        })
    }
}

/// A service a cluster needs enabled in its project (the *Get started* page's APIs to enable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Service {
    /// Vertex AI, `aiplatform.googleapis.com`.
    VertexAi,
    /// Cluster Director, `hypercomputecluster.googleapis.com`.
    ClusterDirector,
    /// Compute Engine, `compute.googleapis.com`.
    Compute,
    /// Filestore, `file.googleapis.com` (a Filestore home directory).
    Filestore,
    /// Managed Lustre, `lustre.googleapis.com` (a pool's or the export's Lustre instances).
    Lustre,
    /// Cloud Storage, `storage.googleapis.com` (the Lustre export's bucket).
    Storage,
}

impl Service {
    /// The three every cluster needs.
    pub const ALWAYS: [Self; 3] = [Self::VertexAi, Self::ClusterDirector, Self::Compute];

    /// The service name Service Usage knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Self::VertexAi => "aiplatform.googleapis.com",
            Self::ClusterDirector => "hypercomputecluster.googleapis.com",
            Self::Compute => "compute.googleapis.com",
            Self::Filestore => "file.googleapis.com",
            Self::Lustre => "lustre.googleapis.com",
            Self::Storage => "storage.googleapis.com",
        }
    }
}

/// A VPC network, `projects/{P}/global/networks/{N}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NetworkName {
    project: String,
    network: String,
}

/// A subnetwork, `projects/{P}/regions/{R}/subnetworks/{S}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubnetworkName {
    project: String,
    region: String,
    subnetwork: String,
}

/// A Filestore instance, `projects/{P}/locations/{ZONE}/instances/{ID}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceName {
    project: String,
    zone: String,
    instance: String,
}

/// A Compute Engine reservation, `projects/{P}/zones/{Z}/reservations/{R}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReservationName {
    project: String,
    zone: String,
    reservation: String,
}

/// A Cloud Storage bucket's name (lower-case letters, digits, `-`, `_`, `.`; 3 to 222
/// characters), spliced into `b/{BUCKET}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BucketName(String);

/// A service account's email, spliced into `serviceAccounts/{EMAIL}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServiceAccountEmail(String);

/// A permission on the project that apply's calls need (`aiplatform.modelDevelopmentClusters.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClusterPermission {
    /// `…create`: a create, and the create of a replacement.
    Create,
    /// `…delete`: the delete of a replacement.
    Delete,
    /// `…get`: reading a cluster back while its operation runs.
    Get,
    /// `…list`: the refresh.
    List,
    /// `…update`: an update.
    Update,
}

impl ClusterPermission {
    /// Every one, in the order they are asked for.
    pub const ALL: [Self; 5] = [
        Self::Create,
        Self::Delete,
        Self::Get,
        Self::List,
        Self::Update,
    ];

    /// Its name, as IAM knows it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Create => "aiplatform.modelDevelopmentClusters.create",
            Self::Delete => "aiplatform.modelDevelopmentClusters.delete",
            Self::Get => "aiplatform.modelDevelopmentClusters.get",
            Self::List => "aiplatform.modelDevelopmentClusters.list",
            Self::Update => "aiplatform.modelDevelopmentClusters.update",
        }
    }
}

/// The permission to run the nodes as a service account.
pub const ACT_AS: &str = "iam.serviceAccounts.actAs";

/// Whether `segment` may be spliced into a request path as one segment.
fn plain(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

impl ReservationName {
    /// Reads `projects/{P}/zones/{Z}/reservations/{R}`, optionally followed by
    /// `/reservationBlocks/{B}` and `/reservationSubBlocks/{S}` (the reservation part is kept),
    /// or a Compute Engine URL ending so.
    pub fn parse(name: &str) -> Option<Self> {
        let name = resource_part(name);
        let reservation_part = name.split("/reservationBlocks/").next().unwrap_or(name);
        let block_part = &name[reservation_part.len()..];
        let blocks_well_formed = block_part.is_empty()
            || parts::<1>(block_part, "/reservationBlocks/{}").is_some()
            || parts::<2>(block_part, "/reservationBlocks/{}/reservationSubBlocks/{}").is_some();
        if !blocks_well_formed {
            return None;
        }
        let pattern = "projects/{}/zones/{}/reservations/{}";
        let [project, zone, reservation] = parts(reservation_part, pattern)?;
        Some(Self {
            project,
            zone,
            reservation,
        })
    }

    /// The zone its name puts it in.
    pub fn zone(&self) -> &str {
        &self.zone
    }
}

impl BucketName {
    /// A bucket's name, without `gs://`.
    pub fn parse(name: &str) -> Option<Self> {
        let well_formed = (3..=222).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c));
        well_formed.then(|| Self(name.to_owned()))
    }
}

impl ServiceAccountEmail {
    /// `NAME@DOMAIN`, each part plain.
    pub fn parse(email: &str) -> Option<Self> {
        let (name, domain) = email.split_once('@')?;
        (plain(name) && plain(domain)).then(|| Self(email.to_owned()))
    }
}

/// The variable parts of `name` read against `pattern` (`{}` a part), each a plain segment.
fn parts<const N: usize>(name: &str, pattern: &str) -> Option<[String; N]> {
    let segments: Vec<&str> = name.split('/').collect();
    let shape: Vec<&str> = pattern.split('/').collect();
    if segments.len() != shape.len() {
        return None;
    }
    let mut found = Vec::with_capacity(N);
    for (segment, expected) in segments.iter().zip(&shape) {
        if *expected == "{}" {
            if !plain(segment) {
                return None;
            }
            found.push((*segment).to_owned());
        } else if segment != expected {
            return None;
        }
    }
    found.try_into().ok()
}

/// `https://www.googleapis.com/compute/v1/projects/…` as `projects/…`: Compute Engine answers
/// references as URLs.
fn resource_part(reference: &str) -> &str {
    reference
        .find("projects/")
        .map_or(reference, |start| &reference[start..])
}

impl NetworkName {
    /// Reads `projects/{P}/global/networks/{N}` (or a Compute Engine URL ending so).
    pub fn parse(name: &str) -> Option<Self> {
        let [project, network] = parts(resource_part(name), "projects/{}/global/networks/{}")?;
        Some(Self { project, network })
    }

    /// The project.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The network's name, its last segment.
    pub fn network(&self) -> &str {
        &self.network
    }
}

impl SubnetworkName {
    /// Reads `projects/{P}/regions/{R}/subnetworks/{S}` (or a URL ending so).
    pub fn parse(name: &str) -> Option<Self> {
        let pattern = "projects/{}/regions/{}/subnetworks/{}";
        let [project, region, subnetwork] = parts(resource_part(name), pattern)?;
        Some(Self {
            project,
            region,
            subnetwork,
        })
    }

    /// The project.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The region its name puts it in.
    pub fn region(&self) -> &str {
        &self.region
    }

    /// The subnetwork's name, its last segment.
    pub fn subnetwork(&self) -> &str {
        &self.subnetwork
    }
}

impl InstanceName {
    /// Reads `projects/{P}/locations/{ZONE}/instances/{ID}`.
    pub fn parse(name: &str) -> Option<Self> {
        let pattern = "projects/{}/locations/{}/instances/{}";
        let [project, zone, instance] = parts(name, pattern)?;
        Some(Self {
            project,
            zone,
            instance,
        })
    }

    /// The zone its name puts it in.
    pub fn zone(&self) -> &str {
        &self.zone
    }
}

impl fmt::Display for NetworkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "projects/{}/global/networks/{}",
            self.project, self.network
        )
    }
}

impl fmt::Display for SubnetworkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            project,
            region,
            subnetwork,
        } = self;
        write!(
            f,
            "projects/{project}/regions/{region}/subnetworks/{subnetwork}"
        )
    }
}

impl fmt::Display for InstanceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            project,
            zone,
            instance,
        } = self;
        write!(
            f,
            "projects/{project}/locations/{zone}/instances/{instance}"
        )
    }
}

impl fmt::Display for ReservationName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            project,
            zone,
            reservation,
        } = self;
        write!(
            f,
            "projects/{project}/zones/{zone}/reservations/{reservation}"
        )
    }
}

impl fmt::Display for BucketName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gs://{}", self.0)
    }
}

impl fmt::Display for ServiceAccountEmail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One documented GET of preflight: a resource of one of the [`PreflightApi`]s.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreflightRead {
    /// Service Usage `services.get`: `state` `ENABLED` or `DISABLED`.
    Service {
        /// The project (an ID or number, as the cluster's name has it).
        project: String,
        /// The service.
        service: Service,
    },
    /// Compute Engine `networks.get`.
    Network(NetworkName),
    /// Compute Engine `subnetworks.get`: `network`, `region`, `privateIpGoogleAccess`.
    Subnetwork(SubnetworkName),
    /// Filestore `instances.get`: `state`, `networks[].network`.
    Filestore(InstanceName),
    /// Managed Lustre `instances.get`: `state`, `network`.
    Lustre(InstanceName),
    /// Cloud Storage `buckets.get`.
    Bucket(BucketName),
    /// Compute Engine `reservations.get`: `zone`, `specificReservation`.
    Reservation(ReservationName),
    /// Compute Engine `regions.get`: `quotas[]`.
    RegionQuotas {
        /// The project.
        project: String,
        /// The region.
        region: String,
    },
    /// Resource Manager `projects.testIamPermissions` for every [`ClusterPermission`].
    ProjectPermissions {
        /// The project.
        project: String,
    },
    /// IAM `serviceAccounts.get`.
    ServiceAccount(ServiceAccountEmail),
    /// IAM `serviceAccounts.testIamPermissions` for [`ACT_AS`].
    ActAs(ServiceAccountEmail),
}

impl PreflightRead {
    /// The API it reads.
    pub fn api(&self) -> PreflightApi {
        match self {
            Self::Service { .. } => PreflightApi::ServiceUsage,
            Self::Network(_)
            | Self::Subnetwork(_)
            | Self::Reservation(_)
            | Self::RegionQuotas { .. } => PreflightApi::Compute,
            Self::Filestore(_) => PreflightApi::Filestore,
            Self::Lustre(_) => PreflightApi::Lustre,
            Self::Bucket(_) => PreflightApi::Storage,
            Self::ProjectPermissions { .. } => PreflightApi::ResourceManager,
            Self::ServiceAccount(_) | Self::ActAs(_) => PreflightApi::Iam,
        }
    }

    /// The JSON body of the read, for the `testIamPermissions` reads (a POST that changes
    /// nothing); `None` for a GET.
    pub fn body(&self) -> Option<Value> {
        let permissions: Vec<&str> = match self {
            Self::ProjectPermissions { .. } => {
                ClusterPermission::ALL.map(ClusterPermission::name).to_vec()
            }
            Self::ActAs(_) => vec![ACT_AS],
            _ => return None,
        };
        Some(serde_json::json!({ "permissions": permissions }))
    }

    /// The path under the API's endpoint, one segment each (the client encodes them); a
    /// `testIamPermissions` read's last segment carries the method.
    pub fn path_segments(&self) -> Vec<String> {
        let mut segments: Vec<String> = self
            .resource_segments()
            .into_iter()
            .map(str::to_owned)
            .collect();
        if let (Some(last), true) = (
            segments.last_mut(),
            matches!(self, Self::ProjectPermissions { .. } | Self::ActAs(_)),
        ) {
            last.push_str(":testIamPermissions");
        }
        segments
    }

    /// The resource's path under the API's endpoint.
    fn resource_segments(&self) -> Vec<&str> {
        match self {
            Self::Service { project, service } => {
                vec!["v1", "projects", project, "services", service.name()]
            }
            Self::Network(n) => vec![
                "compute", "v1", "projects", &n.project, "global", "networks", &n.network,
            ],
            Self::Subnetwork(s) => vec![
                "compute",
                "v1",
                "projects",
                &s.project,
                "regions",
                &s.region,
                "subnetworks",
                &s.subnetwork,
            ],
            Self::Filestore(i) | Self::Lustre(i) => vec![
                "v1",
                "projects",
                &i.project,
                "locations",
                &i.zone,
                "instances",
                &i.instance,
            ],
            Self::Bucket(bucket) => vec!["storage", "v1", "b", &bucket.0],
            Self::Reservation(r) => vec![
                "compute",
                "v1",
                "projects",
                &r.project,
                "zones",
                &r.zone,
                "reservations",
                &r.reservation,
            ],
            Self::RegionQuotas { project, region } => {
                vec!["compute", "v1", "projects", project, "regions", region]
            }
            Self::ProjectPermissions { project } => {
                vec!["v1", "projects", project.as_str()]
            }
            Self::ServiceAccount(email) => {
                vec!["v1", "projects", "-", "serviceAccounts", &email.0]
            }
            Self::ActAs(email) => vec!["v1", "projects", "-", "serviceAccounts", &email.0],
        }
    }

    /// What a success answer of it says, from its documented fields; `Err` says why the
    /// answer cannot be read.
    pub fn reading(&self, answer: &Value) -> Result<Reading, String> {
        let text = |field: &str| {
            answer
                .get(field)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("the answer has no `{field}`"))
        };
        match self {
            Self::Service { .. } => {
                let state = text("state")?;
                match state {
                    "ENABLED" => Ok(Reading::Service { enabled: true }),
                    "DISABLED" => Ok(Reading::Service { enabled: false }),
                    other => Err(format!("unknown service state `{other}`")),
                }
            }
            Self::Network(_) => Ok(Reading::Network),
            Self::Subnetwork(_) => {
                let network = NetworkName::parse(text("network")?)
                    .ok_or("`network` is not a network's name or URL")?;
                let region = text("region")?;
                let region = region.rsplit('/').next().unwrap_or(region).to_owned();
                let private_ip_google_access =
                    answer
                        .get("privateIpGoogleAccess")
                        .map_or(Ok(false), |value| {
                            value
                                .as_bool()
                                .ok_or("`privateIpGoogleAccess` is not a bool")
                        })?;
                Ok(Reading::Subnetwork {
                    network,
                    region,
                    private_ip_google_access,
                })
            }
            Self::Filestore(_) => {
                let state = text("state")?.to_owned();
                let networks = answer
                    .get("networks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|network| network.get("network")?.as_str())
                    .map(str::to_owned)
                    .collect();
                Ok(Reading::Filestore { state, networks })
            }
            Self::Lustre(_) => Ok(Reading::Lustre {
                state: text("state")?.to_owned(),
                network: answer
                    .get("network")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
            Self::Bucket(_) | Self::ServiceAccount(_) => Ok(Reading::Exists),
            Self::Reservation(_) => reservation_reading(answer).map(Reading::Reservation),
            Self::RegionQuotas { .. } => quotas_reading(answer).map(Reading::Quotas),
            Self::ProjectPermissions { .. } | Self::ActAs(_) => {
                let granted = match answer.get("permissions") {
                    None => Vec::new(),
                    Some(listed) => listed
                        .as_array()
                        .ok_or("`permissions` is not a list")?
                        .iter()
                        .map(|permission| {
                            permission
                                .as_str()
                                .map(str::to_owned)
                                .ok_or("`permissions` holds a value that is not a string")
                        })
                        .collect::<Result<_, _>>()?,
                };
                Ok(Reading::Permissions { granted })
            }
        }
    }
}

impl fmt::Display for PreflightRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Service { project, service } => {
                write!(f, "projects/{project}/services/{}", service.name())
            }
            Self::Network(name) => write!(f, "{name}"),
            Self::Subnetwork(name) => write!(f, "{name}"),
            Self::Filestore(name) | Self::Lustre(name) => write!(f, "{name}"),
            Self::Bucket(bucket) => write!(f, "{bucket}"),
            Self::Reservation(name) => write!(f, "{name}"),
            Self::RegionQuotas { project, region } => {
                write!(f, "the quotas of projects/{project}/regions/{region}")
            }
            Self::ProjectPermissions { project } => {
                write!(f, "the caller's permissions on projects/{project}")
            }
            Self::ServiceAccount(email) => write!(f, "the service account {email}"),
            Self::ActAs(email) => write!(f, "the caller's permission to act as {email}"),
        }
    }
}

/// What one read found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// The service's state.
    Service {
        /// `state` is `ENABLED`.
        enabled: bool,
    },
    /// The network exists.
    Network,
    /// The subnetwork exists.
    Subnetwork {
        /// Its `network`.
        network: NetworkName,
        /// The last segment of its `region`.
        region: String,
        /// `privateIpGoogleAccess` (absent: off).
        private_ip_google_access: bool,
    },
    /// The Filestore instance exists.
    Filestore {
        /// Its `state`, e.g. `READY`.
        state: String,
        /// Its `networks[].network`, as Filestore spells them (a name or a full resource name).
        networks: Vec<String>,
    },
    /// The Managed Lustre instance exists.
    Lustre {
        /// Its `state`, e.g. `ACTIVE`.
        state: String,
        /// Its `network`, a full resource name, if it says.
        network: Option<String>,
    },
    /// The bucket or service account exists.
    Exists,
    /// The reservation exists.
    Reservation(ReservationReading),
    /// The region's quotas.
    Quotas(Vec<Quota>),
    /// The permissions a `testIamPermissions` read found granted, of those it asked for.
    Permissions {
        /// Their names.
        granted: Vec<String>,
    },
    /// `404`: it does not exist.
    Missing,
    /// The read could not be made or understood (`403`, the API off, a timeout, an answer
    /// that is not the documented shape): what happened.
    Unchecked(String),
}

/// What a reservation offers, from `reservations.get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservationReading {
    /// The last segment of its `zone`.
    pub zone: String,
    /// `specificReservation.instanceProperties.machineType`, if it says.
    pub machine_type: Option<String>,
    /// `specificReservation.count`: machines reserved.
    pub count: u64,
    /// `specificReservation.inUseCount`: machines in use.
    pub in_use: u64,
}

impl ReservationReading {
    /// Machines reserved and not in use.
    pub fn free(&self) -> u64 {
        self.count.saturating_sub(self.in_use)
    }
}

/// One of a region's quotas, `quotas[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    /// `metric`, e.g. `NVIDIA_H100_GPUS`.
    pub metric: String,
    /// `limit`, whole.
    pub limit: u64,
    /// `usage`, whole.
    pub usage: u64,
}

/// A whole count that Compute Engine writes as a number or (an `int64`) as a string.
fn count(value: Option<&Value>, field: &str) -> Result<u64, String> {
    match value {
        None => Ok(0),
        Some(Value::String(text)) => text
            .parse()
            .map_err(|_| format!("`{field}` is not a count")),
        Some(Value::Number(number)) => number
            .as_u64()
            // Quotas are doubles that hold whole numbers.
            .or_else(|| number.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .ok_or_else(|| format!("`{field}` is not a count")),
        Some(_) => Err(format!("`{field}` is not a count")),
    }
}

fn reservation_reading(answer: &Value) -> Result<ReservationReading, String> {
    let zone = answer
        .get("zone")
        .and_then(Value::as_str)
        .ok_or("the answer has no `zone`")?;
    let specific = answer
        .get("specificReservation")
        .ok_or("the answer has no `specificReservation`")?;
    let machine_type = specific
        .get("instanceProperties")
        .and_then(|properties| properties.get("machineType"))
        .and_then(Value::as_str)
        .map(|machine| machine.rsplit('/').next().unwrap_or(machine).to_owned());
    Ok(ReservationReading {
        zone: zone.rsplit('/').next().unwrap_or(zone).to_owned(),
        machine_type,
        count: count(specific.get("count"), "count")?,
        in_use: count(specific.get("inUseCount"), "inUseCount")?,
    })
}

fn quotas_reading(answer: &Value) -> Result<Vec<Quota>, String> {
    let listed = answer
        .get("quotas")
        .and_then(Value::as_array)
        .ok_or("the answer has no `quotas`")?;
    listed
        .iter()
        .map(|quota| {
            let metric = quota
                .get("metric")
                .and_then(Value::as_str)
                .ok_or("a quota has no `metric`")?;
            Ok(Quota {
                metric: metric.to_owned(),
                limit: count(quota.get("limit"), "limit")?,
                usage: count(quota.get("usage"), "usage")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_read_back_and_refuse_what_they_cannot_splice() {
        let subnetwork = "projects/p/regions/us-central1/subnetworks/default";
        assert_eq!(
            SubnetworkName::parse(subnetwork).unwrap().to_string(),
            subnetwork
        );
        let url = "https://www.googleapis.com/compute/v1/projects/p/global/networks/net";
        assert_eq!(
            NetworkName::parse(url).unwrap().to_string(),
            "projects/p/global/networks/net"
        );
        for bad in [
            "projects/p/global/networks/",
            "projects/p/global/networks/a/b",
            "projects/p?x/global/networks/n",
            "default",
        ] {
            assert_eq!(NetworkName::parse(bad), None, "{bad}");
        }
        assert!(InstanceName::parse("projects/p/locations/us-central1-a/instances/home").is_some());
    }

    #[test]
    fn a_subnetworks_answer_gives_its_network_region_and_private_access() {
        let read = PreflightRead::Subnetwork(
            SubnetworkName::parse("projects/p/regions/r/subnetworks/s").unwrap(),
        );
        let answer = json!({
            "network": "https://www.googleapis.com/compute/v1/projects/p/global/networks/n",
            "region": "https://www.googleapis.com/compute/v1/projects/p/regions/r",
        });
        assert_eq!(
            read.reading(&answer),
            Ok(Reading::Subnetwork {
                network: NetworkName::parse("projects/p/global/networks/n").unwrap(),
                region: "r".to_owned(),
                private_ip_google_access: false,
            })
        );
        assert!(read.reading(&json!({"region": "r"})).is_err());
    }

    #[test]
    fn a_service_state_is_enabled_disabled_or_not_understood() {
        let read = PreflightRead::Service {
            project: "p".to_owned(),
            service: Service::Compute,
        };
        assert_eq!(
            read.reading(&json!({"state": "DISABLED"})),
            Ok(Reading::Service { enabled: false })
        );
        assert!(read.reading(&json!({"state": "SOMETIMES"})).is_err());
        assert_eq!(
            read.path_segments().join("/"),
            "v1/projects/p/services/compute.googleapis.com"
        );
    }

    #[test]
    fn every_api_has_a_key_a_variable_and_a_google_endpoint() {
        for api in PreflightApi::ALL {
            assert_eq!(PreflightApi::from_key(api.key()), Some(api));
            assert!(api.google_endpoint().starts_with("https://"));
        }
        assert_eq!(
            PreflightApi::ServiceUsage.environment_variable(),
            "CLUSTERFORM_SERVICE_USAGE_ENDPOINT"
        );
    }

    #[test]
    fn a_reservation_is_read_at_its_reservation_part_with_counts_as_strings_or_numbers() {
        let full = "projects/p/zones/us-central1-a/reservations/r/reservationBlocks/b/reservationSubBlocks/s";
        let name = ReservationName::parse(full).unwrap();
        assert_eq!(
            name.to_string(),
            "projects/p/zones/us-central1-a/reservations/r"
        );
        assert_eq!(
            ReservationName::parse("projects/p/zones/z/reservations/r/reservationBlocks/"),
            None
        );
        assert_eq!(ReservationName::parse("r"), None);
        let read = PreflightRead::Reservation(name);
        let answer = json!({
            "zone": "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a",
            "specificReservation": {
                "count": "4",
                "inUseCount": 3,
                "instanceProperties": {"machineType": "a3-megagpu-8g"}
            }
        });
        let Ok(Reading::Reservation(reading)) = read.reading(&answer) else {
            panic!("{:?}", read.reading(&answer));
        };
        assert_eq!(
            (
                reading.zone.as_str(),
                reading.machine_type.as_deref(),
                reading.free()
            ),
            ("us-central1-a", Some("a3-megagpu-8g"), 1)
        );
        assert!(read.reading(&json!({"zone": "z"})).is_err());
    }

    #[test]
    fn a_regions_quotas_are_whole_numbers_from_doubles() {
        let read = PreflightRead::RegionQuotas {
            project: "p".to_owned(),
            region: "r".to_owned(),
        };
        let answer =
            json!({"quotas": [{"metric": "NVIDIA_H100_GPUS", "limit": 16.0, "usage": 8.0}]});
        assert_eq!(
            read.reading(&answer),
            Ok(Reading::Quotas(vec![Quota {
                metric: "NVIDIA_H100_GPUS".to_owned(),
                limit: 16,
                usage: 8
            }]))
        );
        assert!(read.reading(&json!({})).is_err());
        assert_eq!(
            read.path_segments().join("/"),
            "compute/v1/projects/p/regions/r"
        );
    }

    #[test]
    fn a_permissions_read_posts_what_it_asks_and_reads_an_absent_list_as_none_granted() {
        let read = PreflightRead::ProjectPermissions {
            project: "p".to_owned(),
        };
        assert_eq!(
            read.path_segments().join("/"),
            "v1/projects/p:testIamPermissions"
        );
        assert_eq!(
            read.body().unwrap()["permissions"][0],
            "aiplatform.modelDevelopmentClusters.create"
        );
        assert_eq!(
            read.reading(&json!({})),
            Ok(Reading::Permissions {
                granted: Vec::new()
            })
        );
        let email = ServiceAccountEmail::parse("sa@p.iam.gserviceaccount.com").unwrap();
        let act_as = PreflightRead::ActAs(email.clone());
        assert_eq!(
            act_as.path_segments().join("/"),
            "v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:testIamPermissions"
        );
        assert_eq!(PreflightRead::ServiceAccount(email).body(), None);
        assert_eq!(ServiceAccountEmail::parse("a/b@c"), None);
    }

    #[test]
    fn bucket_names_are_checked_before_they_are_spliced() {
        assert!(BucketName::parse("my-bucket.data").is_some());
        for bad in ["ab", "Upper", "a/b", "gs://x"] {
            assert_eq!(BucketName::parse(bad), None, "{bad}");
        }
    }
}
