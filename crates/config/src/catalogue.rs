//! The machine types and accelerators known to run Vertex AI training clusters, read from
//! `data/machines.json`, and the warnings a pool's `machine_spec` gets when it strays from
//! them: an unknown machine or accelerator type (with a "did you mean"), a GPU machine type
//! whose built-in accelerators the configuration contradicts, an accelerator a CPU machine
//! cannot attach. These are warnings, never errors: the service adds machine types over time,
//! and a catalogue that refused them would block users until we caught up.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::diagnostic::did_you_mean;

/// The file as written: families of machine types (`FAMILY-SIZE`).
#[derive(Debug, Deserialize)]
struct CatalogueFile {
    accelerator_types: Vec<String>,
    families: Vec<Family>,
}

#[derive(Debug, Deserialize)]
struct Family {
    family: String,
    /// The accelerator every machine of the family comes with.
    #[serde(default)]
    built_in: Option<String>,
    /// Size suffix → number of built-in accelerators (0 for a family without them).
    sizes: BTreeMap<String, i64>,
    /// Accelerators a machine of the family can attach, with the counts allowed.
    #[serde(default)]
    attachable: BTreeMap<String, Vec<i64>>,
}

/// What one machine type comes with or can take.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Accelerators {
    /// Exactly `count` accelerators of `kind`, always.
    BuiltIn { kind: String, count: i64 },
    /// Accelerator type → the counts a machine can attach (empty: none at all).
    Attachable(BTreeMap<String, Vec<i64>>),
}

/// The catalogue, indexed by machine type.
#[derive(Debug)]
pub(crate) struct Catalogue {
    machines: BTreeMap<String, Accelerators>,
    accelerator_types: Vec<String>,
}

/// The machine spec fields a warning can point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MachineField {
    MachineType,
    AcceleratorType,
    AcceleratorCount,
}

impl MachineField {
    /// The attribute's name inside `machine_spec`.
    pub fn attribute(self) -> &'static str {
        match self {
            Self::MachineType => "machine_type",
            Self::AcceleratorType => "accelerator_type",
            Self::AcceleratorCount => "accelerator_count",
        }
    }
}

/// One way a machine spec strays from the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogueWarning {
    pub field: MachineField,
    pub message: String,
    pub hint: String,
}

/// The machine spec being checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MachineChoice<'a> {
    pub machine_type: &'a str,
    pub accelerator_type: Option<&'a str>,
    pub accelerator_count: Option<i64>,
}

/// Said after every warning: the catalogue may be behind the service.
const NEWER_TYPES: &str = "The service may offer types newer than clusterform's catalogue: if this one exists, ignore this warning.";

/// The catalogue shipped in the binary.
pub(crate) fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        Catalogue::from_json(include_str!("../data/machines.json"))
            .unwrap_or_else(|e| panic!("data/machines.json does not parse: {e}"))
    })
}

impl Catalogue {
    fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let file: CatalogueFile = serde_json::from_str(text)?;
        let mut machines = BTreeMap::new();
        for family in file.families {
            for (size, count) in family.sizes {
                let accelerators = match &family.built_in {
                    Some(kind) => Accelerators::BuiltIn {
                        kind: kind.clone(),
                        count,
                    },
                    None => Accelerators::Attachable(family.attachable.clone()),
                };
                machines.insert(format!("{}-{size}", family.family), accelerators);
            }
        }
        Ok(Self {
            machines,
            accelerator_types: file.accelerator_types,
        })
    }

    /// Every way `choice` strays from the catalogue, most fundamental first.
    pub fn check(&self, choice: MachineChoice<'_>) -> Vec<CatalogueWarning> {
        let mut warnings = Vec::new();
        if let Some(kind) = choice.accelerator_type
            && !self.accelerator_types.iter().any(|known| known == kind)
        {
            warnings.push(CatalogueWarning {
                field: MachineField::AcceleratorType,
                message: format!("accelerator type `{kind}` is not in clusterform's catalogue"),
                hint: with_suggestion(did_you_mean(
                    kind,
                    self.accelerator_types.iter().map(String::as_str),
                )),
            });
            return warnings;
        }
        match self.machines.get(choice.machine_type) {
            None => warnings.push(CatalogueWarning {
                field: MachineField::MachineType,
                message: format!(
                    "machine type `{}` is not in clusterform's catalogue of training machine types",
                    choice.machine_type
                ),
                hint: with_suggestion(did_you_mean(
                    choice.machine_type,
                    self.machines.keys().map(String::as_str),
                )),
            }),
            Some(Accelerators::BuiltIn { kind, count }) => {
                warnings.extend(built_in(choice, kind, *count));
            }
            Some(Accelerators::Attachable(allowed)) => {
                warnings.extend(attachable(choice, allowed));
            }
        }
        warnings
    }
}

/// A machine type with built-in accelerators: the spec must name them and their count.
fn built_in(choice: MachineChoice<'_>, kind: &str, count: i64) -> Option<CatalogueWarning> {
    let machine = choice.machine_type;
    let set_both = format!("set accelerator_type = \"{kind}\" and accelerator_count = {count}");
    match (choice.accelerator_type, choice.accelerator_count) {
        (None, _) => Some(CatalogueWarning {
            field: MachineField::MachineType,
            message: format!(
                "`{machine}` comes with {count} × {kind}, but accelerator_type is not set"
            ),
            hint: set_both,
        }),
        (Some(other), _) if other != kind => Some(CatalogueWarning {
            field: MachineField::AcceleratorType,
            message: format!("`{machine}` comes with {kind}, not {other}"),
            hint: format!("use accelerator_type = \"{kind}\", or a machine type built for {other}"),
        }),
        (Some(_), Some(other)) if other != count => Some(CatalogueWarning {
            field: MachineField::AcceleratorCount,
            message: format!("`{machine}` has {count} × {kind}; accelerator_count is {other}"),
            hint: format!("use accelerator_count = {count}"),
        }),
        (Some(_), None) => Some(CatalogueWarning {
            field: MachineField::AcceleratorType,
            message: format!("`{machine}` has {count} × {kind}, but accelerator_count is not set"),
            hint: set_both,
        }),
        (Some(_), Some(_)) => None,
    }
}

/// A machine type that attaches accelerators (or none): the spec must pick an allowed one.
fn attachable(
    choice: MachineChoice<'_>,
    allowed: &BTreeMap<String, Vec<i64>>,
) -> Option<CatalogueWarning> {
    let machine = choice.machine_type;
    let Some(kind) = choice.accelerator_type else {
        return choice
            .accelerator_count
            .filter(|count| *count > 0)
            .map(|count| CatalogueWarning {
                field: MachineField::AcceleratorCount,
                message: format!("accelerator_count is {count} but accelerator_type is not set"),
                hint: "set accelerator_type, or remove accelerator_count".to_owned(),
            });
    };
    let Some(counts) = allowed.get(kind) else {
        let hint = if allowed.is_empty() {
            format!(
                "`{machine}` takes no accelerators: remove accelerator_type, or use a GPU machine type such as `g2-standard-8` or `a3-highgpu-8g`"
            )
        } else {
            format!(
                "`{machine}` can attach {}",
                allowed.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        };
        return Some(CatalogueWarning {
            field: MachineField::AcceleratorType,
            message: format!("`{machine}` cannot attach {kind}"),
            hint,
        });
    };
    let count = choice.accelerator_count.unwrap_or(1);
    (!counts.contains(&count)).then(|| CatalogueWarning {
        field: MachineField::AcceleratorCount,
        message: format!("`{machine}` cannot attach {count} × {kind}"),
        hint: format!("use accelerator_count {}", one_of(counts)),
    })
}

/// `1, 2 or 4`.
fn one_of(counts: &[i64]) -> String {
    match counts {
        [] => String::new(),
        [only] => only.to_string(),
        [init @ .., last] => {
            let init: Vec<_> = init.iter().map(i64::to_string).collect();
            format!("{} or {last}", init.join(", "))
        }
    }
}

fn with_suggestion(suggestion: Option<String>) -> String {
    match suggestion {
        Some(suggestion) => format!("{suggestion} {NEWER_TYPES}"),
        None => NEWER_TYPES.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(machine_type: &str, kind: Option<&str>, count: Option<i64>) -> Vec<String> {
        catalogue()
            .check(MachineChoice {
                machine_type,
                accelerator_type: kind,
                accelerator_count: count,
            })
            .into_iter()
            .map(|w| format!("{}: {} ({})", w.field.attribute(), w.message, w.hint))
            .collect()
    }

    #[test]
    fn the_shipped_file_parses_and_lists_every_family_of_the_docs() {
        let machines = &catalogue().machines;
        for known in [
            "a4-highgpu-8g",
            "a3-ultragpu-8g",
            "a3-megagpu-8g",
            "a3-highgpu-8g",
            "a2-highgpu-1g",
            "g2-standard-8",
            "n2-standard-8",
            "c3-standard-22",
        ] {
            assert!(machines.contains_key(known), "{known} missing");
        }
    }

    #[test]
    fn specs_that_match_the_catalogue_get_no_warning() {
        assert!(check("n2-standard-8", None, None).is_empty());
        assert!(check("a4-highgpu-8g", Some("NVIDIA_B200"), Some(8)).is_empty());
        assert!(check("a3-highgpu-2g", Some("NVIDIA_H100_80GB"), Some(2)).is_empty());
        assert!(check("n1-standard-8", Some("NVIDIA_TESLA_T4"), Some(4)).is_empty());
    }

    #[test]
    fn a_misspelt_machine_type_gets_a_suggestion() {
        insta::assert_debug_snapshot!(check("n2-standrad-8", None, None), @r#"
        [
            "machine_type: machine type `n2-standrad-8` is not in clusterform's catalogue of training machine types (did you mean `n2-standard-8`? The service may offer types newer than clusterform's catalogue: if this one exists, ignore this warning.)",
        ]
        "#);
    }

    #[test]
    fn built_in_accelerators_must_be_named_and_counted() {
        insta::assert_debug_snapshot!(
            [
                check("a3-megagpu-8g", None, None),
                check("a3-megagpu-8g", Some("NVIDIA_H100_80GB"), Some(8)),
                check("a3-megagpu-8g", Some("NVIDIA_H100_MEGA_80GB"), Some(4)),
                check("a3-megagpu-8g", Some("NVIDIA_H100_MEGA_80GB"), None),
            ],
            @r#"
        [
            [
                "machine_type: `a3-megagpu-8g` comes with 8 × NVIDIA_H100_MEGA_80GB, but accelerator_type is not set (set accelerator_type = \"NVIDIA_H100_MEGA_80GB\" and accelerator_count = 8)",
            ],
            [
                "accelerator_type: `a3-megagpu-8g` comes with NVIDIA_H100_MEGA_80GB, not NVIDIA_H100_80GB (use accelerator_type = \"NVIDIA_H100_MEGA_80GB\", or a machine type built for NVIDIA_H100_80GB)",
            ],
            [
                "accelerator_count: `a3-megagpu-8g` has 8 × NVIDIA_H100_MEGA_80GB; accelerator_count is 4 (use accelerator_count = 8)",
            ],
            [
                "accelerator_type: `a3-megagpu-8g` has 8 × NVIDIA_H100_MEGA_80GB, but accelerator_count is not set (set accelerator_type = \"NVIDIA_H100_MEGA_80GB\" and accelerator_count = 8)",
            ],
        ]
        "#
        );
    }

    #[test]
    fn attachable_accelerators_are_checked_by_kind_and_count() {
        insta::assert_debug_snapshot!(
            [
                check("n2-standard-8", Some("NVIDIA_L4"), Some(1)),
                check("n1-standard-8", Some("NVIDIA_L4"), Some(1)),
                check("n1-standard-8", Some("NVIDIA_TESLA_T4"), Some(3)),
                check("n1-standard-8", None, Some(2)),
                check("n2-standard-8", Some("NVIDIA_H100_MEGA"), Some(8)),
            ],
            @r#"
        [
            [
                "accelerator_type: `n2-standard-8` cannot attach NVIDIA_L4 (`n2-standard-8` takes no accelerators: remove accelerator_type, or use a GPU machine type such as `g2-standard-8` or `a3-highgpu-8g`)",
            ],
            [
                "accelerator_type: `n1-standard-8` cannot attach NVIDIA_L4 (`n1-standard-8` can attach NVIDIA_TESLA_P100, NVIDIA_TESLA_P4, NVIDIA_TESLA_T4, NVIDIA_TESLA_V100)",
            ],
            [
                "accelerator_count: `n1-standard-8` cannot attach 3 × NVIDIA_TESLA_T4 (use accelerator_count 1, 2 or 4)",
            ],
            [
                "accelerator_count: accelerator_count is 2 but accelerator_type is not set (set accelerator_type, or remove accelerator_count)",
            ],
            [
                "accelerator_type: accelerator type `NVIDIA_H100_MEGA` is not in clusterform's catalogue (did you mean `NVIDIA_H100_MEGA_80GB`? The service may offer types newer than clusterform's catalogue: if this one exists, ignore this warning.)",
            ],
        ]
        "#
        );
    }
}
