//! Rules for every tool: `(tool glob, pattern, action)`.
//!
//! Rules come in groups that share a tool glob and an origin (the policy's `[[shell.rules]]`
//! are one group for tool `shell`; a rules file of remembered grants is another; an embedding
//! program may add groups for its own tools). Each group is a compiled [`RuleSet`] (a trie of its
//! rules' leading tokens); groups are indexed by literal tool name, so a decision looks only at the
//! groups and rules that can match. Semantics, across all groups in order:
//! an explicit deny that matches wins; otherwise the last matching rule; otherwise the tool's
//! default.
//!
//! Tool globs use the same matcher as patterns (globset): `*` matches any run of characters,
//! `?` one, `[..]` a class, `{a,b}` alternatives. Patterns are token prefixes of a key (see
//! [`cordon_policy::Pattern`]): `*` inside a token never crosses `/`, `**/` crosses
//! directories.

use std::collections::HashMap;

use cordon_policy::mcp::MCP_TOOL;
use cordon_policy::network::NETWORK_TOOL;
use cordon_policy::requests::HTTP_TOOL;
use cordon_policy::{
    Action, Location, Mode, NetworkPolicy, PathRoot, Pattern, Policy, RulesFile, Shell, ShellRule,
};
use globset::{GlobBuilder, GlobMatcher};

use crate::outcome::By;
use crate::request::{FileAccess, Key};
use crate::Error;
use crate::{Decision, RuleRef, RuleSet};
use cordon_policy::verdict::Known;

/// Where a group of rules came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The policy (or the embedding program).
    Policy,
    /// Remembered "approve always" grants.
    Persisted,
}

#[derive(Debug, Clone)]
enum ToolGlob {
    Literal(String),
    Glob(GlobMatcher),
}

impl ToolGlob {
    fn new(s: &str) -> Result<ToolGlob, Error> {
        if s.contains(['*', '?', '[', ']', '{', '}']) {
            let g = GlobBuilder::new(s)
                .backslash_escape(true)
                .build()
                .map_err(|e| {
                    Error::InvalidRule(format!("tool glob `{s}` is not valid: {}", e.kind()))
                })?;
            Ok(ToolGlob::Glob(g.compile_matcher()))
        } else if s.is_empty() {
            Err(Error::InvalidRule("tool glob is empty".into()))
        } else {
            Ok(ToolGlob::Literal(s.to_string()))
        }
    }

    fn matches(&self, tool: &str) -> bool {
        match self {
            ToolGlob::Literal(s) => s == tool,
            ToolGlob::Glob(g) => g.is_match(tool),
        }
    }
}

#[derive(Debug, Clone)]
struct Group {
    tool: ToolGlob,
    set: RuleSet,
    origin: Origin,
}

/// The verdict of the rules on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyVerdict {
    pub action: Action,
    pub reason: String,
    pub by: By,
}

/// Every tool's rules and defaults, compiled.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    groups: Vec<Group>,
    by_tool: HashMap<String, Vec<usize>>,
    glob_groups: Vec<usize>,
    /// Per tool: the default action, what it is, and the reason it gives.
    defaults: HashMap<String, (Action, By, String)>,
    /// The policy's roots by name: what the file tools' keys default to ([`Rules::file_default`]).
    roots: HashMap<String, PathRoot>,
}

impl Rules {
    /// No rules, no defaults.
    pub fn new() -> Rules {
        Rules::default()
    }

    /// The policy's shell rules (tool `shell`, default `[shell] default`), the `[network]`
    /// section as the `network` tool's rules and default (see [`network_rules`]), and each
    /// `[tools.NAME] approval` as that tool's default.
    pub fn from_policy(policy: &Policy) -> Rules {
        let mut r = Rules::new();
        r.push_group(
            ToolGlob::Literal("shell".into()),
            RuleSet::new(&policy.shell),
            Origin::Policy,
        );
        r.set_default("shell", policy.shell.default);
        r.push_group(
            ToolGlob::Literal(NETWORK_TOOL.into()),
            RuleSet::new(&Shell {
                default: Action::Deny, // unused: defaults are per tool
                rules: network_rules(&policy.network),
            }),
            Origin::Policy,
        );
        let default = policy.network.default.action();
        let reason = match &policy.network.location {
            Some(at) => format!(
                "no [network] entry names this host and port; the [network] default ({at}) is {}",
                default.as_str()
            ),
            None => "the policy has no [network] section: no host may be reached".into(),
        };
        r.defaults.insert(
            NETWORK_TOOL.into(),
            (
                default,
                By::Default {
                    tool: NETWORK_TOOL.into(),
                },
                reason,
            ),
        );
        // Requests inside terminated tunnels: `[[network.requests]]`; none matching, the
        // request goes (its connection was decided already).
        r.push_group(
            ToolGlob::Literal(HTTP_TOOL.into()),
            RuleSet::new(&Shell {
                default: Action::Allow, // unused: defaults are per tool
                rules: policy
                    .network
                    .requests
                    .iter()
                    .map(|q| q.rule.clone())
                    .collect(),
            }),
            Origin::Policy,
        );
        r.defaults.insert(
            HTTP_TOOL.into(),
            (
                Action::Allow,
                By::Default {
                    tool: HTTP_TOOL.into(),
                },
                "no [[network.requests]] rule names this request; its connection was allowed"
                    .into(),
            ),
        );
        // `[mcp]`: the tool calls of wrapped MCP servers, keyed `SERVER/TOOL`.
        r.push_group(
            ToolGlob::Literal(MCP_TOOL.into()),
            RuleSet::new(&Shell {
                default: policy.mcp.default,
                rules: policy.mcp.rules.clone(),
            }),
            Origin::Policy,
        );
        let default = policy.mcp.default;
        let reason = match &policy.mcp.location {
            Some(at) => format!(
                "no [[mcp.rules]] entry names this tool; the [mcp] default ({at}) is {}",
                default.as_str()
            ),
            None => "the policy has no [mcp] section: every wrapped tool call is asked".into(),
        };
        r.defaults.insert(
            MCP_TOOL.into(),
            (
                default,
                By::Default {
                    tool: MCP_TOOL.into(),
                },
                reason,
            ),
        );
        r.roots = policy
            .sandbox
            .paths
            .iter()
            .map(|p| (p.name.clone(), p.clone()))
            .collect();
        for (name, t) in &policy.tools {
            r.defaults.insert(
                name.clone(),
                (
                    t.approval,
                    By::ToolConfig {
                        tool: name.clone(),
                        location: t.location.clone(),
                    },
                    format!(
                        "`{name}` is configured as {} ([tools.{name}])",
                        t.approval.as_str()
                    ),
                ),
            );
        }
        r
    }

    /// Adds a group of rules for the tools `tool_glob` matches, after every rule so far.
    pub fn add(
        &mut self,
        tool_glob: &str,
        rules: Vec<ShellRule>,
        origin: Origin,
    ) -> Result<(), Error> {
        let tool = ToolGlob::new(tool_glob)?;
        let set = RuleSet::new(&Shell {
            default: Action::Ask, // unused: defaults are per tool
            rules,
        });
        self.push_group(tool, set, origin);
        Ok(())
    }

    /// Adds a rules file's remembered grants, shell and network (see [`crate::amend::load`]).
    pub fn add_persisted(&mut self, remembered: RulesFile) {
        for (tool, rules) in [
            ("shell", remembered.shell),
            (NETWORK_TOOL, remembered.network),
        ] {
            let set = RuleSet::new(&Shell {
                default: Action::Ask,
                rules,
            });
            self.push_group(ToolGlob::Literal(tool.into()), set, Origin::Persisted);
        }
    }

    /// Sets a tool's default (the decision for a key no rule matches).
    pub fn set_default(&mut self, tool: &str, action: Action) {
        self.defaults.insert(
            tool.to_string(),
            (
                action,
                By::Default {
                    tool: tool.to_string(),
                },
                format!("no rule matches; the {tool} default is {}", action.as_str()),
            ),
        );
    }

    fn push_group(&mut self, tool: ToolGlob, set: RuleSet, origin: Origin) {
        let i = self.groups.len();
        match &tool {
            ToolGlob::Literal(name) => self.by_tool.entry(name.clone()).or_default().push(i),
            ToolGlob::Glob(_) => self.glob_groups.push(i),
        }
        self.groups.push(Group { tool, set, origin });
    }

    /// The groups that apply to `tool`, in order.
    fn groups_for<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a Group> + 'a {
        let lit = self.by_tool.get(tool).map(Vec::as_slice).unwrap_or(&[]);
        let (mut a, mut b) = (lit.iter().peekable(), self.glob_groups.iter().peekable());
        std::iter::from_fn(move || loop {
            let i = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x < y => *a.next()?,
                (Some(_), Some(_)) | (None, Some(_)) => *b.next()?,
                (Some(_), None) => *a.next()?,
                (None, None) => return None,
            };
            let g = &self.groups[i];
            if g.tool.matches(tool) {
                return Some(g);
            }
        })
    }

    /// The rules' verdict on one key of `tool`: the first matching deny, else the last match;
    /// `None` when no rule matches.
    pub fn decide_key(&self, tool: &str, key: &[String]) -> Option<KeyVerdict> {
        let mut last: Option<(Decision, Origin)> = None;
        for g in self.groups_for(tool) {
            // A shell key is a command: its first word names a program.
            let matched = if tool == "shell" {
                g.set.matching_command(key)
            } else {
                g.set.matching(key)
            };
            if let Some(d) = matched {
                if d.action == Action::Deny {
                    return Some(verdict(d, g.origin));
                }
                last = Some((d, g.origin));
            }
        }
        let found = last.map(|(d, o)| verdict(d, o));
        if tool == "shell" {
            if let Some(deny) = self.deny_reordered(key) {
                return Some(deny);
            }
        }
        found
    }

    /// `verdict`, a shell key's allow, made an ask where a deny or ask rule could match the
    /// key for some value of its words only known at run time (`rm -rf "$x"` could be `rm -rf
    /// /usr`): a line is allowed only when the rules allow it whatever the values are. Never a
    /// deny (the value may be harmless), and never less than `verdict`.
    pub fn unsure(&self, tool: &str, key: &Key, given: KeyVerdict) -> KeyVerdict {
        let known = key.known();
        if tool != "shell" || known.is_empty() || given.action != Action::Allow {
            return given;
        }
        let unknown: Vec<&str> = key
            .words()
            .iter()
            .zip(known)
            .filter(|(_, k)| **k != Known::Literal)
            .map(|(w, _)| w.as_str())
            .collect();
        let words = format!("`{}`", unknown.join("`, `"));
        let is = if unknown.len() == 1 { "is" } else { "are" };
        for g in self.groups_for(tool) {
            let Some(could) = g.set.could_match(key.words(), known) else {
                continue;
            };
            let Some(i) = could else {
                return KeyVerdict {
                    action: Action::Ask,
                    by: By::Tool(RuleRef::Builtin("unknown-words")),
                    reason: format!(
                        "`{key}`: {words} {is} only known when the line runs, and too many rules could match what {} {is}; asking",
                        if unknown.len() == 1 { "it" } else { "they" }
                    ),
                };
            };
            let rule = &g.set.rules()[i];
            let mut v = verdict(g.set.decision_at(i), g.origin);
            let does = if rule.action == Action::Deny {
                "denies"
            } else {
                "asks for"
            };
            v.reason = format!(
                "`{key}` could be a command that rule `{}` ({}) {does}: {words} {is} only known when the line runs; asking",
                rule.pattern.as_str(),
                rule.location
            );
            v.action = Action::Ask;
            return v;
        }
        given
    }

    /// A deny rule that names an option matches wherever the option stands: programs read
    /// their options in any order (`git reset -q --hard`, `git push origin main --force`), and
    /// patterns are token prefixes. The verdict of a deny rule that matches the key with one
    /// option word moved right after the program name, or after its first operand (a
    /// subcommand).
    fn deny_reordered(&self, key: &[String]) -> Option<KeyVerdict> {
        for (i, word) in key.iter().enumerate().skip(2) {
            if !word.starts_with('-') || word == "-" || word == "--" {
                continue;
            }
            for at in [1, 2] {
                if at >= i {
                    continue;
                }
                let mut moved = key.to_vec();
                let option = moved.remove(i);
                moved.insert(at, option);
                for g in self.groups_for("shell") {
                    if let Some(d) = g.set.matching(&moved).filter(|d| d.action == Action::Deny) {
                        return Some(verdict(d, g.origin));
                    }
                }
            }
        }
        None
    }

    /// The decision for a file tool's key no rule matches, from the root that holds its path:
    /// `ask` when the root sets `read_approval`/`write_approval` for this kind of access, else
    /// the allow of its mode. A root the policy does not name (the tool and the engine were
    /// built from different policies) asks: fail closed.
    pub fn file_default(&self, access: &FileAccess) -> KeyVerdict {
        let Some(root) = self.roots.get(&access.root) else {
            return KeyVerdict {
                action: Action::Ask,
                reason: format!("the root `{}` is not in the policy: ask", access.root),
                by: By::Tool(RuleRef::Builtin("path")),
            };
        };
        let (flag, tag, kind) = if access.writes {
            (root.write_approval, "write_approval", "writes")
        } else {
            (root.read_approval, "read_approval", "reads")
        };
        if flag {
            return KeyVerdict {
                action: Action::Ask,
                reason: format!("the root `{}` sets {tag} = true", root.name),
                by: By::Tool(RuleRef::Builtin(tag)),
            };
        }
        let mode = match root.mode {
            Mode::ReadOnly => "ro",
            Mode::ReadWrite => "rw",
        };
        KeyVerdict {
            action: Action::Allow,
            reason: format!(
                "the root `{}` ({mode}) allows {kind} without approval",
                root.name
            ),
            by: By::Tool(RuleRef::Default),
        }
    }

    /// The tool's configured default, if any.
    pub fn tool_default(&self, tool: &str) -> Option<(Action, &By, &str)> {
        self.defaults.get(tool).map(|(a, b, r)| (*a, b, r.as_str()))
    }

    /// Every rule applying to `tool`, in order, with its origin.
    pub(crate) fn rules_for<'a>(
        &'a self,
        tool: &'a str,
    ) -> impl Iterator<Item = (&'a ShellRule, Origin)> + 'a {
        self.groups_for(tool)
            .flat_map(|g| g.set.rules().iter().map(move |r| (r, g.origin)))
    }
}

fn verdict(d: Decision, origin: Origin) -> KeyVerdict {
    let by = match (d.rule, origin) {
        (RuleRef::Rule { location, pattern }, Origin::Persisted) => {
            By::PersistedGrant { location, pattern }
        }
        (RuleRef::Rule { location, pattern }, Origin::Policy) => By::Rule { location, pattern },
        (r, _) => By::Tool(r),
    };
    KeyVerdict {
        action: d.action,
        reason: d.reason,
        by,
    }
}

/// A rule built in code (for [`Rules::add`]); its location names `source` and the index.
pub fn rule(
    source: &str,
    index: usize,
    pattern: &str,
    action: Action,
    reason: Option<&str>,
) -> Result<ShellRule, Error> {
    Ok(ShellRule {
        pattern: Pattern::new(pattern).map_err(|e| Error::InvalidRule(e.to_string()))?,
        action,
        reason: reason.map(String::from),
        matches: Vec::new(),
        not_match: Vec::new(),
        location: Location {
            file: source.to_string(),
            line: index + 1,
            col: 1,
        },
    })
}

/// The `[network]` section as rules over the `network` tool's key (`network HOST:PORT`):
/// every `allow` entry an allow rule, every `deny` entry a deny rule, each at its entry's
/// location, with a reason naming the list. The engine's order (an explicit deny that
/// matches wins, whatever comes later) is the section's "deny wins".
pub fn network_rules(network: &NetworkPolicy) -> Vec<ShellRule> {
    let mut out = Vec::new();
    for (list, action) in [
        (&network.allow, Action::Allow),
        (&network.deny, Action::Deny),
    ] {
        for entry in list {
            out.push(ShellRule {
                pattern: entry.pattern.clone(),
                action,
                reason: Some(format!(
                    "`{}` is in the [network] {} list ({})",
                    entry.written,
                    action.as_str(),
                    entry.location
                )),
                matches: Vec::new(),
                not_match: Vec::new(),
                location: entry.location.clone(),
            });
        }
    }
    out
}

/// Does this pattern match every key (`*` or `**` as its only token)?
pub(crate) fn matches_everything(p: &Pattern) -> bool {
    matches!(p.as_str(), "*" | "**")
}
