//! The one link-safe write helper (to be filled by the boundary work; see docs/architecture.md).
