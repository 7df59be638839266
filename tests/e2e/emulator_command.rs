//! `clusterform emulator` serves the API on the address given: a client can create clusters,
//! wait for their operations and list them (with `--project-numbers`, under the project
//! number; with `--max-page-size`, in pages of that size), and Ctrl-C stops the server.

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A loopback port nobody listens on right now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `127.0.0.1:port` accepts connections, failing if `child` exits first.
pub(crate) fn wait_until_listening(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the emulator exited early"
        );
        assert!(Instant::now() < deadline, "the emulator never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `clusterform emulator` serving in the background on a free port of `host`; killed when
/// dropped, so that a failing test leaves no server behind.
pub(crate) struct ServedEmulator {
    child: Child,
    port: u16,
}

impl ServedEmulator {
    /// Starts it with `--listen HOST:PORT` and `args`, and waits until it listens.
    pub(crate) fn start(host: &str, args: &[&str]) -> Self {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_clusterform"))
            .args(["emulator", "--listen", &format!("{host}:{port}")])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until_listening(port, &mut child);
        Self { child, port }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops it with Ctrl-C (SIGINT) and answers how it exited.
    pub(crate) fn interrupt(mut self) -> ExitStatus {
        Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for ServedEmulator {
    fn drop(&mut self) {
        // Already gone after `interrupt`; then both fail harmlessly.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
) -> Value {
    let mut request = client.request(method, url).bearer_auth("any-token");
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    response.json().await.unwrap()
}

#[test]
#[cfg(unix)]
fn the_emulator_command_serves_create_wait_and_list() {
    let listed = serve_create_and_list(&[]);
    assert_eq!(
        listed["modelDevelopmentClusters"][0]["clusterStatus"]["state"],
        "RUNNING"
    );
    assert_eq!(
        listed["modelDevelopmentClusters"].as_array().unwrap().len(),
        2
    );
    assert!(listed.get("nextPageToken").is_none(), "{listed}");
    assert_eq!(
        listed["modelDevelopmentClusters"][0]["name"],
        "projects/demo-project/locations/us-central1/modelDevelopmentClusters/demo"
    );
}

#[test]
#[cfg(unix)]
fn with_project_numbers_the_emulator_names_clusters_by_project_number() {
    let listed = serve_create_and_list(&["--project-numbers"]);
    let number = clusterform_emulator::project_number_of("demo-project");
    assert_eq!(
        listed["modelDevelopmentClusters"][0]["name"],
        format!("projects/{number}/locations/us-central1/modelDevelopmentClusters/demo")
    );
}

#[test]
#[cfg(unix)]
fn with_a_max_page_size_the_emulator_answers_smaller_pages() {
    let listed = serve_create_and_list(&["--max-page-size", "1"]);
    assert_eq!(
        listed["modelDevelopmentClusters"].as_array().unwrap().len(),
        1
    );
    assert!(
        listed["nextPageToken"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
}

/// Runs `clusterform emulator` with `extra_args`, creates two clusters through it, waits for
/// their operations, lists the collection (asking for pages of 500), stops the emulator with
/// Ctrl-C and answers the first page.
#[cfg(unix)]
fn serve_create_and_list(extra_args: &[&str]) -> Value {
    let args = [&["--op-seconds", "0.2"], extra_args].concat();
    let emulator = ServedEmulator::start("127.0.0.1", &args);
    let base = emulator.base_url();
    let collection = format!(
        "{base}/v1beta1/projects/demo-project/locations/us-central1/modelDevelopmentClusters"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listed = runtime.block_on(async {
        let client = reqwest::Client::new();
        let cluster = json!({
            "network": {"network": "projects/demo-project/global/networks/default"},
            "node_pools": [{"id": "login", "machine_spec": {"machine_type": "n2-standard-8"},
                            "scaling_spec": {"min_node_count": 1, "max_node_count": 1}}],
            "orchestrator_spec": {"slurm_spec": {
                "home_directory_storage": "projects/demo-project/locations/us-central1-a/instances/home",
                "login_node_pool_id": "login"}}
        });
        for id in ["demo", "demo2"] {
            let url = format!("{collection}?modelDevelopmentClusterId={id}");
            let body = Some(cluster.clone());
            let operation = call(&client, reqwest::Method::POST, &url, body).await;
            let name = operation["name"].as_str().unwrap().to_owned();
            let wait = format!("{base}/v1/{name}:wait?timeout=10s");
            let done = call(&client, reqwest::Method::POST, &wait, Some(json!({}))).await;
            assert_eq!(done["done"], true, "{done}");
        }
        let first_page = format!("{collection}?pageSize=100");
        call(&client, reqwest::Method::GET, &first_page, None).await
    });
    let status = emulator.interrupt();
    assert!(
        status.success(),
        "Ctrl-C stops the emulator cleanly: {status}"
    );
    listed
}

/// The banner says which token a client sets: any, or the one `--token` requires.
#[cfg(unix)]
#[test]
fn the_banner_says_which_token_a_client_sets() {
    use std::io::{BufRead, BufReader};
    for (args, said) in [
        (
            &[][..],
            "It accepts any token: export CLUSTERFORM_ACCESS_TOKEN=anything",
        ),
        (
            &["--token", "s3cret"][..],
            "It accepts only the --token it was given",
        ),
    ] {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_clusterform"))
            .args(["emulator", "--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let banner: Vec<String> = BufReader::new(stderr)
            .lines()
            .take(3)
            .map(Result::unwrap)
            .collect();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            banner[0].starts_with("Emulator listening on http://127.0.0.1:"),
            "{banner:?}"
        );
        assert!(banner[1].starts_with(said), "{banner:?}");
        assert!(!banner[1].contains("s3cret"), "the token is never shown");
        assert!(
            banner[2].contains(&format!(
                "CLUSTERFORM_COMPUTE_ENDPOINT=http://127.0.0.1:{port} "
            )),
            "{banner:?}"
        );
    }
}
