//! Integration tests of clusterform-planner, one module per topic.

mod actions;
mod docs_examples;
mod drift;
mod fallbacks;
mod files;
mod pages;
mod property;
mod support;
