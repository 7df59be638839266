//! Reading the live clusters the planner compares against.
//!
//! There is no state file: the live API is the source of truth. Without targets, every
//! location of a [`RefreshLocations`] is listed with one paged List, all locations at once:
//! every region the service runs in and every region the configuration names, in every project
//! it names, so that a stack sees its clusters wherever they are. With `--target`, only those
//! clusters are read, with one Get each. Every cluster is addressed by where it was read (the
//! configuration's project and region) and the last segment of its name, because the service
//! may spell the project as a number.
//!
//! A List that fails before its first page — *refused* ([`is_refusal`]: no permission, a
//! region the project may not use) or *failing* (an outage that outlasted the retries, no
//! answer, a malformed answer, no first page within [`FIRST_PAGE_WITHIN`]) — is reported
//! ([`RefusedList`], with its [`UnreadKind`] and whether the configuration names the location)
//! and contributes nothing, so nothing is planned from a location that could not be read; the
//! caller says what that costs (an error for the clusters there when the configuration names
//! the location). A wrong credential, a List that fails after its first page or a refresh over
//! its budget still fails the refresh.
//!
//! The Lists of one refresh share one budget ([`RefreshMeter`]: pages asked for and answer
//! bytes read, all locations together), and a List that fails the refresh stops the others
//! rather than letting them read on (see [`refresh_paged`]).
//!
//! Each List hands over its pages as they arrive ([`refresh_paged`]), so that the planner can
//! work on them while the next pages are on the network. A page is handed over, not copied:
//! whoever takes them puts the whole set together from their positions ([`LivePages`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

pub use clusterform_model::UnreadKind;
use clusterform_model::{
    Cluster, ClusterId, ClusterName, Code, LiveCluster, Location, RefreshLocations, UnreadLocation,
};
use futures::future::{join_all, try_join_all};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::run::error::ExecError;
use crate::transport::api::ApiClient;
use crate::transport::budget::RefreshMeter;
use crate::transport::error::TransportError;

/// The addressed clusters of one List page.
type Page = Vec<LiveCluster>;

/// Where a page belongs in the whole live set: the position of its location among those
/// refreshed (in their order), then its number in that location's List.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct PagePosition {
    /// The location's position among the refreshed locations.
    pub location: usize,
    /// The page's number in its List, from 0.
    pub page: usize,
}

/// The pages of a refresh, in whatever order they came, read as the whole live set in the
/// order [`refresh`] returns it — without moving the clusters out of their pages, which at a
/// thousand clusters costs a millisecond right when the plan is awaited.
#[derive(Debug, Default)]
pub struct LivePages {
    /// Sorted by position.
    pages: Vec<(PagePosition, Page)>,
}

impl LivePages {
    /// Keeps `page`, found at `position`.
    pub fn add(&mut self, position: PagePosition, page: Vec<LiveCluster>) {
        let at = self.pages.partition_point(|(kept, _)| *kept <= position);
        self.pages.insert(at, (position, page));
    }

    /// Every live cluster kept, page by page in the order of their positions.
    pub fn iter(&self) -> impl Iterator<Item = &LiveCluster> {
        self.pages.iter().flat_map(|(_, page)| page)
    }

    /// The whole live set, in the order of [`iter`](Self::iter).
    pub fn into_live(self) -> Vec<LiveCluster> {
        // Sized up front: the clusters are large, and growing would copy them several times.
        let mut all = Vec::with_capacity(self.pages.iter().map(|(_, page)| page.len()).sum());
        for (_, page) in self.pages {
            all.extend(page);
        }
        all
    }
}

/// A List running on the runtime (each location's at once), its pages kept until they are
/// handed over; cancelled when dropped.
#[derive(Debug)]
struct StartedList {
    task: JoinHandle<Result<(), ExecError>>,
    pages: UnboundedReceiver<Page>,
}

impl StartedList {
    fn start(client: &ApiClient, location: &Location, meter: &RefreshMeter) -> Self {
        let (client, location, meter) = (client.clone(), location.clone(), meter.clone());
        let (sender, pages) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move { list(&client, &location, &meter, &sender).await });
        Self { task, pages }
    }

    /// [`read_through`](Self::read_through); an error, which fails the refresh, cancels
    /// `failed`, which stops the other Lists.
    async fn hand_over(
        self,
        place: (usize, &Location, bool),
        on_page: &impl RefreshWatcher,
        failed: &CancellationToken,
    ) -> Result<Option<RefusedList>, ExecError> {
        let ended = self.read_through(place, on_page, failed).await;
        if ended.is_err() {
            failed.cancel();
        }
        on_page.listed(place.1);
        ended
    }

    /// Gives every page of the location, the `location`-th refreshed, to `on_page` as it
    /// arrives; then whether the List ended well: `Ok(None)` when it did, `Ok(Some(refused))`
    /// when the List of a location that is not `named` was refused before any page came.
    /// Once `failed` is cancelled (another List failed the refresh), a List that has handed
    /// over a page stops at once, also with `Ok(None)`: the refresh fails anyway.
    ///
    /// A cluster listed twice (in one page or two, with the same content or not) ends the
    /// List with [`ExecError::ListedTwice`] before the page that repeats it is given: which
    /// copy is the cluster cannot be known, and planning from either could delete or replace
    /// a cluster that needs nothing.
    async fn read_through(
        mut self,
        place: (usize, &Location, bool),
        on_page: &impl RefreshWatcher,
        failed: &CancellationToken,
    ) -> Result<Option<RefusedList>, ExecError> {
        let (location, at, named) = place;
        let mut page = 0;
        let mut seen = ListedOnce::default();
        let first_page_by = tokio::time::Instant::now() + FIRST_PAGE_WITHIN;
        loop {
            // A List still waiting for its first answer gets it: where every location fails
            // alike (a wrong credential), the error reported is then the first named
            // location's, whichever answer came first. The task is aborted when `self` drops.
            let clusters = tokio::select! {
                biased;
                () = failed.cancelled(), if page > 0 => return Ok(None),
                // The task holds the only sender: the pages end when the List does.
                clusters = self.pages.recv() => clusters,
                () = tokio::time::sleep_until(first_page_by), if page == 0 => {
                    return Ok(Some(RefusedList::unanswered(at, named)));
                }
            };
            let Some(clusters) = clusters else { break };
            seen.check(&clusters, page)?;
            on_page.page(PagePosition { location, page }, clusters);
            page += 1;
        }
        let listed = match (&mut self.task).await {
            Ok(listed) => listed,
            // The task is only ever aborted by dropping this handle, so it ended by panicking.
            Err(ended) => std::panic::resume_unwind(ended.into_panic()),
        };
        match listed {
            Ok(()) => Ok(None),
            // Refused, or failing, before any page: nothing of the location was handed over.
            Err(ExecError::Transport(error)) if page == 0 => {
                let Some(kind) = unread_kind(&error) else {
                    return Err(ExecError::Transport(error));
                };
                tracing::debug!("the List of {at} could not be read: {error}");
                Ok(Some(RefusedList {
                    location: at.clone(),
                    error,
                    kind,
                    named,
                }))
            }
            Err(error) => Err(error),
        }
    }
}

impl Drop for StartedList {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How long a List may take to give its first page, retries included: a location that
/// answers nothing for longer is failing, and the others do not wait for it. (The retries of
/// one request may last a minute, and a request as long: a region in an outage would hold
/// every run for minutes.)
pub const FIRST_PAGE_WITHIN: Duration = Duration::from_secs(30);

/// A List that could not be read: nothing was read there, so nothing is planned there. The
/// caller reports it, and says what that costs.
#[derive(Debug)]
pub struct RefusedList {
    /// Where the List was sent.
    pub location: Location,
    /// The API's answer, after the retries of transient errors.
    pub error: TransportError,
    /// Refused for good, or failing for now.
    pub kind: UnreadKind,
    /// Whether the configuration names the location (it had to answer).
    pub named: bool,
}

/// How a List that failed before its first page in a location nothing names failed, if it is
/// a failure that location alone has (a wrong credential or a refresh over its budget is not:
/// it fails the refresh).
fn unread_kind(error: &TransportError) -> Option<UnreadKind> {
    if is_refusal(error) {
        return Some(UnreadKind::Refused);
    }
    let outage = matches!(
        error.api_code(),
        Some(
            Code::Unavailable
                | Code::Internal
                | Code::ResourceExhausted
                | Code::DeadlineExceeded
                | Code::Unknown
        )
    );
    let unanswered = matches!(
        error,
        TransportError::NoAnswer { .. } | TransportError::Decode { .. }
    );
    (outage || unanswered).then_some(UnreadKind::Failing)
}

impl RefusedList {
    /// A List of `location` that gave no first page within [`FIRST_PAGE_WITHIN`].
    fn unanswered(location: &Location, named: bool) -> Self {
        Self {
            location: location.clone(),
            error: TransportError::NoAnswer {
                method: "GET".to_owned(),
                url: format!("{location}/modelDevelopmentClusters"),
                message: format!(
                    "no first page within {}s, retries included",
                    FIRST_PAGE_WITHIN.as_secs()
                ),
            },
            kind: UnreadKind::Failing,
            named,
        }
    }

    /// What a plan and a `--json` document say of it: the API's status when it answered one,
    /// else the transport's failure.
    pub fn unread(&self) -> UnreadLocation {
        UnreadLocation {
            location: self.location.clone(),
            kind: self.kind,
            reason: self
                .status()
                .map_or_else(|| self.error.to_string(), ToString::to_string),
            named: self.named,
            held: Vec::new(),
        }
    }

    /// The API's status, when the answer was one (always, for a refusal).
    pub fn status(&self) -> Option<&clusterform_model::Status> {
        match &self.error {
            TransportError::Api { status, .. } => Some(status.as_ref()),
            _ => None,
        }
    }
}

impl fmt::Display for RefusedList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (project, region) = (self.location.project(), self.location.region());
        match self.status() {
            Some(status) => write!(f, "the List of {project}/{region} was refused: {status}"),
            None => write!(
                f,
                "the List of {project}/{region} was refused: {}",
                self.error
            ),
        }
    }
}

/// Whether a List's error is the service refusing the location, an answer that will not
/// change by asking again: `PERMISSION_DENIED` (no permission in that project or region),
/// `INVALID_ARGUMENT`, `NOT_FOUND` and `FAILED_PRECONDITION` (a region the project is not
/// allowed to use, or where the service is not offered), `UNIMPLEMENTED` (the API is not served
/// there). Transient codes are retried before this is asked; `UNAUTHENTICATED`, quota, outages
/// and answers that are not the API's are not refusals of the location.
pub fn is_refusal(error: &TransportError) -> bool {
    matches!(
        error.api_code(),
        Some(
            Code::PermissionDenied
                | Code::InvalidArgument
                | Code::NotFound
                | Code::FailedPrecondition
                | Code::Unimplemented
        )
    )
}

/// What a refresh found besides the live clusters: the Lists refused in locations the
/// configuration does not name, in the order of their locations.
#[derive(Debug, Default)]
pub struct Refreshed {
    /// The live clusters (see [`refresh`]).
    pub live: Vec<LiveCluster>,
    /// The refused Lists.
    pub refused: Vec<RefusedList>,
}

/// What a paged refresh hands over as it reads: each page as it arrives, and each location
/// whose List ended (well, refused or failed), so that a terminal can show how far it is. A
/// closure that takes the pages is one.
pub trait RefreshWatcher {
    /// A page of live clusters, with its position.
    fn page(&self, position: PagePosition, clusters: Vec<LiveCluster>);

    /// The List of `location` ended; once per location (never for targets, read with Gets).
    fn listed(&self, _location: &Location) {}
}

impl<F: Fn(PagePosition, Vec<LiveCluster>)> RefreshWatcher for F {
    fn page(&self, position: PagePosition, clusters: Vec<LiveCluster>) {
        self(position, clusters);
    }
}

/// The live clusters: every cluster of `locations`, or only `targets` when some are given (a
/// target that does not exist is simply absent from the result); and the Lists refused in
/// locations that are not named.
pub async fn refresh(
    client: &ApiClient,
    locations: &RefreshLocations,
    targets: &[ClusterName],
) -> Result<Refreshed, ExecError> {
    let pages = Mutex::new(LivePages::default());
    let refused = refresh_paged(client, locations, targets, |position, page| {
        pages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(position, page);
    })
    .await?;
    let pages = pages.into_inner().unwrap_or_else(PoisonError::into_inner);
    Ok(Refreshed {
        live: pages.into_live(),
        refused,
    })
}

/// [`refresh`], handing each List page's live clusters to `on_page` as they arrive, with the
/// page's position (the location's place in `locations`' order, the page's in its List), so
/// that they can be used before the last page is in; the pages put together by position
/// ([`LivePages`]) are the whole set [`refresh`] returns. `Ok` when every page was given, with
/// the Lists refused in locations that are not named (no page of those was given); on an
/// error, the pages given are part of an incomplete answer. With `targets`, whose clusters are
/// read with Gets, the clusters found are given as one page.
///
/// Every List is started at once, so the refresh takes as long as its slowest location. They
/// share one budget ([`ApiClient::refresh_meter`]: the pages asked for and the answer bytes
/// read, all locations together), so that a server that never ends its Lists or floods their
/// answers costs one budget, not one per location. A List that fails the refresh stops the
/// others: each that has handed over a page is dropped at once (its task aborted, its
/// requests cancelled), and one still waiting for its first answer is dropped once that answer
/// has come. A List refused where nothing is named ([`RefusedList`]) stops nothing.
pub async fn refresh_paged(
    client: &ApiClient,
    locations: &RefreshLocations,
    targets: &[ClusterName],
    on_page: impl RefreshWatcher,
) -> Result<Vec<RefusedList>, ExecError> {
    if !targets.is_empty() {
        let found = get_targets(client, targets).await?;
        on_page.page(PagePosition::default(), found);
        return Ok(Vec::new());
    }
    let places: Vec<(usize, &Location, bool)> = locations
        .iter()
        .enumerate()
        .map(|(position, (location, named))| (position, location, named))
        .collect();
    let meter = client.refresh_meter();
    let started: Vec<StartedList> = places
        .iter()
        .map(|&(_, location, _)| StartedList::start(client, location, &meter))
        .collect();
    let failed = CancellationToken::new();
    let lists = started
        .into_iter()
        .zip(&places)
        .map(|(list, &place)| list.hand_over(place, &on_page, &failed));
    let ended = join_all(lists).await;
    first_failure(&places, ended)
}

/// The refused Lists when every List ended well; else the error of the first named location
/// (in order) whose List failed, or, when none did, of the first other one — a wrong
/// credential, refused everywhere, is reported where the configuration names a cluster. (The
/// Lists stopped by a failure ended "well": the failure is reported.)
fn first_failure(
    places: &[(usize, &Location, bool)],
    ended: Vec<Result<Option<RefusedList>, ExecError>>,
) -> Result<Vec<RefusedList>, ExecError> {
    let mut refused = Vec::new();
    let mut named_failure = None;
    let mut other_failure = None;
    for (&(_, _, named), result) in places.iter().zip(ended) {
        match result {
            Ok(outcome) => refused.extend(outcome),
            Err(error) if named => {
                named_failure.get_or_insert(error);
            }
            Err(error) => {
                other_failure.get_or_insert(error);
            }
        }
    }
    match named_failure.or(other_failure) {
        Some(error) => Err(error),
        None => Ok(refused),
    }
}

/// The page each cluster of one List was first listed in.
#[derive(Debug, Default)]
struct ListedOnce {
    pages: HashMap<ClusterId, usize>,
}

impl ListedOnce {
    /// Records the clusters of the List's page `page`; the first one already listed (in an
    /// earlier page, or earlier in this one) is an error naming it and both pages.
    fn check(&mut self, clusters: &[LiveCluster], page: usize) -> Result<(), ExecError> {
        for cluster in clusters {
            let id = cluster.address.id();
            if let Some(&first) = self.pages.get(id) {
                return Err(ExecError::ListedTwice {
                    name: cluster.address.clone(),
                    first_page: first + 1,
                    second_page: page + 1,
                });
            }
            self.pages.insert(id.clone(), page);
        }
        Ok(())
    }
}

/// One Get per target, all at once.
async fn get_targets(
    client: &ApiClient,
    targets: &[ClusterName],
) -> Result<Vec<LiveCluster>, ExecError> {
    let found = try_join_all(targets.iter().map(async |name| {
        let cluster = client.get_cluster(name).await?;
        cluster.map(|c| addressed(name.location(), c)).transpose()
    }))
    .await?;
    Ok(found.into_iter().flatten().flatten().collect())
}

/// Lists one location, sending each page's clusters, addressed, to `pages`. A page with a
/// cluster that cannot be addressed is not sent, nor any after it; the List still runs to its
/// end, so that its own errors come first, as they would for the whole list.
async fn list(
    client: &ApiClient,
    location: &Location,
    meter: &RefreshMeter,
    pages: &UnboundedSender<Page>,
) -> Result<(), ExecError> {
    let mut unaddressable = None;
    client
        .list_clusters_paged(location, meter, |clusters| {
            if unaddressable.is_some() {
                return;
            }
            match address_page(location, clusters) {
                // Nobody takes the pages once the refresh is dropped; nothing to do then.
                Ok(page) => drop(pages.send(page)),
                Err(error) => unaddressable = Some(error),
            }
        })
        .await?;
    unaddressable.map_or(Ok(()), Err)
}

/// One page's clusters, addressed; a cluster nobody owns whose name cannot be read is left out.
fn address_page(location: &Location, clusters: Vec<Cluster>) -> Result<Page, ExecError> {
    // In one pass: a page of large clusters is not moved again through a vector of options.
    clusters
        .into_iter()
        .filter_map(|c| addressed(location, c).transpose())
        .collect()
}

/// The cluster with its address. A cluster whose name cannot be read cannot be addressed by
/// any request: one without an ownership label is nobody's concern here and is skipped, one
/// that carries it stops the run, since planning without it could delete or duplicate.
fn addressed(location: &Location, cluster: Cluster) -> Result<Option<LiveCluster>, ExecError> {
    let owned = cluster.owner().is_some();
    match LiveCluster::read_at(location, cluster) {
        Ok(live) => Ok(Some(live)),
        Err(unreadable) if owned => Err(ExecError::UnreadableLiveName(unreadable)),
        Err(unreadable) => {
            tracing::debug!("skipping a cluster nobody owns: {unreadable}");
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clusterform_model::STACK_LABEL;

    fn cluster(name: &str, stack: Option<&str>) -> Cluster {
        let labels = stack.map(|s| [(STACK_LABEL.to_owned(), s.to_owned())].into());
        Cluster {
            name: Some(name.to_owned()),
            labels,
            ..Cluster::default()
        }
    }

    #[test]
    fn a_project_number_in_the_name_is_addressed_with_the_project_listed() {
        let named = "projects/123456789012/locations/us-central1/modelDevelopmentClusters/train01";
        let live = addressed(&acme_ml(), cluster(named, Some("s")))
            .unwrap()
            .unwrap();
        assert_eq!(live.address.project(), "acme-ml");
        assert_eq!(live.address.id(), "train01");
        assert_eq!(
            live.cluster.name.as_deref(),
            Some(named),
            "the answer is kept as is"
        );
    }

    fn acme_ml() -> Location {
        Location::new("acme-ml", "us-central1").unwrap()
    }

    fn listed(id: &str) -> LiveCluster {
        let name = format!("projects/acme-ml/locations/us-central1/modelDevelopmentClusters/{id}");
        addressed(&acme_ml(), cluster(&name, Some("s")))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_cluster_listed_twice_is_an_error_naming_it_and_its_pages() {
        let mut seen = ListedOnce::default();
        seen.check(&[listed("a"), listed("b")], 0).unwrap();
        seen.check(&[listed("c")], 1).unwrap();
        let error = seen.check(&[listed("d"), listed("b")], 2).unwrap_err();
        assert!(
            matches!(&error, ExecError::ListedTwice { name, first_page: 1, second_page: 3 }
                if name.id() == "b"),
            "{error}"
        );
        let mut seen = ListedOnce::default();
        let twice_in_one = seen.check(&[listed("a"), listed("a")], 0).unwrap_err();
        assert!(
            matches!(
                twice_in_one,
                ExecError::ListedTwice {
                    first_page: 1,
                    second_page: 1,
                    ..
                }
            ),
            "{twice_in_one}"
        );
    }

    fn api_error(code: i64, name: &str) -> TransportError {
        TransportError::Api {
            status: Box::new(clusterform_model::Status {
                code,
                message: format!("{name} here"),
                status: Some(name.to_owned()),
                details: Vec::new(),
            }),
            method: "GET".to_owned(),
            url: "https://x/v1beta1/projects/acme-ml/locations/r/modelDevelopmentClusters"
                .to_owned(),
        }
    }

    #[test]
    fn refusals_are_the_answers_that_asking_again_does_not_change() {
        for (code, name) in [
            (403, "PERMISSION_DENIED"),
            (400, "INVALID_ARGUMENT"),
            (404, "NOT_FOUND"),
            (400, "FAILED_PRECONDITION"),
            (501, "UNIMPLEMENTED"),
        ] {
            assert!(is_refusal(&api_error(code, name)), "{name}");
        }
        for (code, name) in [
            (503, "UNAVAILABLE"),
            (429, "RESOURCE_EXHAUSTED"),
            (401, "UNAUTHENTICATED"),
            (500, "INTERNAL"),
            (504, "DEADLINE_EXCEEDED"),
        ] {
            assert!(!is_refusal(&api_error(code, name)), "{name}");
        }
        let no_answer = TransportError::NoAnswer {
            method: "GET".to_owned(),
            url: "https://x".to_owned(),
            message: "connection refused".to_owned(),
        };
        assert!(!is_refusal(&no_answer));
    }

    #[test]
    fn a_named_location_s_failure_is_reported_before_any_other() {
        let [a, b, c] = ["us-east1", "us-east4", "us-west1"]
            .map(|region| Location::new("acme-ml", region).unwrap());
        let places = [(0, &a, false), (1, &b, true), (2, &c, false)];
        let refused = || RefusedList {
            location: c.clone(),
            error: api_error(403, "PERMISSION_DENIED"),
            kind: UnreadKind::Refused,
            named: false,
        };
        let failed = |code, name| Err(ExecError::Transport(api_error(code, name)));
        let both = first_failure(
            &places,
            vec![
                failed(503, "UNAVAILABLE"),
                failed(401, "UNAUTHENTICATED"),
                Ok(Some(refused())),
            ],
        );
        assert_eq!(both.unwrap_err().api_code(), Some(Code::Unauthenticated));
        let other = first_failure(
            &places,
            vec![failed(503, "UNAVAILABLE"), Ok(None), Ok(Some(refused()))],
        );
        assert_eq!(other.unwrap_err().api_code(), Some(Code::Unavailable));
        let fine = first_failure(&places, vec![Ok(None), Ok(None), Ok(Some(refused()))]).unwrap();
        assert_eq!(fine.len(), 1);
        assert_eq!(
            fine[0].to_string(),
            "the List of acme-ml/us-west1 was refused: PERMISSION_DENIED (403): PERMISSION_DENIED here"
        );
    }

    #[test]
    fn unreadable_names_are_skipped_unless_a_stack_owns_the_cluster() {
        let skipped = addressed(&acme_ml(), cluster("garbage", None)).unwrap();
        assert!(skipped.is_none());
        let error = addressed(&acme_ml(), cluster("garbage", Some("other"))).unwrap_err();
        assert!(matches!(error, ExecError::UnreadableLiveName(_)), "{error}");
        assert!(error.to_string().contains("garbage"), "{error}");
    }
}
