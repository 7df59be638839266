//! The wire: everything that puts a request on the network and reads its answer.
//!
//! It owns the HTTP rules both clients follow ([`http`]: endpoints, redirects, capped answers;
//! [`redact`]: what errors and logs show of an endpoint),
//! authentication ([`auth`]), the retry policy of AIP-194 ([`retry`]), the per-region backoff
//! after quota errors ([`region_gate`]), deadlines from outside timeouts ([`deadline`]), the one
//! budget the Lists of a refresh share ([`budget`]), and the three clients: the
//! Model Development Cluster API ([`api`]), Cloud Storage ([`storage`]) and the reads of
//! preflight ([`preflight`]). It knows nothing
//! of plans, journals or locks: the layers above import it, never the other way round.

pub(crate) mod api;
pub(crate) mod auth;
pub(crate) mod budget;
pub(crate) mod deadline;
pub(crate) mod error;
pub(crate) mod exchange;
pub(crate) mod http;
pub(crate) mod options;
pub(crate) mod preflight;
pub(crate) mod redact;
pub(crate) mod region_gate;
pub(crate) mod retry;
pub(crate) mod storage;
