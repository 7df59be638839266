//! Integration tests of clusterform-planner, one module per topic.

mod actions;
mod files;
mod pages;
mod property;
mod support;
