//! Resource names and identifiers, validated so that nothing that is not a plain identifier
//! (a `/`, `..`, `?`, `#`, a space) can ever be spliced into a request URL.

use std::fmt;
use std::str::FromStr;

/// Why a name or identifier was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// A cluster ID outside the API's rules.
    #[error("cluster ID `{id}` is invalid: {reason}")]
    ClusterId {
        /// The rejected ID.
        id: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A project ID or number outside Google's rules.
    #[error(
        "project `{0}` is invalid: use a project ID (6–30 lowercase letters, digits, hyphens) or a project number"
    )]
    Project(String),
    /// A location outside Google's rules.
    #[error("location `{0}` is invalid: expected a region such as `us-central1`")]
    Location(String),
    /// A string that is not a resource name of the expected shape.
    #[error("`{name}` is not {kind} name: expected `{pattern}`")]
    Shape {
        /// The rejected name.
        name: String,
        /// What it should have been, with its article (`a cluster`, `an operation`).
        kind: &'static str,
        /// The expected pattern.
        pattern: &'static str,
    },
}

/// A validated cluster ID: 1–10 characters, `^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$`, and no hyphens
/// for a Slurm cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterId(String);

impl ClusterId {
    /// Validates an ID for a cluster that has (`slurm = true`) or lacks a Slurm spec.
    pub fn parse(id: &str, slurm: bool) -> Result<Self, NameError> {
        let fail = |reason| {
            Err(NameError::ClusterId {
                id: id.to_owned(),
                reason,
            })
        };
        if id.is_empty() || id.len() > 10 {
            return fail("it must be 1 to 10 characters long");
        }
        if !id.starts_with(|c: char| c.is_ascii_lowercase()) {
            return fail("it must start with a lowercase letter");
        }
        if !id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return fail("only lowercase letters, digits and hyphens are allowed");
        }
        if id.ends_with('-') {
            return fail("it must not end with a hyphen");
        }
        if slurm && id.contains('-') {
            return fail("a cluster with a Slurm orchestrator cannot have hyphens in its ID");
        }
        Ok(Self(id.to_owned()))
    }

    /// The ID as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for ClusterId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl fmt::Display for ClusterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks a project ID (`my-project-123`) or number (`1059558423163`).
pub fn validate_project(project: &str) -> Result<(), NameError> {
    let is_number = !project.is_empty() && project.chars().all(|c| c.is_ascii_digit());
    let is_id = (6..=30).contains(&project.len())
        && project.starts_with(|c: char| c.is_ascii_lowercase())
        && !project.ends_with('-')
        && project
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    // Legacy domain-scoped projects look like `example.com:my-project`.
    let is_domain_scoped = project.split_once(':').is_some_and(|(domain, id)| {
        !domain.is_empty()
            && domain
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
            && !domain.contains("..")
            && validate_project(id).is_ok()
    });
    if is_number || is_id || is_domain_scoped {
        Ok(())
    } else {
        Err(NameError::Project(project.to_owned()))
    }
}

/// Checks a location such as `us-central1` (or a zone such as `us-central1-a`).
pub fn validate_location(location: &str) -> Result<(), NameError> {
    let ok = !location.is_empty()
        && location.len() <= 63
        && location.starts_with(|c: char| c.is_ascii_lowercase())
        && location
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(NameError::Location(location.to_owned()))
    }
}

/// Where clusters live: a project and a region, the collection `projects/{P}/locations/{R}`.
/// Both parts are validated, since they are spliced into request paths.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    project: String,
    region: String,
}

impl Location {
    /// A location from a project ID (or number) and a region, each checked.
    pub fn new(project: &str, region: &str) -> Result<Self, NameError> {
        validate_project(project)?;
        validate_location(region)?;
        Ok(Self {
            project: project.to_owned(),
            region: region.to_owned(),
        })
    }

    /// The project ID or number.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The region.
    pub fn region(&self) -> &str {
        &self.region
    }
}

/// `projects/{P}/locations/{R}`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "projects/{}/locations/{}", self.project, self.region)
    }
}

/// `projects/{P}/locations/{R}/modelDevelopmentClusters/{ID}`: a validated [`Location`] and
/// [`ClusterId`]. Names sort by project, region, then ID.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterName {
    location: Location,
    id: ClusterId,
}

impl ClusterName {
    /// Builds a name from validated parts. The ID is checked with the hyphen-tolerant rule,
    /// since a name says nothing about the orchestrator.
    pub fn new(project: &str, region: &str, cluster_id: &str) -> Result<Self, NameError> {
        Ok(Self::at(
            Location::new(project, region)?,
            ClusterId::parse(cluster_id, false)?,
        ))
    }

    /// The cluster `id` in `location`.
    pub fn at(location: Location, id: ClusterId) -> Self {
        Self { location, id }
    }

    /// The project and region the cluster lives in.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The project ID or number.
    pub fn project(&self) -> &str {
        self.location.project()
    }

    /// The region.
    pub fn region(&self) -> &str {
        self.location.region()
    }

    /// The cluster ID.
    pub fn id(&self) -> &ClusterId {
        &self.id
    }
}

impl fmt::Display for ClusterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/modelDevelopmentClusters/{}", self.location, self.id)
    }
}

impl FromStr for ClusterName {
    type Err = NameError;

    fn from_str(name: &str) -> Result<Self, NameError> {
        let shape = || NameError::Shape {
            name: name.to_owned(),
            kind: "a cluster",
            pattern: "projects/{P}/locations/{R}/modelDevelopmentClusters/{ID}",
        };
        match name.split('/').collect::<Vec<_>>().as_slice() {
            [
                "projects",
                project,
                "locations",
                location,
                "modelDevelopmentClusters",
                id,
            ] => Self::new(project, location, id),
            _ => Err(shape()),
        }
    }
}

/// The JSON form of a [`ClusterName`] in plans and the journal, `{"project", "region", "id"}`,
/// for `#[serde(with = "clusterform_model::cluster_address")]`. Reading it validates the name,
/// so a hand-edited file cannot smuggle a `/` or `..` into a request path.
pub mod cluster_address {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::ClusterName;

    #[derive(Serialize)]
    struct Written<'a> {
        project: &'a str,
        region: &'a str,
        id: &'a str,
    }

    #[derive(Deserialize)]
    struct Read {
        project: String,
        region: String,
        id: String,
    }

    /// Writes `name` as `{"project", "region", "id"}`.
    pub fn serialize<S: Serializer>(name: &ClusterName, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            project: name.project(),
            region: name.region(),
            id: name.id().as_str(),
        }
        .serialize(serializer)
    }

    /// Reads `{"project", "region", "id"}` into a validated name.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<ClusterName, D::Error> {
        let read = Read::deserialize(deserializer)?;
        ClusterName::new(&read.project, &read.region, &read.id).map_err(serde::de::Error::custom)
    }
}

/// `projects/{P}/locations/{R}/operations/{ID}`. The project is usually a number, so the name
/// is always used verbatim rather than rebuilt from the cluster's project ID.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OperationName {
    /// Project number (or ID).
    pub project: String,
    /// Region.
    pub location: String,
    /// Operation ID.
    pub operation_id: String,
}

impl fmt::Display for OperationName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "projects/{}/locations/{}/operations/{}",
            self.project, self.location, self.operation_id
        )
    }
}

impl FromStr for OperationName {
    type Err = NameError;

    fn from_str(name: &str) -> Result<Self, NameError> {
        let shape = || NameError::Shape {
            name: name.to_owned(),
            kind: "an operation",
            pattern: "projects/{P}/locations/{R}/operations/{ID}",
        };
        let parts: Vec<_> = name.split('/').collect();
        let ["projects", project, "locations", location, "operations", id] = parts.as_slice()
        else {
            return Err(shape());
        };
        validate_project(project)?;
        validate_location(location)?;
        let id_ok = !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !id_ok {
            return Err(shape());
        }
        Ok(Self {
            project: (*project).to_owned(),
            location: (*location).to_owned(),
            operation_id: (*id).to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ids_follow_the_api_rules() {
        assert!(ClusterId::parse("train01", true).is_ok());
        assert!(ClusterId::parse("a", true).is_ok());
        assert!(ClusterId::parse("my-clus", false).is_ok());
        let rejected = [
            ("", false),
            ("toolongname1", false),
            ("1abc", false),
            ("Abc", false),
            ("abc-", false),
            ("my-clus", true),
            ("a/b", false),
            ("..", false),
            ("a?b", false),
            ("a b", false),
        ];
        for (id, slurm) in rejected {
            assert!(ClusterId::parse(id, slurm).is_err(), "{id:?} accepted");
        }
    }

    #[test]
    fn hyphen_error_names_slurm() {
        let err = ClusterId::parse("my-clus", true).unwrap_err().to_string();
        assert!(err.contains("Slurm"), "{err}");
    }

    #[test]
    fn cluster_names_round_trip() {
        let text = "projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01";
        let name: ClusterName = text.parse().unwrap();
        assert_eq!(name.project(), "my-proj");
        assert_eq!(name.region(), "us-central1");
        assert_eq!(name.id().as_str(), "train01");
        assert_eq!(name.to_string(), text);
        assert_eq!(
            name.location().to_string(),
            "projects/my-proj/locations/us-central1"
        );
    }

    #[test]
    fn malformed_names_are_rejected() {
        for bad in [
            "projects/my-proj/locations/us-central1/modelDevelopmentClusters/../x",
            "projects/my-proj/locations/us-central1/clusters/train01",
            "projects/my proj/locations/us-central1/modelDevelopmentClusters/train01",
            "projects/my-proj/locations/us-central1?x/modelDevelopmentClusters/train01",
        ] {
            assert!(bad.parse::<ClusterName>().is_err(), "{bad} accepted");
        }
    }

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Addressed(#[serde(with = "cluster_address")] ClusterName);

    #[test]
    fn addresses_keep_their_json_shape_and_are_validated() {
        let name = ClusterName::new("my-proj", "us-central1", "train01").unwrap();
        let json =
            serde_json::json!({"project": "my-proj", "region": "us-central1", "id": "train01"});
        assert_eq!(serde_json::to_value(Addressed(name.clone())).unwrap(), json);
        assert_eq!(
            serde_json::from_value::<Addressed>(json).unwrap(),
            Addressed(name)
        );
        let bad = serde_json::json!({"project": "my-proj", "region": "us-central1", "id": "../x"});
        let err = serde_json::from_value::<Addressed>(bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cluster ID `../x` is invalid"), "{err}");
    }

    #[test]
    fn operation_names_round_trip() {
        let text = "projects/1059558423163/locations/us-central1/operations/2995239222190800896";
        let name: OperationName = text.parse().unwrap();
        assert_eq!(name.project, "1059558423163");
        assert_eq!(name.to_string(), text);
        assert!(
            "projects/1/locations/us-central1/operations/../../x"
                .parse::<OperationName>()
                .is_err()
        );
    }

    #[test]
    fn projects_and_locations() {
        assert!(validate_project("my-project").is_ok());
        assert!(validate_project("1059558423163").is_ok());
        assert!(validate_project("example.com:my-project").is_ok());
        assert!(validate_project("a/b").is_err());
        assert!(validate_project("").is_err());
        assert!(validate_location("us-central1").is_ok());
        assert!(validate_location("us central1").is_err());
    }
}
