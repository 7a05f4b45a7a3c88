//! The one `flock` helper (to be filled by the audit-log work; see docs/architecture.md).
