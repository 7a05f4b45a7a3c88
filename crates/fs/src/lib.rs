//! The files cordon itself touches outside the sandbox, touched one way each.
//!
//! A sandboxed command can write its writable roots; cordon, the operator's tools and the agent
//! hosts touch files there (and beside them) after it. Two helpers, used by every crate:
//!
//! - [`lock`]: the one `flock` — with a deadline, fair between waiters, and a refusal that
//!   names the real holder (owner: the audit log's issue) — and the one liveness lock,
//!   [`lock::ProcessLock`], a POSIX record lock that no forked child holds (owner: the
//!   boundary issue).
//! - [`safe`]: the one link-safe way to create, replace, move or remove a file: walk from a
//!   trusted directory descriptor without following a link at any component
//!   (`openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)`, `O_NOFOLLOW` where openat2 is missing),
//!   and refuse a link with a message that names it; and [`safe::read_followed`], the one way
//!   to read a configuration a run could have replaced (links followed as its program follows
//!   them, never blocking on a FIFO). (Owner: the boundary issue.)
//!
//! This crate depends on nothing of cordon's, so `policy`, `approval`, `ossandbox`, `gate` and
//! `cli` can all use it without an arrow going up.

pub mod links;
pub mod lock;
pub mod safe;
