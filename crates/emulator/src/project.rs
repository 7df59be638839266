//! Project numbers. Google answers with the project *number* where a request
//! named the project *ID*; with `EmulatorOptions::project_numbers` the
//! emulator does the same. Every request path naming a project ID is rewritten
//! to the project's number before routing, so the ID and the number address
//! the same collection and every name the emulator writes carries the number.
//! The number is derived from the ID, stable across runs and machines.

use axum::extract::Request;
use axum::http::Uri;
use axum::http::uri::PathAndQuery;

/// Project numbers have 12 digits, the first not zero.
const SMALLEST_NUMBER: u64 = 100_000_000_000;
const NUMBER_RANGE: u64 = 900_000_000_000;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The emulator's project number for a project ID: the 64-bit FNV-1a hash of
/// the ID's UTF-8 bytes, reduced to 12 digits (`100000000000 + hash %
/// 900000000000`). A project given as a number already is returned unchanged.
pub fn project_number_of(project: &str) -> String {
    if is_number(project) {
        return project.to_owned();
    }
    let hash = project.bytes().fold(FNV_OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME)
    });
    (SMALLEST_NUMBER + hash % NUMBER_RANGE).to_string()
}

fn is_number(project: &str) -> bool {
    !project.is_empty() && project.chars().all(|c| c.is_ascii_digit())
}

/// `projects/{ID}/…` → `projects/{NUMBER}/…`; any other name is returned unchanged.
pub(crate) fn numbered_name(name: &str) -> String {
    match name.strip_prefix("projects/") {
        Some(rest) => {
            let (project, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let separator = if rest.contains('/') { "/" } else { "" };
            format!("projects/{}{separator}{tail}", project_number_of(project))
        }
        None => name.to_owned(),
    }
}

/// Rewrites `/{version}/projects/{ID}/…` in the request URI to the project's number.
pub(crate) fn number_request_path(mut request: Request) -> Request {
    let uri = request.uri();
    let Some((version, rest)) = uri.path().trim_start_matches('/').split_once('/') else {
        return request;
    };
    if !rest.starts_with("projects/") {
        return request;
    }
    let path = format!("/{version}/{}", numbered_name(rest));
    let path_and_query = match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path,
    };
    let mut parts = uri.clone().into_parts();
    if let Ok(rewritten) = PathAndQuery::try_from(path_and_query) {
        parts.path_and_query = Some(rewritten);
        if let Ok(uri) = Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_stable_twelve_digit_numbers() {
        let number = project_number_of("acme-ml");
        assert_eq!(number.len(), 12);
        assert!(!number.starts_with('0'));
        assert_eq!(number, project_number_of("acme-ml"));
        assert_ne!(number, project_number_of("acme-ml2"));
        assert_eq!(project_number_of("123456789012"), "123456789012");
        assert_eq!(project_number_of("proj"), "144109468950");
    }

    #[test]
    fn only_the_project_segment_is_rewritten() {
        let number = project_number_of("proj");
        assert_eq!(
            numbered_name("projects/proj/locations/r/modelDevelopmentClusters/c"),
            format!("projects/{number}/locations/r/modelDevelopmentClusters/c")
        );
        assert_eq!(numbered_name("projects/proj"), format!("projects/{number}"));
        assert_eq!(numbered_name("other/proj"), "other/proj");
    }

    #[test]
    fn request_paths_keep_their_version_and_query() {
        let request = Request::builder()
            .uri("/v1beta1/projects/proj/locations/r/modelDevelopmentClusters?pageSize=2")
            .body(axum::body::Body::empty())
            .unwrap();
        let number = project_number_of("proj");
        assert_eq!(
            number_request_path(request).uri().to_string(),
            format!("/v1beta1/projects/{number}/locations/r/modelDevelopmentClusters?pageSize=2")
        );
    }
}
