//! Session memory ("approve for this session") and doom-loop detection.

use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

use crate::request::Key;

/// Grants for one session, kept per (tool, operation key). A request is covered only when
/// every one of its keys is granted; a request without keys is never covered. Grants never
/// override an explicit deny rule: the engine checks the rules first.
#[derive(Debug, Clone, Default)]
pub struct SessionMemory {
    grants: HashMap<String, HashSet<Key>>,
}

impl SessionMemory {
    /// An empty memory.
    pub fn new() -> SessionMemory {
        SessionMemory::default()
    }

    /// Grants `key` of `tool`; `false` when it was already granted.
    pub fn grant(&mut self, tool: &str, key: Key) -> bool {
        self.grants.entry(tool.to_string()).or_default().insert(key)
    }

    /// Revokes a grant; `false` when there was none.
    pub fn revoke(&mut self, tool: &str, key: &Key) -> bool {
        let Some(set) = self.grants.get_mut(tool) else {
            return false;
        };
        let removed = set.remove(key);
        if set.is_empty() {
            self.grants.remove(tool);
        }
        removed
    }

    /// Is this key of this tool granted?
    pub fn is_granted(&self, tool: &str, key: &Key) -> bool {
        self.grants.get(tool).is_some_and(|s| s.contains(key))
    }

    /// Are all `keys` granted (and there is at least one)?
    pub fn covers(&self, tool: &str, keys: &[Key]) -> bool {
        match self.grants.get(tool) {
            Some(set) => !keys.is_empty() && keys.iter().all(|k| set.contains(k)),
            None => false,
        }
    }

    /// Every grant, sorted by tool then key.
    pub fn list(&self) -> Vec<(String, Key)> {
        let mut all: Vec<(String, Key)> = self
            .grants
            .iter()
            .flat_map(|(t, ks)| ks.iter().map(move |k| (t.clone(), k.clone())))
            .collect();
        all.sort();
        all
    }

    /// The number of grants.
    pub fn len(&self) -> usize {
        self.grants.values().map(HashSet::len).sum()
    }

    /// No grants?
    pub fn is_empty(&self) -> bool {
        self.grants.is_empty()
    }

    /// Forgets every grant.
    pub fn clear(&mut self) {
        self.grants.clear();
    }
}

/// Counts identical consecutive calls (same tool, same keys).
#[derive(Debug, Clone, Default)]
pub(crate) struct DoomLoop {
    last: Option<u64>,
    count: u32,
}

impl DoomLoop {
    pub(crate) fn from_state((last, count): (Option<u64>, u32)) -> DoomLoop {
        DoomLoop { last, count }
    }

    pub(crate) fn state(&self) -> (Option<u64>, u32) {
        (self.last, self.count)
    }

    /// Records a call; returns how many times in a row it has now been seen (1 for a new one).
    /// Calls are compared by a 64-bit hash: a collision could only raise an ask, never allow.
    pub(crate) fn observe(&mut self, tool: &str, keys: &[Key]) -> u32 {
        let h = fingerprint(tool, keys);
        self.count = self.peek_hash(h);
        self.last = Some(h);
        self.count
    }

    /// What [`DoomLoop::observe`] would return, without recording the call.
    pub(crate) fn peek(&self, tool: &str, keys: &[Key]) -> u32 {
        self.peek_hash(fingerprint(tool, keys))
    }

    fn peek_hash(&self, h: u64) -> u32 {
        if self.last == Some(h) {
            self.count.saturating_add(1)
        } else {
            1
        }
    }
}

/// FNV-1a over the tool and every word, with separators so that word boundaries count.
fn fingerprint(tool: &str, keys: &[Key]) -> u64 {
    // Only `Hasher::write`: the typed `write_*` methods hash native-endian integers.
    let mut h = fnv::FnvHasher::default();
    h.write(tool.as_bytes());
    h.write(&[0]);
    for k in keys {
        for w in k.words() {
            h.write(w.as_bytes());
            h.write(&[0]);
        }
        h.write(&[1]);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grant_revoke_list() {
        let mut m = SessionMemory::new();
        let (a, b) = (Key::split("git push"), Key::split("npm test"));
        assert!(m.grant("shell", a.clone()));
        assert!(!m.grant("shell", a.clone()));
        assert!(m.grant("write_file", Key::split("write_file a.txt")));
        assert_eq!(m.len(), 2);
        assert!(m.covers("shell", std::slice::from_ref(&a)));
        assert!(
            !m.covers("shell", &[a.clone(), b.clone()]),
            "all keys needed"
        );
        assert!(!m.covers("other", std::slice::from_ref(&a)), "per tool");
        assert!(!m.covers("shell", &[]), "no keys: never covered");
        m.grant("shell", b.clone());
        assert!(m.covers("shell", &[a.clone(), b.clone()]));
        assert_eq!(
            m.list(),
            vec![
                ("shell".to_string(), a.clone()),
                ("shell".to_string(), b.clone()),
                ("write_file".to_string(), Key::split("write_file a.txt")),
            ]
        );
        assert!(m.revoke("shell", &a));
        assert!(!m.revoke("shell", &a));
        assert!(!m.covers("shell", &[a, b]));
        m.clear();
        assert!(m.is_empty());
    }

    /// The fingerprint is FNV-1a over the words with separators: pinned, and word boundaries
    /// count ("git push" and "gitpush" differ, as do one key of two words and two of one).
    #[test]
    fn fingerprint_is_fnv1a_with_separators() {
        assert_eq!(
            fingerprint("shell", &[Key::split("git push")]),
            0xd399_a66e_f76e_2e8c
        );
        let one = fingerprint("shell", &[Key::split("git push")]);
        assert_ne!(one, fingerprint("shell", &[Key::split("gitpush")]));
        assert_ne!(
            one,
            fingerprint("shell", &[Key::split("git"), Key::split("push")])
        );
        assert_ne!(one, fingerprint("shellgit", &[Key::split("push")]));
    }

    #[test]
    fn doom_loop_counts_runs() {
        let mut d = DoomLoop::default();
        let k = vec![Key::split("ls")];
        assert_eq!(d.peek("shell", &k), 1);
        assert_eq!(d.observe("shell", &k), 1);
        assert_eq!(d.peek("shell", &k), 2, "peek counts nothing");
        assert_eq!(d.peek("shell", &k), 2);
        assert_eq!(d.observe("shell", &k), 2);
        assert_eq!(d.observe("other", &k), 1);
        assert_eq!(d.observe("shell", &k), 1);
        assert_eq!(d.observe("shell", &k), 2);
    }
}
