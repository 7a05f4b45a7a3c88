//! The programs an agent host's hook configuration (and git's hook managers', pre-commit and
//! husky) runs by itself, outside any sandbox, at the host's next tool call or the operator's
//! next commit: what the after-run scan watches besides git's own hooks. Only these: an MCP
//! server's or a launch configuration's command is often a build's output (`dist/index.js`),
//! which a run rewrites in normal work; the file tools ask for those
//! ([`super::named_by_configuration`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The configuration files whose hook entries run by themselves (each an entry of
/// [`super::TOOL_FILES`] or [`super::HOME_FILES`]: a test holds it), relative to the
/// directory the host runs its hooks from (the project's, or the home for the user's).
pub const HOOK_CONFIGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".copilot/config.json",
    ".copilot/settings.json",
    ".copilot/settings.local.json",
    ".github/copilot/settings.json",
    ".github/copilot/settings.local.json",
    ".cursor/hooks.json",
    ".pre-commit-config.yaml",
];

/// The directories whose every file is a hook configuration or a hook itself (each an entry of
/// [`super::TOOL_DIRS`]): Copilot's hook files, husky's hook scripts.
pub const HOOK_DIRS: &[&str] = &[".github/hooks", ".copilot/hooks", ".husky"];

/// The keys of a host's JSON or TOML settings whose strings are commands the host runs by
/// itself: the hooks (Claude Code, Gemini CLI, Codex's `hooks.json`, Copilot, Cursor), Claude
/// Code's status line (run at every turn) and Codex's `notify` (after every turn).
const HOOK_KEYS: &[&str] = &["hooks", "statusLine", "notify"];

/// The text of `config` (the file named `name`) that names the programs its hooks run, for
/// [`super::envrc::literal`] to read word by word. A host's JSON or TOML: the strings under
/// [`HOOK_KEYS`]. One that does not parse (a comment, a trailing comma, a truncated write): the
/// whole text, since the host's own reader may take it (the fail-closed reading: more is
/// watched, nothing is missed). A YAML or a script (pre-commit, husky): the whole text.
pub fn hook_text(name: &str, config: &[u8]) -> Vec<u8> {
    let parsed: Option<Value> = if name.ends_with(".json") {
        serde_json::from_slice(config).ok()
    } else if name.ends_with(".toml") {
        std::str::from_utf8(config)
            .ok()
            .and_then(|t| toml::from_str::<toml::Value>(t).ok())
            .and_then(|t| serde_json::to_value(t).ok())
    } else {
        return config.to_vec();
    };
    let Some(Value::Object(top)) = parsed else {
        return config.to_vec();
    };
    let mut out = Vec::new();
    for key in HOOK_KEYS {
        if let Some(v) = top.get(*key) {
            strings(v, &mut out);
        }
    }
    out
}

/// Every string in `v`, one a line.
fn strings(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::String(s) => {
            out.extend_from_slice(s.as_bytes());
            out.push(b'\n');
        }
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The settings files that may declare marketplaces (`extraKnownMarketplaces`), relative to
/// the project (or to the home, for the user's): Claude Code's, and Copilot CLI's, which takes
/// the same key and loads a directory marketplace's plugins in place too (Copilot CLI 1.0.102
/// says so at `plugin install`: "loaded live from DIR … nothing was copied"; checked: an MCP
/// server added to the plugin's manifest there ran at the next `copilot -p`). Each an entry of
/// [`super::TOOL_FILES`] or [`super::HOME_FILES`].
pub const MARKETPLACE_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".copilot/settings.json",
    ".copilot/settings.local.json",
    ".github/copilot/settings.json",
    ".github/copilot/settings.local.json",
];

/// The home's files where Claude Code keeps where each marketplace and plugin is (in
/// `.claude/plugins`, itself on the home's surface).
pub const CLAUDE_PLUGIN_LISTS: &[&str] = &[
    ".claude/plugins/known_marketplaces.json",
    ".claude/plugins/installed_plugins.json",
];

/// Why a marketplace directory's files are on the surface ([`marketplaces`]).
pub const MARKETPLACE_WHY: &str = "Claude Code and Copilot CLI run the hooks, MCP servers and skills of each enabled plugin of this marketplace from here, at every session, without cordon's hook (a settings file's `extraKnownMarketplaces` or `~/.claude/plugins` names it)";

/// The directories Claude Code takes plugins from in place, as the file `name` (one of
/// [`MARKETPLACE_SETTINGS`] or [`CLAUDE_PLUGIN_LISTS`]) at `dir` (the project, or the home) names
/// them: a `directory` marketplace's path, a `file` marketplace's top (two levels above its
/// `marketplace.json`, where Claude Code resolves the plugins' `./` sources), each known
/// marketplace's `installLocation`, each installed plugin's `installPath`. A relative path
/// is the project's, as Claude Code resolves it. Claude Code 2.1.197 ran an enabled plugin's
/// `hooks/hooks.json` from the marketplace's own directory, not from its cache copy (checked:
/// `hosts_claude.rs`), and a plugin's skills, commands, agents, `.mcp.json` and the scripts
/// its hooks name are files below it too: every file below is the surface. (A remote
/// marketplace's copy is in `~/.claude/plugins`. Not read: a file that does not parse as
/// JSON, which Claude Code's reader refuses as well.)
pub fn marketplaces(name: &str, text: &[u8], dir: &Path) -> Vec<PathBuf> {
    let Ok(Value::Object(top)) = serde_json::from_slice::<Value>(text) else {
        return Vec::new();
    };
    let at = |p: &str| super::envrc::normal(&dir.join(p));
    let from_source = |source: &Value| -> Option<PathBuf> {
        let path = at(source.get("path")?.as_str()?);
        match source.get("source")?.as_str()? {
            "directory" => Some(path),
            "file" => path.parent()?.parent().map(Path::to_path_buf),
            _ => None,
        }
    };
    let mut out = Vec::new();
    let file = name.rsplit('/').next().unwrap_or(name);
    match file {
        "known_marketplaces.json" => {
            for m in top.values() {
                out.extend(m.get("source").and_then(from_source));
                out.extend(m.get("installLocation").and_then(Value::as_str).map(at));
            }
        }
        "installed_plugins.json" => {
            let plugins = top.get("plugins").and_then(Value::as_object);
            for installs in plugins.into_iter().flat_map(|p| p.values()) {
                for i in installs.as_array().into_iter().flatten() {
                    out.extend(i.get("installPath").and_then(Value::as_str).map(at));
                }
            }
        }
        _ => {
            let declared = top.get("extraKnownMarketplaces").and_then(Value::as_object);
            for m in declared.into_iter().flat_map(|m| m.values()) {
                out.extend(m.get("source").and_then(from_source));
            }
        }
    }
    out
}

/// Why a linked Gemini CLI extension's files are on the surface ([`home_plugin_sources`]).
pub const LINKED_EXTENSION_WHY: &str = "Gemini CLI loads this linked extension from here at every start: the MCP servers, hooks and commands it names run without cordon's hook (`gemini extensions link` names it in `~/.gemini/extensions`)";

/// How many of the home's Gemini CLI extensions [`home_plugin_sources`] reads.
const EXTENSIONS: usize = 256;

/// The directories the home's own files name as code an agent host runs in place, each where
/// it really is, and why ([`home_plugin_sources`]).
#[derive(Debug, Default)]
pub struct PluginSources {
    /// Absolute ones, links resolved.
    pub dirs: Vec<(PathBuf, &'static str)>,
    /// Relative ones, lexically normal with any leading `..` dropped: the hosts take such a
    /// path from the session's directory (Claude Code 2.1.197 resolves a relative `directory`
    /// or `file` marketplace source of any scope from the git top of the directory `claude`
    /// started in, or that directory: `path.resolve(gitRoot(cwd) ?? cwd, path)`; Copilot CLI
    /// and Gemini CLI from their working directory), which is any directory the operator
    /// starts one in. So a tail names the directory at its end below every directory, and an
    /// empty one (`.`, `..`) every directory.
    pub tails: Vec<(PathBuf, &'static str)>,
}

impl PluginSources {
    /// Why `real` (absolute, links resolved) lies in one of these directories, if it does:
    /// below an absolute one, or below a directory whose path ends with a tail.
    pub fn holding(&self, real: &Path) -> Option<&'static str> {
        let absolute = self.dirs.iter().find(|(d, _)| real.starts_with(d));
        let relative = || {
            self.tails
                .iter()
                .find(|(t, _)| real.ancestors().any(|a| a.ends_with(t)))
        };
        absolute.or_else(relative).map(|(_, why)| *why)
    }

    /// Each directory below `base` (a session's directory: a writable root) these name.
    pub fn below(&self, base: &Path) -> impl Iterator<Item = (PathBuf, &'static str)> + '_ {
        let at = base.to_path_buf();
        self.dirs.iter().cloned().chain(
            self.tails
                .iter()
                .map(move |(t, why)| (super::resolve(&at.join(t)), *why)),
        )
    }
}

/// The directories the home's own files name as code an agent host runs in place: Claude
/// Code's and Copilot CLI's marketplace directories ([`MARKETPLACE_SETTINGS`] and
/// [`CLAUDE_PLUGIN_LISTS`] at `home`, [`marketplaces`]) and Gemini CLI's linked extensions
/// (`~/.gemini/extensions/NAME/.gemini-extension-install.json` of `"type": "link"`: Gemini
/// CLI 0.61 loaded the extension from its `source` at every start, checked by hand: an MCP
/// server added there ran at the next `gemini -p`). A relative path there is the session's,
/// not the home's ([`PluginSources::tails`]). What lies in no root stays unwatched by the
/// scan; the file tools ask for a write below any of them.
pub fn home_plugin_sources(home: &Path) -> PluginSources {
    // (Never blocking on a FIFO a run left at a name.)
    let read = |p: &Path| cordon_fs::safe::read_followed(p, 1 << 20).ok().flatten();
    let mut out = PluginSources::default();
    let mut take = |dir: PathBuf, why: &'static str| {
        if dir.is_absolute() {
            out.dirs.push((super::resolve(&dir), why));
        } else {
            out.tails.push((dir, why));
        }
    };
    for name in MARKETPLACE_SETTINGS.iter().chain(CLAUDE_PLUGIN_LISTS) {
        if let Some(text) = read(&home.join(name)) {
            // Read from no directory: a relative path stays relative.
            for dir in marketplaces(name, &text, Path::new("")) {
                take(dir, MARKETPLACE_WHY);
            }
        }
    }
    let extensions = home.join(".gemini/extensions");
    for e in std::fs::read_dir(&extensions)
        .into_iter()
        .flatten()
        .flatten()
        .take(EXTENSIONS)
    {
        let Some(text) = read(&e.path().join(".gemini-extension-install.json")) else {
            continue;
        };
        let Ok(Value::Object(install)) = serde_json::from_slice::<Value>(&text) else {
            continue;
        };
        if install.get("type").and_then(Value::as_str) != Some("link") {
            continue;
        }
        if let Some(source) = install.get("source").and_then(Value::as_str) {
            take(
                super::envrc::normal(Path::new(source)),
                LINKED_EXTENSION_WHY,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::{envrc, HOME_FILES, TOOL_DIRS, TOOL_FILES};
    use std::path::Path;

    #[test]
    fn each_hook_configuration_is_on_the_surface() {
        for entry in HOOK_CONFIGS.iter().chain(MARKETPLACE_SETTINGS) {
            assert!(
                TOOL_FILES.iter().chain(HOME_FILES).any(|(n, _)| n == entry),
                "{entry}"
            );
        }
        for entry in HOOK_DIRS {
            assert!(TOOL_DIRS.iter().any(|(n, _)| n == entry), "{entry}");
        }
    }

    fn named(name: &str, text: &str) -> Vec<String> {
        let named = envrc::literal(&hook_text(name, text.as_bytes()), &[Path::new("/p")], None);
        named
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .chain(named.tails.iter().map(|t| format!("*/{}", t.display())))
            .collect()
    }

    #[test]
    fn the_hooks_commands_are_read_and_not_the_mcp_servers() {
        let claude = r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command",
            "command":"\"$CLAUDE_PROJECT_DIR\"/scripts/hook.sh"}]}]},
            "statusLine":{"type":"command","command":"tools/status.sh"},
            "mcpServers":{"x":{"command":"node","args":["dist/index.js"]}}}"#;
        let n = named(".claude/settings.json", claude);
        assert!(n.contains(&"*/scripts/hook.sh".to_string()), "{n:?}");
        assert!(n.contains(&"/p/tools/status.sh".to_string()), "{n:?}");
        assert!(!n.iter().any(|p| p.contains("dist")), "{n:?}");
        let codex =
            "notify = [\"python3\", \"ci/notify.py\"]\n[mcp_servers.x]\ncommand = \"build/srv\"\n";
        let n = named(".codex/config.toml", codex);
        assert!(n.contains(&"/p/ci/notify.py".to_string()), "{n:?}");
        assert!(!n.iter().any(|p| p.contains("build")), "{n:?}");
    }

    #[test]
    fn claude_code_marketplaces_are_read_where_each_file_places_them() {
        let p = Path::new("/p");
        let settings = r#"{"extraKnownMarketplaces": {
            "a": {"source": {"source": "directory", "path": "./tools/mkt"}},
            "b": {"source": {"source": "file", "path": "/m/b/.claude-plugin/marketplace.json"}},
            "c": {"source": {"source": "github", "repo": "o/r"}}}}"#;
        assert_eq!(
            marketplaces(".claude/settings.json", settings.as_bytes(), p),
            [Path::new("/p/tools/mkt"), Path::new("/m/b")]
        );
        let known = r#"{"m": {"source": {"source": "directory", "path": "/w/mkt"},
            "installLocation": "/w/mkt2"}}"#;
        let got = marketplaces(
            ".claude/plugins/known_marketplaces.json",
            known.as_bytes(),
            p,
        );
        assert_eq!(got, [Path::new("/w/mkt"), Path::new("/w/mkt2")]);
        let installed = r#"{"version": 2, "plugins": {"x@m": [{"installPath": "/c/x"}]}}"#;
        let got = marketplaces(
            ".claude/plugins/installed_plugins.json",
            installed.as_bytes(),
            p,
        );
        assert_eq!(got, [Path::new("/c/x")]);
        // The key in the wrong file, and a file that does not parse: nothing.
        assert!(marketplaces(
            ".claude/plugins/installed_plugins.json",
            settings.as_bytes(),
            p
        )
        .is_empty());
        assert!(marketplaces(".claude/settings.json", b"{,", p).is_empty());
    }

    /// A relative path in the home's files is the session's directory's, any directory's
    /// (round 12: it was taken from the home).
    #[test]
    fn a_relative_path_in_the_homes_files_is_a_tail() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"extraKnownMarketplaces": {
                "a": {"source": {"source": "directory", "path": "../t/../mkt"}},
                "b": {"source": {"source": "directory", "path": "/abs/b"}}}}"#,
        )
        .unwrap();
        let s = home_plugin_sources(home.path());
        assert_eq!(s.tails, [(PathBuf::from("mkt"), MARKETPLACE_WHY)]);
        assert_eq!(s.dirs, [(PathBuf::from("/abs/b"), MARKETPLACE_WHY)]);
        for real in ["/p/mkt/x/hooks/hooks.json", "/q/r/mkt", "/abs/b/y"] {
            assert!(s.holding(Path::new(real)).is_some(), "{real}");
        }
        for real in ["/p/mkt2/x", "/p/x", "/abs/bb"] {
            assert!(s.holding(Path::new(real)).is_none(), "{real}");
        }
        let below: Vec<_> = s.below(Path::new("/r")).map(|(d, _)| d).collect();
        assert!(below.contains(&PathBuf::from("/r/mkt")), "{below:?}");
    }

    #[test]
    fn a_configuration_that_does_not_parse_is_read_whole() {
        // Gemini CLI takes comments in its settings; serde_json does not.
        let gemini = "{ // mine\n \"hooks\": {\"BeforeTool\": [{\"hooks\": [{\"command\": \"./g.sh\"}]}]},\n \"mcpServers\": {\"x\": {\"command\": \"dist/s.js\"}} }";
        let n = named(".gemini/settings.json", gemini);
        assert!(n.contains(&"/p/g.sh".to_string()), "{n:?}");
        assert!(n.contains(&"/p/dist/s.js".to_string()), "{n:?}");
        let n = named(
            ".pre-commit-config.yaml",
            "- id: x\n  entry: ./ci/lint.sh\n",
        );
        assert!(n.contains(&"/p/ci/lint.sh".to_string()), "{n:?}");
    }
}
