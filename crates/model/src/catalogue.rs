//! The machine types and accelerators documented for Vertex AI training clusters, read from
//! `data/machines.json`: which accelerators each machine type comes with (every GPU count and
//! the provisioning-model rule need them, whether or not a pool names its accelerators), and a
//! documented type known to be refused in practice (a caution, with what to use instead). The
//! config crate words its warnings from it; the file's `about` says how to add a type.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The file as written: families of machine types (`FAMILY-SIZE`).
#[derive(Debug, Deserialize)]
struct CatalogueFile {
    accelerator_types: Vec<String>,
    families: Vec<Family>,
}

#[derive(Debug, Deserialize)]
struct Family {
    family: String,
    /// The accelerator every machine of the family comes with; none: a CPU family.
    #[serde(default)]
    built_in: Option<String>,
    /// Size suffix → number of built-in accelerators (0 for a CPU family).
    sizes: BTreeMap<String, u32>,
    #[serde(default)]
    caution: Option<Caution>,
}

/// Why a documented machine type is likely to fail anyway, and what to use instead.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Caution {
    /// What happened to it.
    pub message: String,
    /// What to use instead.
    pub hint: String,
}

/// The accelerators a machine type always comes with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltIn {
    /// The accelerator type, e.g. `NVIDIA_H200_141GB`.
    pub kind: String,
    /// How many per machine.
    pub count: u32,
}

/// One machine type of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// Its built-in accelerators; `None`: a CPU machine type.
    pub built_in: Option<BuiltIn>,
    /// Why it may be refused, if it is known to be.
    pub caution: Option<Caution>,
}

/// The catalogue, indexed by machine type.
#[derive(Debug)]
pub struct MachineCatalogue {
    machines: BTreeMap<String, Machine>,
    accelerator_types: Vec<String>,
}

/// The catalogue shipped in the binary.
pub fn machine_catalogue() -> &'static MachineCatalogue {
    static CATALOGUE: OnceLock<MachineCatalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        MachineCatalogue::from_json(include_str!("../data/machines.json"))
            .unwrap_or_else(|e| panic!("data/machines.json does not parse: {e}"))
    })
}

impl MachineCatalogue {
    fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let file: CatalogueFile = serde_json::from_str(text)?;
        let mut machines = BTreeMap::new();
        for family in file.families {
            for (size, count) in family.sizes {
                let built_in = family.built_in.as_ref().map(|kind| BuiltIn {
                    kind: kind.clone(),
                    count,
                });
                let machine = Machine {
                    built_in,
                    caution: family.caution.clone(),
                };
                machines.insert(format!("{}-{size}", family.family), machine);
            }
        }
        Ok(Self {
            machines,
            accelerator_types: file.accelerator_types,
        })
    }

    /// The machine type, if the catalogue knows it.
    pub fn machine(&self, machine_type: &str) -> Option<&Machine> {
        self.machines.get(machine_type)
    }

    /// The accelerators `machine_type` comes with, if it is a GPU machine type it knows.
    pub fn built_in(&self, machine_type: &str) -> Option<&BuiltIn> {
        self.machine(machine_type)?.built_in.as_ref()
    }

    /// Every machine type it knows, sorted.
    pub fn machine_types(&self) -> impl Iterator<Item = &str> {
        self.machines.keys().map(String::as_str)
    }

    /// Every accelerator type it knows.
    pub fn accelerator_types(&self) -> &[String] {
        &self.accelerator_types
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_machine_types_come_with_their_accelerators_and_cpu_ones_with_none() {
        let catalogue = machine_catalogue();
        let h200 = catalogue.built_in("a3-ultragpu-8g").unwrap();
        assert_eq!((h200.kind.as_str(), h200.count), ("NVIDIA_H200_141GB", 8));
        assert!(
            catalogue
                .machine("n2-standard-8")
                .unwrap()
                .built_in
                .is_none()
        );
        assert!(catalogue.built_in("no-such-type").is_none());
        assert!(
            catalogue
                .machine("a3-highgpu-8g")
                .unwrap()
                .caution
                .is_some()
        );
    }
}
