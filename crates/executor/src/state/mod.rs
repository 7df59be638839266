//! What a run keeps between runs and shares with other runs: the journal of operations in
//! flight ([`journal`], stored in a file or a Cloud Storage object by [`journal_store`]), the
//! advisory record of what was applied to each cluster beside it ([`applied`]), the
//! stack's lock on this machine ([`lock`]) or on Cloud Storage ([`remote_lock`]), and the
//! private state directory both live in ([`state_dir`]). It reaches Cloud Storage through
//! [`crate::transport`] and knows nothing of plans or of the cluster API.

pub(crate) mod applied;
pub(crate) mod error;
pub(crate) mod journal;
pub(crate) mod journal_store;
pub(crate) mod lock;
pub(crate) mod remote_lock;
pub(crate) mod state_dir;
