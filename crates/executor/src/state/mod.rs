//! What a run keeps between runs and shares with other runs: the journal of operations in
//! flight ([`journal`]) and the advisory record of what was applied to each cluster beside it
//! ([`applied`]), both a JSON document in a local file or a Cloud Storage object
//! ([`document`], named by [`location`]); the stack's lock on this machine ([`lock`]) or on
//! Cloud Storage ([`remote_lock`]), with its holder's record ([`lock_info`]); and the private
//! state directory they live in ([`state_dir`]). It reaches Cloud Storage through
//! [`crate::transport`] and knows nothing of plans or of the cluster API.

pub(crate) mod applied;
pub(crate) mod document;
pub(crate) mod error;
pub(crate) mod journal;
pub(crate) mod location;
pub(crate) mod lock;
pub(crate) mod lock_info;
pub(crate) mod remote_lock;
pub(crate) mod state_dir;
