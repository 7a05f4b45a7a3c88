//! `cordon install|uninstall HOST --mcp` on real files: each stdio server's entry is
//! rewritten to run under `cordon mcp wrap`, idempotently, with a backup; a link is refused;
//! uninstall restores the file's servers exactly; `cordon doctor` lists what is wrapped.

mod common;

use serde_json::{json, Value};

fn read(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn claude_project_servers_are_wrapped_and_restored() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let file = dir.join(".mcp.json");
    let original = json!({"mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/"]},
        "remote": {"type": "http", "url": "https://mcp.example.org/mcp"},
    }});
    std::fs::write(&file, serde_json::to_string_pretty(&original).unwrap()).unwrap();
    let policy = dir.join("cordon.toml");

    let o = common::command(&dir)
        .env("HOME", &dir)
        .args([
            "install",
            "claude",
            "--mcp",
            "--policy",
            policy.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v = read(&file);
    let fs = &v["mcpServers"]["fs"];
    assert_eq!(fs["command"], env!("CARGO_BIN_EXE_cordon"), "{v}");
    assert_eq!(
        fs["args"],
        json!([
            "mcp",
            "wrap",
            "--policy",
            policy.to_str().unwrap(),
            "--name",
            "fs",
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/"
        ])
    );
    assert_eq!(v["mcpServers"]["remote"], original["mcpServers"]["remote"]);
    assert_eq!(read(&dir.join(".mcp.json.cordon-backup")), original);

    // Idempotent.
    let o = common::command(&dir)
        .env("HOME", &dir)
        .args(["install", "claude", "--mcp"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("nothing changed"),
        "{}",
        common::stdout(&o)
    );
    assert_eq!(read(&file), v);

    // Doctor lists it.
    let o = common::command(&dir)
        .env("HOME", &dir)
        .arg("doctor")
        .output()
        .unwrap();
    let out = common::stdout(&o);
    assert!(out.contains("fs: wrapped"), "{out}");
    assert!(out.contains("remote: remote"), "{out}");

    // Uninstall restores.
    let o = common::command(&dir)
        .env("HOME", &dir)
        .args(["uninstall", "claude", "--mcp"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(read(&file), original);
}

#[test]
fn a_link_is_refused_and_nothing_written_through_it() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let target = elsewhere.join("settings.json");
    let text = r#"{"mcpServers": {"fs": {"command": "srv"}}}"#;
    std::fs::write(&target, text).unwrap();
    let project = dir.join("project");
    std::fs::create_dir(&project).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.join(".gemini")).unwrap();
    let o = common::cordon(&project, &["install", "gemini", "--mcp"]);
    assert!(!o.status.success(), "{}", common::stdout(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), text);
    assert!(!elsewhere.join("settings.json.cordon-backup").exists());
}

#[test]
fn codex_toml_servers_are_wrapped_in_place_and_restored() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir(dir.join(".codex")).unwrap();
    let file = dir.join(".codex/config.toml");
    let original =
        "# mine\n[mcp_servers.fetch]\ncommand = \"uvx\"\nargs = [\"mcp-server-fetch\"]\n";
    std::fs::write(&file, original).unwrap();
    let o = common::cordon(&dir, &["install", "codex", "--mcp"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("# mine\n"), "{text}");
    assert!(
        text.contains(&format!("command = \"{}\"", env!("CARGO_BIN_EXE_cordon"))),
        "{text}"
    );
    assert!(
        text.contains(
            r#"args = ["mcp", "wrap", "--name", "fetch", "--", "uvx", "mcp-server-fetch"]"#
        ),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".codex/config.toml.cordon-backup")).unwrap(),
        original
    );
    let o = common::command(&dir)
        .env("HOME", &dir)
        .arg("doctor")
        .output()
        .unwrap();
    assert!(
        common::stdout(&o).contains("fetch: wrapped"),
        "{}",
        common::stdout(&o)
    );
    let o = common::cordon(&dir, &["uninstall", "codex", "--mcp"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

/// `cordon ARGS` in `dir` with HOME at `home`.
fn cordon_home(
    dir: &std::path::Path,
    home: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    let o = common::command(dir)
        .env("HOME", home)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
    o
}

#[test]
fn claude_per_project_servers_in_the_user_file_are_wrapped_and_restored() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let (home, project, other) = (dir.join("home"), dir.join("project"), dir.join("other"));
    for p in [&home, &project, &other] {
        std::fs::create_dir(p).unwrap();
    }
    let file = home.join(".claude.json");
    let (p, o) = (project.to_str().unwrap(), other.to_str().unwrap());
    let original = json!({
        "numStartups": 3,
        "mcpServers": {"top": {"command": "top-srv"}},
        "projects": {
            p: {"allowedTools": ["Read"], "mcpServers": {
                "local": {"command": "srv", "args": ["--flag"], "env": {"K": "V"}},
                "remote": {"type": "http", "url": "https://mcp.example.org/mcp"},
            }},
            o: {"mcpServers": {"elsewhere": {"command": "x"}}},
        },
    });
    std::fs::write(&file, serde_json::to_string_pretty(&original).unwrap()).unwrap();

    // A project install: the project's own entry in ~/.claude.json (there is no .mcp.json).
    let out = common::stdout(&cordon_home(
        &project,
        &home,
        &["install", "claude", "--mcp"],
    ));
    assert!(
        out.contains(&format!("local (project {p}): now runs under")),
        "{out}"
    );
    let v = read(&file);
    let local = &v["projects"][p]["mcpServers"]["local"];
    assert_eq!(local["command"], env!("CARGO_BIN_EXE_cordon"), "{v}");
    assert_eq!(
        local["args"],
        json!(["mcp", "wrap", "--name", "local", "--", "srv", "--flag"])
    );
    assert_eq!(local["env"], json!({"K": "V"}));
    // Nothing else: the remote entry, the other project, the top level, the other keys.
    let mut unchanged = v.clone();
    unchanged["projects"][p]["mcpServers"]["local"] =
        original["projects"][p]["mcpServers"]["local"].clone();
    assert_eq!(unchanged, original);
    assert_eq!(read(&home.join(".claude.json.cordon-backup")), original);
    // Idempotent.
    let out = common::stdout(&cordon_home(
        &project,
        &home,
        &["install", "claude", "--mcp"],
    ));
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(read(&file), v);
    // Doctor lists each project's servers.
    let out = common::stdout(&cordon_home(&project, &home, &["doctor"]));
    assert!(
        out.contains(&format!("local (project {p}): wrapped")),
        "{out}"
    );
    assert!(
        out.contains(&format!("elsewhere (project {o}): NOT wrapped")),
        "{out}"
    );
    // Uninstall restores.
    cordon_home(&project, &home, &["uninstall", "claude", "--mcp"]);
    assert_eq!(read(&file), original);

    // A user install: the top level and every project's; uninstall restores them all.
    cordon_home(&project, &home, &["install", "claude", "--mcp", "--user"]);
    let v = read(&file);
    for entry in [
        &v["mcpServers"]["top"],
        &v["projects"][p]["mcpServers"]["local"],
        &v["projects"][o]["mcpServers"]["elsewhere"],
    ] {
        assert_eq!(entry["args"][1], "wrap", "{v}");
    }
    assert_eq!(
        v["projects"][p]["mcpServers"]["remote"],
        original["projects"][p]["mcpServers"]["remote"]
    );
    cordon_home(&project, &home, &["uninstall", "claude", "--mcp", "--user"]);
    assert_eq!(read(&file), original);
}

#[test]
fn a_linked_claude_user_file_is_refused_for_a_project_install() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let (home, project, elsewhere) = (dir.join("home"), dir.join("project"), dir.join("elsewhere"));
    for p in [&home, &project, &elsewhere] {
        std::fs::create_dir(p).unwrap();
    }
    let target = elsewhere.join("claude.json");
    let text = serde_json::to_string(&json!({"projects": {project.to_str().unwrap(): {
        "mcpServers": {"local": {"command": "srv"}}}}}))
    .unwrap();
    std::fs::write(&target, &text).unwrap();
    std::os::unix::fs::symlink(&target, home.join(".claude.json")).unwrap();
    let o = common::command(&project)
        .env("HOME", &home)
        .args(["install", "claude", "--mcp"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", common::stdout(&o));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), text);
    assert!(!home.join(".claude.json.cordon-backup").exists());
}

/// Issue 21, class 1, per call site: `install HOST --mcp` (and `--user`) for each host writes
/// its MCP config and a backup beside it. A link planted at any component of that path — the
/// host's directory, the config file itself (`~/.claude.json` too), the backup's name — is
/// refused by name, and nothing is written through it: the link's target keeps its text and
/// gets no backup beside it.
#[test]
fn a_link_at_any_component_of_each_hosts_mcp_config_is_refused() {
    let cases: [(&str, bool, &str); 10] = [
        ("claude", false, ".mcp.json"),
        ("claude", true, ".claude.json"),
        ("gemini", false, ".gemini/settings.json"),
        ("gemini", true, ".gemini/settings.json"),
        ("codex", false, ".codex/config.toml"),
        ("codex", true, ".codex/config.toml"),
        ("copilot", false, ".github/mcp.json"),
        ("copilot", true, ".copilot/mcp-config.json"),
        ("opencode", false, ".opencode/opencode.json"),
        ("opencode", true, ".config/opencode/opencode.json"),
    ];
    for (host, user, rel) in cases {
        let text = if rel.ends_with(".toml") {
            "[mcp_servers.fs]\ncommand = \"srv\"\n".to_string()
        } else if host == "opencode" {
            r#"{"mcp": {"fs": {"type": "local", "command": ["srv"]}}}"#.to_string()
        } else {
            r#"{"mcpServers": {"fs": {"command": "srv"}}}"#.to_string()
        };
        let parts: Vec<&str> = rel.split('/').collect();
        // Each component, then the backup's name beside the file.
        let mut at: Vec<String> = (1..=parts.len()).map(|n| parts[..n].join("/")).collect();
        at.push(format!("{rel}.cordon-backup"));
        for link in at {
            let d = tempfile::tempdir().unwrap();
            let dir = std::fs::canonicalize(d.path()).unwrap();
            let (project, home) = (dir.join("project"), dir.join("home"));
            let elsewhere = dir.join("elsewhere");
            for p in [&project, &home, &elsewhere] {
                std::fs::create_dir(p).unwrap();
            }
            let base = if user { &home } else { &project };
            // The real config where the host reads it (unless the link replaces it)...
            std::fs::create_dir_all(base.join(rel).parent().unwrap()).unwrap();
            std::fs::write(base.join(rel), &text).unwrap();
            // ...and the link's target: the same layout elsewhere.
            let target = elsewhere.join(&link);
            std::fs::create_dir_all(elsewhere.join(rel).parent().unwrap()).unwrap();
            std::fs::write(elsewhere.join(rel), &text).unwrap();
            if !target.exists() {
                std::fs::write(&target, "the target's own text\n").unwrap();
            }
            let planted = base.join(&link);
            match std::fs::symlink_metadata(&planted) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&planted).unwrap(),
                Ok(_) => std::fs::remove_file(&planted).unwrap(),
                Err(_) => {}
            }
            std::os::unix::fs::symlink(&target, &planted).unwrap();
            let snapshot = |p: &std::path::Path| -> Vec<(String, Vec<u8>)> {
                let mut v: Vec<_> = walk(p)
                    .into_iter()
                    .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
                    .collect();
                v.sort();
                v
            };
            let before = snapshot(&elsewhere);
            let mut args = vec!["install", host, "--mcp"];
            if user {
                args.push("--user");
            }
            let o = common::command(&project)
                .env("HOME", &home)
                .env_remove("CODEX_HOME")
                .env_remove("COPILOT_HOME")
                .env_remove("XDG_CONFIG_HOME")
                .args(&args)
                .output()
                .unwrap();
            let what = format!("{host} user={user} link at {link}");
            assert!(!o.status.success(), "{what}: {}", common::stdout(&o));
            let err = common::stderr(&o);
            assert!(
                err.contains(&planted.display().to_string()) && err.contains("symbolic link"),
                "{what}: the refusal does not name the link: {err}"
            );
            assert_eq!(
                snapshot(&elsewhere),
                before,
                "{what}: written through the link"
            );
        }
    }
}

/// Every regular file below `p`.
fn walk(p: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let path = e.unwrap().path();
        let m = std::fs::symlink_metadata(&path).unwrap();
        if m.is_dir() {
            out.extend(walk(&path));
        } else if m.is_file() {
            out.push(path);
        }
    }
    out
}

/// Copilot CLI reads the project's `.mcp.json` and `.github/mcp.json` and the user's
/// `$COPILOT_HOME/mcp-config.json`; opencode its `opencode.json(c)` files, whose local servers
/// hold the program and its arguments in one `command` list. Each file that exists is wrapped
/// (remote servers left alone), idempotently, with a backup; uninstall restores each exactly;
/// doctor lists them.
#[test]
fn copilot_and_opencode_servers_are_wrapped_and_restored() {
    let d = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(d.path()).unwrap();
    let (project, home, xdg) = (dir.join("p"), dir.join("h"), dir.join("x"));
    let copilot_home = dir.join("ch");
    // opencode reads this directory's opencode.json(c) too, after its global ones.
    let opencode_dir = dir.join("oc");
    for p in [&project, &home, &xdg, &copilot_home, &opencode_dir] {
        std::fs::create_dir(p).unwrap();
    }
    let exe = env!("CARGO_BIN_EXE_cordon");
    let run = |args: &[&str]| {
        let o = common::command(&project)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &xdg)
            .env("COPILOT_HOME", &copilot_home)
            .env("OPENCODE_CONFIG_DIR", &opencode_dir)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
        common::stdout(&o)
    };
    let write = |p: &std::path::Path, v: &Value| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    };
    // Copilot: both project files and the user file.
    let stdio = json!({"mcpServers": {
        "fs": {"type": "local", "command": "npx", "args": ["-y", "srv", "/"], "tools": ["*"]},
        "remote": {"type": "http", "url": "https://mcp.example.org/mcp"},
    }});
    let copilot_files = [
        project.join(".mcp.json"),
        project.join(".github/mcp.json"),
        copilot_home.join("mcp-config.json"),
    ];
    for f in &copilot_files {
        write(f, &stdio);
    }
    let policy = project.join("cordon.toml");
    let out = run(&[
        "install",
        "copilot",
        "--mcp",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert!(
        out.contains("fs: now runs under `cordon mcp wrap`"),
        "{out}"
    );
    run(&["install", "copilot", "--mcp", "--user"]);
    for (i, f) in copilot_files.iter().enumerate() {
        let v = read(f);
        let fs = &v["mcpServers"]["fs"];
        assert_eq!(fs["command"], exe, "{}: {v}", f.display());
        let mut want = vec!["mcp", "wrap"];
        if i < 2 {
            want.extend(["--policy", policy.to_str().unwrap()]);
        }
        want.extend(["--name", "fs", "--", "npx", "-y", "srv", "/"]);
        assert_eq!(fs["args"], json!(want), "{}", f.display());
        assert_eq!(fs["tools"], json!(["*"]));
        assert_eq!(v["mcpServers"]["remote"], stdio["mcpServers"]["remote"]);
        assert_eq!(
            read(&f.with_file_name(format!(
                "{}.cordon-backup",
                f.file_name().unwrap().to_str().unwrap()
            ))),
            stdio
        );
    }
    // Idempotent.
    let again = run(&["install", "copilot", "--mcp"]);
    assert!(
        again.contains("fs: already wrapped") && again.contains("nothing changed"),
        "{again}"
    );

    // opencode: a project file in each of its two places, and the user's.
    let local = json!({"$schema": "https://opencode.ai/config.json", "mcp": {
        "fs": {"type": "local", "command": ["npx", "-y", "srv"], "environment": {"A": "1"}, "enabled": true},
        "web": {"type": "remote", "url": "https://mcp.example.org/mcp"},
    }});
    let opencode_files = [
        project.join("opencode.json"),
        project.join(".opencode/opencode.json"),
        xdg.join("opencode/opencode.json"),
        opencode_dir.join("opencode.json"),
    ];
    for f in &opencode_files {
        write(f, &local);
    }
    let out = run(&["install", "opencode", "--mcp"]);
    assert!(out.contains("web: remote"), "{out}");
    run(&["install", "opencode", "--mcp", "--user"]);
    for f in &opencode_files {
        let v = read(f);
        assert_eq!(
            v["mcp"]["fs"]["command"],
            json!([exe, "mcp", "wrap", "--name", "fs", "--", "npx", "-y", "srv"]),
            "{}",
            f.display()
        );
        assert_eq!(v["mcp"]["fs"]["environment"], json!({"A": "1"}));
        assert_eq!(v["mcp"]["web"], local["mcp"]["web"]);
    }

    // Doctor: each file's servers.
    let doctor = run(&["doctor"]);
    for f in copilot_files.iter().chain(&opencode_files) {
        let line = doctor
            .lines()
            .find(|l| l.contains(&format!("{}: fs: ", f.display())))
            .unwrap_or_else(|| panic!("no line for {} in:\n{doctor}", f.display()));
        assert!(line.contains("fs: wrapped (cordon mcp wrap)"), "{line}");
    }
    assert!(doctor.contains("copilot-cli"), "{doctor}");
    assert!(doctor.contains("opencode"), "{doctor}");

    // Uninstall restores every file exactly.
    for (host, files, original) in [
        ("copilot", &copilot_files[..], &stdio),
        ("opencode", &opencode_files[..], &local),
    ] {
        run(&["uninstall", host, "--mcp"]);
        run(&["uninstall", host, "--mcp", "--user"]);
        for f in files {
            assert_eq!(&read(f), original, "{}", f.display());
        }
    }

    // Copilot's form without `mcpServers`: said, not silently left unwrapped.
    std::fs::remove_file(project.join(".github/mcp.json")).unwrap();
    write(
        &project.join(".mcp.json"),
        &json!({"fs": {"command": "srv"}}),
    );
    let out = run(&["install", "copilot", "--mcp"]);
    assert!(
        out.contains("fs: NOT wrapped: a server outside `mcpServers`"),
        "{out}"
    );

    // No file at all: one line naming where it looked.
    let empty = tempfile::tempdir().unwrap();
    let o = common::command(empty.path())
        .env("HOME", empty.path())
        .env_remove("XDG_CONFIG_HOME")
        .args(["install", "opencode", "--mcp"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(
        common::stdout(&o).contains("no MCP configuration file (looked for"),
        "{}",
        common::stdout(&o)
    );
}
