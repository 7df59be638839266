//! clusterform-emulator: a local, faithful stand-in for the Vertex AI Model
//! Development Cluster API, and of the Cloud Storage JSON API subset that a
//! shared lock and journal need (see `docs/emulator.md`). It stores clusters as
//! plain JSON and applies update masks on JSON paths with its own list of
//! allowed paths, deliberately independent of `clusterform-model`, so that a
//! wrong field name in the model shows up as a test failure instead of being
//! mirrored here. Embed it with [`Emulator::router`] or run it on a port with
//! [`Emulator::serve`].

mod admin;
mod api_error;
mod capacity;
mod casing;
mod clock;
mod clusters;
mod emulator;
mod error;
mod faults;
pub mod mask;
mod objects;
mod operations;
mod page_token;
mod persist;
mod preflight;
mod project;
mod refusals;
mod request_middleware;
mod resource;
mod routes;
mod schema;
mod server;
mod slurm;
mod slurm_keys;
mod start_failures;
mod storage;
mod store;
mod update;

pub use capacity::{CapacityFailure, CapacityFailureError, CapacityFailureKind};
pub use emulator::{Emulator, EmulatorOptions, OBJECT_MUTATION_INTERVAL, RecordedRequest};
pub use error::EmulatorError;
pub use faults::{FaultSpec, FaultSpecError};
pub use mask::MaskError;
pub use preflight::{
    PreflightWorld, SeededInstance, SeededQuota, SeededReservation, SeededSubnetwork,
};
pub use project::project_number_of;
pub use refusals::{RefusalKind, RefusedLocation, RefusedLocationError};
pub use server::{EmulatorHandle, SHUTDOWN_GRACE};
pub use start_failures::{StartFailure, StartFailureError};
