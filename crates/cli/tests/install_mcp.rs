//! `cordon install|uninstall claude|gemini --mcp` on real files: each stdio server's entry is
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
