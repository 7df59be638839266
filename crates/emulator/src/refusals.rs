//! Refused locations: a region (of one project, or of every project) where every request of the
//! cluster API is refused, as the service refuses a caller without permission there or a
//! project that may not use the region. A client listing every region must cope with such a
//! location without taking it for an empty one.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::api_error::{ApiError, Code};
use crate::project::project_number_of;

/// How a refused location answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalKind {
    /// `403 PERMISSION_DENIED`, IAM's wording, naming the permission the call needs.
    #[default]
    Permission,
    /// `400 INVALID_ARGUMENT`: the project may not use the region (the emulator's own wording:
    /// Google's answer for a region a project is not allowlisted in is not documented).
    NotAllowlisted,
}

impl RefusalKind {
    const ALL: [RefusalKind; 2] = [RefusalKind::Permission, RefusalKind::NotAllowlisted];

    /// The name written in JSON and on the command line.
    fn name(self) -> &'static str {
        match self {
            RefusalKind::Permission => "permission",
            RefusalKind::NotAllowlisted => "not-allowlisted",
        }
    }

    fn is_permission(&self) -> bool {
        *self == RefusalKind::Permission
    }
}

impl FromStr for RefusalKind {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == text)
            .ok_or(())
    }
}

/// Every cluster API request (`/v1beta1/…` and `/v1/…` paths) for `location` — in `project`
/// (by ID or number), or in every project when none is given — is refused as `kind` says.
/// Written `[KIND:][PROJECT/]LOCATION` (`permission:my-proj/us-east5`,
/// `not-allowlisted:asia-south2`); in JSON `{"location", "project", "kind"}`, all but `location`
/// optional.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefusedLocation {
    /// The region, e.g. `us-east5`.
    pub location: String,
    /// Only this project's requests are refused; `None`: every project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// How the requests are refused; omitted in answers when it is `permission`.
    #[serde(default, skip_serializing_if = "RefusalKind::is_permission")]
    pub kind: RefusalKind,
}

/// A refused location that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad refused location `{text}`: write [KIND:][PROJECT/]LOCATION, KIND one of permission, \
     not-allowlisted"
)]
pub struct RefusedLocationError {
    text: String,
}

impl FromStr for RefusedLocation {
    type Err = RefusedLocationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || RefusedLocationError {
            text: text.to_owned(),
        };
        let (kind, rest) = match text.split_once(':') {
            Some((kind, rest)) => (kind.parse().map_err(|()| bad())?, rest),
            None => (RefusalKind::Permission, text),
        };
        let (project, location) = match rest.split_once('/') {
            Some((project, location)) => (Some(project), location),
            None => (None, rest),
        };
        let well_formed = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        if !well_formed(location) || project.is_some_and(|project| !well_formed(project)) {
            return Err(bad());
        }
        Ok(RefusedLocation {
            location: location.to_owned(),
            project: project.map(str::to_owned),
            kind,
        })
    }
}

impl fmt::Display for RefusedLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.kind.name())?;
        if let Some(project) = &self.project {
            write!(f, "{project}/")?;
        }
        write!(f, "{}", self.location)
    }
}

impl RefusedLocation {
    /// Whether a request for `location` of `project` (an ID or a number) is refused.
    fn matches(&self, project: &str, location: &str) -> bool {
        self.location == location
            && self
                .project
                .as_deref()
                .is_none_or(|refused| project_number_of(refused) == project_number_of(project))
    }

    /// The answer to a `method` request on `path`, for `project` and `location`.
    fn answer(&self, method: &str, path: &str, project: &str, location: &str) -> ApiError {
        match self.kind {
            RefusalKind::Permission => ApiError::new(
                Code::PermissionDenied,
                format!(
                    "Permission '{}' denied on resource '//aiplatform.googleapis.com/projects/{project}/locations/{location}' (or it may not exist).",
                    permission(method, path)
                ),
            ),
            RefusalKind::NotAllowlisted => ApiError::invalid_argument(format!(
                "Model Development Clusters are not available in location {location} for project {project}: the project is not allowlisted for this region."
            )),
        }
    }
}

/// The IAM permission a request on `path` needs (AIP-211's `{service}.{resource}.{verb}`).
fn permission(method: &str, path: &str) -> &'static str {
    let cluster_path = path.contains("/modelDevelopmentClusters");
    let collection = path.ends_with("/modelDevelopmentClusters");
    match (method, cluster_path, collection) {
        (_, false, _) => "aiplatform.operations.get",
        ("GET", _, true) => "aiplatform.modelDevelopmentClusters.list",
        ("POST", _, true) => "aiplatform.modelDevelopmentClusters.create",
        ("GET", _, false) => "aiplatform.modelDevelopmentClusters.get",
        ("PATCH", _, _) => "aiplatform.modelDevelopmentClusters.update",
        ("DELETE", _, _) => "aiplatform.modelDevelopmentClusters.delete",
        _ => "aiplatform.modelDevelopmentClusters.run",
    }
}

/// The project and location a cluster API path (`/v1beta1/projects/P/locations/L…` or
/// `/v1/projects/P/locations/L…`) names; `None` for any other path.
fn project_and_location(path: &str) -> Option<(&str, &str)> {
    let rest = path
        .strip_prefix("/v1beta1/projects/")
        .or_else(|| path.strip_prefix("/v1/projects/"))?;
    let (project, rest) = rest.split_once('/')?;
    let rest = rest.strip_prefix("locations/")?;
    let location = rest.split(['/', ':']).next()?;
    (!project.is_empty() && !location.is_empty()).then_some((project, location))
}

/// The refusal of a `method` request on `path`, when one of `refused` matches it.
pub(crate) fn refusal(refused: &[RefusedLocation], method: &str, path: &str) -> Option<ApiError> {
    let (project, location) = project_and_location(path)?;
    refused
        .iter()
        .find(|entry| entry.matches(project, location))
        .map(|entry| entry.answer(method, path, project, location))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_locations_read_as_written_and_print_back() {
        let entry: RefusedLocation = "not-allowlisted:my-proj/us-east5".parse().unwrap();
        assert_eq!(
            entry,
            RefusedLocation {
                location: "us-east5".to_owned(),
                project: Some("my-proj".to_owned()),
                kind: RefusalKind::NotAllowlisted,
            }
        );
        assert_eq!(entry.to_string(), "not-allowlisted:my-proj/us-east5");
        let every_project: RefusedLocation = "asia-south2".parse().unwrap();
        assert_eq!(every_project.kind, RefusalKind::Permission);
        assert_eq!(every_project.project, None);
        for bad in ["", "nope:us-east5", "p/", "US-EAST5", "a/b/c"] {
            assert!(bad.parse::<RefusedLocation>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_the_cluster_api_of_the_location_is_refused() {
        let refused = vec!["my-proj/us-east5".parse::<RefusedLocation>().unwrap()];
        let list = "/v1beta1/projects/my-proj/locations/us-east5/modelDevelopmentClusters";
        let error = refusal(&refused, "GET", list).unwrap();
        assert_eq!(error.code, Code::PermissionDenied);
        assert!(
            error.message.starts_with(
                "Permission 'aiplatform.modelDevelopmentClusters.list' denied on resource \
                 '//aiplatform.googleapis.com/projects/my-proj/locations/us-east5'"
            ),
            "{}",
            error.message
        );
        let number = project_number_of("my-proj");
        let by_number =
            format!("/v1beta1/projects/{number}/locations/us-east5/modelDevelopmentClusters/c1");
        assert!(refusal(&refused, "DELETE", &by_number).is_some());
        let operation = "/v1/projects/my-proj/locations/us-east5/operations/7:wait";
        assert!(refusal(&refused, "POST", operation).is_some());
        for other in [
            "/v1beta1/projects/other-proj/locations/us-east5/modelDevelopmentClusters",
            "/v1beta1/projects/my-proj/locations/us-east4/modelDevelopmentClusters",
            "/v1beta1/projects/my-proj/locations/us-east55/modelDevelopmentClusters",
            "/emulator/v1/projects/my-proj/locations/us-east5/modelDevelopmentClusters/c/status",
            "/storage/v1/b/bucket/o/x",
        ] {
            assert!(refusal(&refused, "GET", other).is_none(), "{other}");
        }
    }

    #[test]
    fn a_region_the_project_may_not_use_is_an_invalid_argument() {
        let refused = vec!["not-allowlisted:asia-south2".parse().unwrap()];
        let path = "/v1beta1/projects/p-one/locations/asia-south2/modelDevelopmentClusters";
        let error = refusal(&refused, "GET", path).unwrap();
        assert_eq!(error.code, Code::InvalidArgument);
        assert!(error.message.contains("asia-south2"), "{}", error.message);
    }
}
