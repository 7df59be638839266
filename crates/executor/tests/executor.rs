//! Integration tests of the executor against the emulator over real HTTP (and, where a
//! misbehaving server is needed, tiny servers written in the test).

mod applied;
mod auth;
mod calls;
mod engine;
mod everywhere;
mod fallbacks;
mod hostile;
mod idle;
mod journal;
mod operations;
mod pages;
mod proxy;
mod regions;
mod remote_journal;
mod remote_lock;
mod retries;
mod scripted;
mod storage;
mod stored_documents;
mod support;
