//! The stack lock on Cloud Storage against the emulator: a held lock is refused naming its
//! holder and object, release deletes only the generation this run wrote, waiting ends when
//! the holder releases (and is told once), and of two runs racing for a free lock exactly one
//! wins; with Cloud Storage's one write of an object a second, a waiter only reads, a quick
//! release waits the second out, a create refused for rate is a lock being taken when one is
//! read, and is sent again a second later when none is (a few times, then the object is
//! reported rate-limited, never held).

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorHandle, EmulatorOptions, OBJECT_MUTATION_INTERVAL};
use clusterform_executor::{
    ClientOptions, LockInfo, StateError, StaticToken, StorageClient, StorageError, StorageLock,
};

use crate::scripted::{Scripted, google_error};
use crate::support::{TOKEN, fast_retry};

const BUCKET: &str = "team-infra";
const OBJECT: &str = "clusterform/prod/ml.lock";

async fn start() -> (EmulatorHandle, StorageClient) {
    start_with(false).await
}

/// An emulator that refuses a second write of an object within a second, as Cloud Storage
/// does, and a client of its bucket.
async fn start_rate_limited() -> (EmulatorHandle, StorageClient) {
    start_with(true).await
}

async fn start_with(object_mutation_limit: bool) -> (EmulatorHandle, StorageClient) {
    let emulator = Emulator::new(EmulatorOptions {
        required_token: Some(TOKEN.to_owned()),
        buckets: vec![BUCKET.to_owned()],
        object_mutation_limit,
        ..EmulatorOptions::default()
    })
    .unwrap();
    let handle = emulator
        .serve("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = client_at(&handle.base_url(), BUCKET);
    (handle, client)
}

/// A client of `bucket` on the server at `base_url`.
fn client_at(base_url: &str, bucket: &str) -> StorageClient {
    StorageClient::new(
        bucket,
        ClientOptions {
            endpoint: Some(base_url.to_owned()),
            retry: fast_retry(),
            ..ClientOptions::default()
        },
        Arc::new(StaticToken::new(TOKEN)),
    )
    .unwrap()
}

fn holder(command: &str) -> LockInfo {
    LockInfo::for_this_process(command, "9.9.9")
}

/// Takes the lock for `command` without waiting.
async fn try_take(client: &StorageClient, command: &str) -> Result<StorageLock, StateError> {
    StorageLock::acquire(client, OBJECT, holder(command), Duration::ZERO, |_| {}).await
}

/// Releases `lock` after `delay`, on a task of its own.
fn release_after(lock: StorageLock, delay: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        lock.release().await.unwrap();
    })
}

/// Takes the lock for `command`, waiting up to 30 s for it; `on_wait` is told the holder.
async fn take_waiting(
    client: &StorageClient,
    command: &str,
    on_wait: impl FnOnce(Option<&LockInfo>),
) -> StorageLock {
    StorageLock::acquire(
        client,
        OBJECT,
        holder(command),
        Duration::from_secs(30),
        on_wait,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_held_lock_is_refused_naming_the_holder_and_the_object() {
    let (_handle, client) = start().await;
    let first = try_take(&client, "apply").await.unwrap();
    let refused = try_take(&client, "destroy").await.unwrap_err();
    let StateError::RemoteLocked {
        holder: Some(named),
        object,
        ..
    } = &refused
    else {
        panic!("the holder is not named: {refused}");
    };
    assert_eq!(**named, *first.info());
    assert_eq!(object, &format!("gs://{BUCKET}/{OBJECT}"));
    let message = refused.to_string();
    for part in [
        first.info().who.as_str(),
        first.info().id.as_str(),
        "running `apply` since",
        "gs://team-infra/clusterform/prod/ml.lock",
    ] {
        assert!(message.contains(part), "{part:?} missing: {message}");
    }
    first.release().await.unwrap();
    try_take(&client, "destroy").await.unwrap();
}

#[tokio::test]
async fn release_deletes_only_the_generation_this_run_wrote() {
    let (_handle, client) = start().await;
    let stale = try_take(&client, "apply").await.unwrap();
    // Someone force-unlocks the lock and another run takes it.
    let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(held.generation, stale.generation());
    assert_eq!(held.info.as_ref(), Some(stale.info()));
    StorageLock::remove(&client, OBJECT, &held).await.unwrap();
    let current = try_take(&client, "apply").await.unwrap();

    let error = stale.release().await.unwrap_err();
    assert!(
        matches!(&error, StateError::LockStorage(e) if matches!(**e, StorageError::PreconditionFailed { .. })),
        "{error}"
    );
    let still = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(
        still.info.as_ref(),
        Some(current.info()),
        "the new lock stays"
    );
    current.release().await.unwrap();
    assert_eq!(StorageLock::holder(&client, OBJECT).await.unwrap(), None);
}

#[tokio::test]
async fn a_waiting_run_takes_the_lock_once_the_holder_releases_it() {
    let (_handle, client) = start().await;
    let first = try_take(&client, "apply").await.unwrap();
    let releaser = release_after(first, Duration::from_millis(500));
    let second = take_waiting(&client, "destroy", |_| {}).await;
    releaser.await.unwrap();
    let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(held.info.as_ref(), Some(second.info()));
}

#[tokio::test]
async fn a_waiting_run_only_reads_the_lock_until_it_is_gone() {
    let (handle, client) = start_rate_limited().await;
    let first = try_take(&client, "apply").await.unwrap();
    let releaser = release_after(first, Duration::from_millis(3500));
    tokio::time::sleep(OBJECT_MUTATION_INTERVAL).await;
    let second = take_waiting(&client, "destroy", |_| {}).await;
    releaser.await.unwrap();

    let log = handle.emulator().requests();
    let refused = log.iter().position(|r| r.status == 412).unwrap();
    let released = log.iter().position(|r| r.method == "DELETE").unwrap();
    assert_eq!(log[released].status, 204, "{log:#?}");
    let meanwhile = &log[refused + 1..released];
    assert!(
        meanwhile.len() >= 2 && meanwhile.iter().all(|r| r.method == "GET"),
        "while the lock was held the waiter only read it: {log:#?}"
    );
    let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(held.info.as_ref(), Some(second.info()));
}

#[tokio::test]
async fn a_lock_released_at_once_is_released_without_meeting_the_rate_limit() {
    let (handle, client) = start_rate_limited().await;
    let lock = try_take(&client, "apply").await.unwrap();
    lock.release().await.unwrap();
    assert!(
        StorageLock::holder(&client, OBJECT)
            .await
            .unwrap()
            .is_none()
    );
    let log = handle.emulator().requests();
    assert!(log.iter().all(|r| r.status != 429), "{log:#?}");
}

#[tokio::test]
async fn a_create_refused_for_rate_is_a_lock_being_taken_not_an_error() {
    let (_handle, client) = start_rate_limited().await;
    let first = try_take(&client, "apply").await.unwrap();
    // Within the second: Cloud Storage answers 429, not 412.
    let refused = try_take(&client, "apply").await.unwrap_err();
    assert!(
        matches!(&refused, StateError::RemoteLocked { holder: Some(h), .. } if **h == *first.info()),
        "{refused:?}"
    );
}

#[tokio::test]
async fn the_wait_is_told_once_with_the_holder_and_only_when_there_is_one() {
    let (_handle, client) = start().await;
    let told = std::sync::Mutex::new(Vec::new());
    let first = StorageLock::acquire(&client, OBJECT, holder("apply"), Duration::ZERO, |held| {
        told.lock().unwrap().push(held.cloned());
    })
    .await
    .unwrap();
    assert!(
        told.lock().unwrap().is_empty(),
        "a free lock is taken without waiting"
    );
    let refused = StorageLock::acquire(&client, OBJECT, holder("plan"), Duration::ZERO, |held| {
        told.lock().unwrap().push(held.cloned());
    })
    .await;
    assert!(matches!(refused, Err(StateError::RemoteLocked { .. })));
    assert!(told.lock().unwrap().is_empty(), "no wait without a timeout");

    let releaser = release_after(first, Duration::from_millis(2500));
    let holder_info = StorageLock::holder(&client, OBJECT)
        .await
        .unwrap()
        .unwrap()
        .info;
    take_waiting(&client, "destroy", |held| {
        told.lock().unwrap().push(held.cloned());
    })
    .await;
    releaser.await.unwrap();
    assert_eq!(*told.lock().unwrap(), vec![holder_info]);
}

#[tokio::test]
async fn waiting_ends_with_the_holder_named_when_the_timeout_expires() {
    let (_handle, client) = start().await;
    let _first = try_take(&client, "apply").await.unwrap();
    let timeout = Duration::from_millis(1500);
    let refused = StorageLock::acquire(&client, OBJECT, holder("apply"), timeout, |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, StateError::RemoteLocked { holder: Some(_), waited, .. } if *waited == timeout),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("still locked after"),
        "{refused}"
    );
}

#[tokio::test]
async fn of_two_runs_racing_for_a_free_lock_exactly_one_wins() {
    let (_handle, client) = start().await;
    for round in 0..5 {
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move {
                    StorageLock::acquire(&client, OBJECT, holder("apply"), Duration::ZERO, |_| {})
                        .await
                })
            })
            .collect();
        let mut winners = Vec::new();
        for racer in racers {
            match racer.await.unwrap() {
                Ok(lock) => winners.push(lock),
                Err(StateError::RemoteLocked { .. }) => {}
                Err(other) => panic!("round {round}: {other}"),
            }
        }
        assert_eq!(winners.len(), 1, "round {round}");
        let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
        assert_eq!(held.info.as_ref(), Some(winners[0].info()));
        winners.pop().unwrap().release().await.unwrap();
    }
}

#[tokio::test]
async fn a_missing_bucket_is_an_error_not_a_held_lock() {
    let (handle, _client) = start().await;
    let client = client_at(&handle.base_url(), "no-such-bucket");
    let error = try_take(&client, "apply").await.unwrap_err();
    assert!(
        matches!(&error, StateError::LockStorage(e) if matches!(**e, StorageError::BucketNotFound { .. })),
        "{error}"
    );
}

#[tokio::test]
async fn a_run_refused_for_rate_sends_one_create_and_leaves_the_release_alone() {
    let (handle, client) = start_rate_limited().await;
    let first = try_take(&client, "apply").await.unwrap();
    let refused = try_take(&client, "apply").await.unwrap_err();
    assert!(
        matches!(&refused, StateError::RemoteLocked { .. }),
        "{refused}"
    );
    first.release().await.unwrap();

    let log = handle.emulator().requests();
    let statuses = |method: &str| -> Vec<u16> {
        log.iter()
            .filter(|r| r.method == method)
            .map(|r| r.status)
            .collect()
    };
    assert_eq!(
        statuses("POST"),
        [200, 429],
        "the refused run sent one create, not a create and its retries: {log:#?}"
    );
    assert_eq!(statuses("DELETE"), [204], "{log:#?}");
}

#[tokio::test]
async fn a_lock_without_a_record_is_refused_with_its_generation_as_the_lock_id() {
    let (_handle, client) = start().await;
    let generation = client
        .create_if_absent(OBJECT, b"\x00garbage")
        .await
        .unwrap();
    let refused = try_take(&client, "apply").await.unwrap_err();
    assert!(
        matches!(
            &refused,
            StateError::RemoteLocked { holder: None, generation: g, .. } if *g == generation
        ),
        "{refused:?}"
    );
    let message = refused.to_string();
    for part in [
        format!("gs://{BUCKET}/{OBJECT}"),
        "holds no lock record".to_owned(),
        format!("(lock ID {generation}, the object's generation)"),
    ] {
        assert!(message.contains(&part), "{part:?} missing: {message}");
    }
    let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(held.id(), generation.to_string());

    StorageLock::remove(&client, OBJECT, &held).await.unwrap();
    try_take(&client, "apply").await.unwrap();
}

#[tokio::test]
async fn a_lock_with_a_record_has_the_records_id() {
    let (_handle, client) = start().await;
    let lock = try_take(&client, "apply").await.unwrap();
    let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(held.id(), lock.info().id);
}

#[tokio::test]
async fn a_run_without_a_timeout_asking_right_after_a_release_takes_the_lock() {
    let (handle, client) = start_rate_limited().await;
    let first = try_take(&client, "apply").await.unwrap();
    first.release().await.unwrap();
    // Within the second of the delete: Cloud Storage answers the create 429, and nobody holds
    // the lock.
    let second = try_take(&client, "destroy").await.unwrap();

    let held = StorageLock::holder(&client, OBJECT).await.unwrap().unwrap();
    assert_eq!(held.info.as_ref(), Some(second.info()));
    let log = handle.emulator().requests();
    let after_release: Vec<(&str, u16)> = log
        .iter()
        .skip_while(|r| r.method != "DELETE")
        .skip(1)
        .map(|r| (r.method.as_str(), r.status))
        .collect();
    assert_eq!(
        after_release[..3],
        [("POST", 429), ("GET", 404), ("POST", 200)],
        "refused for rate, read as free, created again a second later: {log:#?}"
    );
}

#[tokio::test]
async fn a_lock_object_whose_creates_are_always_refused_for_rate_is_reported_rate_limited() {
    let server = Scripted::start(|seen, _| match seen.method.as_str() {
        "POST" => google_error(
            429,
            "rateLimitExceeded",
            "The object exceeded the rate limit for object mutation operations",
        ),
        _ => google_error(
            404,
            "notFound",
            "No such object: team-infra/clusterform/prod/ml.lock",
        ),
    })
    .await;
    let client = client_at(server.base_url(), BUCKET);

    let error = try_take(&client, "apply").await.unwrap_err();

    assert!(
        matches!(&error, StateError::LockRateLimited { creates: 3, object } if *object == format!("gs://{BUCKET}/{OBJECT}")),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("is rate-limited") && message.contains("the stack is not locked"),
        "{message}"
    );
    assert!(
        !message.contains("locked by") && !message.contains("exists"),
        "an absent lock is never said to be held: {message}"
    );
    let methods: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.method.to_string())
        .collect();
    assert_eq!(
        methods,
        ["POST", "GET", "POST", "GET", "POST", "GET"],
        "three creates, each followed by a read that found no lock"
    );
}
