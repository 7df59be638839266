//! The product documentation's own clusters, written as configurations in `examples/docs-*`,
//! become the requests the documentation shows.
//!
//! The fixtures in `tests/fixtures/docs/` are the documented request bodies as published
//! (their `README.md` names the page and section of each). Each test loads its example,
//! plans it against no live cluster (or against the cluster it created) and compares the
//! request body with the documented one after normalising the spellings the API treats
//! alike: snake_case and lowerCamelCase field names (never the keys of map fields, which
//! are user data or Slurm parameter names), integers as numbers or strings. The only other
//! differences allowed are named in each test: the ownership label clusterform adds, and
//! in a PATCH the service-filled values it copies from the live cluster.

use std::path::{Path, PathBuf};

use clusterform_config::{Loaded, VariableInputs, load, validate};
use clusterform_model::fields::UpdateMaskPath;
use clusterform_model::rest::RequestKind;
use clusterform_model::{Action, LiveCluster, Location, UpdateMode};
use clusterform_planner::{PlanOptions, plan};
use serde_json::{Map, Value};

use crate::support::served;

/// The cluster ID every docs example declares: the one the *Create cluster* page's create
/// command uses (`model_development_cluster_id=training`).
const CLUSTER_ID: &str = "training";

/// The placeholders the pages share, as the examples' variable defaults (and the two
/// enum placeholders as the only value our rules and the service allow for a pool with a
/// reservation affinity).
const SHARED: &[(&str, &str)] = &[
    ("PROJECT_ID", "demo-project"),
    ("REGION", "us-central1"),
    ("ZONE", "us-central1-a"),
    ("NETWORK", "default"),
    ("SUBNETWORK", "default"),
    ("FILESTORE", "home"),
    ("LUSTRE", "scratch"),
    ("RESERVATION_NAME", "a4-reservation"),
    ("RESERVATION_AFFINITY_TYPE", "SPECIFIC_RESERVATION"),
    ("PROVISIONING_MODEL", "RESERVATION"),
];

/// Node counts are one placeholder pair for every pool of a page; each example gives each
/// pool its own variables, so they are filled per pool.
const GPU_POOLS: &[(&str, &[(&str, &str)])] = &[
    ("login", &[("MIN_NODE_COUNT", "1"), ("MAX_NODE_COUNT", "1")]),
    ("a4", &[("MIN_NODE_COUNT", "2"), ("MAX_NODE_COUNT", "2")]),
];
const CPU_POOLS: &[(&str, &[(&str, &str)])] = &[
    ("cpu", &[("MIN_NODE_COUNT", "0"), ("MAX_NODE_COUNT", "4")]),
    ("login", &[("MIN_NODE_COUNT", "1"), ("MAX_NODE_COUNT", "1")]),
];

/// The update payload's own placeholders for pool `cpu`, as the `--var`s of the update.
const UPDATED_CPU_COUNTS: &[(&str, &str)] = &[
    ("UPDATED_MIN_NODE_COUNT", "1"),
    ("UPDATED_MAX_NODE_COUNT", "8"),
];

/// One documented cluster and the example that writes it.
struct DocsExample {
    /// The directory under `examples/`, also the stack its `endpoint = "local"` gives it.
    dir: &'static str,
    /// The documented body under `tests/fixtures/docs/`.
    fixture: &'static str,
    /// The example's `display_name` default, for `DISPLAY_NAME`.
    display_name: &'static str,
    /// Each pool's node-count placeholders, by pool id.
    pools: &'static [(&'static str, &'static [(&'static str, &'static str)])],
}

impl DocsExample {
    fn placeholders(&self) -> Placeholders<'_> {
        let mut shared: Vec<(&str, &str)> = SHARED.to_vec();
        shared.push(("DISPLAY_NAME", self.display_name));
        Placeholders {
            shared,
            pools: self.pools,
        }
    }

    fn documented(&self) -> Value {
        documented(self.fixture, &self.placeholders())
    }
}

const GPU_FILESTORE: DocsExample = DocsExample {
    dir: "docs-gpu-filestore",
    fixture: "create-gpu-filestore.json",
    display_name: "gpufs",
    pools: GPU_POOLS,
};
const GPU_LUSTRE: DocsExample = DocsExample {
    dir: "docs-gpu-lustre",
    fixture: "create-gpu-lustre.json",
    display_name: "gpulustre",
    pools: GPU_POOLS,
};
const GPU_STARTUP: DocsExample = DocsExample {
    dir: "docs-gpu-startup",
    fixture: "create-gpu-startup.json",
    display_name: "gpustartup",
    pools: GPU_POOLS,
};
const CPU_ONLY: DocsExample = DocsExample {
    dir: "docs-cpu-only",
    fixture: "create-cpu-only.json",
    display_name: "cpuonly",
    pools: CPU_POOLS,
};
const SLURM_CONFIG: DocsExample = DocsExample {
    dir: "docs-slurm-config",
    fixture: "create-slurm-config.json",
    display_name: "slurmcfg",
    pools: CPU_POOLS,
};

#[test]
fn gpu_with_filestore_is_created_as_documented() {
    assert_created_as_documented(&GPU_FILESTORE);
}

#[test]
fn gpu_with_filestore_and_lustre_is_created_as_documented() {
    assert_created_as_documented(&GPU_LUSTRE);
}

#[test]
fn gpu_with_a_startup_script_is_created_as_documented() {
    assert_created_as_documented(&GPU_STARTUP);
}

#[test]
fn cpu_only_is_created_as_documented() {
    assert_created_as_documented(&CPU_ONLY);
}

#[test]
fn advanced_slurm_configuration_is_created_as_documented() {
    assert_created_as_documented(&SLURM_CONFIG);
}

/// *Manage cluster*'s update: the CPU-only cluster with new node counts for pool `cpu`, sent
/// as the complete cluster after the update.
#[test]
fn a_node_count_change_is_the_documented_patch() {
    let created = create_body(&load_example(CPU_ONLY.dir, &[]));
    let live = served(CLUSTER_ID, &created, Some(CPU_ONLY.dir), "RUNNING");
    let location = Location::new("demo-project", "us-central1").unwrap();
    let live = LiveCluster::read_at(&location, serde_json::from_value(live).unwrap()).unwrap();
    let resized = load_example(
        CPU_ONLY.dir,
        &[("cpu_min_node_count", "1"), ("cpu_max_node_count", "8")],
    );
    let made = plan(&resized.config, &[live], &PlanOptions::default()).unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Update, "{:#?}", change.fields);
    // The page's second command masks `partitions` too, for a change of both; a node count
    // alone needs only `node_pools`.
    assert_eq!(change.update_mask(), [UpdateMaskPath::NodePools]);
    assert_eq!(change.update_mode(), Some(UpdateMode::UserAndService));
    let request = &change.requests[0];
    assert_eq!(request.kind(), RequestKind::Update);
    assert_eq!(
        request.query(),
        [
            ("updateMask".to_owned(), "node_pools".to_owned()),
            ("updateMode".to_owned(), "USER_AND_SERVICE".to_owned())
        ]
    );

    let mut body = without_stack_label(request.body().unwrap().clone(), CPU_ONLY.dir);
    // What the service filled in at creation and the configuration leaves unset: the PATCH
    // keeps it, so that nothing is reset by omission.
    assert_eq!(
        take_service_filled(&mut body),
        [
            "runtimeSpec",
            "nodePools[cpu].nodeImage",
            "nodePools[login].nodeImage"
        ]
    );
    let mut pools = CPU_POOLS.to_vec();
    pools[0] = ("cpu", UPDATED_CPU_COUNTS);
    let placeholders = Placeholders {
        pools: &pools,
        ..CPU_ONLY.placeholders()
    };
    let documented = documented("update-cpu-node-count.json", &placeholders);
    assert_same_fields(&documented, &body, "the Manage cluster update payload");
}

/// The example loads with no warning and validates without variables, its create request
/// carries exactly the documented fields, and nothing but the ownership label is added.
fn assert_created_as_documented(example: &DocsExample) {
    let dir = example_dir(example.dir);
    let validated = validate(&dir, &VariableInputs::default())
        .unwrap_or_else(|d| panic!("{}:\n{}", example.dir, d.render(false)));
    assert_eq!(validated.clusters, 1);
    let loaded = load_example(example.dir, &[]);
    assert!(loaded.warnings.is_empty(), "{:#?}", loaded.warnings);
    let body = without_stack_label(create_body(&loaded), example.dir);
    assert_same_fields(&example.documented(), &body, example.fixture);
}

fn example_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn load_example(name: &str, vars: &[(&str, &str)]) -> Loaded {
    let inputs = VariableInputs {
        cli: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..VariableInputs::default()
    };
    load(&example_dir(name), &inputs).unwrap_or_else(|d| panic!("{name}:\n{}", d.render(false)))
}

/// The body of the create request of the configuration's only cluster, with no live cluster.
fn create_body(loaded: &Loaded) -> Value {
    let made = plan(&loaded.config, &[], &PlanOptions::default()).unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Create);
    assert_eq!(change.address.id(), CLUSTER_ID);
    let request = &change.requests[0];
    assert_eq!(request.kind(), RequestKind::Create);
    request.body().unwrap().clone()
}

/// The body without the ownership label of `stack`, which must be there (a cluster with no
/// other label then has none).
fn without_stack_label(mut body: Value, stack: &str) -> Value {
    let labels = body["labels"].as_object_mut().expect("labels");
    assert_eq!(labels.remove("clusterform-stack"), Some(Value::from(stack)));
    if labels.is_empty() {
        body.as_object_mut().unwrap().remove("labels");
    }
    body
}

/// Removes the fields `served` fills in (a default service account, each pool's default
/// image) and returns where they were.
fn take_service_filled(body: &mut Value) -> Vec<String> {
    let mut taken = Vec::new();
    let object = body.as_object_mut().unwrap();
    if object.remove("runtimeSpec").is_some() {
        taken.push("runtimeSpec".to_owned());
    }
    for pool in object["nodePools"].as_array_mut().unwrap() {
        let id = pool["id"].as_str().unwrap().to_owned();
        if pool.as_object_mut().unwrap().remove("nodeImage").is_some() {
            taken.push(format!("nodePools[{id}].nodeImage"));
        }
    }
    taken
}

/// The placeholders of a page and their values: shared ones, and per node pool (by `id`).
struct Placeholders<'a> {
    shared: Vec<(&'a str, &'a str)>,
    pools: &'a [(&'a str, &'a [(&'a str, &'a str)])],
}

/// The documented body of `fixture`, placeholders filled.
fn documented(fixture: &str, placeholders: &Placeholders) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/docs")
        .join(fixture);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut value: Value =
        serde_json::from_str(&as_json(&text)).unwrap_or_else(|e| panic!("{fixture}: {e}"));
    fill(&mut value, &placeholders.shared);
    let pools = value
        .get_mut("node_pools")
        .and_then(Value::as_array_mut)
        .expect("node_pools");
    for pool in pools {
        let id = pool["id"].as_str().unwrap().to_owned();
        let (_, counts) = placeholders
            .pools
            .iter()
            .find(|(pool_id, _)| *pool_id == id)
            .unwrap_or_else(|| panic!("{fixture}: no node counts for pool {id}"));
        fill(pool, counts);
    }
    value
}

/// The pages' JSON as strict JSON: a bare placeholder (`MIN_NODE_COUNT`, unquoted where the
/// value is a number) is quoted, and a comma before `}` or `]` (the update payload has
/// some) is dropped.
fn as_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut in_string = false;
    while let Some((at, c)) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next().map(|(_, escaped)| escaped)),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ',' if text[at + 1..].trim_start().starts_with(['}', ']']) => {}
            c if c.is_ascii_uppercase() => {
                let mut word = String::from(c);
                while let Some((_, next)) = chars.next_if(|(_, next)| is_word(*next)) {
                    word.push(next);
                }
                out.push('"');
                out.push_str(&word);
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Replaces every placeholder word in every string of `value` (keys are never placeholders).
fn fill(value: &mut Value, table: &[(&str, &str)]) {
    match value {
        Value::String(text) => *text = filled(text, table),
        Value::Array(items) => items.iter_mut().for_each(|item| fill(item, table)),
        Value::Object(object) => object.values_mut().for_each(|item| fill(item, table)),
        _ => {}
    }
}

fn filled(text: &str, table: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let replacement = table.iter().find(|(name, _)| name == word).map(|(_, v)| *v);
        out.push_str(replacement.unwrap_or(word));
        word.clear();
    };
    for c in text.chars() {
        if is_word(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Field names in lowerCamelCase, except the keys of map fields, and every number as its
/// decimal text (the API reads an integer from either).
fn normalised(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, item)| {
                    let key = lower_camel(key);
                    let item = if MAP_FIELDS.contains(&key.as_str()) {
                        item.clone()
                    } else {
                        normalised(item)
                    };
                    (key, item)
                })
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalised).collect()),
        Value::Number(number) => Value::String(number.to_string()),
        other => other.clone(),
    }
}

/// The fields whose keys are data: labels (cluster and pool) and the three Slurm maps.
const MAP_FIELDS: &[&str] = &["labels", "config"];

/// Written here rather than taken from the model, so that a wrong spelling in the model
/// cannot make both sides of a comparison equally wrong.
fn lower_camel(name: &str) -> String {
    let mut parts = name.split('_');
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// Fails with every difference (a field only one side sets, or a different value) listed.
fn assert_same_fields(documented: &Value, sent: &Value, what: &str) {
    let mut found = Vec::new();
    differences("", &normalised(documented), &normalised(sent), &mut found);
    assert!(found.is_empty(), "{what}:\n{}", found.join("\n"));
}

fn differences(path: &str, documented: &Value, sent: &Value, found: &mut Vec<String>) {
    match (documented, sent) {
        (Value::Object(documented), Value::Object(sent)) => {
            for (key, value) in documented {
                let at = format!("{path}/{key}");
                match sent.get(key) {
                    Some(other) => differences(&at, value, other, found),
                    None => found.push(format!("{at}: documented {value}, not sent")),
                }
            }
            for (key, value) in sent {
                if !documented.contains_key(key) {
                    found.push(format!("{path}/{key}: sent {value}, not documented"));
                }
            }
        }
        (Value::Array(documented), Value::Array(sent)) if documented.len() == sent.len() => {
            for (n, (a, b)) in documented.iter().zip(sent).enumerate() {
                differences(&format!("{path}/{n}"), a, b, found);
            }
        }
        _ if documented != sent => {
            found.push(format!("{path}: documented {documented}, sent {sent}"));
        }
        _ => {}
    }
}
