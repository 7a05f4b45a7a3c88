//! Tests of the crate's private modules (they were integration tests while the modules were
//! public).

mod inner_stage;
mod render;
mod subreaper;
