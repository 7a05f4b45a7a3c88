//! `cordon install|uninstall copilot|opencode` and their lines in `cordon doctor`, on real
//! files in temporary HOME and project directories: hosts wired by a file of cordon's own.

mod common;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

/// `cordon ARGS` in `project` with HOME (and nothing else of the user's) at `home`.
fn cordon(project: &Path, home: &Path, args: &[&str]) -> Output {
    common::command(project)
        .env("HOME", home)
        .env_remove("COPILOT_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("OPENCODE_PURE")
        .env_remove("OPENCODE_DISABLE_PROJECT_CONFIG")
        .args(args)
        .output()
        .unwrap()
}

fn doctor_line(project: &Path, home: &Path, host: &str, scope: &str) -> String {
    let o = cordon(project, home, &["doctor"]);
    let out = common::stdout(&o);
    out.lines()
        .find(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.first() == Some(&host) && w.get(1) == Some(&scope)
        })
        .unwrap_or_else(|| panic!("no {host} {scope} line in:\n{out}"))
        .to_string()
}

#[test]
fn copilot_user_install_is_idempotent_replaces_its_own_and_uninstalls() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let file = h.join(".copilot/hooks/cordon.json");
    assert!(doctor_line(p, h, "copilot-cli", "user").contains("not wired (no file)"));

    let o = cordon(p, h, &["install", "copilot", "--user"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let first = std::fs::read_to_string(&file).unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["version"], 1);
    let hook = &v["hooks"]["preToolUse"][0];
    assert_eq!(hook["type"], "command");
    assert_eq!(hook["timeoutSec"], 30);
    let cmd = hook["bash"].as_str().unwrap();
    assert!(
        cmd.starts_with(&format!(
            "'{}' hook copilot || {{",
            env!("CARGO_BIN_EXE_cordon")
        )),
        "{cmd}"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(doctor_line(p, h, "copilot-cli", "user").contains("wired, fails closed"));

    let o = cordon(p, h, &["install", "copilot", "--user"]);
    assert!(
        common::stdout(&o).contains("nothing changed"),
        "{}",
        common::stdout(&o)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), first);

    // Another policy: cordon's own file is replaced, the old one kept as the backup.
    std::fs::write(p.join("cordon.toml"), "version = 1\n").unwrap();
    let o = cordon(
        p,
        h,
        &["install", "copilot", "--user", "--policy", "cordon.toml"],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stdout(&o).contains("replaced"),
        "{}",
        common::stdout(&o)
    );
    assert!(std::fs::read_to_string(&file).unwrap().contains("--policy"));
    let backup = h.join(".copilot/hooks/cordon.json.cordon-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), first);

    // Copilot's disableAllHooks: doctor says the hook is skipped.
    std::fs::write(
        h.join(".copilot/settings.json"),
        "// comment\n{ \"disableAllHooks\": true }\n",
    )
    .unwrap();
    assert!(doctor_line(p, h, "copilot-cli", "user").contains("SKIPPED: disableAllHooks"));

    let o = cordon(p, h, &["uninstall", "copilot", "--user"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(!file.exists());
    let o = cordon(p, h, &["uninstall", "copilot", "--user"]);
    assert!(
        common::stdout(&o).contains("nothing changed"),
        "{}",
        common::stdout(&o)
    );
}

#[test]
fn a_file_that_is_not_cordons_is_never_overwritten_or_removed() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let file = p.join(".github/hooks/cordon.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let theirs = r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./mine.sh"}]}}"#;
    std::fs::write(&file, theirs).unwrap();
    for verb in ["install", "uninstall"] {
        let o = cordon(p, h, &[verb, "copilot"]);
        assert!(!o.status.success(), "{verb}: {}", common::stdout(&o));
        assert!(
            common::stderr(&o).contains("not cordon's"),
            "{}",
            common::stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
    }
    assert!(doctor_line(p, h, "copilot-cli", "project").contains("not cordon's"));

    // cordon's own project hook outside a git repository: Copilot would not load it.
    let other = tempfile::tempdir().unwrap();
    let o = cordon(other.path(), h, &["install", "copilot"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stdout(&o).contains("not the root of a git repository"));
    assert!(doctor_line(other.path(), h, "copilot-cli", "project").contains("NOT LOADED"));
    std::fs::create_dir(other.path().join(".git")).unwrap();
    assert!(doctor_line(other.path(), h, "copilot-cli", "project").contains("wired, fails closed"));

    let plugin = p.join(".opencode/plugin/cordon.js");
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, "export const Mine = async () => ({});\n").unwrap();
    let o = cordon(p, h, &["install", "opencode"]);
    assert!(!o.status.success());
    assert_eq!(
        std::fs::read_to_string(&plugin).unwrap(),
        "export const Mine = async () => ({});\n"
    );
}

/// A link planted on the way (a sandboxed command could have made `.opencode` point
/// elsewhere) is refused, and nothing is written through it.
#[test]
fn a_link_on_the_way_is_refused() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    std::os::unix::fs::symlink(elsewhere.path(), p.join(".opencode")).unwrap();
    let o = cordon(p, h, &["install", "opencode"]);
    assert!(!o.status.success(), "{}", common::stdout(&o));
    assert!(std::fs::read_dir(elsewhere.path())
        .unwrap()
        .next()
        .is_none());

    std::fs::create_dir_all(h.join(".copilot")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), h.join(".copilot/hooks")).unwrap();
    let o = cordon(p, h, &["install", "copilot", "--user"]);
    assert!(!o.status.success(), "{}", common::stdout(&o));
    assert!(std::fs::read_dir(elsewhere.path())
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn opencode_install_writes_cordons_plugin_and_doctor_reports_it() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (p, h) = (project.path(), home.path());
    let o = cordon(p, h, &["install", "opencode"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let plugin = std::fs::read_to_string(p.join(".opencode/plugin/cordon.js")).unwrap();
    assert!(plugin.contains(&format!(
        "const CORDON = {};",
        Value::String(env!("CARGO_BIN_EXE_cordon").into())
    )));
    assert!(doctor_line(p, h, "opencode", "project").contains("wired, fails closed"));
    let o = common::command(p)
        .env("HOME", h)
        .env("OPENCODE_PURE", "1")
        .arg("doctor")
        .output()
        .unwrap();
    assert!(
        common::stdout(&o).contains("SKIPPED here: OPENCODE_PURE"),
        "{}",
        common::stdout(&o)
    );
    let o = cordon(p, h, &["uninstall", "opencode"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(!p.join(".opencode/plugin/cordon.js").exists());
    assert!(p.join(".opencode/plugin/cordon.js.cordon-backup").exists());
}
