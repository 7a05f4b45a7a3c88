//! Every way a policy can be refused, with the message and the location it names.

use super::*;

fn dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("work")).unwrap();
    std::fs::write(d.path().join("afile"), "x").unwrap();
    d
}

fn parse(text: &str) -> Result<Policy, PolicyError> {
    let d = dir();
    Policy::parse(text, "p.toml", d.path())
}

/// Asserts the policy is refused at `line:col` with a message containing `needle`.
fn refused(text: &str, line: usize, col: usize, needle: &str) {
    let err = parse(text).expect_err("policy should be refused");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("p.toml:{line}:{col}: ")),
        "wrong location: {msg}"
    );
    assert!(msg.contains(needle), "message lacks `{needle}`: {msg}");
}

#[test]
fn embedded_default_loads_and_its_examples_are_present() {
    let d = dir();
    let p = Policy::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME, d.path()).unwrap();
    assert_eq!(p.sandbox.network, Network::Deny);
    assert!(p.sandbox.require_os_sandbox);
    assert_eq!(p.shell.default, Action::Allow);
    let ws = p.root("workspace").unwrap();
    assert_eq!(ws.mode, Mode::ReadWrite);
    assert_eq!(ws.root, std::fs::canonicalize(d.path()).unwrap());
    assert!(p
        .shell
        .rules
        .iter()
        .any(|r| r.pattern.as_str() == "git reset --hard" && r.action == Action::Deny));
}

#[test]
fn relative_paths_resolve_against_the_policy_file() {
    let d = dir();
    let file = d.path().join("cordon.toml");
    std::fs::write(
        &file,
        "version = 1\n[sandbox.paths.w]\nroot = \"work\"\nmode = \"rw\"\n",
    )
    .unwrap();
    let p = Policy::load(&file).unwrap();
    assert_eq!(
        p.sandbox.paths[0].root,
        std::fs::canonicalize(d.path().join("work")).unwrap()
    );
}

#[test]
fn discover_prefers_explicit_then_trusted_local_then_default() {
    let d = dir();
    let store = crate::trust::TrustStore::at(d.path().join("config/cordon"));
    let p = Policy::discover_in(None, d.path(), &store).unwrap();
    assert_eq!(p.source, DEFAULT_POLICY_NAME);
    let local = d.path().join("cordon.toml");
    std::fs::write(&local, "version = 1\n[shell]\ndefault = \"deny\"\n").unwrap();
    // Found but not trusted: refused, never skipped for the default.
    let err = Policy::discover_in(None, d.path(), &store).unwrap_err();
    assert!(err.to_string().contains("not trusted"), "{err}");
    let file = crate::trust::read_file(&local, crate::trust::Follow::Never).unwrap();
    store.trust(&file).unwrap();
    let p = Policy::discover_in(None, d.path(), &store).unwrap();
    assert_eq!(p.shell.default, Action::Deny);
    assert_eq!(p.path.as_deref(), Some(file.path.as_path()));
    // Named explicitly: no trust needed.
    let other = d.path().join("other.toml");
    std::fs::write(&other, "version = 1\n").unwrap();
    let p = Policy::discover_in(Some(&other), d.path(), &store).unwrap();
    assert_eq!(p.shell.default, Action::Ask, "secure default is ask");
    // Changed after the trust: refused, with what changed.
    std::fs::write(&local, "version = 1\n[shell]\ndefault = \"allow\"\n").unwrap();
    let err = Policy::discover_in(None, d.path(), &store).unwrap_err();
    assert!(
        err.to_string().contains("changed since you trusted it"),
        "{err}"
    );
    let diff = err.diff().unwrap();
    assert!(
        diff.contains("-default = \"deny\"\n+default = \"allow\"\n"),
        "{diff}"
    );
}

#[test]
fn missing_file_is_a_read_error() {
    let err = Policy::load(Path::new("/nonexistent/cordon.toml")).unwrap_err();
    assert!(
        err.to_string()
            .contains("/nonexistent/cordon.toml: cannot read policy"),
        "{err}"
    );
}

#[test]
fn syntax_error() {
    refused("version = 1\n[sandbox\n", 2, 9, "");
}

#[test]
fn missing_version() {
    refused("[shell]\ndefault = \"ask\"\n", 1, 1, "missing `version`");
}

#[test]
fn wrong_version() {
    refused("version = 2\n", 1, 11, "unsupported policy version 2");
}

#[test]
fn unknown_top_level_key() {
    refused(
        "version = 1\nnetwrok = \"deny\"\n",
        2,
        1,
        "unknown field `netwrok`",
    );
}

#[test]
fn unknown_nested_keys() {
    refused(
        "version = 1\n[sandbox]\nnetwork = \"deny\"\nprotect = []\n",
        4,
        1,
        "unknown field `protect`",
    );
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"work\"\nwrite = true\n",
        4,
        1,
        "unknown field `write`",
    );
    refused(
        "version = 1\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\nmatches = []\n",
        5,
        1,
        "unknown field `matches`",
    );
    refused(
        "version = 1\n[approval]\ntimeout = \"5m\"\ndoomloop = 3\n",
        4,
        1,
        "unknown field `doomloop`",
    );
    refused(
        "version = 1\n[tools.x]\napprove = \"ask\"\n",
        3,
        1,
        "unknown field `approve`",
    );
    refused(
        "version = 1\n[sandbox.limits]\nmem = \"1G\"\n",
        3,
        1,
        "unknown field `mem`",
    );
}

#[test]
fn network_proxy_parses() {
    let p = parse("version = 1\n[sandbox]\nnetwork = \"proxy\"\n").unwrap();
    assert_eq!(p.sandbox.network, Network::Proxy);
}

#[test]
fn bad_enum_values() {
    refused(
        "version = 1\n[sandbox]\nbackend = \"docker\"\n",
        3,
        11,
        "invalid backend `docker`",
    );
    refused(
        "version = 1\n[sandbox]\nnetwork = \"some\"\n",
        3,
        11,
        "invalid network `some`",
    );
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"work\"\nmode = \"wr\"\n",
        4,
        8,
        "invalid mode `wr`",
    );
    refused(
        "version = 1\n[shell]\ndefault = \"maybe\"\n",
        3,
        11,
        "invalid shell default `maybe`",
    );
    refused(
        "version = 1\n[[shell.rules]]\npattern = \"ls\"\naction = \"permit\"\n",
        4,
        10,
        "invalid action `permit`",
    );
    refused(
        "version = 1\n[approval]\nmode = \"yolo\"\n",
        3,
        8,
        "invalid approval mode `yolo`",
    );
    refused(
        "version = 1\n[tools.mail]\napproval = \"sometimes\"\n",
        3,
        12,
        "invalid tool approval `sometimes`",
    );
}

#[test]
fn bad_types() {
    refused(
        "version = 1\n[sandbox]\nrequire_os_sandbox = \"yes\"\n",
        3,
        22,
        "invalid type",
    );
    refused("version = \"1\"\n", 1, 11, "invalid type");
}

#[test]
fn roots_must_exist_and_be_directories() {
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"nope\"\n",
        3,
        8,
        "does not exist",
    );
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"afile\"\n",
        3,
        8,
        "is not a directory",
    );
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"\"\n",
        3,
        8,
        "empty path",
    );
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"a\\nb\"\n",
        3,
        8,
        "NUL or newline",
    );
    refused(
        "version = 1\n[sandbox]\nextra_read = [\"missing\"]\n",
        3,
        15,
        "extra_read path",
    );
}

#[test]
fn root_declared_twice_with_different_modes() {
    refused(
        "version = 1\n[sandbox.paths.a]\nroot = \"work\"\nmode = \"ro\"\n[sandbox.paths.b]\nroot = \"work/\"\nmode = \"rw\"\n",
        6,
        8,
        "declared twice",
    );
}

#[test]
fn bad_root_name_and_suffix() {
    refused(
        "version = 1\n[sandbox.paths.\"a b\"]\nroot = \"work\"\n",
        2,
        1,
        "invalid root name",
    );
    refused(
        "version = 1\n[sandbox.paths.w]\nroot = \"work\"\nsuffixes = [\"md\"]\n",
        4,
        13,
        "invalid suffix `md`",
    );
}

#[test]
fn protected_paths() {
    refused(
        "version = 1\n[sandbox]\nprotected = [\"../x\"]\n",
        3,
        14,
        "invalid protected path",
    );
    refused(
        "version = 1\n[sandbox]\nprotected = [\"\"]\n",
        3,
        14,
        "invalid protected path",
    );
    let p = parse("version = 1\n[sandbox]\nprotected = [\".git/hooks\", \"/etc/y\"]\n").unwrap();
    assert_eq!(
        p.sandbox.protected,
        vec![PathBuf::from(".git/hooks"), PathBuf::from("/etc/y")]
    );
}

#[test]
fn git_dir_protection() {
    assert_eq!(
        parse("version = 1\n").unwrap().sandbox.git,
        GitDir::Writable
    );
    let p = parse("version = 1\n[sandbox]\ngit = \"protect\"\n").unwrap();
    assert_eq!(p.sandbox.git, GitDir::Protect);
    refused(
        "version = 1\n[sandbox]\ngit = \"readonly\"\n",
        3,
        7,
        "invalid git `readonly`",
    );
}

#[test]
fn impossible_combination_none_backend_with_required_sandbox() {
    refused(
        "version = 1\n[sandbox]\nbackend = \"none\"\n",
        3,
        11,
        "require_os_sandbox",
    );
    let p =
        parse("version = 1\n[sandbox]\nbackend = \"none\"\nrequire_os_sandbox = false\n").unwrap();
    assert_eq!(p.sandbox.backend, Backend::None);
}

#[test]
fn bad_patterns() {
    refused(
        "version = 1\n[[shell.rules]]\npattern = \"git [abc\"\naction = \"deny\"\n",
        3,
        11,
        "invalid pattern: token `[abc`",
    );
    refused(
        "version = 1\n[[shell.rules]]\npattern = \"  \"\naction = \"deny\"\n",
        3,
        11,
        "pattern is empty",
    );
    refused(
        "version = 1\n[[shell.rules]]\naction = \"deny\"\n",
        2,
        1,
        "missing field `pattern`",
    );
}

#[test]
fn bad_limits_and_durations() {
    refused(
        "version = 1\n[sandbox.limits]\ntimeout = \"5 minutes\"\n",
        3,
        11,
        "invalid duration",
    );
    refused(
        "version = 1\n[sandbox.limits]\nmemory = \"lots\"\n",
        3,
        10,
        "invalid size",
    );
    refused(
        "version = 1\n[sandbox.limits]\nprocesses = 0\n",
        3,
        13,
        "processes must be a positive number",
    );
    refused(
        "version = 1\n[approval]\ntimeout = \"0s\"\n",
        3,
        11,
        "more than zero",
    );
    refused(
        "version = 1\n[approval]\ndoom_loop = -1\n",
        3,
        13,
        "doom_loop",
    );
}

#[test]
fn bad_tool_name() {
    refused(
        "version = 1\n[tools.\"a.b\"]\napproval = \"ask\"\n",
        2,
        1,
        "invalid tool name",
    );
}

#[test]
fn rule_locations_point_at_their_tables() {
    let p = parse("version = 1\n\n[[shell.rules]]\npattern = \"ls\"\naction = \"allow\"\nmatch = [\"ls -la\"]\n").unwrap();
    assert_eq!(p.shell.rules[0].location.to_string(), "p.toml:3:1");
    assert_eq!(
        p.shell.rules[0].matches[0].location.to_string(),
        "p.toml:6:10"
    );
}

#[test]
fn limits_parse() {
    let p = parse("version = 1\n[sandbox.limits]\ntimeout = \"90s\"\nmemory = \"2G\"\nfile_size = \"1M\"\nopen_files = 64\nprocesses = 100\ncpu_time = \"1m\"\n").unwrap();
    let l = p.sandbox.limits;
    assert_eq!(l.timeout, Some(Duration::from_secs(90)));
    assert_eq!(l.memory, Some(2 << 30));
    assert_eq!(l.file_size, Some(1 << 20));
    assert_eq!(l.open_files, Some(64));
    assert_eq!(l.processes, Some(100));
    assert_eq!(l.cpu_time, Some(60));
}

#[test]
fn durations_and_sizes() {
    assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
    assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
    assert_eq!(parse_duration("5"), None);
    assert_eq!(parse_duration("m"), None);
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("0"), None);
    assert_eq!(parse_size("99999999999999T"), None);
}

#[test]
fn env_names() {
    refused(
        "version = 1\n[sandbox]\nenv = [\"LD_PRELOAD\"]\n",
        3,
        8,
        "never passes into the sandbox",
    );
    refused(
        "version = 1\n[sandbox]\nenv = [\"A=b\"]\n",
        3,
        8,
        "invalid variable name",
    );
    let p = parse("version = 1\n[sandbox]\nenv = [\"CARGO_HOME\"]\n").unwrap();
    assert_eq!(p.sandbox.env, vec!["CARGO_HOME".to_string()]);
}

#[test]
fn whole_filesystem_writable_is_refused() {
    let err = Policy::parse(DEFAULT_POLICY, DEFAULT_POLICY_NAME, Path::new("/"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("root `/` is read-write"), "{err}");
    assert!(err.starts_with(&format!("{DEFAULT_POLICY_NAME}:")), "{err}");
    let p = Policy::parse(
        "version = 1\n[sandbox.paths.all]\nroot = \"/\"\nmode = \"ro\"\n",
        "p.toml",
        Path::new("/"),
    )
    .unwrap();
    assert_eq!(p.sandbox.paths[0].root, Path::new("/"));
}

#[test]
fn the_audit_log_is_the_policys_else_the_users_state_directory() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| std::ffi::OsString::from(v))
        }
    };
    let d = |p: &str| AuditLog::Default(PathBuf::from(p));
    assert_eq!(
        AuditLog::default_from(env(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")])),
        d("/s/cordon/audit.jsonl")
    );
    assert_eq!(
        AuditLog::default_from(env(&[("HOME", "/h")])),
        d("/h/.local/state/cordon/audit.jsonl")
    );
    // Relative or empty values are ignored (XDG base directory specification).
    assert_eq!(
        AuditLog::default_from(env(&[("XDG_STATE_HOME", "s"), ("HOME", "/h")])),
        d("/h/.local/state/cordon/audit.jsonl")
    );
    assert_eq!(
        AuditLog::default_from(env(&[("XDG_STATE_HOME", ""), ("HOME", "")])),
        AuditLog::Nowhere
    );
    assert_eq!(
        AuditLog::default_from(env(&[("XDG_STATE_HOME", "/s/../w"), ("HOME", "/h/x/..")])),
        AuditLog::Nowhere
    );
    assert_eq!(AuditLog::Nowhere.path(), None);

    let dir = Path::new("/policies");
    let p = Policy::parse(
        "version = 1\n[approval]\naudit_log = \"logs/a.jsonl\"\n",
        "cordon.toml",
        dir,
    )
    .unwrap();
    assert_eq!(
        p.approval.audit_log,
        AuditLog::Configured(PathBuf::from("/policies/logs/a.jsonl"))
    );
    assert_eq!(p.approval.audit_log.key(), "approval.audit_log");
    // Unset: not configured (where the default lies is the environment's; the CLI tests
    // check it through the binary with XDG_STATE_HOME and HOME set).
    let p = Policy::parse("version = 1\n", "cordon.toml", dir).unwrap();
    assert!(!matches!(p.approval.audit_log, AuditLog::Configured(_)));
}

#[test]
fn network_section_parses_and_normalises() {
    let p = parse(
        "version = 1\n[network]\ndefault = \"ask\"\nallow = [\"GitHub.com\", \"*.example.org\", \"index.example.net:443\", \"10.0.0.5:5432\", \"[::1]:443\"]\ndeny = [\"evil.example.org\"]\n[network.hosts]\n\"Build.Internal\" = \"10.0.0.7\"\n\"v6.internal\" = \"[fd00::7]\"\n[sandbox]\nnetwork = \"proxy\"\n",
    )
    .unwrap();
    let n = &p.network;
    assert_eq!(n.default, NetworkDefault::Ask);
    assert_eq!(n.location.as_ref().unwrap().to_string(), "p.toml:2:1");
    let pats: Vec<String> = n.allow.iter().map(|r| r.key_pattern()).collect();
    assert_eq!(
        pats,
        [
            "network github.com:*",
            "network *.example.org:*",
            "network index.example.net:443",
            "network 10.0.0.5:5432",
            "network \\[::1\\]:443"
        ]
    );
    assert_eq!(n.allow[2].location.to_string(), "p.toml:4:41");
    assert_eq!(n.deny[0].host, HostPattern::Name("evil.example.org".into()));
    assert_eq!(n.hosts.len(), 2);
    assert_eq!(n.hosts[0].name, "build.internal");
    assert_eq!(n.hosts[0].addr.to_string(), "10.0.0.7");
    assert_eq!(n.hosts[1].addr.to_string(), "fd00::7");

    let none = parse("version = 1\n").unwrap();
    assert!(none.network.location.is_none());
    assert_eq!(none.network.default, NetworkDefault::Deny);
    assert!(none.network.allow.is_empty());
}

#[test]
fn bad_network_entries_are_refused_where_they_are() {
    refused(
        "version = 1\n[network]\nallow = [\"ok.org\", \"ex*ample.org\"]\n",
        3,
        20,
        "invalid network.allow entry: `ex*ample.org`: a `*` is only allowed as a leading `*.`",
    );
    refused(
        "version = 1\n[network]\ndeny = [\"github.com:99999\"]\n",
        3,
        9,
        "invalid network.deny entry: `github.com:99999`: the port must be a number from 1 to 65535",
    );
    refused(
        "version = 1\n[network]\nallow = [\"::1\"]\n",
        3,
        10,
        "write an IPv6 address in brackets",
    );
    refused(
        "version = 1\n[network]\nallow = [\"0x7f.1\"]\n",
        3,
        10,
        "reads as a number",
    );
    refused(
        "version = 1\n[network]\ndefault = \"allow\"\n",
        3,
        11,
        "invalid network default `allow` (use one of: deny, ask)",
    );
    refused(
        "version = 1\n[network]\nallows = []\n",
        3,
        1,
        "unknown field `allows`",
    );
    refused(
        "version = 1\n[network.hosts]\n\"build.internal\" = \"10.0.0.300\"\n",
        3,
        20,
        "invalid network.hosts entry `build.internal`: `10.0.0.300` is not an IP address",
    );
    refused(
        "version = 1\n[network.hosts]\n\"10.0.0.1\" = \"10.0.0.2\"\n",
        3,
        14,
        "the key must be a name",
    );
    refused(
        "version = 1\n[network.hosts]\n\"A.org\" = \"10.0.0.1\"\n\"a.org\" = \"10.0.0.2\"\n",
        4,
        11,
        "`a.org` is already mapped at p.toml:3:",
    );
    refused(
        "version = 1\n[network]\nallow = \"github.com\"\n",
        3,
        9,
        "invalid type",
    );
}

#[test]
fn a_network_section_needs_the_proxy() {
    for network in [
        "",
        "[sandbox]\nnetwork = \"deny\"\n",
        "[sandbox]\nnetwork = \"allow\"\n",
    ] {
        refused(
            &format!("version = 1\n[network]\nallow = [\"index.example.net:443\"]\n{network}"),
            2,
            1,
            "the [network] section takes effect only with `[sandbox] network = \"proxy\"`",
        );
    }
    let p = parse("version = 1\n[sandbox]\nnetwork = \"proxy\"\n").unwrap();
    assert_eq!(p.sandbox.network, Network::Proxy);
    assert!(p.network.allow.is_empty(), "no section: nothing allowed");
}

#[test]
fn a_rules_file_holds_rules_and_nothing_else() {
    let parse_rules = |text: &str| RulesFile::parse(text, "r.toml", Path::new("/"));
    let r = parse_rules(
        "version = 1\n[[network.rules]]\nhost = \"*.Example.org\"\naction = \"deny\"\nreason = \"no\"\n\
         [[network.rules]]\nhost = \"[::1]:8080\"\naction = \"allow\"\n",
    )
    .unwrap();
    assert_eq!(r.network.len(), 2);
    assert_eq!(r.network[0].action, Action::Deny);
    assert_eq!(r.network[0].reason.as_deref(), Some("no"));
    assert!(r.network[0]
        .pattern
        .matches(&["network", "a.example.org:443"]));
    assert!(!r.network[0]
        .pattern
        .matches(&["network", "example.org:443"]));
    assert!(r.network[1].pattern.matches(&["network", "[::1]:8080"]));
    assert!(!r.network[1].pattern.matches(&["network", "[::1]:8081"]));
    assert_eq!(
        r.network[1].reason.as_deref(),
        Some("`[::1]:8080` is remembered as allow (r.toml:6:1)")
    );
    for (text, line, col, what) in [
        (
            "version = 1\n[sandbox]\nnetwork = \"allow\"\n",
            2,
            2,
            "unknown field `sandbox`",
        ),
        (
            "version = 1\n[shell]\ndefault = \"allow\"\n",
            3,
            1,
            "unknown field `default`",
        ),
        (
            "version = 1\n[network]\nallow = [\"a.org\"]\n",
            3,
            1,
            "unknown field `allow`",
        ),
        (
            "version = 1\n[[network.rules]]\nhost = \"0x7f.1:80\"\naction = \"allow\"\n",
            3,
            8,
            "invalid network.rules host",
        ),
        (
            "version = 1\n[[network.rules]]\nhost = \"a*.org\"\naction = \"allow\"\n",
            3,
            8,
            "invalid network.rules host",
        ),
        (
            "version = 1\n[[network.rules]]\nhost = \"a.org\"\naction = \"yes\"\n",
            4,
            10,
            "invalid action `yes`",
        ),
        (
            "version = 1\n[[network.rules]]\nhost = \"a.org\"\n",
            2,
            1,
            "missing field `action`",
        ),
        (
            "[[network.rules]]\nhost = \"a.org\"\naction = \"allow\"\n",
            1,
            1,
            "missing `version`",
        ),
    ] {
        let e = parse_rules(text).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("r.toml:{line}:{col}: {what}")),
            "{text:?}: {e}"
        );
    }
    // A policy has its own way to list hosts: `[[network.rules]]` is for rules files.
    refused(
        "version = 1\n[sandbox]\nnetwork = \"proxy\"\n[[network.rules]]\nhost = \"a.org\"\naction = \"allow\"\n",
        4,
        11,
        "unknown field `rules`",
    );
}

#[test]
fn the_mcp_section_is_read_and_its_mistakes_refused() {
    let root = std::path::Path::new("/");
    let p = Policy::parse(
        "version = 1\n[mcp]\ndefault = \"deny\"\n[[mcp.rules]]\npattern = \"fs/read_*\"\naction = \"allow\"\n",
        "cordon.toml",
        root,
    )
    .unwrap();
    assert_eq!(p.mcp.default, Action::Deny);
    assert_eq!(p.mcp.rules.len(), 1);
    assert_eq!(p.mcp.rules[0].location.to_string(), "cordon.toml:4:1");
    let p = Policy::parse("version = 1\n", "cordon.toml", root).unwrap();
    assert_eq!(p.mcp.default, Action::Ask, "no [mcp]: every call asked");
    for bad in [
        "version = 1\n[mcp]\ndefualt = \"allow\"\n",
        "version = 1\n[mcp]\ndefault = \"maybe\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\naction = \"allow\"\nmatch = [\"fs/x\"]\n",
        "version = 1\n[[mcp.rules]]\npattern = \"read_file\"\naction = \"allow\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/a fs/b\"\naction = \"allow\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\naction = \"yes\"\n",
        // Argument patterns: a table of strings, names that are words, globs without spaces.
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = { path = 3 }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = \"path\"\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = { \"a b\" = \"x\" }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = { \"p*\" = \"x\" }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = { path = \"/a b\" }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = { path = \"\" }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = { path = \"[a\" }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\narg = { path = \"/x\" }\naction = \"deny\"\n",
        "version = 1\n[[mcp.rules]]\npattern = \"fs/x\"\nargs = {}\naction = \"deny\"\n",
    ] {
        assert!(
            Policy::parse(bad, "cordon.toml", root).is_err(),
            "accepted: {bad}"
        );
    }
}

#[test]
fn mcp_argument_patterns_match_the_named_arguments_wherever_they_are() {
    let root = std::path::Path::new("/");
    let p = Policy::parse(
        "version = 1\n[mcp]\n\
         [[mcp.rules]]\npattern = \"fs/read_*\"\naction = \"allow\"\n\
         [[mcp.rules]]\npattern = \"fs/read_*\"\nargs = { path = \"/etc/**\" }\naction = \"deny\"\n\
         [[mcp.rules]]\npattern = \"fs/*\"\nargs = { head = \"1?\", path = \"/ws/*\" }\naction = \"allow\"\n",
        "cordon.toml",
        root,
    )
    .unwrap();
    assert_eq!(p.mcp.arg_names, ["head", "path"]);
    assert_eq!(
        p.mcp.rules[1].reason.as_deref(),
        Some(r#"rule `fs/read_*` with args { path = "/etc/**" } says deny"#)
    );
    assert_eq!(p.mcp.rules[0].reason, None);
    let words = |tool: &str, args: serde_json::Value| p.mcp.key_words("fs", tool, &args);
    let hits = |w: &[String]| -> Vec<usize> {
        (0..p.mcp.rules.len())
            .filter(|&i| p.mcp.rules[i].pattern.matches(w))
            .collect()
    };
    // The key: SERVER/TOOL, then each named argument's name and text (or its absence).
    let w = words(
        "read_file",
        serde_json::json!({"path": "/etc/ssl/x", "other": 1}),
    );
    assert_eq!(w, ["fs/read_file", "(no head)", "", "path", "/etc/ssl/x"]);
    assert_eq!(hits(&w), [0, 1], "the tool rule and the path rule");
    // Not under /etc; `*` does not cross `/`, `**` does; numbers as their JSON text.
    assert_eq!(
        hits(&words("read_file", serde_json::json!({"path": "/etc2/x"}))),
        [0]
    );
    let w = words("write", serde_json::json!({"path": "/ws/a", "head": 12}));
    assert_eq!(w[1..3], ["head", "12"]);
    assert_eq!(hits(&w), [2]);
    assert!(hits(&words(
        "write",
        serde_json::json!({"path": "/ws/a/b", "head": 12})
    ))
    .is_empty());
    assert!(hits(&words(
        "write",
        serde_json::json!({"path": "/ws/a", "head": 123})
    ))
    .is_empty());
    // A named argument the call lacks does not match; an unnamed one is anything.
    assert!(hits(&words("write", serde_json::json!({"path": "/ws/a"}))).is_empty());
    assert_eq!(hits(&words("read_x", serde_json::json!({}))), [0]);
}
