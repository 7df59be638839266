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
    /// Managed Lustre (accepted in the configuration; no check reads it yet).
    Lustre,
    /// Resource Manager (accepted; no check reads it yet).
    ResourceManager,
    /// IAM (accepted; no check reads it yet).
    Iam,
    /// Cloud Storage buckets (accepted; no check reads it yet).
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

    /// The APIs a check reads today.
    pub const READ: [Self; 3] = [Self::ServiceUsage, Self::Compute, Self::Filestore];

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
            let plain = !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            if !plain {
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
}

impl PreflightRead {
    /// The API it reads.
    pub fn api(&self) -> PreflightApi {
        match self {
            Self::Service { .. } => PreflightApi::ServiceUsage,
            Self::Network(_) | Self::Subnetwork(_) => PreflightApi::Compute,
            Self::Filestore(_) => PreflightApi::Filestore,
        }
    }

    /// The path under the API's endpoint, one segment each (the client encodes them).
    pub fn path_segments(&self) -> Vec<&str> {
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
            Self::Filestore(i) => vec![
                "v1",
                "projects",
                &i.project,
                "locations",
                &i.zone,
                "instances",
                &i.instance,
            ],
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
            Self::Filestore(name) => write!(f, "{name}"),
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
    /// `404`: it does not exist.
    Missing,
    /// The read could not be made or understood (`403`, the API off, a timeout, an answer
    /// that is not the documented shape): what happened.
    Unchecked(String),
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
}
